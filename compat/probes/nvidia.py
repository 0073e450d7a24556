"""NVIDIA GPUs through NVML (nvidia-ml-py), falling back to `nvidia-smi --query-gpu`."""

from __future__ import annotations

import ctypes

from compat.probes._command import CommandFailed, run_tool
from compat.probes.devices import MIB, Device, DeviceReport

SMI_TIMEOUT_S = 8.0  # nvidia-smi takes seconds on a large node without persistence mode; a wedged GPU, forever
SMI_QUERY = ["nvidia-smi", "--query-gpu=name,compute_cap,memory.total,driver_version", "--format=csv,noheader"]


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _driver_library_loads() -> bool:
    """Can the driver's NVML library be loaded? Checked before importing pynvml, a 5000-line module."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def _from_nvml() -> DeviceReport:
    import pynvml  # nvidia-ml-py: a ctypes binding, safe to load without a driver

    pynvml.nvmlInit()
    try:
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            devices.append(
                Device(
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    arch=f"{major}.{minor}",
                    memory_bytes=int(pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                )
            )
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()  # e.g. 12080 -> "12.8"
        return DeviceReport(
            vendor="nvidia",
            source="nvml",
            devices=devices,
            driver_version=_text(pynvml.nvmlSystemGetDriverVersion()),
            stack_version=f"{cuda // 1000}.{cuda % 1000 // 10}",
        )
    finally:
        pynvml.nvmlShutdown()


def parse_smi_csv(text: str) -> tuple[list[Device], str | None]:
    devices, driver = [], None
    for line in text.strip().splitlines():
        name, cap, memory, driver = (part.strip() for part in line.split(","))
        mib = memory.split()[0]
        devices.append(Device(name=name, arch=cap, memory_bytes=int(mib) * MIB if mib.isdigit() else None))
    return devices, driver


def _from_smi(nvml_note: str) -> DeviceReport:
    try:
        out = run_tool(SMI_QUERY, timeout_s=SMI_TIMEOUT_S)
    except CommandFailed as exc:
        # The classic: nvidia-smi is installed (or mounted by the container runtime) but no driver answers.
        return DeviceReport(vendor="nvidia", source="nvidia-smi", problem=str(exc))
    if out is None:
        return DeviceReport(vendor="nvidia", source="none", note=f"no NVIDIA driver: {nvml_note}, no nvidia-smi")
    devices, driver = parse_smi_csv(out)
    return DeviceReport(vendor="nvidia", source="nvidia-smi", devices=devices, driver_version=driver)


def probe_nvidia() -> DeviceReport:
    if not _driver_library_loads():
        return _from_smi("no libnvidia-ml")
    try:
        report = _from_nvml()
        if report.devices:
            return report
        nvml_note = "NVML sees no GPU"
    except ImportError:
        nvml_note = "nvidia-ml-py not installed"
    except Exception as exc:  # pynvml.NVMLError_*: driver not loaded, GPU lost, ...
        nvml_note = f"NVML: {exc}"
    return _from_smi(nvml_note)
