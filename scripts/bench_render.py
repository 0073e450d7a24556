#!/usr/bin/env python3
"""How long rendering the whole matrix takes (goal: under 1 s), against peers measured in the same run.

In process, best and median of --repeat runs:
  validate  load + validate matrix.yaml (schema and cross-checks)
  render    validate + render every Dockerfile and docs/support.md (what `verl images render` does)
  peer      yaml.load of the same file with the same (libyaml when present) loader: the floor any
            YAML-driven generator pays
Cold, one run each: the first render in a fresh process (template compilation included), and the whole
`verl images render --check` command against `python -c pass` (interpreter start-up).

    python scripts/bench_render.py [--repeat 20]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import click  # noqa: E402
import yaml  # noqa: E402

from compat.matrix import load_matrix  # noqa: E402
from images.render import Layout, render_outputs  # noqa: E402

MATRIX = REPO / "matrix.yaml"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Imports first, then time one render from scratch (template compilation included).
COLD = """
import time
from compat.matrix import load_matrix
from images.render import Layout, render_outputs
start = time.perf_counter()
render_outputs(load_matrix("matrix.yaml"), Layout.for_matrix("matrix.yaml"))
print(time.perf_counter() - start)
"""


def _timed(function, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start


@click.command()
@click.option("--repeat", default=20, show_default=True, type=click.IntRange(1, 1000))
def main(repeat: int) -> None:
    layout = Layout.for_matrix(MATRIX)
    text = MATRIX.read_text()
    outputs = render_outputs(load_matrix(MATRIX), layout)  # warm-up (imports, template compilation)

    rows = {
        "peer: yaml.load": _timed(lambda: yaml.load(text, Loader=LOADER), repeat),
        "validate matrix": _timed(lambda: load_matrix(MATRIX), repeat),
        "validate + render all": _timed(lambda: render_outputs(load_matrix(MATRIX), layout), repeat),
    }
    peer = statistics.median(rows["peer: yaml.load"])
    click.echo(f"matrix: {len(outputs) - 1} Dockerfiles + docs/support.md, {repeat} runs each")
    for name, times in rows.items():
        median = statistics.median(times)
        click.echo(f"  {name:24} best {min(times) * 1e3:7.1f} ms   median {median * 1e3:7.1f} ms"
                   f"   x{median / peer:5.1f} the YAML parse")

    python = str(Path(sys.executable))
    verl = str(Path(sys.executable).parent / "verl")
    startup = _wall([python, "-c", "pass"])
    cli = _wall([verl, "--matrix", str(MATRIX), "images", "render", "--check"])
    click.echo(f"  {'cli: render --check':24} {cli * 1e3:7.1f} ms wall, of which Python start-up "
               f"{startup * 1e3:.1f} ms (x{cli / startup:.1f})")
    cold = float(subprocess.run([python, "-c", COLD], cwd=REPO, check=True, capture_output=True, text=True).stdout)
    click.echo(f"  {'cold: first render':24} {cold * 1e3:7.1f} ms in a fresh process (templates compiled, imports done)")
    total = max(statistics.median(rows["validate + render all"]), cold)
    verdict = "under" if total < 1.0 else "OVER"
    click.echo(f"whole matrix renders in {total * 1e3:.0f} ms (the slower of warm and cold): {verdict} the 1 s goal")


if __name__ == "__main__":
    main()
