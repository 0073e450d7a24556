"""Each failure class from issue 3's "Why", on a fake system, through the real `verl doctor` command.

Every test asserts the verdict and that the fix line names the concrete remedy.
"""

from __future__ import annotations

import shutil


def test_driver_older_than_the_image_cuda_fails_with_the_minimum_driver(fake):
    fake.nvidia_smi("nvidia-smi-h100-550.csv")
    result = fake.run("doctor", "--json", "--image", "vllm011.latest")
    assert result.rc == 1
    driver = result.check("driver")
    assert driver["status"] == "FAIL"
    assert "550.54.15" in driver["detail"] and "CUDA 12.8" in driver["detail"]
    assert "upgrade the host's NVIDIA driver to 570.26" in driver["fix"]


def test_driver_new_enough_passes(fake):
    fake.nvidia_smi("nvidia-smi-h100-570.csv")
    result = fake.run("doctor", "--json", "--image", "vllm011.latest")
    assert result.check("driver")["status"] == "PASS"
    assert result.check("gpu-arch")["status"] == "PASS"
    assert "4 x NVIDIA H100 80GB HBM3 (compute 9.0, 80 GiB)" in result.check("gpu:nvidia")["detail"]
    # From outside the image, doctor says how to start it instead of judging this shell's /dev/shm.
    run = result.check("docker-run")["detail"]
    assert "docker run --gpus all --shm-size=10g" in run and run.endswith("verlai/verl:vllm011.latest")


def test_gpu_architecture_the_image_lacks_fails_with_no_kernel_image(fake):
    fake.nvidia_smi("nvidia-smi-v100-570.csv")
    result = fake.run("doctor", "--json", "--image", "vllm011.latest")
    assert result.rc == 1
    arch = result.check("gpu-arch")
    assert arch["status"] == "FAIL"
    assert "no kernel image is available" in arch["detail"] and "7.0" in arch["detail"]
    assert "gpu_archs include 7.0" in arch["fix"]  # no image in the matrix builds for Volta


def test_flash_attn_built_against_another_torch_fails_with_undefined_symbol(fake, undefined_symbol_so):
    fake.dist("flash-attn", "2.8.3")
    shutil.copy(undefined_symbol_so, fake.site)
    fake.module("flash_attn", "import flash_attn_2_cuda  # the compiled kernels, as in flash_attn_interface\n")
    result = fake.run("doctor", "--json")
    assert result.rc == 1
    check = result.check("import:flash_attn")
    assert check["status"] == "FAIL"
    assert "undefined symbol" in check["detail"]
    assert "--force-reinstall" in check["fix"] and "flash-attn" in check["fix"] and "torch" in check["fix"]


def test_torch_291_with_cudnn_below_915_is_a_known_bad_combination(fake):
    fake.dist("torch", "2.9.1")
    fake.dist("nvidia-cudnn-cu12", "9.10.2.21")
    result = fake.run("doctor", "--json")
    assert result.rc == 1
    check = result.check("known-bad:torch291-cudnn-below-915")
    assert check["status"] == "FAIL"
    assert "torch 2.9.1" in check["detail"] and "cudnn 9.10.2.21" in check["detail"]
    assert "nvidia-cudnn-cu12==9.16.0.29" in check["fix"]  # the fix comes from matrix.yaml


def test_torch_291_with_cudnn_915_is_fine(fake):
    fake.dist("torch", "2.9.1")
    fake.dist("nvidia-cudnn-cu12", "9.15.0.57")
    result = fake.run("doctor", "--json")
    assert result.check("known-bad")["status"] == "PASS"


def test_engine_older_than_verl_supports_fails_with_the_range_and_an_image(fake):
    fake.dist("vllm", "0.6.3")
    result = fake.run("doctor", "--json")
    assert result.rc == 1
    check = result.check("supported:vllm")
    assert check["status"] == "FAIL" and "0.6.3" in check["detail"]
    assert "pip install 'vllm>=0.8.5'" in check["fix"] and "vllm011.latest" in check["fix"]


def test_no_gpu_visible_in_a_gpu_image_warns_to_pass_the_gpus(fake):
    result = fake.run("doctor", "--json", "--image", "vllm011.latest")
    check = result.check("gpu")
    assert check["status"] == "WARN"
    assert "--gpus all" in check["fix"]


def test_driver_not_loaded_fails_for_a_cuda_image(fake):
    fake.nvidia_smi("nvidia-smi-no-driver.txt", exit_code=9)
    result = fake.run("doctor", "--json", "--image", "vllm011.latest")
    assert result.rc == 1
    check = result.check("gpu:nvidia")
    assert check["status"] == "FAIL" and "couldn't communicate with the NVIDIA driver" in check["detail"]
    assert "--gpus all" in check["fix"]


def test_driver_older_than_the_installed_cuda_runtime_fails_outside_any_image(fake):
    # A bare-metal venv: the CUDA release comes from the runtime wheel torch brought along.
    fake.nvidia_smi("nvidia-smi-h100-550.csv")
    fake.dist("torch", "2.8.0")
    fake.dist("nvidia-cuda-runtime-cu12", "12.9.79")
    result = fake.run("doctor", "--json")
    driver = result.check("driver")
    assert driver["status"] == "FAIL" and "CUDA 12.9 (the installed CUDA runtime)" in driver["detail"]
    assert "575.51.03" in driver["fix"]
