"""`verl doctor` as a user types it: a healthy CPU box, the JSON contract, exit codes, usage errors."""

from __future__ import annotations

import ctypes.util
import importlib.util
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

SCHEMA = json.loads((Path(__file__).parent / "doctor_output.schema.json").read_text())
NO_GPU_HERE = shutil.which("nvidia-smi") is None and ctypes.util.find_library("nvidia-ml") is None


def test_healthy_cpu_dev_environment_exits_0_with_a_readable_table(fake):
    result = fake.run("doctor")
    assert result.rc == 0, result.stdout
    assert "ready to train" in result.stdout and "0 failed" in result.stdout
    assert "✔" in result.stdout and "torch" in result.stdout


def test_failing_json_validates_against_the_schema_and_agrees_with_the_exit_code(fake):
    fake.dist("vllm", "0.6.3")  # outside verl's supported range: one FAIL
    result = fake.run("doctor", "--json")
    jsonschema.validate(result.json, SCHEMA)
    summary = result.json["summary"]
    assert result.rc == 1 == summary["exit_code"] and summary["failed"] is True
    assert summary["fail"] == sum(c["status"] == "FAIL" for c in result.json["checks"]) >= 1


def test_healthy_json_validates(fake):
    result = fake.run("doctor", "--json")
    jsonschema.validate(result.json, SCHEMA)
    assert result.rc == 0 == result.json["summary"]["exit_code"] and result.json["summary"]["fail"] == 0


@pytest.mark.skipif(importlib.util.find_spec("pynvml") is None, reason="nvidia-ml-py is not installed")
@pytest.mark.skipif(not NO_GPU_HERE, reason="this machine has an NVIDIA driver")
def test_nvml_installed_without_a_driver_is_a_skip_not_a_failure(fake):
    result = fake.run("doctor", "--json")
    gpu = result.check("gpu")
    assert gpu["status"] == "SKIP" and "no libnvidia-ml" in gpu["detail"]
    assert result.rc == 0


def test_cpu_image_without_gpu_passes_the_gpu_check(fake):
    result = fake.run("doctor", "--json", "--image", "cpu.latest")
    assert result.check("gpu")["status"] == "PASS"


def test_unknown_image_is_a_usage_error_listing_the_allowed_names(fake):
    result = fake.run("doctor", "--image", "vllm999.latest")
    assert result.rc == 2
    assert "no image called 'vllm999.latest'" in result.stderr
    assert "vllm011.latest" in result.stderr and "cpu.latest" in result.stderr


def test_image_by_immutable_tag_and_registry_reference(fake):
    from compat.matrix import load_matrix

    tag = load_matrix().resolve("cpu.latest").immutable_tag
    summary = fake.run("doctor", "--json", "--image", f"verlai/verl:{tag}").json["summary"]
    assert summary["target"] == "image cpu.latest, named with --image"


def test_unreadable_or_invalid_matrix_is_a_usage_error_naming_the_file(fake, tmp_path):
    missing = fake.run("--matrix", str(tmp_path / "nope.yaml"), "doctor")
    assert missing.rc == 2 and "nope.yaml" in missing.stderr and "cannot read the matrix" in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "schema_version: 1\nverl_version: '0.7'\nregistry: r\nplatforms: {}\nengines: {}\n"
        "images: {}\naliases: {}\nrules: {min_driver: {}, cudnn: {}, gpu_archs: {}, framework: {}, shm: 1}\n"
    )
    invalid = fake.run("--matrix", str(bad), "doctor", "--json")
    assert invalid.rc == 2 and "bad.yaml" in invalid.stderr and "shm" in invalid.stderr


def test_recommends_the_newest_image_the_driver_can_run(fake):
    fake.nvidia_smi("nvidia-smi-h100-570.csv")
    check = fake.run("doctor", "--json").check("recommend")
    assert check["status"] == "PASS"
    assert "docker pull verlai/verl:vllm011.latest" in check["detail"]  # CUDA 12.9/13.0 images need newer drivers


def test_no_image_fits_an_old_driver_and_the_warning_says_which_driver(fake):
    fake.nvidia_smi("nvidia-smi-h100-550.csv")
    check = fake.run("doctor", "--json").check("recommend")
    assert check["status"] == "WARN" and "needs driver >= 570.26" in check["detail"]
    assert "upgrade the driver" in check["fix"]


def test_amd_host_through_rocm_smi_gets_the_rocm_image(fake):
    fake.tool(
        "rocm-smi", "rocm-smi-mi300x.json", args="--showproductname --showmeminfo vram --showdriverversion --json"
    )
    result = fake.run("doctor", "--json")
    assert "2 x AMD Instinct MI300X OAM (gfx942, 192 GiB); driver 6.8.5" in result.check("gpu:amd")["detail"]
    assert "vllm011.rocm.latest" in result.check("recommend")["detail"]


