"""A throwaway copy of this checkout, so image tests can edit or build from it without touching the real tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def copy_checkout(dest: Path) -> Path:
    """Copy the files git knows or would add (tracked and untracked-but-not-ignored): no venv, caches or builds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO_ROOT / rel
        if src.is_file():  # a file deleted in the working tree is still "cached"
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest
