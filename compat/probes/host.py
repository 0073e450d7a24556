"""OS, CPU, memory and container detection, from /proc and the standard library."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HostInfo:
    system: str  # platform.system(): "Linux", "Darwin", "Windows"
    os_name: str
    kernel: str
    machine: str
    cpu_model: str
    cpu_count: int
    memory_bytes: int | None
    python: str
    container: str | None  # "docker", "podman", "kubernetes", ... or None outside a container


def _os_name() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", platform.system())
    except OSError:
        return f"{platform.system()} {platform.release()}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def detect_container() -> str | None:
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if Path("/.dockerenv").exists():
        return "docker"
    if Path("/run/.containerenv").exists():
        return "podman"
    if os.environ.get("container"):  # set by systemd-nspawn, podman, lxc
        return os.environ["container"]
    try:
        cgroup = Path("/proc/1/cgroup").read_text()
    except OSError:
        return None
    for marker in ("docker", "containerd", "kubepods", "libpod", "lxc"):
        if marker in cgroup:
            return marker
    return None


def probe_host() -> HostInfo:
    return HostInfo(
        system=platform.system(),
        os_name=_os_name(),
        kernel=platform.release(),
        machine=platform.machine(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count() or 0,
        memory_bytes=_memory_bytes(),
        python=platform.python_version(),
        container=detect_container(),
    )
