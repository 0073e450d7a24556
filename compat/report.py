"""A report is a list of checks plus what they were checked against; a dict first, printed second."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

from compat.checks import Check, Status

_STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIP: "dim"}
_MARK = {Status.PASS: "✔", Status.WARN: "!", Status.FAIL: "✘", Status.SKIP: "-"}
_ASCII_MARK = {Status.PASS: "+", Status.WARN: "!", Status.FAIL: "x", Status.SKIP: "-"}  # for PYTHONIOENCODING=ascii


@dataclass
class Report:
    checks: list[Check]
    target: str  # what the machine was judged against, in words ("image vllm011.latest", "no image")
    elapsed_s: float = 0.0
    probe_times: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(c.status is Status.FAIL for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def counts(self) -> dict[str, int]:
        counted = Counter(c.status for c in self.checks)
        return {s.value.lower(): counted.get(s, 0) for s in Status}

    def to_dict(self) -> dict:
        return {
            "checks": [c.to_dict() for c in self.checks],
            "summary": {
                **self.counts(),
                "failed": self.failed,
                "exit_code": self.exit_code,
                "target": self.target,
                "elapsed_s": round(self.elapsed_s, 3),
            },
        }

    def summary_line(self) -> str:
        n = self.counts()
        verdict = "NOT ready to train" if self.failed else "ready to train"
        return (
            f"{verdict} ({self.target}): {n['fail']} failed, {n['warn']} warnings, "
            f"{n['pass']} passed, {n['skip']} skipped in {self.elapsed_s:.2f} s"
        )

    def render(self, console: Console | None = None, verbose: bool = False) -> None:
        """One row per check: mark and status, then the name and detail, and the fix below it."""
        console = console or Console(highlight=False)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        marks = _MARK if console.encoding.lower().replace("-", "").startswith("utf") else _ASCII_MARK
        skipped = [c.name for c in self.checks if c.status is Status.SKIP]
        for check in self.checks:
            if check.status is Status.SKIP and not verbose:
                continue  # listed on one line below; --verbose or --json shows why each was skipped
            style = _STYLE[check.status]
            body = Text.assemble((check.name, "bold"), "  ", check.detail)
            if verbose and (check.expected or check.actual):
                body.append(f"\nexpected {check.expected}, found {check.actual}", style="dim")
            if check.fix:
                body.append(f"\nfix: {check.fix}", style="cyan")
            grid.add_row(Text(f"{marks[check.status]} {check.status.value}", style=style), body)
        console.print(grid)
        if skipped and not verbose:
            console.print(Text(f"skipped: {', '.join(skipped)} (--verbose says why)", style="dim"))
        if verbose and self.probe_times:
            slowest = sorted(self.probe_times.items(), key=lambda kv: -kv[1])[:5]
            console.print(Text("slowest probes: " + ", ".join(f"{k} {v:.2f}s" for k, v in slowest), style="dim"))
        console.print(Text(self.summary_line(), style="bold red" if self.failed else "bold green"))
