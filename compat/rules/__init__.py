"""Rules turn facts into verdicts. Each is a small function registered in table order with the probes it needs.

A rule whose probe failed is not run: the probe's own verdict (WARN, with its fix) already says why.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from compat.checks import Check
from compat.context import Context

RuleFunc = Callable[[Context], Iterable[Check]]


@dataclass(frozen=True)
class Rule:
    func: RuleFunc
    needs: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.func.__name__


RULES: list[Rule] = []


def rule(*needs: str) -> Callable[[RuleFunc], RuleFunc]:
    def register(func: RuleFunc) -> RuleFunc:
        if any(r.func.__name__ == func.__name__ for r in RULES):
            raise ValueError(f"rule {func.__name__} registered twice")
        RULES.append(Rule(func, needs))
        return func

    return register


# Registration order is table order: the machine, its accelerators, the image, packages, limits.
_MODULES = ("host", "accelerators", "torch_stack", "image", "software", "native", "limits")


def load_rules() -> list[Rule]:
    for module in _MODULES:
        importlib.import_module(f"compat.rules.{module}")
    return RULES
