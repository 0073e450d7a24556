"""Small formatting helpers shared by the rules."""

from __future__ import annotations

GIB = 1024**3


def gib(n: int | None) -> str:
    if n is None:
        return "unknown size"
    return f"{n / GIB:.0f} GiB" if n >= 10 * GIB else f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / 1024**2:.0f} MiB"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
