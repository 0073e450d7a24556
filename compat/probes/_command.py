"""Run a system tool (nvidia-smi, rocm-smi, npu-smi) with a timeout; None when it is not installed."""

from __future__ import annotations

import shutil
import subprocess


class CommandFailed(RuntimeError):
    pass


def run_tool(argv: list[str], timeout_s: float) -> str | None:
    exe = shutil.which(argv[0])
    if exe is None:
        return None
    try:
        proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise CommandFailed(f"`{' '.join(argv)}` did not answer within {timeout_s:g} s and was killed") from None
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise CommandFailed(f"`{' '.join(argv)}` exited with {proc.returncode}: {said[-1] if said else 'no output'}")
    return proc.stdout
