"""The verdict of one check: a status, a one-line detail and, for WARN and FAIL, the fix."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(str, enum.Enum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None
    expected: str | None = None  # shown with --verbose and in --json, beside `actual`
    actual: str | None = None

    def __post_init__(self) -> None:
        # A WARN or FAIL the user cannot act on is a bug in the rule, not in the user's machine.
        if self.status in (Status.WARN, Status.FAIL) and not self.fix:
            raise ValueError(f"check {self.name!r} is {self.status.value} without a fix line")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "status": self.status.value,
            "detail": self.detail,
            "fix": self.fix,
            "expected": self.expected,
            "actual": self.actual,
        }


def passed(name: str, detail: str, **kw) -> Check:
    return Check(name, Status.PASS, detail, **kw)


def warn(name: str, detail: str, fix: str, **kw) -> Check:
    return Check(name, Status.WARN, detail, fix, **kw)


def fail(name: str, detail: str, fix: str, **kw) -> Check:
    return Check(name, Status.FAIL, detail, fix, **kw)


def skip(name: str, detail: str, **kw) -> Check:
    return Check(name, Status.SKIP, detail, **kw)
