"""Helpers for the matrix/render/images tests: the real `verl` CLI on the real matrix or on a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from verl.cli import main

REPO = Path(__file__).resolve().parents[2]
MATRIX = REPO / "matrix.yaml"


class Verl:
    """Runs `verl --matrix PATH ...` in-process, as a user types it, and returns click's Result."""

    def __init__(self, matrix: Path) -> None:
        self.matrix = matrix

    def __call__(self, *args: str):
        return CliRunner().invoke(main, ["--matrix", str(self.matrix), *args], catch_exceptions=False)


def copy_repo(tmp_path: Path) -> Path:
    """A copy of what rendering reads and writes (matrix, templates, rendered files, support doc)."""
    shutil.copy2(MATRIX, tmp_path / "matrix.yaml")
    shutil.copytree(REPO / "dockerfiles", tmp_path / "dockerfiles",
                    ignore=shutil.ignore_patterns("*.whl", "*.crt"))
    (tmp_path / "docs").mkdir()
    shutil.copy2(REPO / "docs" / "support.md", tmp_path / "docs" / "support.md")
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    """Replace exactly one occurrence of `old` (so a test fails loudly when the matrix changes shape)."""
    text = path.read_text()
    assert text.count(old) == 1, f"expected one {old!r} in {path}"
    path.write_text(text.replace(old, new))
