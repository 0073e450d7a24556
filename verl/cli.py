"""The `verl` command: one entry point composed from lazily loaded subcommands.

Each subcommand lives with the package that owns it (`images.cli`, `compat.cli`, `verl.trainer.cli`)
and is imported only when invoked, so `verl doctor` never pays for (or breaks on) torch.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

# name -> "module:attribute" of a click command; imported on first use.
_SUBCOMMANDS: dict[str, str] = {
    "images": "images.cli:images",
    "doctor": "compat.cli:doctor",
    "train": "verl.trainer.cli:train",
    "quickstart": "verl.trainer.cli:quickstart",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = _SUBCOMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--matrix",
    "matrix_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar="VERL_MATRIX",
    help="Version matrix to use (default: the matrix.yaml shipped with this checkout or image).",
)
@click.version_option(package_name="verl", prog_name="verl")
@click.pass_context
def main(ctx: click.Context, matrix_path: Path | None) -> None:
    """verl: images, environment checks and RL training."""
    ctx.ensure_object(dict)
    ctx.obj["matrix_path"] = matrix_path


if __name__ == "__main__":
    main()
