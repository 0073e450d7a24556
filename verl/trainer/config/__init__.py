"""Trainer configs: YAML defaults in this folder, typed schema in `schema.py`, loading in `loader.py`."""

from __future__ import annotations

from pathlib import Path

from verl.trainer.config.loader import CONFIG_DIR, load_config
from verl.trainer.config.schema import PPOConfig, SFTConfig
from verl.utils.errors import UserError


def load_ppo_config(overrides: list[str] = (), config_file: str | Path | None = None) -> PPOConfig:
    """`ppo_trainer.yaml` (or `config_file`) plus overrides, validated, with the model path checked."""
    config = load_config(PPOConfig, config_file or CONFIG_DIR / "ppo_trainer.yaml", overrides)
    check_model_path("actor_rollout_ref.model.path", config.actor_rollout_ref.model.path)
    return config


def load_sft_config(overrides: list[str] = (), config_file: str | Path | None = None) -> SFTConfig:
    config = load_config(SFTConfig, config_file or CONFIG_DIR / "sft_trainer.yaml", overrides)
    check_model_path("model.path", config.model.path)
    return config


def check_model_path(key: str, path: str) -> None:
    """A model directory must exist and hold a config.json; say how to make one if not."""
    hint = "make a tiny one with: python -m verl.models.tiny --out DIR"
    if not path:
        raise UserError(f"config error: {key} is not set; point it at a Hugging Face model directory ({hint})")
    if not (Path(path) / "config.json").is_file():
        what = "does not exist" if not Path(path).exists() else "has no config.json"
        raise UserError(f"config error: {key}={path} {what}; it must be a Hugging Face model directory ({hint})")


__all__ = ["PPOConfig", "SFTConfig", "load_ppo_config", "load_sft_config", "load_config", "check_model_path"]
