#!/usr/bin/env python3
"""Wall time of `verl doctor` against `python -m torch.utils.collect_env`, measured in the same run.

Usage: .venv/bin/python scripts/bench_doctor.py [--repeat 5]

Each command runs --repeat times, alternating so both see the same machine load; the medians are
compared. Goal (issue 3): doctor takes at most one fifth of collect_env's time, and under 1 s.
Exit code 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def wall_time(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # doctor exits 1 on a FAIL verdict; that is still a completed run
        sys.exit(f"{' '.join(argv)} exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args()
    commands = {
        "verl doctor": [str(BIN / "verl"), "doctor"],
        "torch collect_env": [sys.executable, "-m", "torch.utils.collect_env"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            times[name].append(wall_time(argv))
    doctor, collect = (statistics.median(times[name]) for name in commands)
    for name, runs in times.items():
        print(f"{name:18s} median {statistics.median(runs):.3f} s  (runs: {', '.join(f'{t:.3f}' for t in runs)})")
    ratio = doctor / collect
    met = ratio <= 0.2 and doctor < 1.0
    print(
        f"ratio doctor/collect_env = {ratio:.3f} (1/{1 / ratio:.1f}); goal <= 0.200 and doctor < 1 s: "
        f"{'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
