"""What an accelerator probe reports, the same shape for NVIDIA, AMD and Ascend."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Device:
    name: str
    arch: str  # NVIDIA compute capability "9.0", AMD "gfx942", Ascend chip name
    memory_bytes: int | None


@dataclass(frozen=True)
class DeviceReport:
    vendor: str  # "nvidia", "amd", "ascend"
    source: str  # which interface answered: "nvml", "nvidia-smi", "amdsmi", "rocm-smi", "npu-smi", "none"
    devices: list[Device] = field(default_factory=list)
    driver_version: str | None = None
    stack_version: str | None = None  # highest CUDA the driver supports, ROCm release, CANN version
    problem: str | None = None  # the vendor tool exists but failed: driver not loaded, device lost, ...
    note: str | None = None  # why nothing was found, when nothing was found

    @property
    def present(self) -> bool:
        return bool(self.devices)


MIB = 1024 * 1024
