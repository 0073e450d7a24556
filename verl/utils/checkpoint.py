"""Atomic checkpoint directories and the `latest` pointer.

A checkpoint is written into `.tmp-global_step_N` next to its final place, every file is fsynced,
and only then is the directory renamed to `global_step_N`; the pointer file is replaced the same way.
A process killed at any moment leaves either the previous complete checkpoint or the new complete
one, never a half-written directory that resume would pick up (leftover temp dirs are removed).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Callable

POINTER = "latest_checkpointed_iteration.txt"  # upstream verl's name, so existing tooling finds it
_STEP_DIR = re.compile(r"^global_step_(\d+)$")
_TMP_PREFIX = ".tmp-"


def _fsync_tree(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            with open(Path(dirpath) / name, "rb") as f:
                os.fsync(f.fileno())
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class CheckpointManager:
    def __init__(self, root: str | Path, max_to_keep: int | None = None):
        self.root = Path(root)
        self.max_to_keep = max_to_keep

    def step_dir(self, step: int) -> Path:
        return self.root / f"global_step_{step}"

    def save(self, step: int, write: Callable[[Path], None]) -> Path:
        """Call `write(tmp_dir)` to fill a fresh temp dir, then publish it as global_step_{step}."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f"{_TMP_PREFIX}global_step_{step}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        write(tmp)
        _fsync_tree(tmp)
        final = self.step_dir(step)
        if final.exists():  # re-saving a step: move the old one aside first (rename is atomic, rmtree is not)
            old = self.root / f"{_TMP_PREFIX}old-global_step_{step}"
            os.replace(final, old)
            shutil.rmtree(old)
        os.replace(tmp, final)
        _fsync_dir(self.root)
        atomic_write_text(self.root / POINTER, f"{step}\n")
        self._prune()
        return final

    def latest(self) -> tuple[int, Path] | None:
        """The newest complete checkpoint: the pointer's if valid, else the highest global_step_N dir."""
        if not self.root.is_dir():
            return None
        self.remove_partial()
        pointer = self.root / POINTER
        if pointer.is_file():
            text = pointer.read_text().strip()
            if text.isdigit() and self.step_dir(int(text)).is_dir():
                return int(text), self.step_dir(int(text))
        steps = self._steps()
        return (steps[-1], self.step_dir(steps[-1])) if steps else None

    def remove_partial(self) -> None:
        """Delete temp dirs left by a process killed while saving."""
        for path in self.root.glob(f"{_TMP_PREFIX}*"):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)

    def _steps(self) -> list[int]:
        return sorted(int(m.group(1)) for p in self.root.iterdir() if (m := _STEP_DIR.match(p.name)) and p.is_dir())

    def _prune(self) -> None:
        if not self.max_to_keep:
            return
        for step in self._steps()[: -self.max_to_keep]:
            shutil.rmtree(self.step_dir(step), ignore_errors=True)
