"""Score a batch of responses: decode each one, call the reward function, put the score on its last token."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

import torch

from verl.protocol import DataProto
from verl.utils.reward.default import default_compute_score


class NaiveRewardManager:
    """Upstream verl's `naive` reward manager, one response at a time.

    Reads batch keys `prompts` (left-padded, so prompt length = prompts.shape[-1]), `responses` and
    `attention_mask` (prompt then response), and non-tensor keys `reward_model` (its "ground_truth"),
    `reward_fn_key` (default "data_source") and optionally `extra_info`.

    `compute_score` returns a float or a dict with "score" (other keys become per-sample extra info).
    With `return_dict=True` the result is {"reward_tensor", "reward_extra_info"}; the extra info always
    holds "score" and "acc" (from the dict, else score > 0).
    """

    def __init__(self, tokenizer, compute_score: Callable | None = None, reward_fn_key: str = "data_source", num_examine: int = 0):
        self.tokenizer = tokenizer
        self.compute_score = compute_score or default_compute_score
        self.reward_fn_key = reward_fn_key
        self.num_examine = num_examine

    def __call__(self, data: DataProto, return_dict: bool = False) -> torch.Tensor | dict[str, Any]:
        if "rm_scores" in data.batch.keys():  # a reward model already scored the batch
            scores = data.batch["rm_scores"]
            return {"reward_tensor": scores, "reward_extra_info": {}} if return_dict else scores
        self._check_keys(data)
        prompts, responses = data.batch["prompts"], data.batch["responses"]
        prompt_length = prompts.shape[-1]
        attention_mask = data.batch["attention_mask"]
        prompt_lengths = attention_mask[:, :prompt_length].sum(-1).tolist()
        response_lengths = attention_mask[:, prompt_length:].sum(-1).tolist()

        reward_tensor = torch.zeros(responses.shape, dtype=torch.float32)
        extra_info: dict[str, list] = defaultdict(list)
        shown: dict[str, int] = defaultdict(int)
        non_tensor = data.non_tensor_batch
        for i in range(len(data)):
            response_str = self.tokenizer.decode(responses[i, : response_lengths[i]], skip_special_tokens=True)
            ground_truth = non_tensor["reward_model"][i]["ground_truth"]
            data_source = non_tensor[self.reward_fn_key][i]
            result = self.compute_score(
                data_source=data_source,
                solution_str=response_str,
                ground_truth=ground_truth,
                extra_info=non_tensor["extra_info"][i] if "extra_info" in non_tensor else None,
            )
            score = float(result["score"]) if isinstance(result, dict) else float(result)
            for key, value in (result.items() if isinstance(result, dict) else ()):
                if key not in ("score", "acc"):
                    extra_info[key].append(value)
            extra_info["score"].append(score)
            extra_info["acc"].append(bool(result["acc"]) if isinstance(result, dict) and "acc" in result else score > 0)
            if response_lengths[i] > 0:
                reward_tensor[i, response_lengths[i] - 1] = score
            if shown[data_source] < self.num_examine:
                shown[data_source] += 1
                prompt_str = self.tokenizer.decode(prompts[i, prompt_length - prompt_lengths[i] :], skip_special_tokens=True)
                print(f"[prompt] {prompt_str}\n[response] {response_str}\n[ground_truth] {ground_truth}\n[score] {score}")

        if return_dict:
            return {"reward_tensor": reward_tensor, "reward_extra_info": dict(extra_info)}
        return reward_tensor

    def _check_keys(self, data: DataProto) -> None:
        missing = [k for k in ("prompts", "responses", "attention_mask") if k not in data.batch.keys()]
        missing += [k for k in ("reward_model", self.reward_fn_key) if k not in data.non_tensor_batch]
        if missing:
            raise KeyError(
                f"the reward manager needs key(s) {missing}; batch has {sorted(data.batch.keys())}, "
                f"non_tensor_batch has {sorted(data.non_tensor_batch)}"
            )
