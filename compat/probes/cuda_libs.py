"""CUDA runtime, cuDNN and NCCL versions as installed: wheel metadata first, then the system toolkit files.

Nothing is loaded: loading libcudart/libcudnn into this process could itself be the crash we diagnose.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from compat.probes.packages import Installed

# Wheels that ship the libraries torch loads (cu12 for CUDA 12, no suffix or cu13 for CUDA 13).
_WHEELS = {
    "cuda_runtime": ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime"),
    "cudnn": ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn"),
    "nccl": ("nvidia-nccl-cu12", "nvidia-nccl-cu13", "nvidia-nccl"),
}
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64")
_CUDNN_HEADERS = (
    "/usr/include/cudnn_version.h",
    "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
    "/usr/local/cuda/include/cudnn_version.h",
)


@dataclass(frozen=True)
class CudaStack:
    cuda_runtime: str | None
    cudnn: str | None
    nccl: str | None
    torch_build: str | None  # local tag of the torch wheel: "cu128", "rocm6.3", "cpu", or None
    sources: dict[str, str]  # component -> where its version was read


def _toolkit_version() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    try:
        return json.loads((Path(home) / "version.json").read_text())["cuda"]["version"]
    except (OSError, ValueError, KeyError):
        return None


def _cudnn_header_version() -> str | None:
    for header in _CUDNN_HEADERS:
        try:
            text = Path(header).read_text()
        except OSError:
            continue
        parts = [re.search(rf"#define CUDNN_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCHLEVEL")]
        if all(parts):
            return ".".join(m.group(1) for m in parts)
    return None


def _nccl_lib_version() -> str | None:
    for directory in _LIB_DIRS:
        for lib in sorted(Path(directory).glob("libnccl.so.2.*")):
            return lib.name.removeprefix("libnccl.so.")
    return None


def probe_cuda_stack(installed: Installed) -> CudaStack:
    found: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    for component, wheels in _WHEELS.items():
        for wheel in wheels:
            if version := installed.get(wheel):
                found[component], sources[component] = version, f"wheel {wheel}"
                break
    system = {"cuda_runtime": _toolkit_version, "cudnn": _cudnn_header_version, "nccl": _nccl_lib_version}
    for component, read in system.items():
        if component not in found and (version := read()):
            found[component], sources[component] = version, "system files"
    torch = installed.get("torch")
    return CudaStack(
        cuda_runtime=found.get("cuda_runtime"),
        cudnn=found.get("cudnn"),
        nccl=found.get("nccl"),
        torch_build=torch.partition("+")[2] or None if torch else None,
        sources=sources,
    )
