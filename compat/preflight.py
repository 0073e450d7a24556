"""The checks `verl doctor` runs, for the trainer to run before it starts (it refuses to start on a FAIL)."""

from __future__ import annotations

import os

from compat.doctor import run_doctor
from compat.report import Report


def run_preflight(image: str | None = None, matrix_path: str | os.PathLike | None = None) -> Report:
    """Judge this machine (inside an image: against its manifest). `report.failed` says whether to refuse."""
    return run_doctor(image=image, matrix_path=matrix_path)
