"""Operating system, CPU, memory, and whether we run inside a container."""

from __future__ import annotations

from compat.checks import passed, warn
from compat.rules import rule
from compat.units import gib


@rule("host")
def os_and_cpu(ctx):
    host = ctx.fact("host")
    cpus = f"{host.cpu_count} x {host.cpu_model}"
    detail = f"{host.os_name}, kernel {host.kernel}, {host.machine}, {cpus}, {gib(host.memory_bytes)} RAM"
    if host.system != "Linux":
        yield warn("os", detail, "verl trains on Linux: run it in one of the verl images (`docker run ...`)")
    else:
        yield passed("os", detail)
    yield passed("python", f"Python {host.python}")


@rule("host", "manifest")
def container(ctx):
    host, manifest = ctx.fact("host"), ctx.fact("manifest")
    if manifest.data is not None:
        tag = manifest.data.get("immutable_tag") or manifest.data.get("entry", "?")
        yield passed("container", f"inside verl image {tag} (manifest {manifest.path})")
    elif host.container:
        yield passed("container", f"inside a {host.container} container that is not a verl image (no {manifest.path})")
    else:
        yield passed("container", "not in a container")
