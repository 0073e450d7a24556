"""Shared memory size and resource limits: the quiet causes of NCCL and dataloader crashes."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    shm_bytes: int | None  # None when /dev/shm does not exist
    nofile_soft: int
    nofile_hard: int
    memlock_soft: int  # resource.RLIM_INFINITY (-1) when unlimited
    memlock_hard: int


def probe_limits() -> Limits:
    try:
        st = os.statvfs("/dev/shm")
        shm = st.f_blocks * st.f_frsize
    except FileNotFoundError:
        shm = None
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    memlock = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return Limits(shm, nofile[0], nofile[1], memlock[0], memlock[1])
