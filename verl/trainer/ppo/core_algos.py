"""The PPO family's math: advantage estimators, policy and value losses, KL penalties, loss aggregation.

Extension points are registries: adding an algorithm is one decorated function.

    @register_adv_est("my_estimator")
    def compute_my_advantage(token_level_rewards, response_mask, **unused):
        ...
        return advantages, returns

Calling conventions (the trainer relies on them):

- Advantage estimators are called as `fn(**kwargs)` with a superset of these keywords, all on the
  response tokens, shape (batch, response_length) unless noted:
  `token_level_rewards`, `response_mask`, `values` (critic values, or None), `index` (np.ndarray of
  prompt uids, shape (batch,): samples of the same prompt share a uid), `gamma`, `lam`, `epsilon`,
  `norm_adv_by_std_in_grpo`. Each estimator takes the ones it needs and ignores the rest (`**unused`).
  They return `(advantages, returns)`, both (batch, response_length), zero on padding.
- Policy losses are called as `fn(old_log_prob=..., log_prob=..., advantages=..., response_mask=...,
  loss_agg_mode=..., **options)` where options are the loss's own knobs (`clip_ratio_low`,
  `clip_ratio_high`, `clip_ratio_c` for `vanilla`); unknown options are ignored so one trainer call
  serves every loss. They return `(pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower)`.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import torch

from verl.utils import torch_functional as verl_F

if TYPE_CHECKING:
    from verl.protocol import DataProto

LOSS_AGG_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean")
KL_PENALTIES = ("kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3")


class AdvantageEstimator(str, Enum):
    """Names of the built-in estimators (plain strings work everywhere too)."""

    GAE = "gae"
    GRPO = "grpo"
    RLOO = "rloo"
    REINFORCE_PLUS_PLUS = "reinforce_plus_plus"


# ----------------------------------------------------------------------------- registries
ADV_ESTIMATOR_REGISTRY: dict[str, Callable[..., tuple[torch.Tensor, torch.Tensor]]] = {}
POLICY_LOSS_REGISTRY: dict[str, Callable[..., tuple[torch.Tensor, ...]]] = {}


def _name(name: str | Enum) -> str:
    return name.value if isinstance(name, Enum) else str(name)


def _register(registry: dict, kind: str, name: str | Enum) -> Callable[[Callable], Callable]:
    key = _name(name)

    def decorator(fn: Callable) -> Callable:
        if key in registry and registry[key] is not fn:
            raise ValueError(f"{kind} {key!r} is already registered (by {registry[key].__qualname__}); pick another name")
        registry[key] = fn
        return fn

    return decorator


def _lookup(registry: dict, kind: str, name: str | Enum) -> Callable:
    key = _name(name)
    if key not in registry:
        raise ValueError(f"unknown {kind} {key!r}; registered: {', '.join(sorted(registry))}")
    return registry[key]


def register_adv_est(name: str | Enum) -> Callable[[Callable], Callable]:
    """Decorator: register an advantage estimator under `name` (duplicates are refused)."""
    return _register(ADV_ESTIMATOR_REGISTRY, "advantage estimator", name)


def get_adv_estimator_fn(name: str | Enum) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    return _lookup(ADV_ESTIMATOR_REGISTRY, "advantage estimator", name)


def register_policy_loss(name: str) -> Callable[[Callable], Callable]:
    """Decorator: register a policy loss under `name` (duplicates are refused)."""
    return _register(POLICY_LOSS_REGISTRY, "policy loss", name)


def get_policy_loss_fn(name: str) -> Callable[..., tuple[torch.Tensor, ...]]:
    return _lookup(POLICY_LOSS_REGISTRY, "policy loss", name)


# ----------------------------------------------------------------------------- KL controllers
class FixedKLController:
    """A constant KL coefficient."""

    def __init__(self, kl_coef: float):
        self.value = kl_coef

    def update(self, current_kl: float, n_steps: int) -> None:
        pass


class AdaptiveKLController:
    """Ziegler et al.'s controller: nudge the coefficient so the measured KL tracks `target_kl`."""

    def __init__(self, init_kl_coef: float, target_kl: float, horizon: int):
        if horizon <= 0 or target_kl <= 0:
            raise ValueError(f"adaptive KL needs horizon > 0 and target_kl > 0, got horizon={horizon}, target_kl={target_kl}")
        self.value = init_kl_coef
        self.target = target_kl
        self.horizon = horizon

    def update(self, current_kl: float, n_steps: int) -> None:
        proportional_error = float(np.clip(current_kl / self.target - 1, -0.2, 0.2))
        self.value *= 1 + proportional_error * n_steps / self.horizon


