"""Inside an image: installed packages against the manifest's pins, and the verl source against the image."""

from __future__ import annotations

import importlib.metadata as md
import subprocess
from pathlib import Path

import pytest

from compat.matrix import load_matrix

REAL_VERL = Path(__file__).resolve().parents[2] / "verl"


def _manifest(fake, entry: str = "cpu", **override) -> None:
    fields = load_matrix().resolve(entry).manifest(git_revision="unknown", created="2026-11-30T00:00:00Z").model_dump()
    fields.update(override)
    fake.manifest(**fields)


def _installed(*names: str) -> dict[str, str]:
    return {name: md.version(name) for name in names}


def test_an_image_whose_packages_match_its_manifest_passes(fake):
    _manifest(fake, versions=_installed("torch", "transformers", "pyyaml"))
    result = fake.run("doctor", "--json")
    assert result.rc == 0, [c for c in result.json["checks"] if c["status"] == "FAIL"]
    assert result.check("pins")["detail"].startswith("3 packages match image cpu.latest")
    assert result.check("image")["status"] == "PASS"
    assert result.json["summary"]["target"] == "image cpu.latest, this container's manifest"


def test_a_package_drifted_from_the_image_pin_names_the_pinned_version(fake):
    _manifest(fake, versions={**_installed("pyyaml"), "torch": "2.8.0"})
    result = fake.run("doctor", "--json")
    torch = result.check("pin:torch")
    assert torch["status"] == "FAIL" and "2.8.0" in torch["detail"]
    assert "pip install 'torch==2.8.0'" in torch["fix"]
    assert result.rc == 1


def test_a_missing_pinned_package_is_reported(fake):
    _manifest(fake, versions={"not-a-real-package": "1.0"})
    check = fake.run("doctor", "--json").check("pin:not-a-real-package")
    assert check["status"] in ("WARN", "FAIL") and "not installed" in check["detail"]


def test_cpu_torch_inside_a_cuda_image_fails(fake):
    _manifest(fake, entry="vllm011.latest", versions=_installed("torch"))
    check = fake.run("doctor", "--json").check("torch")
    assert check["status"] == "FAIL" and "cpu build" in check["detail"] and "cuda" in check["fix"]


@pytest.fixture
def checkout(tmp_path) -> tuple[Path, str]:
    """A mounted checkout as `pip install -e` leaves it: a git repository whose verl package is imported."""
    root = tmp_path / "workspace-verl"
    (root / "verl").mkdir(parents=True)
    # Delegate submodules to the real package so the `verl` command still runs from this checkout.
    (root / "verl" / "__init__.py").write_text(f"__path__.append({str(REAL_VERL)!r})\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "checkout"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return root, head


def test_mounted_checkout_at_another_revision_than_the_image_warns_with_the_checkout_command(fake, checkout):
    root, head = checkout
    fake.import_first.append(root)
    _manifest(fake, versions=_installed("torch"), git_revision="0123456789abcdef0123456789abcdef01234567")
    check = fake.run("doctor", "--json").check("verl")
    assert check["status"] == "WARN"
    assert str(root) in check["detail"] and head[:12] in check["detail"] and "0123456789ab" in check["detail"]
    assert f"git -C {root} checkout 0123456789ab" in check["fix"]


def test_mounted_checkout_at_the_image_revision_passes(fake, checkout):
    root, head = checkout
    fake.import_first.append(root)
    _manifest(fake, versions=_installed("torch"), git_revision=head)
    check = fake.run("doctor", "--json").check("verl")
    assert check["status"] == "PASS" and "matching the image" in check["detail"]


def test_checkout_of_another_verl_version_than_the_image_warns(fake):
    _manifest(fake, versions=_installed("torch"), verl_version="0.6.0")
    check = fake.run("doctor", "--json").check("verl")
    assert check["status"] == "WARN" and "built for verl 0.6.0" in check["detail"]


def test_a_damaged_manifest_is_reported_not_a_traceback(fake):
    fake.manifest(entry="cpu")  # most required fields missing
    broken = fake.run("doctor", "--json")
    assert broken.check("image")["status"] == "FAIL" and "pull the image again" in broken.check("image")["fix"]
    (fake.root / "manifest.json").write_text("{not json")
    unreadable = fake.run("doctor", "--json").check("manifest")
    assert unreadable["status"] == "WARN" and "JSONDecodeError" in unreadable["detail"]


def _cuda_image_with(fake, **wheels: str) -> None:
    for name, version in wheels.items():
        fake.dist(name.replace("_", "-"), version)
    _manifest(fake, entry="vllm011.latest", versions={"torch": "2.8.0"})


def test_pypi_torch_with_the_cuda_wheels_is_a_cuda_build_and_the_libraries_are_reported(fake):
    _cuda_image_with(
        fake,
        torch="2.8.0",
        nvidia_cuda_runtime_cu12="12.8.90",
        nvidia_cudnn_cu12="9.10.2.21",
        nvidia_nccl_cu12="2.27.3",
    )
    result = fake.run("doctor", "--json")
    assert result.check("torch")["detail"] == "torch 2.8.0 (cuda build)"
    libs = result.check("cuda-libs")
    assert libs["status"] == "PASS" and "cudnn 9.10.2.21 (wheel nvidia-cudnn-cu12)" in libs["detail"]


def test_cudnn_outside_the_range_for_the_image_cuda_fails(fake):
    _cuda_image_with(fake, torch="2.8.0", nvidia_cuda_runtime_cu12="12.8.90", nvidia_cudnn_cu12="9.8.0.87")
    libs = fake.run("doctor", "--json").check("cuda-libs")
    assert libs["status"] == "FAIL" and "cuDNN 9.8.0.87 is outside >=9.10" in libs["detail"]
    assert "pip install 'nvidia-cudnn-cu12>=9.10'" in libs["fix"]


def test_cuda_runtime_of_another_release_than_the_image_fails(fake):
    _cuda_image_with(fake, torch="2.8.0", nvidia_cuda_runtime_cu12="12.6.77")
    libs = fake.run("doctor", "--json").check("cuda-libs")
    assert libs["status"] == "FAIL" and "12.6.77" in libs["detail"] and "torch==2.8.0" in libs["fix"]
