"""The quickstart: tiny model + arithmetic task -> SFT warm start -> GRPO, accuracy before and after.

    verl quickstart            (or: python -m verl.trainer.quickstart)

Everything is made locally (no model hub): a ~0.9M-parameter Llama-shaped model with a character
tokenizer, and "What is 47+8?" problems (two-digit plus one-digit, carries included) whose answers a
rule checks. Validation is on 200 held-out problems the model never trains on; the task shares its
carry rule between training and held-out problems, so held-out accuracy measures the skill learnt, not
recall. The recipe below is tuned to finish in about two and a half minutes on two CPU cores and to show GRPO
improving on the SFT start.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table


@dataclass
class Recipe:
    """The quickstart's knobs, in one place so tests and docs quote the same numbers."""

    max_operand: int = 99
    max_second_operand: int = 9
    """1,000 problems "a+b", a <= 99, b <= 9. (One-digit sums, 100 problems, are too few: the tiny model
    memorises them and cannot infer a held-out one.)"""
    n_train: int = 800
    n_test: int = 200
    sft_steps: int = 600
    sft_lr: float = 1e-3
    """The SFT start stops while the model is still picking up the carry rule (45-75% of the held-out
    problems right, by seed), which leaves GRPO room to show a gain; at 3e-3 the tiny model stalls and
    never finds the rule, and at 500 steps the start is too early for some seeds."""
    grpo_steps: int = 40
    grpo_lr: float = 1e-4
    prompts_per_step: int = 16
    rollouts_per_prompt: int = 8
    max_response_length: int = 10
    """"#### 105" and the end-of-turn token: 9 tokens."""
    val_files: str = "test"
    """Validation split: "test" the held-out problems, "train" the ones it trains on."""
    threads: int = 1
    """torch threads: a 1M-parameter model gains little from more, and OpenMP threads that spin-wait
    slow everything down badly when the cores are shared (CI runners, laptops)."""
    extra_overrides: list[str] = field(default_factory=list)

    def sft_overrides(self, data: dict, model: Path, out: Path, seed: int) -> list[str]:
        return [
            f"data.train_files={data['sft_train']}", "data.max_length=64", "data.train_batch_size=32",
            "data.micro_batch_size_per_gpu=32", f"model.path={model}", f"optim.lr={self.sft_lr}",
            f"trainer.total_training_steps={self.sft_steps}", f"trainer.default_local_dir={out}", f"trainer.seed={seed}",
            "trainer.logger=[file]", "trainer.skip_preflight=true", f"trainer.num_threads={self.threads}",
        ]

    def grpo_overrides(self, data: dict, model: Path, out: Path, seed: int) -> list[str]:
        n = self.rollouts_per_prompt
        return [
            f"data.train_files={data['train']}", f"data.val_files={data[self.val_files]}",
            "data.max_prompt_length=32", f"data.max_response_length={self.max_response_length}",
            f"data.train_batch_size={self.prompts_per_step}", f"data.seed={seed}",
            f"actor_rollout_ref.model.path={model}", "algorithm.adv_estimator=grpo",
            f"actor_rollout_ref.rollout.n={n}", f"actor_rollout_ref.rollout.micro_batch_size={self.prompts_per_step * n}",
            f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={self.prompts_per_step * n}",
            f"actor_rollout_ref.actor.ppo_mini_batch_size={self.prompts_per_step}",
            f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={self.prompts_per_step * n}",
            f"actor_rollout_ref.actor.optim.lr={self.grpo_lr}",
            f"trainer.total_training_steps={self.grpo_steps}", f"trainer.test_freq={max(self.grpo_steps // 4, 1)}",
            f"trainer.default_local_dir={out}", f"trainer.seed={seed}", "trainer.logger=[console,file]",
            "trainer.skip_preflight=true", f"trainer.num_threads={self.threads}", *self.extra_overrides,
        ]


