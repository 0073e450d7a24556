"""The PPO actor: log-probs and entropy of responses, and the clipped policy-gradient update.

`update_policy` reads as the algorithm: for each mini-batch, zero grads, accumulate over
micro-batches (policy loss - entropy bonus + KL loss), clip the gradient norm, step.
"""

from __future__ import annotations

import torch
from torch import nn

from verl.protocol import DataProto
from verl.trainer.config.schema import ActorConfig
from verl.trainer.ppo import core_algos
from verl.utils.torch_functional import entropy_from_logits, logprobs_from_logits, masked_mean, pad_sequence_to_length
from verl.workers.fsdp_utils import clip_grad_norm

MODEL_INPUTS = ["input_ids", "attention_mask", "position_ids", "responses"]


def forward_response_logits(module: nn.Module, micro: DataProto, causal_lm: bool = False) -> torch.Tensor:
    """Logits (or values) at the positions that predict each response token: [batch, width, ...].

    Columns no row of `micro` attends to are cut before the forward pass: the left padding shared by all
    prompts, and the response columns after the longest response (so `width` <= response length; callers
    pad back with `pad_to_responses`). Masked columns never influence the kept ones in a causal model with
    explicit position ids, so the result is the same as on the full width, only cheaper. A `causal_lm`
    computes its LM head only at those positions (`logits_to_keep`), not at every prompt token.
    """
    batch = micro.batch
    response_length = batch["responses"].size(-1)
    prompt_length = batch["input_ids"].size(-1) - response_length
    attended = batch["attention_mask"].bool().any(dim=0)
    first = int(attended[:prompt_length].float().argmax()) if attended[:prompt_length].any() else 0
    width = max(1, int(attended[prompt_length:].nonzero().max()) + 1 if attended[prompt_length:].any() else 1)
    columns = slice(first, prompt_length + width)
    head = {"logits_to_keep": width + 1} if causal_lm else {}
    output = module(
        input_ids=batch["input_ids"][:, columns], attention_mask=batch["attention_mask"][:, columns],
        position_ids=batch["position_ids"][:, columns], use_cache=False, **head,
    )
    return output.logits[:, -width - 1 : -1]


def pad_to_responses(values: torch.Tensor, micro: DataProto) -> torch.Tensor:
    """Zero-pad per-token [batch, width] values back to the full response length (masked columns)."""
    return pad_sequence_to_length(values, micro.batch["responses"].size(-1), 0)


class DataParallelPPOActor:
    def __init__(self, config: ActorConfig, module: nn.Module, optimizer: torch.optim.Optimizer | None = None,
                 lr_scheduler=None):
        self.config = config
        self.module = module
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler

    def _forward_micro_batch(self, micro: DataProto, temperature: float, calculate_entropy: bool,
                             entropy_grad: bool = True):
        logits = forward_response_logits(self.module, micro, causal_lm=True).float()
        logits = logits / max(temperature, 1e-6)
        log_probs = logprobs_from_logits(logits, micro.batch["responses"][:, : logits.size(1)])
        entropy = None
        if calculate_entropy:
            # Without an entropy bonus the entropy is only a metric: no autograd graph for it.
            with torch.set_grad_enabled(torch.is_grad_enabled() and entropy_grad):
                entropy = pad_to_responses(entropy_from_logits(logits), micro)
        return pad_to_responses(log_probs, micro), entropy

    @torch.no_grad()
    def compute_log_prob(self, data: DataProto, micro_batch_size: int, calculate_entropy: bool = False):
        """Per-token log-probs (and entropy) of `responses` under the current weights."""
        self.module.eval()
        temperature = data.meta_info.get("temperature", 1.0)
        log_probs, entropies = [], []
        for micro in data.select(batch_keys=MODEL_INPUTS).split(micro_batch_size):
            lp, ent = self._forward_micro_batch(micro, temperature, calculate_entropy)
            log_probs.append(lp)
            entropies.append(ent)
        entropy = torch.cat(entropies) if calculate_entropy else None
        return torch.cat(log_probs), entropy

    def update_policy(self, data: DataProto, mini_batch_size: int, micro_batch_size: int) -> dict[str, list[float]]:
        """PPO epochs over `data` split into mini-batches (one optimizer step each). Returns metric lists."""
        cfg = self.config
        self.module.train()
        temperature = data.meta_info.get("temperature", 1.0)
        keys = MODEL_INPUTS + ["response_mask", "old_log_probs", "advantages"] + (["ref_log_prob"] if cfg.use_kl_loss else [])
        data = data.select(batch_keys=keys)
        policy_loss_fn = core_algos.get_policy_loss_fn(cfg.policy_loss)
        metrics: dict[str, list[float]] = {}

        def record(**values):
            for key, value in values.items():
                metrics.setdefault(f"actor/{key}", []).append(torch.as_tensor(value).detach().item())

        for _ in range(cfg.ppo_epochs):
            for mini in data.make_iterator(mini_batch_size, epochs=1, shuffle=cfg.shuffle):
                micros = mini.split(micro_batch_size)
                self.optimizer.zero_grad()
                for micro in micros:
                    batch = micro.batch
                    mask = batch["response_mask"]
                    log_prob, entropy = self._forward_micro_batch(micro, temperature, calculate_entropy=True,
                                                                  entropy_grad=cfg.entropy_coeff != 0)
                    pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower = policy_loss_fn(
                        old_log_prob=batch["old_log_probs"], log_prob=log_prob, advantages=batch["advantages"],
                        response_mask=mask, loss_agg_mode=cfg.loss_agg_mode, clip_ratio_low=cfg.clip_ratio_low,
                        clip_ratio_high=cfg.clip_ratio_high, clip_ratio_c=cfg.clip_ratio_c,
                    )
                    entropy_loss = core_algos.agg_loss(entropy, mask, cfg.loss_agg_mode)
                    loss = pg_loss - cfg.entropy_coeff * entropy_loss
                    if cfg.use_kl_loss:
                        kld = core_algos.kl_penalty(log_prob, batch["ref_log_prob"], cfg.kl_loss_type)
                        kl_loss = core_algos.agg_loss(kld, mask, cfg.loss_agg_mode)
                        loss = loss + cfg.kl_loss_coef * kl_loss
                        record(kl_loss=kl_loss.detach())
                    (loss / len(micros)).backward()
                    record(pg_loss=pg_loss.detach(), pg_clipfrac=pg_clipfrac, ppo_kl=ppo_kl,
                           pg_clipfrac_lower=pg_clipfrac_lower, entropy=masked_mean(entropy.detach(), mask))
                grad_norm = clip_grad_norm(self.module, cfg.grad_clip)
                if torch.isfinite(torch.tensor(grad_norm)):
                    self.optimizer.step()
                else:  # a NaN/inf gradient would poison the weights: skip this step, keep training
                    self.optimizer.zero_grad()
                self.lr_scheduler.step()
                record(grad_norm=grad_norm, lr=self.lr_scheduler.get_last_lr()[0])
        self.optimizer.zero_grad(set_to_none=True)
        return metrics
