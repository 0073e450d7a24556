"""The contract every rollout engine (HF generate here; vLLM and SGLang later) fulfils."""

from __future__ import annotations

from abc import ABC, abstractmethod

from verl.protocol import DataProto


class BaseRollout(ABC):
    """Generate responses for a batch of left-padded prompts.

    Input `prompts.batch`: `input_ids`, `attention_mask`, `position_ids` ([B, prompt_len], left-padded).
    Input `prompts.meta_info` may override sampling per call: `do_sample`, `temperature`, `top_p`,
    `top_k`, `response_length`, `eos_token_id`, `pad_token_id` (validation sends greedy settings).

    Output `batch` ([B, ...], one response per prompt row; repeat the prompts for n samples):
    `prompts` [B, prompt_len], `responses` [B, response_len] (right-padded with pad_token_id),
    `input_ids` = prompts + responses, `attention_mask` and `position_ids` over the whole sequence,
    `response_mask` (1 up to and including EOS), and `rollout_log_probs` [B, response_len]
    (log-probs of the sampled tokens at the sampling temperature, 0 on padding).
    """

    @abstractmethod
    def generate_sequences(self, prompts: DataProto) -> DataProto: ...
