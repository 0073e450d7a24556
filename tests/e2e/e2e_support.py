"""Helpers of the end-to-end training tests: run the real CLI, read its metrics, build short runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from verl.trainer.quickstart import Recipe

RECIPE = Recipe()
# One thread per run: tiny models gain little from more, and spinning OpenMP threads on shared cores cost a lot.
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}


def run_module(module: str, args: list[str], timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """`python -m module args...` as a user would type it, output captured."""
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout,
                          env=ENV, **kwargs)


def read_metrics(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines() if line.strip()]


def assert_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-5000:]}"


def small_run(warm_start: dict, out: Path, *extra: str) -> list[str]:
    """Overrides for a short, cheap GRPO run on the warm-started model (tests add their own)."""
    data = warm_start["data"]
    return [
        f"data.train_files={data['train']}", "data.val_files=", "data.max_prompt_length=32",
        "data.max_response_length=8", "data.train_batch_size=8", f"actor_rollout_ref.model.path={warm_start['model']}",
        "algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=4", "actor_rollout_ref.actor.ppo_mini_batch_size=8",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32", "actor_rollout_ref.actor.optim.lr=1e-3",
        f"trainer.default_local_dir={out}", "trainer.progress_bar=false", "trainer.skip_preflight=true", *extra,
    ]
