"""Advantage estimators, losses and KL variants against values computed by hand (worked in the comments)."""

import math
import statistics

import numpy as np
import pytest
import torch

from verl.protocol import DataProto
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.core_algos import (
    ADV_ESTIMATOR_REGISTRY,
    AdaptiveKLController,
    FixedKLController,
    agg_loss,
    apply_kl_penalty,
    compute_entropy_loss,
    compute_gae_advantage_return,
    compute_grpo_outcome_advantage,
    compute_policy_loss_vanilla,
    compute_value_loss,
    get_adv_estimator_fn,
    get_kl_controller,
    get_policy_loss_fn,
    kl_penalty,
    register_adv_est,
)

approx = lambda values: pytest.approx(values, abs=1e-5)  # noqa: E731


def whiten(values):
    mean, std = statistics.mean(values), statistics.stdev(values)
    return [(v - mean) / std for v in values]


# ----------------------------------------------------------------------------- GAE
def test_gae_by_hand_with_a_padded_row():
    # gamma = lam = 0.5. Row 0, rewards [0,0,1], values [.5,.5,.5]:
    #   t2: delta = 1 - .5 = .5                 -> A2 = .5
    #   t1: delta = 0 + .5*.5 - .5 = -.25       -> A1 = -.25 + .25*.5 = -.125
    #   t0: delta = -.25                         -> A0 = -.25 + .25*(-.125) = -.28125
    # Row 1 has its last token padded (value 9 there must not leak): rewards [0,1,0], values [.5,.5,9], mask [1,1,0]
    #   t1: delta = 1 - .5 = .5 -> A1 = .5;  t0: delta = .25 - .5 = -.25 -> A0 = -.25 + .25*.5 = -.125
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    values = torch.tensor([[0.5, 0.5, 0.5], [0.5, 0.5, 9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    advantages, returns = compute_gae_advantage_return(rewards, values, mask, gamma=0.5, lam=0.5)
    raw = [-0.28125, -0.125, 0.5, -0.125, 0.5]
    assert returns[0].tolist() == approx([-0.28125 + 0.5, -0.125 + 0.5, 1.0])
    assert returns[1, :2].tolist() == approx([0.375, 1.0])
    assert advantages[mask.bool()].tolist() == approx(whiten(raw))  # whitened over the 5 valid tokens
    assert advantages[1, 2].item() == 0.0


def test_gae_needs_values():
    with pytest.raises(ValueError, match="needs critic values"):
        get_adv_estimator_fn("gae")(token_level_rewards=torch.zeros(1, 2), values=None, response_mask=torch.ones(1, 2))


# ----------------------------------------------------------------------------- GRPO, RLOO
def grouped_rewards():
    """Groups a = [1, 0], b = [1, 1, 0], c = [1], reward on each response's last valid token."""
    scores, lengths = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [3, 1, 2, 3, 2, 1]
    rewards, mask = torch.zeros(6, 3), torch.zeros(6, 3)
    for row, (score, length) in enumerate(zip(scores, lengths)):
        mask[row, :length] = 1
        rewards[row, length - 1] = score
    return rewards, mask, np.array(["a", "a", "b", "b", "b", "c"], dtype=object)


def test_grpo_by_hand():
    # Groups: a = [1, 0], b = [1, 1, 0], c = [1] (alone: mean 0, std 1).
    # a: mean .5, unbiased std sqrt(.5) -> +-.5/sqrt(.5) = +-0.70711
    # b: mean 2/3, std sqrt(1/3)        -> (1/3)/sqrt(1/3) = 0.57735, (-2/3)/sqrt(1/3) = -1.15470
    rewards, mask, index = grouped_rewards()
    advantages, returns = compute_grpo_outcome_advantage(rewards, mask, index)
    expected = [0.70711, -0.70711, 0.57735, 0.57735, -1.15470, 1.0]
    assert advantages.sum(-1).div(mask.sum(-1)).tolist() == approx(expected)  # same value on every valid token
    assert (advantages[mask == 0] == 0).all() and torch.equal(advantages, returns)

    plain, _ = compute_grpo_outcome_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=False)
    assert plain[:, 0].tolist() == approx([0.5, -0.5, 1 / 3, 1 / 3, -2 / 3, 1.0])


def test_grpo_through_the_registry_ignores_keywords_it_does_not_use():
    fn = get_adv_estimator_fn("grpo")
    adv, _ = fn(token_level_rewards=torch.tensor([[1.0], [0.0]]), response_mask=torch.ones(2, 1), index=np.array([0, 0]), values=None, gamma=1.0, lam=1.0)
    assert adv[:, 0].tolist() == approx([0.70711, -0.70711])


def test_rloo_by_hand():
    # leave-one-out baseline: a: 1-0, 0-1; b: 1-mean(1,0), 1-mean(1,0), 0-mean(1,1); c alone keeps 1
    rewards, mask, index = grouped_rewards()
    advantages, _ = get_adv_estimator_fn("rloo")(token_level_rewards=rewards, response_mask=mask, index=index, gamma=1.0)
    assert advantages[:, 0].tolist() == approx([1.0, -1.0, 0.5, 0.5, -1.0, 1.0])
    assert (advantages[mask == 0] == 0).all()


def test_reinforce_plus_plus_by_hand():
    # gamma .5: row 0 rewards [0,0,1] -> returns [.25, .5, 1]; row 1 [0,1,(pad)] -> [.5, 1, -]
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    advantages, returns = get_adv_estimator_fn("reinforce_plus_plus")(token_level_rewards=rewards, response_mask=mask, gamma=0.5, index=None)
    assert returns[0].tolist() == approx([0.25, 0.5, 1.0]) and returns[1, :2].tolist() == approx([0.5, 1.0])
    assert advantages[mask.bool()].tolist() == approx(whiten([0.25, 0.5, 1.0, 0.5, 1.0]))
    assert advantages[1, 2].item() == 0.0


# ----------------------------------------------------------------------------- registries
def test_registry_refuses_duplicates_and_lists_names():
    with pytest.raises(ValueError, match="'grpo' is already registered"):
        register_adv_est("grpo")(lambda **kw: None)
    with pytest.raises(ValueError, match=r"unknown advantage estimator 'gpro'; registered: gae, grpo, reinforce_plus_plus, rloo$"):
        get_adv_estimator_fn("gpro")
    with pytest.raises(ValueError, match="unknown policy loss 'nope'; registered: .*vanilla"):
        get_policy_loss_fn("nope")


def test_adding_an_estimator_is_one_decorated_function():
    try:

        @register_adv_est("constant_one")
        def constant_one(token_level_rewards, response_mask, **unused):
            return response_mask.float(), response_mask.float()

        adv, _ = get_adv_estimator_fn("constant_one")(token_level_rewards=torch.zeros(1, 2), response_mask=torch.ones(1, 2), index=None)
        assert adv.tolist() == [[1.0, 1.0]]
    finally:
        ADV_ESTIMATOR_REGISTRY.pop("constant_one", None)


# ----------------------------------------------------------------------------- policy loss
def policy_case():
    # old log-prob 0, so ratio r = exp(log_prob). Four valid tokens, one pad per row:
    #   A=+1 r=1.5: max(-1.5, -1.2) = -1.2 (clipped)      A=+1 r=0.5: max(-0.5, -0.8) = -0.5
    #   A=-1 r=0.5: max(0.5, 0.8) = 0.8 (clipped), min(3, .8) = .8
    #   A=-1 r=5.0: max(5, 1.2) = 5, dual clip min(3, 5) = 3 (lower clip)
    ratios = torch.tensor([[1.5, 0.5, 1.0], [0.5, 5.0, 1.0]])
    advantages = torch.tensor([[1.0, 1.0, 7.0], [-1.0, -1.0, 7.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    return torch.zeros(2, 3), ratios.log(), advantages, mask


def test_vanilla_policy_loss_by_hand_with_dual_clip():
    old, new, advantages, mask = policy_case()
    pg_loss, clipfrac, ppo_kl, clipfrac_lower = compute_policy_loss_vanilla(old, new, advantages, mask)
    assert pg_loss.item() == approx((-1.2 - 0.5 + 0.8 + 3.0) / 4)
    assert clipfrac.item() == approx(0.5) and clipfrac_lower.item() == approx(0.25)
    assert ppo_kl.item() == approx(-math.log(1.5 * 0.5 * 0.5 * 5.0) / 4)
    seq_sum, *_ = get_policy_loss_fn("vanilla")(old_log_prob=old, log_prob=new, advantages=advantages, response_mask=mask, loss_agg_mode="seq-mean-token-sum")
    assert seq_sum.item() == approx(((-1.2 - 0.5) + (0.8 + 3.0)) / 2)


def test_asymmetric_clip_and_a_bad_dual_clip_bound():
    old, new, advantages, mask = policy_case()
    # clip_ratio_high 0.6 lets r=1.5 through unclipped: -1.5 instead of -1.2
    pg_loss, clipfrac, _, _ = compute_policy_loss_vanilla(old, new, advantages, mask, clip_ratio_low=0.2, clip_ratio_high=0.6)
    assert pg_loss.item() == approx((-1.5 - 0.5 + 0.8 + 3.0) / 4) and clipfrac.item() == approx(0.25)
    with pytest.raises(ValueError, match="clip_ratio_c must be > 1.0"):
        compute_policy_loss_vanilla(old, new, advantages, mask, clip_ratio_c=1.0)


def test_policy_loss_gradient_is_zero_on_clipped_tokens():
    old, new, advantages, mask = policy_case()
    new = new.clone().requires_grad_(True)
    compute_policy_loss_vanilla(old, new, advantages, mask)[0].backward()
    # d/dlogp of -A*r is -A*r/4 on unclipped tokens (0.5 ratio with A=+1 -> -0.125); clipped tokens get 0
    torch.testing.assert_close(new.grad, torch.tensor([[0.0, -0.125, 0.0], [0.0, 0.0, 0.0]]))


# ----------------------------------------------------------------------------- aggregation
def test_agg_loss_modes_by_hand():
    loss = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [0, 0, 0]])
    assert agg_loss(loss, mask, "token-mean").item() == approx((1 + 2 + 3 + 4) / 4)
    assert agg_loss(loss, mask, "seq-mean-token-sum").item() == approx((6 + 4 + 0) / 3)
    assert agg_loss(loss, mask, "seq-mean-token-mean").item() == approx((2 + 4) / 2)  # the empty row is skipped
    with pytest.raises(ValueError, match="unknown loss_agg_mode 'token_mean'; allowed: token-mean, seq-mean-token-sum, seq-mean-token-mean"):
        agg_loss(loss, mask, "token_mean")


# ----------------------------------------------------------------------------- value loss
def test_value_loss_by_hand():
    # returns 1, old values .5, clip .2 -> clipped preds .7/.7/.3
    #   v=1: max(0, .09) = .09 (clipped counts)   v=2: max(1, .09) = 1   v=0: max(1, .49) = 1
    vf_loss, vf_clipfrac = compute_value_loss(
        vpreds=torch.tensor([[1.0, 2.0, 0.0, 5.0]]),
        returns=torch.ones(1, 4),
        values=torch.full((1, 4), 0.5),
        response_mask=torch.tensor([[1, 1, 1, 0]]),
        cliprange_value=0.2,
        loss_agg_mode="token-mean",
    )
    assert vf_loss.item() == approx(0.5 * (0.09 + 1 + 1) / 3)
    assert vf_clipfrac.item() == approx(1 / 3)


# ----------------------------------------------------------------------------- KL
@pytest.mark.parametrize(
    "name, p_over_q_2, p_over_q_half",
    [
        # log p - log q = +ln2 and -ln2
        ("kl", math.log(2), -math.log(2)),
        ("k1", math.log(2), -math.log(2)),
        ("abs", math.log(2), math.log(2)),
        ("mse", 0.5 * math.log(2) ** 2, 0.5 * math.log(2) ** 2),
        ("k2", 0.5 * math.log(2) ** 2, 0.5 * math.log(2) ** 2),
        # k3 = exp(q-p) - (q-p) - 1: 0.5 + ln2 - 1 and 2 - ln2 - 1
        ("low_var_kl", 0.5 + math.log(2) - 1, 2 - math.log(2) - 1),
        ("k3", 0.5 + math.log(2) - 1, 2 - math.log(2) - 1),
    ],
)
def test_kl_variants_by_hand(name, p_over_q_2, p_over_q_half):
    logp = torch.tensor([math.log(0.5), math.log(0.25)])
    ref = torch.tensor([math.log(0.25), math.log(0.5)])
    assert kl_penalty(logp, ref, name).tolist() == approx([p_over_q_2, p_over_q_half])


def test_low_var_kl_is_clamped_and_unknown_kl_is_refused():
    # q - p = -100 is clamped to -20: exp(-20) + 20 - 1 = 19.000000002, then clamped to 10
    assert kl_penalty(torch.tensor([0.0]), torch.tensor([-100.0]), "k3").item() == 10.0
    with pytest.raises(ValueError, match="unknown kl_penalty 'k4'; allowed: kl, k1, abs, mse, k2, low_var_kl, k3"):
        kl_penalty(torch.zeros(1), torch.zeros(1), "k4")


def test_entropy_loss():
    # uniform over 4 tokens: ln 4; one-hot-ish (logit 100 vs 0s): ~0
    logits = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0]]])
    assert compute_entropy_loss(logits, torch.tensor([[1, 0]])).item() == approx(math.log(4))
    assert compute_entropy_loss(logits, torch.tensor([[1, 1]])).item() == approx(math.log(4) / 2)


