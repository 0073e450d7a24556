"""Fixtures for the matrix/render/images tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from matrix_helpers import MATRIX, Verl, copy_repo


@pytest.fixture
def verl() -> Verl:
    """`verl --matrix <the repository's matrix.yaml> ...`"""
    return Verl(MATRIX)


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A temporary copy of the matrix, templates, rendered files and support doc."""
    return copy_repo(tmp_path)
