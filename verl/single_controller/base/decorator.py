"""`@register(dispatch_mode=...)`: how a worker method's input is split across ranks and its output gathered.

The decorator only records the mode on the function (as upstream verl does); a worker group reads it.
The in-process driver of this branch runs one worker per role and calls methods directly, so the
same worker classes can be wrapped by a Ray worker group without changes.
"""

from __future__ import annotations

import enum
import functools
from typing import Callable

MAGIC_ATTR = "_verl_dispatch_mode"


class Dispatch(enum.Enum):
    ONE_TO_ALL = "one_to_all"  # same arguments to every rank, list of results back
    ALL_TO_ALL = "all_to_all"  # arguments are already per-rank lists
    RANK_ZERO = "rank_zero"  # only rank 0 runs it
    DP_COMPUTE_PROTO = "dp_compute_proto"  # DataProto chunked over data-parallel ranks, results concatenated
    MEGATRON_COMPUTE_PROTO = "megatron_compute_proto"
    MEGATRON_PP_AS_DP_PROTO = "megatron_pp_as_dp_proto"


def register(dispatch_mode: Dispatch = Dispatch.ALL_TO_ALL, blocking: bool = True) -> Callable:
    """Mark a worker method as callable from the driver with the given dispatch mode."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return fn(*args, **kwargs)

        setattr(inner, MAGIC_ATTR, {"dispatch_mode": dispatch_mode, "blocking": blocking})
        return inner

    return decorate


def dispatch_mode_of(fn: Callable) -> Dispatch | None:
    """The dispatch mode a method was registered with, or None for a plain method."""
    info = getattr(fn, MAGIC_ATTR, None)
    return info["dispatch_mode"] if info else None
