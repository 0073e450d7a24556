"""Tokens/s of one GRPO step: our trainer against TRL's GRPOTrainer, measured in the same run.

    .venv/bin/python scripts/bench_grpo_vs_trl.py                 # defaults: 8 prompts x 4 samples, 32 new tokens
    .venv/bin/python scripts/bench_grpo_vs_trl.py --prompts 16 --n 8 --response-length 64 --steps 3

Both sides get the same locally made tiny model (verl.models.tiny), the same arithmetic prompts, the
same batch (prompts x samples, one optimizer step per batch, no micro-batching), the same sampling
(temperature 1, no top-k/top-p), the same response length, no KL/reference model, token-mean loss,
fp32, no gradient checkpointing, and the same CPU thread count (`--threads`). A GRPO step is everything from prompts to updated weights:
generate, score, log-probs, advantages, one optimizer step. Tokens are the valid prompt plus
response tokens of the step. Each side runs in its own subprocess (so neither sees the other's
process group or thread pools), warms up, then times `--steps` steps; `--rounds` repeats the pair
to expose noise on a shared machine. The ratio is printed for the median step and for the best step
(on a busy machine the best step is the least disturbed one). Needs the `bench` extra (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULT = "BENCH_RESULT "


# ----------------------------------------------------------------------------- our trainer
def run_ours(args: argparse.Namespace) -> dict:
    from verl.protocol import DataProto
    from verl.trainer.config import load_ppo_config
    from verl.trainer.ppo.trainer import PPOTrainer
    from verl.trainer.runtime import configure_process
    from verl.utils.distributed import initialize_global_process_group

    work = Path(args.workdir)
    batch_responses = args.prompts * args.n
    config = load_ppo_config([
        f"actor_rollout_ref.model.path={work / 'model'}",
        f"data.train_files={work / 'data' / 'train.parquet'}",
        f"data.val_files={work / 'data' / 'test.parquet'}",
        f"data.max_prompt_length={args.prompt_length}",
        f"data.max_response_length={args.response_length}",
        f"data.train_batch_size={args.prompts}",
        "algorithm.adv_estimator=grpo",
        f"actor_rollout_ref.rollout.n={args.n}",
        f"actor_rollout_ref.rollout.micro_batch_size={batch_responses}",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={batch_responses}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={args.prompts}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={batch_responses}",
        "actor_rollout_ref.actor.use_kl_loss=false",
        "actor_rollout_ref.actor.optim.lr=1e-6",
        "trainer.val_before_train=false",
        "trainer.skip_preflight=true",
        "trainer.progress_bar=false",
        "trainer.logger=[console]",
        f"trainer.default_local_dir={work / 'ours_ckpt'}",
        f"trainer.seed={args.seed}",
    ])
    configure_process(config.trainer.device, config.trainer.num_threads, config.trainer.seed)
    initialize_global_process_group()
    trainer = PPOTrainer(config, console=lambda *a, **k: None)
    steps = []
    for step in range(args.warmup + args.steps):
        batch = DataProto.from_single_dict(trainer.train_loader.next_batch())
        start = time.perf_counter()
        metrics = trainer.train_step(batch)
        seconds = time.perf_counter() - start
        if step >= args.warmup:
            steps.append({"seconds": seconds, "tokens": metrics["perf/total_num_tokens"],
                          "response_length": metrics["response_length/mean"],
                          "phases": {k.split("/", 1)[1]: round(v, 3) for k, v in metrics.items() if k.startswith("timing_s/")}})
    return {"side": "ours", "steps": steps}


# ----------------------------------------------------------------------------- TRL
def run_trl(args: argparse.Namespace) -> dict:
    import pandas as pd
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from verl.utils.reward.math_reward import compute_score

    work = Path(args.workdir)
    torch.manual_seed(args.seed)
    frame = pd.read_parquet(work / "data" / "train.parquet")
    dataset = Dataset.from_dict({
        "prompt": [[dict(m) for m in prompt] for prompt in frame["prompt"]],
        "ground_truth": [rm["ground_truth"] for rm in frame["reward_model"]],
    })

    def reward(completions, ground_truth, **unused):
        return [compute_score(c[0]["content"], gt) for c, gt in zip(completions, ground_truth)]

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.starts, self.seconds = [], []

        def on_step_begin(self, *unused, **kw):
            self.starts.append(time.perf_counter())

        def on_step_end(self, *unused, **kw):
            self.seconds.append(time.perf_counter() - self.starts[-1])

    batch_responses = args.prompts * args.n
    config = GRPOConfig(
        output_dir=str(work / "trl_out"),
        use_cpu=True,
        per_device_train_batch_size=batch_responses,  # counts completions: prompts x num_generations
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        num_generations=args.n,
        num_iterations=1,
        max_completion_length=args.response_length,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        beta=0.0,
        loss_type="dapo",  # token-mean over the batch, like our loss_agg_mode=token-mean
        learning_rate=1e-6,
        gradient_checkpointing=False,
        bf16=False,
        max_steps=args.warmup + args.steps,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    timer = StepTimer()
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(work / "model", dtype=torch.float32),
        processing_class=AutoTokenizer.from_pretrained(work / "model"),
        reward_funcs=reward,
        args=config,
        train_dataset=dataset,
        callbacks=[timer],
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "num_tokens" in entry]
    totals = [0.0] + [entry["num_tokens"] for entry in logs]
    steps = []
    for step in range(args.warmup, args.warmup + args.steps):
        steps.append({"seconds": timer.seconds[step], "tokens": totals[step + 1] - totals[step],
                      "response_length": logs[step].get("completions/mean_length", float("nan"))})
    return {"side": "trl", "steps": steps}


# ----------------------------------------------------------------------------- driver
def prepare(workdir: Path, args: argparse.Namespace) -> None:
    from verl.data.arithmetic import write_arithmetic_dataset
    from verl.models.tiny import make_tiny_model

    make_tiny_model(workdir / "model", seed=args.seed)
    write_arithmetic_dataset(workdir / "data", n_train=max(256, args.prompts * (args.warmup + args.steps)), n_test=16,
                             max_operand=20, seed=args.seed)


def run_side(side: str, workdir: Path, argv: list[str], threads: int) -> dict:
    command = [sys.executable, __file__, "--side", side, "--workdir", str(workdir), *argv]
    # The same CPU thread count on both sides (torch reads OMP_NUM_THREADS at start-up).
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    process = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = [line for line in process.stdout.splitlines() if line.startswith(RESULT)]
    if process.returncode != 0 or not lines:
        sys.stderr.write(process.stdout[-3000:] + process.stderr[-6000:])
        raise SystemExit(f"the {side} side failed (exit code {process.returncode}); its output is above")
    return json.loads(lines[-1][len(RESULT):])


def step_rates(result: dict) -> list[float]:
    """Tokens/s of each timed step."""
    return [step["tokens"] / step["seconds"] for step in result["steps"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8, help="prompts per step")
    parser.add_argument("--n", type=int, default=4, help="samples per prompt (GRPO group size)")
    parser.add_argument("--prompt-length", type=int, default=40, help="max prompt tokens (the arithmetic prompts are <= 35)")
    parser.add_argument("--response-length", type=int, default=32, help="max new tokens per response")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per side")
    parser.add_argument("--rounds", type=int, default=2, help="repeat the ours/TRL pair this many times")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads per side (same for both; 1 suits a ~1M-parameter model on a shared machine)")
    parser.add_argument("--side", choices=["ours", "trl"], help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.side:
        result = run_ours(args) if args.side == "ours" else run_trl(args)
        print(RESULT + json.dumps(result), flush=True)
        return

    try:
        import trl
    except ImportError:
        raise SystemExit("TRL is not installed: pip install -e '.[bench]'") from None
    side_argv = [f"--prompts={args.prompts}", f"--n={args.n}", f"--prompt-length={args.prompt_length}",
                 f"--response-length={args.response_length}", f"--warmup={args.warmup}", f"--steps={args.steps}",
                 f"--seed={args.seed}"]
    with tempfile.TemporaryDirectory(prefix="bench_grpo_") as tmp:
        workdir = Path(tmp)
        prepare(workdir, args)
        print(f"GRPO step, {args.prompts} prompts x {args.n} samples, <= {args.response_length} new tokens, "
              f"tiny Llama; TRL {trl.__version__}; {args.threads} CPU thread(s); {args.warmup} warm-up + {args.steps} timed steps per side")
        rates: dict[str, list[float]] = {"ours": [], "trl": []}
        for round_ in range(1, args.rounds + 1):
            for side in ("ours", "trl"):
                result = run_side(side, workdir, side_argv, args.threads)
                rates[side] += step_rates(result)
                step_s = statistics.median(s["seconds"] for s in result["steps"])
                resp = statistics.mean(s["response_length"] for s in result["steps"])
                print(f"  round {round_} {side:>4}: median {statistics.median(step_rates(result)):8.1f} tokens/s  "
                      f"({step_s:.2f} s/step, mean response {resp:.1f} tokens)", flush=True)
                if "phases" in result["steps"][-1]:
                    print(f"              last step's phases (s): {result['steps'][-1]['phases']}")
    # On a shared machine other processes only ever slow a step down: the best step is the least disturbed.
    for label, pick in (("median step", statistics.median), ("best step", max)):
        ours, theirs = pick(rates["ours"]), pick(rates["trl"])
        print(f"{label:>11}: ours {ours:8.1f} tokens/s, TRL {theirs:8.1f} tokens/s: ratio {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
