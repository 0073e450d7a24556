"""Pick the reward function from the config: a custom file, else the built-in rule-based scorers."""

from __future__ import annotations

import torch

from verl.trainer.config.schema import PPOConfig
from verl.utils.errors import UserError
from verl.utils.reward import default_compute_score, load_custom_reward_fn
from verl.utils.reward.default import check_data_source
from verl.utils.reward.manager import NaiveRewardManager


def build_reward_fn(config: PPOConfig, tokenizer, data_sources: set[str] = frozenset()) -> NaiveRewardManager:
    if config.reward_model.enable:
        raise UserError("config error: reward_model.enable=true: model-based rewards are not available in this build; "
                        "use the built-in rule-based rewards or custom_reward_function.path")
    custom = config.custom_reward_function
    if custom.path:
        compute_score = load_custom_reward_fn(custom.path, custom.name)
    else:
        for source in sorted(data_sources):  # fail before training, not at the first reward call
            check_data_source(source)
        compute_score = default_compute_score
    return NaiveRewardManager(tokenizer, compute_score, config.data.reward_fn_key)


def accuracy_of(reward: dict) -> torch.Tensor:
    """Per-response correctness: the scorer's "acc" if it gives one, else score > 0."""
    return torch.tensor(reward["reward_extra_info"]["acc"], dtype=torch.float32)
