"""The one place that decides which accelerator verl runs on.

Order of preference: CUDA (ROCm builds of torch also report `torch.cuda`), Ascend NPU (`torch_npu`), CPU.
Everything else asks this module for the device name, the `torch.<device>` namespace and the collective
backend, so no other file calls `.cuda()` or hard-codes "nccl".
"""

from __future__ import annotations

import functools
import importlib.util
import os

import torch

# Environment override, mainly for tests: VERL_DEVICE=cpu forces CPU even on a GPU machine.
_DEVICE_ENV = "VERL_DEVICE"


@functools.cache
def is_npu_available() -> bool:
    """True when torch_npu is installed and sees at least one Ascend NPU."""
    if importlib.util.find_spec("torch_npu") is None:
        return False
    import torch_npu  # noqa: F401  (registers torch.npu)

    return bool(torch.npu.is_available())


def is_cuda_available() -> bool:
    """True for NVIDIA CUDA and AMD ROCm builds of torch with a visible GPU."""
    return torch.cuda.is_available()


def get_device_name() -> str:
    """'cuda', 'npu' or 'cpu': the device type string torch uses."""
    forced = os.environ.get(_DEVICE_ENV)
    if forced:
        return forced
    if is_cuda_available():
        return "cuda"
    if is_npu_available():
        return "npu"
    return "cpu"


def is_accelerator() -> bool:
    """True when training runs on a GPU/NPU, i.e. when offloading to CPU means something."""
    return get_device_name() != "cpu"


def get_torch_device():
    """The `torch.cuda` / `torch.npu` namespace (or `torch.cpu`) for memory and RNG calls."""
    return getattr(torch, get_device_name(), torch.cpu)


def get_device_id() -> int:
    """Index of the local accelerator for this process (LOCAL_RANK), 0 on CPU."""
    return int(os.environ.get("LOCAL_RANK", "0")) if is_accelerator() else 0


def get_device() -> torch.device:
    """The torch.device this process computes on."""
    name = get_device_name()
    return torch.device(name, get_device_id()) if name != "cpu" else torch.device("cpu")


def get_dist_backend() -> str:
    """Collective backend for the device: nccl (CUDA and ROCm's RCCL), hccl (Ascend) or gloo (CPU)."""
    return {"cuda": "nccl", "npu": "hccl"}.get(get_device_name(), "gloo")


def empty_cache() -> None:
    """Release cached accelerator memory (no-op on CPU)."""
    if is_accelerator():
        get_torch_device().empty_cache()


def rng_state() -> dict:
    """RNG states of torch CPU and the accelerator, for checkpoints."""
    state = {"cpu": torch.get_rng_state()}
    if is_accelerator():
        state[get_device_name()] = get_torch_device().get_rng_state()
    return state


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["cpu"])
    name = get_device_name()
    if name in state and is_accelerator():
        get_torch_device().set_rng_state(state[name])
