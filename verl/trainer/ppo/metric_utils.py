"""Per-step metrics computed from the batch, phase timings and throughput."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

import numpy as np
import torch

from verl.protocol import DataProto
from verl.utils.torch_functional import masked_mean


@contextlib.contextmanager
def timer(name: str, timing: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timing[name] = timing.get(name, 0.0) + time.perf_counter() - start


def _stats(prefix: str, values: torch.Tensor) -> dict[str, float]:
    values = values.float()
    return {f"{prefix}/mean": values.mean().item(), f"{prefix}/max": values.max().item(), f"{prefix}/min": values.min().item()}


def compute_data_metrics(batch: DataProto, use_critic: bool) -> dict[str, float]:
    """Scores, rewards, advantages, lengths (and values/returns with a critic) of one training batch."""
    b = batch.batch
    mask = b["response_mask"].bool()
    response_length = mask.sum(-1).float()
    max_len = b["responses"].size(-1)
    valid_adv = torch.masked_select(b["advantages"], mask)
    metrics = {
        **_stats("critic/score", b["token_level_scores"].sum(-1)),
        **_stats("critic/rewards", b["token_level_rewards"].sum(-1)),
        "critic/advantages/mean": valid_adv.mean().item() if valid_adv.numel() else 0.0,
        **_stats("response_length", response_length),
        "response_length/clip_ratio": (response_length == max_len).float().mean().item(),
        **_stats("prompt_length", (b["attention_mask"].sum(-1) - response_length)),
    }
    if "entropys" in b.keys():
        metrics["actor/entropy"] = masked_mean(b["entropys"], mask).item()
    if use_critic:
        metrics["critic/values/mean"] = masked_mean(b["values"], mask).item()
        metrics["critic/returns/mean"] = masked_mean(b["returns"], mask).item()
    return metrics


def compute_timing_metrics(timing: dict[str, float], batch: DataProto) -> dict[str, float]:
    """Seconds per phase, and tokens (prompt + response) processed per second over the whole step."""
    tokens = batch.batch["attention_mask"].sum().item()
    metrics = {f"timing_s/{name}": seconds for name, seconds in timing.items()}
    if timing.get("step"):
        metrics["perf/tokens_per_s"] = tokens / timing["step"]
        metrics["perf/total_num_tokens"] = tokens
    return metrics


def reduce_metrics(metrics: dict[str, list[float]]) -> dict[str, float]:
    """Mean of each list of per-micro-batch values returned by the workers."""
    return {key: float(np.mean(values)) for key, values in metrics.items()}
