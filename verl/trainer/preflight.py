"""Run the environment preflight (`verl doctor`'s checks) before training starts."""

from __future__ import annotations

import importlib.util

from rich.console import Console

from verl.utils.errors import UserError


def check_environment(skip: bool, console: Console | None = None) -> None:
    """Refuse to start on a FAIL unless `skip` (trainer.skip_preflight=true / --skip-preflight)."""
    console = console or Console(stderr=True)
    if importlib.util.find_spec("compat.preflight") is None:
        console.print("[yellow]preflight: compat.preflight is not installed; environment not checked[/]")
        return
    from compat.preflight import run_preflight

    try:
        report = run_preflight()
    except Exception as exc:  # a broken probe must not block training; doctor reports it in detail
        console.print(f"[yellow]preflight: could not run ({type(exc).__name__}: {exc}); run `verl doctor`[/]")
        return
    if not report.failed:
        console.print(f"preflight: {report.summary_line()}")
        return
    report.render(console)
    if skip:
        console.print("[yellow]preflight FAILED; starting anyway because the preflight is skipped[/]")
        return
    raise UserError("preflight failed (see above); fix it, or start anyway with trainer.skip_preflight=true "
                    "(verl train --skip-preflight)")