def run_quickstart(output_dir: Path, steps: int | None = None, seed: int = 0, skip_preflight: bool = False,
                   recipe: Recipe | None = None, console: Console | None = None) -> dict[str, float]:
    """Run the whole journey in this process; returns accuracies and timings."""
    from verl.trainer.preflight import check_environment
    from verl.trainer.runtime import configure_process

    console = console or Console()
    recipe = recipe or Recipe()
    if steps:
        recipe.grpo_steps = steps
    output_dir = Path(output_dir)
    configure_process("auto", num_threads=recipe.threads, seed=seed)
    check_environment(skip=skip_preflight, console=console)

    from verl.data.arithmetic import write_arithmetic_dataset
    from verl.models.tiny import make_tiny_model
    from verl.trainer.config import load_ppo_config, load_sft_config
    from verl.trainer.fsdp_sft_trainer import FSDPSFTTrainer
    from verl.data.rl_dataset import collate_fn
    from verl.trainer.ppo.datasets import load_rl_dataset
    from verl.utils.dataloader import ResumableLoader
    from verl.trainer.ppo.trainer import PPOTrainer
    from verl.utils.distributed import destroy_process_group, initialize_global_process_group

    for stale in ("sft", "grpo"):  # each quickstart is a fresh run, not a resume of the last one
        shutil.rmtree(output_dir / stale, ignore_errors=True)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    console.rule("1/4 tiny model and arithmetic task")
    model_dir = make_tiny_model(output_dir / "model", seed=seed)
    data = write_arithmetic_dataset(output_dir / "data", recipe.n_train, recipe.n_test, recipe.max_operand, "+", seed,
                                    recipe.max_second_operand)
    console.print(f"model: {model_dir}\ndata:  {output_dir / 'data'}")
    timings["setup"] = time.perf_counter() - start

    initialize_global_process_group()
    try:
        console.rule(f"2/4 SFT warm start ({recipe.sft_steps} steps)")
        t = time.perf_counter()
        sft = load_sft_config(recipe.sft_overrides(data, model_dir, output_dir / "sft", seed))
        FSDPSFTTrainer(sft, console=console.print).fit()
        timings["sft"] = time.perf_counter() - t

        console.rule(f"3/4 GRPO ({recipe.grpo_steps} steps x {recipe.prompts_per_step} prompts x {recipe.rollouts_per_prompt} rollouts)")
        t = time.perf_counter()
        grpo = load_ppo_config(recipe.grpo_overrides(data, output_dir / "sft" / "hf_model", output_dir / "grpo", seed))
        trainer = PPOTrainer(grpo, console=console.print)
        other_split = "train" if recipe.val_files == "test" else "test"  # the table shows both
        other = ResumableLoader(load_rl_dataset(other_split, data[other_split], trainer.tokenizer, grpo.data),
                                recipe.n_test, collate_fn, shuffle=False)
        other_before = trainer.validate(other)["val/accuracy"]
        final = trainer.fit()
        other_after = trainer.validate(other)["val/accuracy"]
        timings["grpo"] = time.perf_counter() - t
    finally:
        destroy_process_group()

    val = {"before": trainer.initial_validation["val/accuracy"], "after": final["val/accuracy"]}
    other = {"before": other_before, "after": other_after}
    held_out, train = (val, other) if recipe.val_files == "test" else (other, val)
    result = {"held_out_accuracy_before": held_out["before"], "held_out_accuracy_after": held_out["after"],
              "train_accuracy_before": train["before"], "train_accuracy_after": train["after"],
              **{f"seconds_{k}": v for k, v in timings.items()}, "seconds_total": time.perf_counter() - start}
    console.rule("4/4 result")
    table = Table(title="greedy accuracy on the arithmetic task")
    table.add_column("model")
    table.add_column(f"held-out ({recipe.n_test} unseen problems)", justify="right")
    table.add_column(f"training problems ({recipe.n_train})", justify="right")
    table.add_row("after SFT (GRPO start)", f"{held_out['before']:.1%}", f"{train['before']:.1%}")
    table.add_row(f"after GRPO ({recipe.grpo_steps} steps)", f"{held_out['after']:.1%}", f"{train['after']:.1%}")
    console.print(table)
    console.print(f"time: {result['seconds_total']:.0f} s (SFT {timings['sft']:.0f} s, GRPO {timings['grpo']:.0f} s); "
                  f"final model: {output_dir / 'grpo'}/global_step_{recipe.grpo_steps}/actor/huggingface; "
                  f"metrics: {output_dir / 'grpo' / 'metrics.jsonl'}")
    return result


def main(argv: list[str] | None = None) -> None:
    from verl.trainer.cli import quickstart

    quickstart.main(args=sys.argv[1:] if argv is None else argv, prog_name="python -m verl.trainer.quickstart")


if __name__ == "__main__":
    main()
