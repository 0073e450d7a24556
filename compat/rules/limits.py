"""/dev/shm and resource limits, against the thresholds in matrix.yaml (rules.host)."""

from __future__ import annotations

import resource

from compat.checks import fail, passed, skip, warn
from compat.rules import rule
from compat.rules.accelerators import DEVICE_FLAGS
from compat.units import GIB, gib


def _container(ctx) -> bool:
    return bool(ctx.facts["host"].ok and ctx.fact("host").container)


def _gpus_present(ctx) -> bool:
    return any(ctx.facts[v].ok and ctx.fact(v).present for v in ("nvidia", "amd", "ascend"))


@rule("limits")
def shared_memory(ctx):
    if ctx.matrix is None:
        yield skip("shm", f"/dev/shm not judged: {ctx.matrix_note}")
        return
    host = ctx.matrix.rules.host
    size = ctx.fact("limits").shm_bytes
    recommended = f"{host.shm_recommended_gib:g}g"
    if ctx.host_only:
        # A container gets its own /dev/shm (64 MB by default) and the daemon's ulimits, not this shell's:
        # say how to start it rather than judge this shell.
        target, reference = ctx.target, ctx.matrix.resolve(ctx.target.tag).reference(ctx.target.tag)
        flags = [
            DEVICE_FLAGS.get(target.platform, ""),
            f"--shm-size={recommended}",
            f"--ulimit nofile={host.nofile_recommended}:{host.nofile_recommended}",
            "--ulimit memlock=-1" if host.memlock_unlimited and target.is_gpu else "",
        ]
        yield passed("docker-run", f"start it with: docker run {' '.join(f for f in flags if f)} -it {reference}")
        return
    remedy = (
        f"restart the container with `--shm-size={recommended}` (or `--ipc=host`)"
        if _container(ctx)
        else f"`sudo mount -o remount,size={recommended.upper()} /dev/shm`"
    )
    if size is None:
        yield fail("shm", "/dev/shm does not exist; NCCL and dataloader workers need it", remedy)
    elif size < host.shm_min_gib * GIB:
        # With GPUs, NCCL's intra-node transport lives in /dev/shm: a certain failure. Without, Ray moves its
        # object store to /tmp and dataloader workers may die: a serious risk, not a certainty.
        gpu_work = (ctx.target is not None and ctx.target.is_gpu) or _gpus_present(ctx)
        level, effect = (
            (fail, "NCCL fails with 'unhandled system error'")
            if gpu_work
            else (warn, "Ray moves its object store to /tmp (slow)")
        )
        yield level(
            "shm",
            f"/dev/shm is {gib(size)}, below the {host.shm_min_gib:g} GiB minimum; {effect} and "
            "dataloader workers die with 'Bus error'",
            remedy,
            expected=f">={recommended}",
            actual=gib(size),
        )
    elif size < host.shm_recommended_gib * GIB:
        yield warn(
            "shm",
            f"/dev/shm is {gib(size)}, below the recommended {recommended}",
            remedy,
            expected=f">={recommended}",
            actual=gib(size),
        )
    else:
        yield passed("shm", f"/dev/shm is {gib(size)} (recommended: {recommended})")


@rule("limits")
def resource_limits(ctx):
    if ctx.matrix is None or ctx.host_only:
        return
    host, limits = ctx.matrix.rules.host, ctx.fact("limits")
    want = host.nofile_recommended
    if limits.nofile_soft != resource.RLIM_INFINITY and limits.nofile_soft < want:
        fix = (
            f"restart the container with `--ulimit nofile={want}:{want}`"
            if _container(ctx)
            else f"`ulimit -n {want}` (hard limit: nofile in /etc/security/limits.conf)"
        )
        yield warn(
            "ulimit-nofile",
            f"open files limit is {limits.nofile_soft}, below {want}; Ray and many "
            "dataloader workers run out of file descriptors",
            fix,
            expected=f">={want}",
            actual=str(limits.nofile_soft),
        )
    else:
        shown = "unlimited" if limits.nofile_soft == resource.RLIM_INFINITY else limits.nofile_soft
        yield passed("ulimit-nofile", f"open files limit is {shown}")


@rule("limits")
def locked_memory(ctx):
    # Only GPU work registers memory with the NIC (NCCL over InfiniBand/RoCE); a CPU box need not care.
    if (
        ctx.matrix is None
        or ctx.host_only
        or not ctx.matrix.rules.host.memlock_unlimited
        or not (ctx.target and ctx.target.is_gpu)
    ):
        return
    memlock = ctx.fact("limits").memlock_soft
    if memlock == resource.RLIM_INFINITY:
        yield passed("ulimit-memlock", "locked memory is unlimited")
        return
    fix = (
        "restart the container with `--ulimit memlock=-1`"
        if _container(ctx)
        else "set memlock unlimited in /etc/security/limits.conf and log in again"
    )
    yield warn(
        "ulimit-memlock",
        f"locked memory limit is {gib(memlock)}; multi-node NCCL over InfiniBand/RoCE needs "
        "it unlimited (single-node runs are not affected)",
        fix,
        expected="unlimited",
        actual=gib(memlock),
    )
