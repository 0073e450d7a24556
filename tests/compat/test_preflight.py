"""The trainer's preflight: the same checks as `verl doctor`, as a Report the trainer can act on."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from compat.doctor import UsageProblem
from compat.preflight import run_preflight


def test_preflight_on_this_dev_machine_passes_and_renders(monkeypatch, tmp_path):
    monkeypatch.setenv("VERL_IMAGE_MANIFEST", str(tmp_path / "absent.json"))
    report = run_preflight()
    assert report.failed is False and report.exit_code == 0
    out = io.StringIO()
    report.render(Console(file=out, width=160))
    assert "ready to train" in out.getvalue() and "known-bad" in out.getvalue()
    assert report.summary_line().startswith("ready to train")


def test_preflight_fails_inside_an_image_whose_torch_drifted(monkeypatch, tmp_path):
    from compat.matrix import load_matrix

    manifest = load_matrix().resolve("cpu").manifest(git_revision="unknown", created="now")
    path = tmp_path / "manifest.json"
    path.write_text(manifest.model_copy(update={"versions": {"torch": "2.0.0"}}).model_dump_json())
    monkeypatch.setenv("VERL_IMAGE_MANIFEST", str(path))
    report = run_preflight()
    assert report.failed is True
    assert any(c.name == "pin:torch" and c.status.value == "FAIL" for c in report.checks)


def test_preflight_with_an_unknown_image_raises_a_usage_problem():
    with pytest.raises(UsageProblem, match="no image called 'nope'"):
        run_preflight(image="nope")


def test_without_any_matrix_the_matrix_rules_skip_and_say_so(monkeypatch, tmp_path):
    monkeypatch.setattr("compat.doctor.default_matrix_path", lambda: tmp_path / "matrix.yaml")
    monkeypatch.setenv("VERL_IMAGE_MANIFEST", str(tmp_path / "absent.json"))
    report = run_preflight()
    known_bad = next(c for c in report.checks if c.name == "known-bad")
    assert known_bad.status.value == "SKIP" and f"no version matrix at {tmp_path}" in known_bad.detail
    assert report.failed is False
