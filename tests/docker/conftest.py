"""Fixtures for the image tests: one engine, and the CPU image built once per session by the real CLI.

The build is what a user behind a TLS-intercepting proxy with a local wheelhouse types:
    verl images build cpu --wheelhouse "$PIP_FIND_LINKS" --ca-cert FILE ...
Its output streams to the terminal (a cold build takes many minutes) and is kept in a log file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts" / "ci"))

import local_build  # noqa: E402  (scripts/ci is not a package)
from image_engine import connect  # noqa: E402

from compat.matrix import load_matrix  # noqa: E402

CPU_ENTRY = "cpu"


@pytest.fixture(scope="session")
def docker_client():
    return connect()


@pytest.fixture(scope="session")
def terminal(pytestconfig):
    """Write straight to the terminal despite pytest's capture, so a long build shows its progress."""
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    reporter = pytestconfig.pluginmanager.getplugin("terminalreporter")

    def write(line: str) -> None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"[image] {line}")

    return write


@pytest.fixture(scope="session")
def image_build(docker_client, terminal, tmp_path_factory):
    """build(*options, cwd=REPO_ROOT) -> seconds: `verl images build cpu` with this machine's wheelhouse and CAs."""
    logs = tmp_path_factory.mktemp("image-builds")

    def build(*options: str, cwd: Path = REPO_ROOT) -> float:
        log = logs / f"build-{len(list(logs.iterdir()))}.log"
        try:
            return local_build.run_verl(local_build.build_args(CPU_ENTRY, *options), log, cwd=cwd, say=terminal)
        except local_build.BuildFailed as exc:
            pytest.fail(str(exc), pytrace=False)

    return build


@pytest.fixture(scope="session")
def cpu_image(image_build) -> str:
    """The CPU image under the matrix's immutable tag, built (or rebuilt from cache) by `verl images build`."""
    image_build()
    return load_matrix(REPO_ROOT / "matrix.yaml").resolve(CPU_ENTRY).reference()
