"""The quickstart task learns: GRPO beats its SFT start on held-out problems, PPO with a critic raises the reward.

Validation runs on the quickstart's held-out split (200 "a+b" problems, a <= 99, b <= 9, none of them in
training). Measured with the recipe's fixed seeds: GRPO 75.0% -> 88.5% in 40 steps, PPO (gae) 75.0% -> 87.5% in 21."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from e2e_support import RECIPE, assert_ok, read_metrics, run_module
from verl.trainer.quickstart import Recipe

# GRPO must add at least this much greedy accuracy on the held-out problems (absolute): 20 of 200.
GRPO_MARGIN = 0.10


def test_validation_is_on_held_out_problems(warm_start):
    """The accuracy the tests assert is measured on problems GRPO never trains on."""
    train, held_out = (pd.read_parquet(warm_start["data"][split]) for split in ("train", "test"))
    assert RECIPE.val_files == "test" and len(held_out) == RECIPE.n_test >= 100
    questions = {p[0]["content"] for p in train["prompt"]}
    assert not questions & {p[0]["content"] for p in held_out["prompt"]}


@pytest.mark.slow
def test_grpo_raises_validation_accuracy_over_the_sft_start(warm_start, tmp_path):
    out = tmp_path / "grpo"
    result = run_module("verl.trainer.main_ppo", RECIPE.grpo_overrides(warm_start["data"], warm_start["model"], out, seed=0))
    assert_ok(result)
    validations = [m for m in read_metrics(out) if "val/accuracy" in m]
    before, after = validations[0]["val/accuracy"], validations[-1]["val/accuracy"]
    print(f"GRPO held-out accuracy: {before:.3f} after SFT -> {after:.3f} after {RECIPE.grpo_steps} steps")
    assert validations[0]["step"] == 0 and validations[-1]["step"] == RECIPE.grpo_steps
    assert after >= before + GRPO_MARGIN, f"GRPO did not raise held-out accuracy by {GRPO_MARGIN}: {before:.3f} -> {after:.3f}"


@pytest.mark.slow
def test_ppo_with_a_critic_raises_the_mean_reward(warm_start, tmp_path):
    out = tmp_path / "ppo"
    steps = 21
    recipe = Recipe(grpo_steps=steps, extra_overrides=[
        "algorithm.adv_estimator=gae", "critic.optim.lr=1e-3", "critic.ppo_micro_batch_size_per_gpu=128",
    ])
    overrides = recipe.grpo_overrides(warm_start["data"], warm_start["model"], out, seed=0) + ["trainer.test_freq=7"]
    result = run_module("verl.trainer.main_ppo", overrides)
    assert_ok(result)
    metrics = read_metrics(out)
    train = [m for m in metrics if "critic/score/mean" in m]
    assert len(train) == steps and all("critic/vf_loss" in m for m in train), "the critic did not train"
    validations = [m["val/reward_mean"] for m in metrics if "val/reward_mean" in m]
    first, last = np.mean([m["critic/score/mean"] for m in train[:4]]), np.mean([m["critic/score/mean"] for m in train[-4:]])
    print(f"PPO (gae) greedy reward on the held-out problems: {validations[0]:.3f} -> {validations[-1]:.3f}; "
          f"sampled reward: first 4 steps {first:.3f} -> last 4 steps {last:.3f}")
    assert validations[-1] >= validations[0] + 0.1, f"PPO with a critic did not raise the held-out reward: {validations}"
    assert last > first, f"the sampled reward fell: {first:.3f} -> {last:.3f}"
