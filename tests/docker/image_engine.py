"""Find the Docker engine the image tests talk to, or say clearly why they cannot run.

On a user's machine without an engine the image tests are skipped with the reason; in CI
(`VERL_REQUIRE_DOCKER=1`, set by `.ci/run`) the same situation fails the run instead.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_ENV = "VERL_REQUIRE_DOCKER"


def docker_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip (user machine) or fail (CI) the calling test with the reason."""
    if docker_required():
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the image tests must run here)", pytrace=False)
    pytest.skip(f"{reason}; start a Docker engine (or `bash scripts/ci/with_docker.sh ...`) to run the image tests")


def connect():
    """A Docker SDK client that has answered a ping."""
    try:
        import docker
    except ImportError:
        unavailable("the Docker SDK is not installed (pip install docker)")
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # any reason the engine cannot be reached
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        unavailable(f"no Docker engine answers at {host}: {exc}")
    return client


# How the README tells users to start a container: verl doctor FAILs on Docker's 64 MiB default /dev/shm.
SHM_SIZE = "10g"


def run_in(client, image: str, command: list[str] | str, timeout_s: int = 600, **kwargs) -> tuple[int, str, str]:
    """Run a one-off container (with the README's --shm-size); return (exit code, stdout, stderr).
    The container is always removed."""
    kwargs.setdefault("shm_size", SHM_SIZE)
    container = client.containers.create(image, command, **kwargs)
    try:
        container.start()
        code = container.wait(timeout=timeout_s)["StatusCode"]
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace")
        return code, out, err
    finally:
        container.remove(force=True)


def sh(client, image: str, script: str, **kwargs) -> tuple[int, str, str]:
    """Run a bash script in a one-off container (entrypoint bypassed so the script is taken literally)."""
    return run_in(client, image, ["-c", script], entrypoint=["bash"], **kwargs)