def get_kl_controller(kl_ctrl: Any) -> FixedKLController | AdaptiveKLController:
    """Build a controller from the `algorithm.kl_ctrl` section (type, kl_coef, target_kl, horizon)."""
    get = kl_ctrl.get if isinstance(kl_ctrl, dict) else lambda key, default=None: getattr(kl_ctrl, key, default)
    kind = get("type", "fixed")
    if kind == "fixed":
        return FixedKLController(kl_coef=get("kl_coef"))
    if kind == "adaptive":
        return AdaptiveKLController(init_kl_coef=get("kl_coef"), target_kl=get("target_kl"), horizon=get("horizon"))
    raise ValueError(f"unknown algorithm.kl_ctrl.type {kind!r}; allowed: fixed, adaptive")


# ----------------------------------------------------------------------------- advantage estimators
@register_adv_est(AdvantageEstimator.GAE)
def compute_gae_advantage_return(
    token_level_rewards: torch.Tensor,
    values: torch.Tensor,
    response_mask: torch.Tensor,
    gamma: float = 1.0,
    lam: float = 1.0,
    **unused: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over the response tokens; advantages are whitened.

    Padding positions (mask 0) are skipped: they pass the next value and the running GAE through
    unchanged, so a left gap or a right pad never leaks into the real tokens.
    """
    if values is None:
        raise ValueError("the 'gae' advantage estimator needs critic values (enable the critic)")
    with torch.no_grad():
        mask = response_mask.to(values.dtype)
        next_values = torch.zeros_like(values[:, 0])
        last_gae = torch.zeros_like(values[:, 0])
        advantages_reversed = []
        for t in reversed(range(token_level_rewards.shape[-1])):
            delta = token_level_rewards[:, t] + gamma * next_values - values[:, t]
            gae = delta + gamma * lam * last_gae
            next_values = values[:, t] * mask[:, t] + (1 - mask[:, t]) * next_values
            last_gae = gae * mask[:, t] + (1 - mask[:, t]) * last_gae
            advantages_reversed.append(last_gae)
        advantages = torch.stack(advantages_reversed[::-1], dim=1)
        returns = advantages + values
        advantages = verl_F.masked_whiten(advantages, mask) * mask
    return advantages, returns


def _group_statistics(scores: torch.Tensor, index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per response: its group's id, size, mean score and unbiased std (groups = responses sharing an index)."""
    _, group = np.unique(np.asarray(index, dtype=object).astype(str), return_inverse=True)
    group = torch.as_tensor(group.reshape(-1), device=scores.device)
    n_groups = int(group.max()) + 1
    count = torch.zeros(n_groups, dtype=scores.dtype, device=scores.device).index_add_(0, group, torch.ones_like(scores))
    mean = torch.zeros_like(count).index_add_(0, group, scores) / count
    squares = torch.zeros_like(count).index_add_(0, group, (scores - mean[group]) ** 2)
    std = torch.sqrt(squares / (count - 1).clamp(min=1))
    return group, count[group], mean[group], std[group]


def _require_index(name: str, index: np.ndarray | None, batch_size: int) -> None:
    if index is None or len(index) != batch_size:
        raise ValueError(f"the {name!r} advantage estimator needs `index` (one prompt uid per response)")


@register_adv_est(AdvantageEstimator.GRPO)
def compute_grpo_outcome_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    epsilon: float = 1e-6,
    norm_adv_by_std_in_grpo: bool = True,
    **unused: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GRPO: each response's total reward minus its group's mean (divided by the group's std).

    A group is the responses that share an `index` (prompt uid). The std is the unbiased one, as
    upstream; a group of one gets mean 0 and std 1 (its advantage is its raw score).
    """
    _require_index("grpo", index, token_level_rewards.shape[0])
    with torch.no_grad():
        scores = token_level_rewards.sum(dim=-1)
        _, count, mean, std = _group_statistics(scores, index)
        alone = count <= 1
        advantage = scores - torch.where(alone, torch.zeros_like(mean), mean)
        if norm_adv_by_std_in_grpo:
            advantage = advantage / (torch.where(alone, torch.ones_like(std), std) + epsilon)
        advantages = advantage.unsqueeze(-1) * response_mask.to(scores.dtype)
    return advantages, advantages


@register_adv_est(AdvantageEstimator.RLOO)
def compute_rloo_outcome_advantage(
    token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray, **unused: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """RLOO (Ahmadian et al. 2024): each response's reward minus the mean of the other responses to its prompt.

    n/(n-1) * (score - group mean) is that leave-one-out difference; a group of one keeps its raw score.
    """
    _require_index("rloo", index, token_level_rewards.shape[0])
    with torch.no_grad():
        scores = token_level_rewards.sum(dim=-1)
        _, count, mean, _ = _group_statistics(scores, index)
        advantage = torch.where(count > 1, (scores - mean) * count / (count - 1).clamp(min=1), scores)
        advantages = advantage.unsqueeze(-1) * response_mask.to(scores.dtype)
    return advantages, advantages


@register_adv_est(AdvantageEstimator.REINFORCE_PLUS_PLUS)
def compute_reinforce_plus_plus_outcome_advantage(
    token_level_rewards: torch.Tensor, response_mask: torch.Tensor, gamma: float = 1.0, **unused: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """REINFORCE++ (Hu 2025): discounted return-to-go per token, whitened over the batch's valid tokens."""
    with torch.no_grad():
        mask = response_mask.to(token_level_rewards.dtype)
        returns = torch.zeros_like(token_level_rewards)
        running = torch.zeros_like(token_level_rewards[:, 0])
        for t in reversed(range(token_level_rewards.shape[-1])):
            running = token_level_rewards[:, t] + gamma * running
            returns[:, t] = running
            running = running * mask[:, t]  # a padded token cuts the return: nothing flows across the gap
        advantages = verl_F.masked_whiten(returns, mask) * mask
    return advantages, returns


# ----------------------------------------------------------------------------- losses
def agg_loss(loss_mat: torch.Tensor, loss_mask: torch.Tensor, loss_agg_mode: str) -> torch.Tensor:
    """Reduce a (batch, tokens) loss matrix to a scalar.

    token-mean: mean over every valid token of the batch (long answers weigh more).
    seq-mean-token-sum: sum within each sequence, mean over sequences.
    seq-mean-token-mean: mean within each sequence, mean over sequences that have a valid token.
    """
    mask = loss_mask.to(loss_mat.dtype)
    if loss_agg_mode == "token-mean":
        return verl_F.masked_mean(loss_mat, mask)
    if loss_agg_mode == "seq-mean-token-sum":
        return (loss_mat * mask).sum(dim=-1).mean()
    if loss_agg_mode == "seq-mean-token-mean":
        tokens = mask.sum(dim=-1)
        seq_losses = (loss_mat * mask).sum(dim=-1) / tokens.clamp(min=1)
        has_tokens = (tokens > 0).to(loss_mat.dtype)
        return (seq_losses * has_tokens).sum() / has_tokens.sum().clamp(min=1)
    raise ValueError(f"unknown loss_agg_mode {loss_agg_mode!r}; allowed: {', '.join(LOSS_AGG_MODES)}")


@register_policy_loss("vanilla")
def compute_policy_loss_vanilla(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    loss_agg_mode: str = "token-mean",
    clip_ratio_low: float = 0.2,
    clip_ratio_high: float = 0.2,
    clip_ratio_c: float = 3.0,
    **unused: Any,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """PPO's clipped surrogate with dual clip (Ye et al. 2020, arXiv:1912.09729).

    Per token: max(-A*r, -A*clip(r, 1-low, 1+high)); for A < 0 that is further capped at -A*clip_ratio_c,
    so a huge ratio on a bad action cannot blow the loss up.
    Returns (pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower).
    """
    if clip_ratio_c <= 1.0:
        raise ValueError(f"clip_ratio_c must be > 1.0 (the dual-clip bound), got {clip_ratio_c}")
    negative_approx_kl = torch.clamp(log_prob - old_log_prob, min=-20.0, max=20.0)
    ratio = torch.exp(negative_approx_kl)
    ppo_kl = verl_F.masked_mean(-negative_approx_kl, response_mask)

    pg_losses1 = -advantages * ratio
    pg_losses2 = -advantages * torch.clamp(ratio, 1 - clip_ratio_low, 1 + clip_ratio_high)
    clip_pg_losses1 = torch.maximum(pg_losses1, pg_losses2)
    pg_clipfrac = verl_F.masked_mean(torch.gt(pg_losses2, pg_losses1).float(), response_mask)

    pg_losses3 = -advantages * clip_ratio_c
    clip_pg_losses2 = torch.minimum(pg_losses3, clip_pg_losses1)
    pg_clipfrac_lower = verl_F.masked_mean(torch.gt(clip_pg_losses1, pg_losses3).float() * (advantages < 0).float(), response_mask)

    pg_losses = torch.where(advantages < 0, clip_pg_losses2, clip_pg_losses1)
    pg_loss = agg_loss(pg_losses, response_mask, loss_agg_mode)
    return pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower


def compute_value_loss(
    vpreds: torch.Tensor,
    returns: torch.Tensor,
    values: torch.Tensor,
    response_mask: torch.Tensor,
    cliprange_value: float,
    loss_agg_mode: str = "token-mean",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Clipped value loss: 0.5 * agg(max((v - R)^2, (clip(v, old±c) - R)^2)). Returns (vf_loss, vf_clipfrac)."""
    vpred_clipped = verl_F.clip_by_value(vpreds, values - cliprange_value, values + cliprange_value)
    vf_losses1 = (vpreds - returns) ** 2
    vf_losses2 = (vpred_clipped - returns) ** 2
    vf_loss = 0.5 * agg_loss(torch.maximum(vf_losses1, vf_losses2), response_mask, loss_agg_mode)
    vf_clipfrac = verl_F.masked_mean(torch.gt(vf_losses2, vf_losses1).float(), response_mask)
    return vf_loss, vf_clipfrac


def compute_entropy_loss(logits: torch.Tensor, response_mask: torch.Tensor, loss_agg_mode: str = "token-mean") -> torch.Tensor:
    """Aggregated token entropy of the policy (the trainer subtracts coef * this for an entropy bonus)."""
    return agg_loss(verl_F.entropy_from_logits(logits), response_mask, loss_agg_mode)


def kl_penalty(logprob: torch.Tensor, ref_logprob: torch.Tensor, kl_penalty: str) -> torch.Tensor:
    """Per-token KL estimate between the policy and the reference (Schulman's k1/k2/k3).

    kl|k1: log p - log q; abs: |log p - log q|; mse|k2: 0.5 (log p - log q)^2;
    low_var_kl|k3: exp(q-p) - (q-p) - 1 with the log-ratio clamped to ±20 and the result to ±10 (as upstream).
    """
    log_ratio = logprob - ref_logprob
    if kl_penalty in ("kl", "k1"):
        return log_ratio
    if kl_penalty == "abs":
        return log_ratio.abs()
    if kl_penalty in ("mse", "k2"):
        return 0.5 * log_ratio.square()
    if kl_penalty in ("low_var_kl", "k3"):
        kl = torch.clamp(-log_ratio, min=-20, max=20)
        return torch.clamp(torch.exp(kl) - kl - 1, min=-10, max=10)
    raise ValueError(f"unknown kl_penalty {kl_penalty!r}; allowed: {', '.join(KL_PENALTIES)}")


_estimate_kl = kl_penalty  # apply_kl_penalty's argument of the same name (upstream's) shadows the function


def compute_response_mask(data: "DataProto") -> torch.Tensor:
    """The response part of the attention mask (responses are right of the prompt)."""
    response_length = data.batch["responses"].shape[-1]
    return data.batch["attention_mask"][:, -response_length:]


def apply_kl_penalty(data: "DataProto", kl_ctrl: FixedKLController | AdaptiveKLController, kl_penalty: str = "kl") -> tuple["DataProto", dict]:
    """KL as a reward penalty: token_level_rewards = token_level_scores - beta * KL(policy || ref).

    Needs batch keys responses, response_mask (or attention_mask), token_level_scores, old_log_probs,
    ref_log_prob. Updates the controller with the measured KL and returns (data, metrics).
    """
    batch = data.batch
    missing = [k for k in ("responses", "token_level_scores", "old_log_probs", "ref_log_prob") if k not in batch.keys()]
    if "response_mask" not in batch.keys() and "attention_mask" not in batch.keys():
        missing.append("response_mask or attention_mask")
    if missing:
        raise KeyError(f"apply_kl_penalty needs batch keys {missing}; present: {sorted(batch.keys())}")
    response_mask = batch["response_mask"] if "response_mask" in batch.keys() else compute_response_mask(data)
    response_mask = response_mask.to(batch["token_level_scores"].dtype)
    kld = _estimate_kl(batch["old_log_probs"], batch["ref_log_prob"], kl_penalty) * response_mask
    beta = kl_ctrl.value
    batch["token_level_rewards"] = batch["token_level_scores"] - beta * kld
    current_kl = verl_F.masked_mean(kld, response_mask, axis=-1).mean().item()
    kl_ctrl.update(current_kl=current_kl, n_steps=len(data))
    return data, {"actor/reward_kl_penalty": current_kl, "actor/reward_kl_penalty_coeff": beta}
