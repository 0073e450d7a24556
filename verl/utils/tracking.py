"""Metric sinks: console, JSON-lines file, and tensorboard / wandb when they are installed."""

from __future__ import annotations

import importlib.util
import json
import logging
import math
from pathlib import Path

log = logging.getLogger(__name__)

# Shown on the console line (short label -> key), when present; everything goes to the file.
CONSOLE_KEYS = {
    "reward": "critic/score/mean", "acc": "critic/accuracy", "val_acc": "val/accuracy", "entropy": "actor/entropy",
    "kl": "actor/ppo_kl", "clipfrac": "actor/pg_clipfrac", "resp_len": "response_length/mean",
    "step_s": "timing_s/step", "tok/s": "perf/tokens_per_s", "loss": "train/loss", "val_loss": "val/loss",
}


class Tracking:
    def __init__(self, loggers: list[str], log_dir: str | Path, project: str, experiment: str, config: dict,
                 console=print):
        self.loggers = list(loggers)
        self.console = console
        self.file = None
        self.tb = None
        self.wandb = None
        if "file" in loggers:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            self.path = Path(log_dir) / "metrics.jsonl"
            self.file = open(self.path, "a")
        if "tensorboard" in loggers:
            if importlib.util.find_spec("tensorboard") is None:
                log.warning("logger 'tensorboard' requested but tensorboard is not installed; skipping it")
            else:
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(Path(log_dir) / "tensorboard"))
        if "wandb" in loggers:
            if importlib.util.find_spec("wandb") is None:
                log.warning("logger 'wandb' requested but wandb is not installed; skipping it")
            else:
                import wandb

                self.wandb = wandb.init(project=project, name=experiment, config=config)

    def log(self, metrics: dict[str, float], step: int) -> None:
        metrics = {k: float(v) for k, v in metrics.items()}
        if self.file:
            self.file.write(json.dumps({"step": step, **{k: v for k, v in metrics.items() if math.isfinite(v)}}) + "\n")
            self.file.flush()
        if "console" in self.loggers:
            shown = [f"{label}={metrics[key]:.4g}" for label, key in CONSOLE_KEYS.items() if key in metrics]
            self.console(f"step {step}: " + "  ".join(shown))
        if self.tb:
            for key, value in metrics.items():
                self.tb.add_scalar(key, value, step)
        if self.wandb:
            self.wandb.log(metrics, step=step)

    def close(self) -> None:
        if self.file:
            self.file.close()
        if self.tb:
            self.tb.close()
        if self.wandb:
            self.wandb.finish()
