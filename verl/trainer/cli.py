"""`verl train` and `verl quickstart` (loaded lazily by verl/cli.py)."""

from __future__ import annotations

from pathlib import Path

import click

from verl.trainer.runtime import user_errors_exit

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": ["-h", "--help"]}


@click.command(context_settings=_PASS_THROUGH)
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML config to start from (default: verl/trainer/config/ppo_trainer.yaml).")
@click.option("--skip-preflight", is_flag=True, help="Start even if the environment preflight reports FAIL.")
@click.argument("overrides", nargs=-1, type=click.UNPROCESSED)
def train(config_file: Path | None, skip_preflight: bool, overrides: tuple[str, ...]) -> None:
    """Train with PPO / GRPO. OVERRIDES are key=value pairs, e.g.

    \b
      verl train data.train_files=train.parquet data.val_files=val.parquet \\
          actor_rollout_ref.model.path=./model algorithm.adv_estimator=grpo \\
          actor_rollout_ref.rollout.n=4 trainer.total_training_steps=20
    """
    with user_errors_exit():
        from verl.trainer.config import load_ppo_config
        from verl.trainer.main_ppo import run_ppo

        extra = ["trainer.skip_preflight=true"] if skip_preflight else []
        run_ppo(load_ppo_config(list(overrides) + extra, config_file))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("outputs/quickstart"),
              show_default=True, help="Where the model, data, checkpoints and metrics go.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="GRPO steps (default: the quickstart's tuned value).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--skip-preflight", is_flag=True, help="Start even if the environment preflight reports FAIL.")
def quickstart(output_dir: Path, steps: int | None, seed: int, skip_preflight: bool) -> None:
    """Tiny model + arithmetic task: SFT warm start, then GRPO; prints validation accuracy before and after."""
    with user_errors_exit():
        from verl.trainer.quickstart import run_quickstart

        run_quickstart(output_dir, steps=steps, seed=seed, skip_preflight=skip_preflight)
