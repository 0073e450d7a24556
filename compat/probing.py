"""Run probes concurrently, each isolated: an exception or a timeout becomes an Outcome, never a traceback.

Probes run in daemon threads rather than a ThreadPoolExecutor: a probe stuck in a driver call cannot be
killed, and the executor's threads would keep the process alive at exit. A daemon thread is abandoned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Probe:
    name: str
    func: Callable[[], Any]
    timeout_s: float
    fix: str  # what to do when the probe itself crashes or hangs
    python_env: bool = False  # judges this Python environment: pointless for --image from outside that image


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: str | None = None  # set when the probe raised or hung; `value` is then meaningless
    timed_out: bool = False
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class RunningProbes:
    """Probes started in the background; `collect()` waits for each until its own deadline."""

    def __init__(self, probes: list[Probe]) -> None:
        self._results: dict[str, Outcome] = {}
        self._threads = []
        for probe in probes:
            started = time.monotonic()
            thread = threading.Thread(target=self._call, args=(probe, started), name=f"probe-{probe.name}", daemon=True)
            thread.start()
            self._threads.append((probe, thread, started))

    def _call(self, probe: Probe, started: float) -> None:
        try:
            outcome = Outcome(value=probe.func(), elapsed_s=time.monotonic() - started)
        except BaseException as exc:  # noqa: BLE001 - isolation is the point: any crash becomes a verdict
            first_line = next(iter(str(exc).strip().splitlines()), "")
            outcome = Outcome(
                error=f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__,
                elapsed_s=time.monotonic() - started,
            )
        # setdefault, never assignment: a probe that answers after its timeout must not replace the verdict.
        self._results.setdefault(probe.name, outcome)

    def collect(self) -> dict[str, Outcome]:
        for probe, thread, started in self._threads:
            thread.join(max(0.0, started + probe.timeout_s - time.monotonic()))
            timed_out = Outcome(
                error=f"no answer within {probe.timeout_s:g} s", timed_out=True, elapsed_s=probe.timeout_s
            )
            self._results.setdefault(probe.name, timed_out)
        return dict(self._results)


def run_probes(probes: list[Probe]) -> dict[str, Outcome]:
    return RunningProbes(probes).collect()
