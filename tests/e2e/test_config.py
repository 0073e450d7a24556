"""The shipped YAML files and the typed schema agree, and overrides behave as verl users expect."""

from __future__ import annotations

import pytest
import yaml
from pydantic import BaseModel

from verl.trainer.config import CONFIG_DIR, load_config
from verl.trainer.config.schema import PPOConfig, SFTConfig
from verl.utils.errors import UserError


def _schema_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys = set()
    for name, field in model.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            keys |= _schema_keys(sub, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


def _yaml_keys(tree: dict, prefix: str = "") -> set[str]:
    keys = set()
    for name, value in tree.items():
        if isinstance(value, dict) and value:
            keys |= _yaml_keys(value, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


@pytest.mark.parametrize("schema, name", [(PPOConfig, "ppo_trainer.yaml"), (SFTConfig, "sft_trainer.yaml")])
def test_yaml_lists_every_schema_key_and_nothing_else(schema, name):
    tree = yaml.safe_load((CONFIG_DIR / name).read_text())
    assert _yaml_keys(tree) == _schema_keys(schema)
    load_config(schema, CONFIG_DIR / name)  # and the defaults validate


def test_overrides_set_add_delete_and_interpolate():
    config = load_config(PPOConfig, CONFIG_DIR / "ppo_trainer.yaml", [
        "data.max_response_length=16", "actor_rollout_ref.actor.optim.lr=3e-4", "+trainer.experiment_name=exp",
        "~custom_reward_function.path", "algorithm.adv_estimator=grpo",
    ])
    assert config.actor_rollout_ref.rollout.response_length == 16  # ${data.max_response_length}
    assert config.actor_rollout_ref.actor.optim.lr == pytest.approx(3e-4)
    assert config.trainer.default_local_dir == "checkpoints/verl/exp"
    assert config.critic.enable is False  # grpo needs no critic
    assert config.actor_rollout_ref.actor.clip_ratio_high == 0.2


@pytest.mark.parametrize("override, message", [
    ("critic.optim.lr=-1", "critic.optim.lr: Input should be greater than 0"),
    ("actor_rollout_ref.rollout.top_p=1.5", "actor_rollout_ref.rollout.top_p: Input should be less than or equal to 1"),
    ("trainer.logger=[console,mlflow]", "trainer.logger.1: Input should be 'console', 'file', 'tensorboard' or 'wandb'"),
    ("data.train_batch_size", "is not of the form key=value"),
    ("algorithm.gama=0.9", "did you mean 'algorithm.gamma'?"),
    ("actor_rollout_ref.actor.ppo_mini_batch_size=300",
     "actor_rollout_ref.actor.ppo_mini_batch_size=300 must divide data.train_batch_size=1024"),
])
def test_bad_values_name_the_field_and_what_is_allowed(override, message):
    with pytest.raises(UserError) as error:
        load_config(PPOConfig, CONFIG_DIR / "ppo_trainer.yaml", [override])
    assert message in str(error.value)


@pytest.mark.parametrize("overrides, recompute", [
    ([], True),  # 4 mini-batches of 256 prompts per 1024-prompt step: the later ones are off-policy
    (["actor_rollout_ref.actor.ppo_mini_batch_size=1024"], False),  # exactly on-policy: reuse the rollout's
    (["actor_rollout_ref.actor.ppo_mini_batch_size=1024", "actor_rollout_ref.actor.ppo_epochs=2"], True),
    (["actor_rollout_ref.actor.ppo_mini_batch_size=1024", "actor_rollout_ref.rollout.do_sample=false"], True),
    (["actor_rollout_ref.actor.ppo_mini_batch_size=1024", "actor_rollout_ref.actor.recompute_old_log_prob=true"], True),
    (["actor_rollout_ref.actor.recompute_old_log_prob=false"], False),
])
def test_old_log_probs_are_recomputed_unless_the_update_is_exactly_on_policy(overrides, recompute):
    config = load_config(PPOConfig, CONFIG_DIR / "ppo_trainer.yaml", overrides)
    assert config.actor_rollout_ref.actor.recompute_old_log_prob is recompute


def test_reusing_rollout_log_probs_of_greedy_decoding_is_refused():
    with pytest.raises(UserError) as error:
        load_config(PPOConfig, CONFIG_DIR / "ppo_trainer.yaml", [
            "actor_rollout_ref.actor.recompute_old_log_prob=false", "actor_rollout_ref.rollout.temperature=0"])
    assert "recompute_old_log_prob=false needs rollout log-probs of the actor's policy" in str(error.value)