def test_ascend_host_through_npu_smi_gets_the_910b_image(fake, tmp_path):
    fake.tool("npu-smi", "npu-smi-910b.txt", args="info")
    info = tmp_path / "Ascend" / "ascend-toolkit" / "latest" / "aarch64-linux"
    info.mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "fixtures" / "ascend_toolkit_install.info", info)
    fake.env["ASCEND_TOOLKIT_HOME"] = str(info.parent)
    result = fake.run("doctor", "--json", "--image", "vllm-ascend023.910b.latest")
    assert "2 x 910B4-1 (64 GiB); driver 25.2.0, CANN 8.3.RC1" in result.check("gpu:ascend")["detail"]
    assert result.check("gpu-arch")["status"] == "PASS"
    a3 = fake.run("doctor", "--json", "--image", "vllm-ascend023.a3.latest").check("gpu-arch")
    assert a3["status"] == "FAIL" and "vllm-ascend023.910b.latest" in a3["fix"]


def test_nvml_host_is_read_through_the_driver_library(fake, fake_nvml):
    # The primary NVIDIA path: nvidia-ml-py loading libnvidia-ml.so.1 (a fake one here) rather than nvidia-smi.
    fake.env.update(
        LD_LIBRARY_PATH=str(fake_nvml),
        FAKE_NVML_GPU="NVIDIA B200,10,0,183359",
        FAKE_NVML_COUNT="8",
        FAKE_NVML_DRIVER="580.95.05",
        FAKE_NVML_CUDA="13000",
    )
    result = fake.run("doctor", "--json")
    assert result.check("gpu:nvidia")["detail"] == (
        "8 x NVIDIA B200 (compute 10.0, 179 GiB); driver 580.95.05, CUDA up to 13.0 (via nvml)"
    )
    assert "docker pull verlai/verl:vllm031.latest" in result.check("recommend")["detail"]
    torch = result.check("torch")  # this venv has the CPU build of torch
    assert torch["status"] == "WARN" and "will not be used" in torch["detail"]
    on_image = fake.run("doctor", "--json", "--image", "vllm011.latest")
    assert on_image.check("driver")["status"] == "PASS" and on_image.check("gpu-arch")["status"] == "PASS"


def test_an_ascii_only_terminal_gets_ascii_marks_not_a_traceback(fake):
    fake.env["PYTHONIOENCODING"] = "ascii"
    result = fake.run("doctor")
    assert result.rc == 0 and "+ PASS os" in result.stdout


AMDSMI = '''"""A stand-in for ROCm's amdsmi Python binding: one {name} ({arch}) per handle, two handles."""
def amdsmi_init(): pass
def amdsmi_shut_down(): pass
def amdsmi_get_processor_handles(): return ["gpu0", "gpu1"]
def amdsmi_get_gpu_asic_info(handle): return {{"market_name": "{name}", "target_graphics_version": "{arch}"}}
def amdsmi_get_gpu_vram_info(handle): return {{"vram_type": "HBM3", "vram_size": 196608}}
def amdsmi_get_gpu_driver_info(handle): return {{"driver_name": "amdgpu", "driver_version": "6.10.5"}}
'''


def test_amd_host_through_amdsmi_and_an_architecture_the_rocm_image_lacks(fake, tmp_path):
    fake.module("amdsmi", AMDSMI.format(name="AMD Radeon PRO W7900", arch="gfx1100"))
    (tmp_path / "rocm" / ".info").mkdir(parents=True)
    (tmp_path / "rocm" / ".info" / "version").write_text("6.4.1-120\n")
    fake.env["ROCM_PATH"] = str(tmp_path / "rocm")
    result = fake.run("doctor", "--json", "--image", "vllm011.rocm.latest")
    gpu = result.check("gpu:amd")["detail"]
    assert gpu == "2 x AMD Radeon PRO W7900 (gfx1100, 192 GiB); driver 6.10.5, ROCm 6.4.1 (via amdsmi)"
    arch = result.check("gpu-arch")
    assert arch["status"] == "FAIL" and "gfx1100" in arch["detail"] and "gpu_archs include gfx1100" in arch["fix"]


def test_a_package_with_a_garbage_version_warns_instead_of_crashing(fake):
    fake.dist("transformers", "unknown")
    check = fake.run("doctor", "--json").check("supported:transformers")
    assert check["status"] == "WARN" and "'unknown', which is not a version" in check["detail"]
    assert "--force-reinstall" in check["fix"]
