"""Run model-written code for code rewards, fenced in: a subprocess with a wall-clock timeout, CPU,
memory, file-size and file-count limits, its own empty working directory and process group, a bare
environment, and, where the kernel lets us (root or user namespaces), no network.

    result = run_code("print(input()[::-1])", stdin="abc")      # SandboxResult(status="ok", stdout="cba\\n", ...)
    compute_code_score(response_text, {"inputs": ["1 2\\n"], "outputs": ["3\\n"]})  # 1.0 when every case passes

This is a fence against accidents (infinite loops, memory blow-ups, stray files), not a security
boundary against hostile code: for that, run rewards in a container with seccomp.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLONE_NEWNET = 0x40000000
MAX_OUTPUT_BYTES = 1 << 20  # a program printing forever is stopped at 1 MiB (RLIMIT_FSIZE: its writes fail)


@dataclass
class SandboxResult:
    status: str  # "ok", "error" (non-zero exit), "timeout", "memory" (over the memory limit), "output_limit"
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _unshare_network() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare(CLONE_NEWNET) == 0


@functools.lru_cache(maxsize=1)
def network_isolation_available() -> bool:
    """Whether a child can be put in an empty network namespace here (tried once, in a throwaway child)."""
    try:
        probe = subprocess.run([sys.executable, "-c", "import sys"], preexec_fn=lambda: _unshare_network() or os._exit(3), timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def _limit(memory_mb: int, cpu_s: int, isolate_network: bool) -> None:
    """Runs in the child between fork and exec."""
    os.setsid()
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if isolate_network:
        _unshare_network()


def run_code(code: str, stdin: str = "", timeout_s: float = 5.0, memory_mb: int = 512, cpu_s: int | None = None) -> SandboxResult:
    """Run Python `code` with `stdin`; the result says how it ended and what it printed."""
    cpu_s = cpu_s or max(1, int(timeout_s) + 1)
    isolate = network_isolation_available()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="verl_sandbox_") as workdir:
        work = Path(workdir)
        (work / "main.py").write_text(code)
        (work / "stdin.txt").write_text(stdin)
        with open(work / "stdin.txt", "rb") as fin, open(work / "stdout.txt", "wb") as fout, open(work / "stderr.txt", "wb") as ferr:
            process = subprocess.Popen(
                [sys.executable, "-I", "-B", "main.py"],  # -I: no user site, no PYTHON* env, no cwd on sys.path
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                cwd=work,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir},
                preexec_fn=functools.partial(_limit, memory_mb, cpu_s, isolate),
                close_fds=True,
            )
            try:
                returncode = process.wait(timeout=timeout_s)
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the whole group: children it forked die too
                returncode = process.wait()
                timed_out = True
        raw_stdout = (work / "stdout.txt").read_bytes()
        stdout = raw_stdout[:MAX_OUTPUT_BYTES].decode(errors="replace")
        stderr = (work / "stderr.txt").read_bytes()[-8192:].decode(errors="replace")
    status = "output_limit" if len(raw_stdout) >= MAX_OUTPUT_BYTES else _status(returncode, timed_out, stderr)
    return SandboxResult(status=status, returncode=returncode, stdout=stdout, stderr=stderr, duration_s=time.monotonic() - start)


def _status(returncode: int, timed_out: bool, stderr: str) -> str:
    if timed_out or returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return "timeout"
    if "MemoryError" in stderr or returncode == -signal.SIGSEGV:
        return "memory"
    return "ok" if returncode == 0 else "error"


_CODE_BLOCK = re.compile(r"```(?:python|py|python3)?\s*\n(.*?)```", re.DOTALL)


def extract_code(solution_str: str) -> str:
    """The last fenced code block of a response, or the whole response when it has none."""
    blocks = _CODE_BLOCK.findall(solution_str)
    return blocks[-1] if blocks else solution_str


def compute_code_score(solution_str: str, ground_truth: Any, timeout_s: float = 5.0, memory_mb: int = 512) -> float:
    """1.0 when the response's program prints the expected output for every test case, else 0.0.

    `ground_truth` is {"inputs": [stdin, ...], "outputs": [stdout, ...]} or its JSON text; outputs are
    compared line by line with trailing whitespace ignored.
    """
    cases = json.loads(ground_truth) if isinstance(ground_truth, str) else ground_truth
    inputs, outputs = cases["inputs"], cases["outputs"]
    if len(inputs) != len(outputs):
        raise ValueError(f"code ground truth has {len(inputs)} inputs but {len(outputs)} outputs")
    code = extract_code(solution_str)
    for stdin, expected in zip(inputs, outputs):
        result = run_code(code, stdin=stdin, timeout_s=timeout_s, memory_mb=memory_mb)
        if not result.ok or _lines(result.stdout) != _lines(expected):
            return 0.0
    return 1.0


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]
