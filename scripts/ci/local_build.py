"""Run `verl images build` the way this machine needs it: the local wheelhouse and the trusted CA certificates.

Shared by the image tests (tests/docker/) and scripts/bench_image_cache.py, so both build exactly as CI does:
    verl images build ENTRY --wheelhouse "$PIP_FIND_LINKS" --ca-cert FILE ... [more options]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Callable, Iterable

CA_CERT_DIR = Path("/usr/local/share/ca-certificates")


class BuildFailed(RuntimeError):
    """The build command failed or ran too long; the message holds the last lines of its output."""


def ca_certs() -> list[Path]:
    """$VERL_TEST_CA_CERTS (os.pathsep-separated files), else every file under /usr/local/share/ca-certificates/:
    the CAs this machine trusts locally, such as a TLS-intercepting proxy's, which the build must trust too."""
    listed = os.environ.get("VERL_TEST_CA_CERTS")
    if listed is not None:
        return [Path(p) for p in listed.split(os.pathsep) if p]
    return sorted(p for p in CA_CERT_DIR.rglob("*") if p.is_file()) if CA_CERT_DIR.is_dir() else []


def build_args(entry: str, *extra: str) -> list[str]:
    """`verl images build ENTRY` arguments with this machine's wheelhouse ($PIP_FIND_LINKS) and CA certificates."""
    args = ["images", "build", entry]
    wheelhouse = os.environ.get("PIP_FIND_LINKS", "").split(" ")[0]
    if wheelhouse and Path(wheelhouse).is_dir():
        args += ["--wheelhouse", wheelhouse]
    for cert in ca_certs():
        args += ["--ca-cert", str(cert)]
    return args + list(extra)


def run_verl(args: Iterable[str], log: Path, cwd: Path, say: Callable[[str], None] = print,
             timeout_s: float = 2400) -> float:
    """Run `python -m verl.cli ARGS` in `cwd` (its own checkout's code and matrix), stream the output with the
    elapsed time, keep it all in `log`, and return the seconds it took. Raises BuildFailed on failure."""
    args = list(args)
    shown = "verl " + " ".join(args)
    say(f"$ {shown}   (in {cwd})")
    start = time.monotonic()
    tail: deque[str] = deque(maxlen=60)
    with open(log, "w") as out, subprocess.Popen(
        [sys.executable, "-m", "verl.cli", *args], cwd=cwd, text=True, bufsize=1,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    ) as proc:
        for line in proc.stdout:
            out.write(line)
            tail.append(line.rstrip())
            if line.strip():  # the engine's plain progress has many blank lines
                say(f"[{time.monotonic() - start:5.0f}s] {line.rstrip()}")
            if time.monotonic() - start > timeout_s:
                proc.kill()
                raise BuildFailed(f"`{shown}` ran past {timeout_s:.0f}s (log: {log})")
        code = proc.wait()
    elapsed = time.monotonic() - start
    if code != 0:
        raise BuildFailed(f"`{shown}` exited {code} after {elapsed:.0f}s (log: {log}); last lines:\n" + "\n".join(tail))
    say(f"done in {elapsed:.0f}s: {shown}")
    return elapsed
