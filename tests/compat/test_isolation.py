"""No traceback, ever: every probe is made to raise, then to hang, and doctor still answers with verdicts."""

from __future__ import annotations

import dataclasses
import json
import os
import threading

import pytest
from click.testing import CliRunner

import compat.probes
from verl.cli import main

RELEASE = threading.Event()  # lets the hung probes' threads finish when the session ends


@pytest.fixture(autouse=True, scope="module")
def _release_hung_threads():
    yield
    RELEASE.set()


def _raise() -> None:
    raise RuntimeError("simulated driver crash\nsecond line that must not show")


def _hang() -> None:
    RELEASE.wait(30)


def _doctor_json() -> dict:
    result = CliRunner().invoke(main, ["doctor", "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1)
    return json.loads(result.output)


PROBE_NAMES = [p.name for p in compat.probes.PROBES]


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_a_probe_that_raises_becomes_a_warn_with_a_fix(monkeypatch, name):
    probes = [dataclasses.replace(p, func=_raise) if p.name == name else p for p in compat.probes.PROBES]
    monkeypatch.setattr(compat.probes, "PROBES", probes)
    report = _doctor_json()
    check = next(c for c in report["checks"] if c["name"] == name)
    assert check["status"] == "WARN"
    assert "failed: RuntimeError: simulated driver crash" in check["detail"]
    assert "second line" not in check["detail"] and check["fix"]


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_a_probe_that_hangs_becomes_a_warn_within_its_timeout(monkeypatch, name):
    probes = [dataclasses.replace(p, func=_hang, timeout_s=0.2) if p.name == name else p for p in compat.probes.PROBES]
    monkeypatch.setattr(compat.probes, "PROBES", probes)
    report = _doctor_json()
    check = next(c for c in report["checks"] if c["name"] == name)
    assert check["status"] == "WARN" and "hung: no answer within 0.2 s" in check["detail"]


def test_all_probes_failing_at_once_still_give_a_report(monkeypatch):
    monkeypatch.setattr(compat.probes, "PROBES", [dataclasses.replace(p, func=_raise) for p in compat.probes.PROBES])
    report = _doctor_json()
    assert {c["name"] for c in report["checks"]} >= set(PROBE_NAMES)


def test_a_rule_that_crashes_becomes_a_warn_and_the_others_still_run(monkeypatch):
    from compat.rules import RULES, Rule, load_rules

    load_rules()

    def broken(ctx):
        raise KeyError("bug")

    monkeypatch.setattr("compat.rules.RULES", [Rule(broken, ("host",)), *RULES])
    report = _doctor_json()
    assert report["checks"][0]["name"] == "broken" and "crashed: KeyError" in report["checks"][0]["detail"]
    assert any(c["name"] == "os" for c in report["checks"])


def test_a_vendor_tool_that_hangs_is_killed_and_reported(fake, monkeypatch):
    # A real hung process (as nvidia-smi is on a wedged GPU), killed after a shortened timeout.
    script = fake.bin / "nvidia-smi"
    script.write_text("#!/bin/sh\nexec sleep 60\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.bin}:{os.environ['PATH']}")
    monkeypatch.setattr("compat.probes.nvidia.SMI_TIMEOUT_S", 0.5)
    check = next(c for c in _doctor_json()["checks"] if c["name"] == "gpu:nvidia")
    assert check["status"] == "WARN" and "did not answer within 0.5 s" in check["detail"]
    assert "`nvidia-smi` must work" in check["fix"]
