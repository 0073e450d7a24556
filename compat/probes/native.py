"""Import native extensions in a child interpreter with a timeout.

An ABI mismatch ("undefined symbol") or a segfault then kills the child, not doctor. Only modules that
are installed are imported; the rest are reported as absent without starting a process.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from dataclasses import dataclass

# distribution name (for the fix line) -> module to import
NATIVE_MODULES = {
    "flash-attn": "flash_attn",
    "transformer-engine": "transformer_engine",
    "vllm": "vllm",
    "apex": "apex",
}


@dataclass(frozen=True)
class ImportResult:
    module: str
    installed: bool
    ok: bool = False
    error: str | None = None  # the last line the child printed, e.g. "ImportError: ...: undefined symbol: ..."
    elapsed_s: float = 0.0


def _last_error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line.strip()
    return lines[-1].strip() if lines else "no error message"


def import_in_child(module: str, timeout_s: float) -> ImportResult:
    try:
        installed = importlib.util.find_spec(module) is not None  # locates, does not execute
    except (ImportError, ValueError):
        installed = True  # a broken parent package: let the child show the error
    if not installed:
        return ImportResult(module, installed=False)
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        return ImportResult(module, True, error=f"import did not finish within {timeout_s:g} s", elapsed_s=timeout_s)
    elapsed = time.monotonic() - start
    if proc.returncode == 0:
        return ImportResult(module, True, ok=True, elapsed_s=elapsed)
    if proc.returncode < 0:
        return ImportResult(
            module, True, error=f"the interpreter was killed by signal {-proc.returncode}", elapsed_s=elapsed
        )
    return ImportResult(module, True, error=_last_error_line(proc.stderr), elapsed_s=elapsed)
