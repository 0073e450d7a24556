"""`verl doctor`: is this machine (or this container) fit to train, and if not, exactly why and what to do."""

from __future__ import annotations

import json

import click
from rich.console import Console

from compat.doctor import UsageProblem, run_doctor


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the checks and a summary.")
@click.option("--image", metavar="NAME|TAG", help="Judge this host for a matrix image (entry name, alias or full tag).")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also show skipped checks and why, expected and found values, the slowest probes.",
)
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, image: str | None, verbose: bool) -> None:
    """Check GPUs, drivers, CUDA/ROCm/CANN, packages, /dev/shm and the image against the version matrix.

    Exit code: 0 when no check fails, 1 when any check fails, 2 for a usage error.
    """
    matrix_path = (ctx.find_root().obj or {}).get("matrix_path")
    try:
        report = run_doctor(image=image, matrix_path=matrix_path)
    except UsageProblem as exc:
        raise click.UsageError(str(exc), ctx) from None
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        report.render(Console(highlight=False), verbose=verbose)
    ctx.exit(report.exit_code)
