"""Rollout on `transformers` `model.generate`, sharing weights with the FSDP2 actor (hybrid engine)."""

from __future__ import annotations

import torch
from torch import nn
from transformers import GenerationConfig

from verl.protocol import DataProto
from verl.trainer.config.schema import RolloutConfig
from verl.utils.torch_functional import get_response_mask, logprobs_from_logits, pad_sequence_to_length
from verl.workers.fsdp_utils import unsharded_for_generation
from verl.workers.rollout.base import BaseRollout

GEN_INPUTS = ("input_ids", "attention_mask", "position_ids")


def trim_shared_left_padding(prompts: DataProto) -> DataProto:
    """Drop the left-padding columns that every prompt of the batch has (prompts come padded to
    data.max_prompt_length; generating from the longest prompt in the batch is the same work, less padding)."""
    attended = prompts.batch["attention_mask"].bool().any(dim=0)
    first = int(attended.float().argmax()) if attended.any() else 0
    if first == 0:
        return prompts
    tensors = {key: value[:, first:] if key in GEN_INPUTS else value for key, value in prompts.batch.items()}
    return DataProto.from_dict(tensors, prompts.non_tensor_batch, prompts.meta_info)


class HFRollout(BaseRollout):
    def __init__(self, module: nn.Module, config: RolloutConfig, eos_token_id: int | list[int], pad_token_id: int,
                 reshard_after_forward: bool = True):
        self.module = module
        self.config = config
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.reshard_after_forward = reshard_after_forward

    @torch.no_grad()
    def generate_sequences(self, prompts: DataProto) -> DataProto:
        self.module.eval()
        prompts = trim_shared_left_padding(prompts)
        with unsharded_for_generation(self.module, self.reshard_after_forward):
            outputs = [self._generate(micro) for micro in prompts.split(self.config.micro_batch_size)]
        return DataProto.concat(outputs)

    def _sampling(self, meta: dict) -> tuple[GenerationConfig, float]:
        cfg = self.config
        temperature = meta.get("temperature", cfg.temperature)
        do_sample = meta.get("do_sample", cfg.do_sample) and temperature > 0
        top_k = meta.get("top_k", cfg.top_k)
        generation = GenerationConfig(
            do_sample=do_sample,
            temperature=temperature if do_sample else None,
            top_p=meta.get("top_p", cfg.top_p) if do_sample else None,
            # 0, not None: None lets transformers fall back to its default top_k=50, which would sample from
            # a truncated distribution while the reported log-probs come from the full one.
            top_k=(top_k if top_k > 0 else 0) if do_sample else None,
            max_new_tokens=meta.get("response_length", cfg.response_length),
            eos_token_id=meta.get("eos_token_id", self.eos_token_id),
            pad_token_id=meta.get("pad_token_id", self.pad_token_id),
            return_dict_in_generate=True,
            output_logits=True,
        )
        # Log-probs are reported at the temperature the actor uses to recompute them.
        return generation, (temperature if do_sample else 1.0)

    def _generate(self, micro: DataProto) -> DataProto:
        generation, temperature = self._sampling(micro.meta_info)
        prompt_ids = micro.batch["input_ids"]
        prompt_mask = micro.batch["attention_mask"]
        out = self.module.generate(input_ids=prompt_ids, attention_mask=prompt_mask, generation_config=generation)
        prompt_length = prompt_ids.size(1)
        response_length = generation.max_new_tokens
        responses = pad_sequence_to_length(out.sequences[:, prompt_length:], response_length, generation.pad_token_id)
        logits = torch.stack(out.logits, dim=1).float() / temperature
        log_probs = pad_sequence_to_length(logprobs_from_logits(logits, responses[:, : logits.size(1)]), response_length, 0)
        response_mask = get_response_mask(responses, generation.eos_token_id, dtype=prompt_mask.dtype)
        attention_mask = torch.cat([prompt_mask, response_mask], dim=1)
        # Continue the prompt's positions through the response (padding after EOS keeps counting; it is masked).
        last = micro.batch["position_ids"][:, -1:]
        steps = torch.arange(1, response_length + 1, device=last.device).unsqueeze(0)
        position_ids = torch.cat([micro.batch["position_ids"], last + steps], dim=1)
        return DataProto.from_dict(
            tensors={
                "prompts": prompt_ids,
                "responses": responses,
                "input_ids": torch.cat([prompt_ids, responses], dim=1),
                "attention_mask": attention_mask,
                "position_ids": position_ids,
                "response_mask": response_mask,
                "rollout_log_probs": log_probs * response_mask,
            },
            meta_info=dict(micro.meta_info),
        )
