"""PPO-family RL training: `python -m verl.trainer.main_ppo [--config-path DIR --config-name NAME] a.b.c=value ...`

The same run as `verl train a.b.c=value ...`. Defaults: verl/trainer/config/ppo_trainer.yaml.
"""

from __future__ import annotations

import sys
from pathlib import Path

from verl.trainer.config import load_ppo_config
from verl.trainer.config.schema import PPOConfig
from verl.trainer.runtime import configure_process, user_errors_exit
from verl.utils.errors import UserError


def run_ppo(config: PPOConfig, console=print) -> dict[str, float]:
    """Train with a validated config in this process; returns the final metrics."""
    from verl.trainer.preflight import check_environment

    configure_process(config.trainer.device, config.trainer.num_threads, config.trainer.seed)
    check_environment(skip=config.trainer.skip_preflight)

    from verl.trainer.ppo.trainer import PPOTrainer
    from verl.utils.distributed import destroy_process_group, initialize_global_process_group

    initialize_global_process_group()
    try:
        return PPOTrainer(config, console=console).fit()
    finally:
        destroy_process_group()


def split_config_args(argv: list[str]) -> tuple[Path | None, list[str]]:
    """Hydra-style `--config-path DIR --config-name NAME` (or `--config FILE`) plus the overrides."""
    config_dir, config_name, config_file, overrides = None, None, None, []
    args = iter(argv)
    for arg in args:
        flag, eq, value = arg.partition("=")
        if flag in ("--config-path", "--config-name", "--config"):
            value = value if eq else next(args, None)
            if value is None:
                raise UserError(f"{flag} needs a value")
            if flag == "--config-path":
                config_dir = value
            elif flag == "--config-name":
                config_name = value
            else:
                config_file = value
        elif arg.startswith("--"):
            raise UserError(f"unknown option {arg}; use key=value overrides (e.g. trainer.total_epochs=2), "
                            "--config-path/--config-name or --config FILE")
        else:
            overrides.append(arg)
    if config_dir or config_name:
        name = config_name or "ppo_trainer"
        config_file = Path(config_dir or Path(__file__).parent / "config") / (name if name.endswith(".yaml") else f"{name}.yaml")
    return (Path(config_file) if config_file else None), overrides


def main(argv: list[str] | None = None) -> None:
    with user_errors_exit():
        config_file, overrides = split_config_args(sys.argv[1:] if argv is None else argv)
        run_ppo(load_ppo_config(overrides, config_file))


if __name__ == "__main__":
    main()
