"""The quickstart task learns: GRPO beats its SFT start, PPO with a critic raises the reward."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import RECIPE, assert_ok, read_metrics, run_module, small_run

# GRPO must add at least this much greedy accuracy on the validation problems (absolute).
GRPO_MARGIN = 0.15


@pytest.mark.slow
def test_grpo_raises_validation_accuracy_over_the_sft_start(warm_start, tmp_path):
    out = tmp_path / "grpo"
    result = run_module("verl.trainer.main_ppo", RECIPE.grpo_overrides(warm_start["data"], warm_start["model"], out, seed=0))
    assert_ok(result)
    validations = [m for m in read_metrics(out) if "val/accuracy" in m]
    before, after = validations[0]["val/accuracy"], validations[-1]["val/accuracy"]
    print(f"GRPO validation accuracy: {before:.3f} after SFT -> {after:.3f} after {RECIPE.grpo_steps} steps")
    assert validations[0]["step"] == 0 and validations[-1]["step"] == RECIPE.grpo_steps
    assert after >= before + GRPO_MARGIN, f"GRPO did not improve enough: {before:.3f} -> {after:.3f}"


@pytest.mark.slow
def test_ppo_with_a_critic_raises_the_mean_reward(warm_start, tmp_path):
    out = tmp_path / "ppo"
    steps = 16
    result = run_module("verl.trainer.main_ppo", small_run(
        warm_start, out, "algorithm.adv_estimator=gae", "critic.optim.lr=1e-3", "critic.ppo_micro_batch_size_per_gpu=32",
        f"trainer.total_training_steps={steps}", "trainer.logger=[console,file]",
    ))
    assert_ok(result)
    metrics = [m for m in read_metrics(out) if "critic/score/mean" in m]
    assert len(metrics) == steps and all("critic/vf_loss" in m for m in metrics), "the critic did not train"
    first = np.mean([m["critic/score/mean"] for m in metrics[:4]])
    last = np.mean([m["critic/score/mean"] for m in metrics[-4:]])
    print(f"PPO (gae) mean reward: first 4 steps {first:.3f} -> last 4 steps {last:.3f}")
    assert last > first + 0.1, f"PPO with a critic did not raise the mean reward: {first:.3f} -> {last:.3f}"
