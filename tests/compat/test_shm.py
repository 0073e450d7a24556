"""A 64 MB /dev/shm (Docker's default) in a private mount namespace, as root with `unshare -m`."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

SMALL_SHM = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size={size} tmpfs /dev/shm && exec "$0" "$@"']


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs in a private mount namespace"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /dev/shm"], capture_output=True, text=True
    )
    return f"unshare -m is not permitted here: {probe.stderr.strip()}" if probe.returncode else None


skip_reason = _can_unshare()
pytestmark = pytest.mark.skipif(skip_reason is not None, reason=skip_reason or "")


def _with_shm(size: str) -> list[str]:
    return [*SMALL_SHM[:-1], SMALL_SHM[-1].format(size=size)]


def test_docker_default_64mb_shm_fails_in_a_gpu_image(fake):
    from compat.matrix import load_matrix

    manifest = load_matrix().resolve("vllm011.latest").manifest(git_revision="unknown", created="now")
    fake.manifest(**manifest.model_dump())
    result = fake.run("doctor", "--json", prefix=_with_shm("64m"))
    assert result.rc == 1
    check = result.check("shm")
    assert check["status"] == "FAIL" and "64 MiB" in check["detail"] and "NCCL fails" in check["detail"]
    assert "--shm-size=10g" in check["fix"]


def test_docker_default_64mb_shm_warns_on_a_cpu_machine(fake):
    check = fake.run("doctor", "--json", prefix=_with_shm("64m")).check("shm")
    assert check["status"] == "WARN" and "Ray moves its object store to /tmp" in check["detail"]
    assert "--shm-size=10g" in check["fix"]


def test_shm_between_minimum_and_recommendation_warns(fake):
    check = fake.run("doctor", "--json", prefix=_with_shm("2g")).check("shm")
    assert check["status"] == "WARN" and "2.0 GiB" in check["detail"] and "--shm-size=10g" in check["fix"]
