"""Run probes concurrently, each isolated: an exception or a timeout becomes an Outcome, never a traceback.

Probes run in daemon threads rather than a ThreadPoolExecutor: a probe stuck in a driver call cannot be
killed, and the executor's threads would keep the process alive at exit. A daemon thread is abandoned.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Probe:
    name: str
    func: Callable[[], Any]
    timeout_s: float
    fix: str  # what to do when the probe itself crashes or hangs


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: str | None = None  # set when the probe raised or hung; `value` is then meaningless
    timed_out: bool = False
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def run_probes(probes: list[Probe]) -> dict[str, Outcome]:
    results: dict[str, Outcome] = {}
    started: dict[str, float] = {}

    def call(probe: Probe) -> None:
        try:
            value = probe.func()
            outcome = Outcome(value=value, elapsed_s=time.monotonic() - started[probe.name])
        except BaseException as exc:  # noqa: BLE001 - isolation is the point: any crash becomes a verdict
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            outcome = Outcome(
                error=f"{type(exc).__name__}: {message}" if message else type(exc).__name__,
                elapsed_s=time.monotonic() - started[probe.name],
            )
        # setdefault, never assignment: a probe that answers after its timeout must not replace the verdict.
        results.setdefault(probe.name, outcome)

    threads = []
    for probe in probes:
        started[probe.name] = time.monotonic()
        thread = threading.Thread(target=call, args=(probe,), name=f"probe-{probe.name}", daemon=True)
        thread.start()
        threads.append((probe, thread))
    for probe, thread in threads:
        thread.join(max(0.0, started[probe.name] + probe.timeout_s - time.monotonic()))
        results.setdefault(
            probe.name,
            Outcome(
                error=f"no answer within {probe.timeout_s:g} s", timed_out=True, elapsed_s=probe.timeout_s
            ),
        )
    return dict(results)
