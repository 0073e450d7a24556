"""Editable development: the checkout mounted at /workspace/verl, installed with the documented command,
and an edit on the host visible inside the running container without a rebuild."""

from __future__ import annotations

import json
import uuid

import pytest

from checkout_copy import copy_checkout
from image_engine import SHM_SIZE

pytestmark = pytest.mark.image

MOUNT = "/workspace/verl"
INSTALL = ["pip", "install", "--no-deps", "-e", MOUNT]  # the README's command


def _exec(container, command: list[str]) -> str:
    """Run a command in the container; return its stdout, or fail the test with its stderr."""
    code, (out, err) = container.exec_run(command, workdir=MOUNT, demux=True)
    out, err = (out or b"").decode(errors="replace"), (err or b"").decode(errors="replace")
    assert code == 0, f"`{' '.join(command)}` exited {code} inside the container:\n{(out + err)[-3000:]}"
    return out


def test_mounted_checkout_is_live_after_editable_install(docker_client, cpu_image, tmp_path):
    checkout = copy_checkout(tmp_path / "verl")
    container = docker_client.containers.run(
        cpu_image, ["infinity"], entrypoint=["sleep"], detach=True, shm_size=SHM_SIZE,
        volumes={str(checkout): {"bind": MOUNT, "mode": "rw"}},
    )
    try:
        _exec(container, INSTALL)
        where = _exec(container, ["python", "-c", "import verl; print(verl.__file__)"]).strip().splitlines()[-1]
        assert where == f"{MOUNT}/verl/__init__.py", f"verl is imported from {where}, not the mounted checkout"

        marker = uuid.uuid4().hex
        init = checkout / "verl" / "__init__.py"
        init.write_text(init.read_text() + f'\nEDITED_ON_THE_HOST = "{marker}"\n')
        seen = _exec(container, ["python", "-c", "import verl; print(verl.EDITED_ON_THE_HOST)"]).strip()
        assert seen.endswith(marker), f"the edit on the host is not visible inside: {seen!r}"

        # verl doctor tells which source is in use: the mounted checkout, not the image's copy.
        report = json.loads(_exec(container, ["verl", "doctor", "--json"]))
        verl_check = next(c for c in report["checks"] if c["name"] == "verl")
        assert f"checkout {MOUNT}" in verl_check["detail"], verl_check
    finally:
        container.remove(force=True)
