"""Rewards: rule-based math, custom functions from a file, a sandbox for code, and the batched reward manager.

`default_compute_score(data_source, solution_str, ground_truth, extra_info=None)` is the built-in
reward; `load_custom_reward_fn(path, name)` loads a user's function with the same signature;
`NaiveRewardManager` scores a whole DataProto of responses with either.
"""

from verl.utils.reward.custom import load_custom_reward_fn
from verl.utils.reward.default import default_compute_score

__all__ = ["default_compute_score", "load_custom_reward_fn"]