# ----------------------------------------------------------------------------- KL controllers and the reward penalty
def test_kl_controllers():
    fixed = get_kl_controller({"type": "fixed", "kl_coef": 0.1})
    fixed.update(current_kl=5.0, n_steps=10)
    assert isinstance(fixed, FixedKLController) and fixed.value == 0.1
    adaptive = get_kl_controller({"type": "adaptive", "kl_coef": 0.1, "target_kl": 0.1, "horizon": 100})
    assert isinstance(adaptive, AdaptiveKLController)
    adaptive.update(current_kl=0.2, n_steps=10)  # error 1.0 clipped to 0.2: x (1 + 0.2 * 10/100)
    assert adaptive.value == approx(0.102)
    adaptive.update(current_kl=0.05, n_steps=10)  # error -0.5 clipped to -0.2
    assert adaptive.value == approx(0.102 * 0.98)
    with pytest.raises(ValueError, match="allowed: fixed, adaptive"):
        get_kl_controller({"type": "pid", "kl_coef": 0.1})


def test_apply_kl_penalty_subtracts_beta_times_kl_on_response_tokens():
    old = torch.tensor([[-1.0, -1.0, -1.0], [-2.0, -2.0, -2.0]])
    ref = torch.tensor([[-1.5, -0.5, -1.0], [-1.0, -1.0, -1.0]])
    scores = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    attention = torch.tensor([[1, 1, 1, 1, 1], [0, 1, 1, 1, 0]])  # prompt of 2, then the response mask
    data = DataProto.from_dict(
        {"responses": torch.zeros(2, 3, dtype=torch.long), "attention_mask": attention, "token_level_scores": scores, "old_log_probs": old, "ref_log_prob": ref}
    )
    data, metrics = apply_kl_penalty(data, FixedKLController(0.5), kl_penalty="kl")
    # k1 = old - ref: row 0 [.5, -.5, 0], row 1 [-1, -1, (pad) 0]
    torch.testing.assert_close(data.batch["token_level_rewards"], torch.tensor([[-0.25, 0.25, 1.0], [0.5, 1.5, 0.0]]))
    assert metrics["actor/reward_kl_penalty"] == approx((0.0 + -1.0) / 2)
    assert metrics["actor/reward_kl_penalty_coeff"] == 0.5
    with pytest.raises(KeyError, match=r"needs batch keys \['ref_log_prob'\]"):
        apply_kl_penalty(DataProto.from_dict({"responses": torch.zeros(1, 1), "attention_mask": torch.ones(1, 1), "token_level_scores": torch.zeros(1, 1), "old_log_probs": torch.zeros(1, 1)}), FixedKLController(0.1))


def test_module_exports_upstream_names():
    for name in ("compute_gae_advantage_return", "compute_grpo_outcome_advantage", "compute_policy_loss_vanilla", "compute_value_loss", "kl_penalty", "agg_loss"):
        assert callable(getattr(core_algos, name))
