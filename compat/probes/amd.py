"""AMD GPUs through amdsmi (the ROCm Python binding), falling back to `rocm-smi --json`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from compat.probes._command import CommandFailed, run_tool
from compat.probes.devices import MIB, Device, DeviceReport

SMI_QUERY = ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showdriverversion", "--json"]


def rocm_release() -> str | None:
    """The ROCm release installed in this filesystem (image or host), from $ROCM_PATH/.info/version."""
    root = Path(os.environ.get("ROCM_PATH", "/opt/rocm"))
    try:
        return (root / ".info" / "version").read_text().strip().split("-")[0] or None
    except OSError:
        return None


def _from_amdsmi() -> DeviceReport:
    import amdsmi

    amdsmi.amdsmi_init()
    try:
        devices, driver = [], None
        for handle in amdsmi.amdsmi_get_processor_handles():
            asic = amdsmi.amdsmi_get_gpu_asic_info(handle)
            vram = amdsmi.amdsmi_get_gpu_vram_info(handle)
            vram_mb = vram.get("vram_size", vram.get("vram_size_mb"))  # renamed in ROCm 6.1
            devices.append(
                Device(
                    name=str(asic.get("market_name", "AMD GPU")),
                    arch=str(asic.get("target_graphics_version", "unknown")),
                    memory_bytes=int(vram_mb) * MIB if vram_mb else None,
                )
            )
            driver = amdsmi.amdsmi_get_gpu_driver_info(handle).get("driver_version", driver)
        return DeviceReport(
            vendor="amd", source="amdsmi", devices=devices, driver_version=driver, stack_version=rocm_release()
        )
    finally:
        amdsmi.amdsmi_shut_down()


def parse_smi_json(text: str) -> tuple[list[Device], str | None]:
    data = json.loads(text)
    devices = []
    for key, card in data.items():
        if not key.startswith("card"):
            continue
        total = card.get("VRAM Total Memory (B)")
        devices.append(
            Device(
                name=card.get("Card Series") or card.get("Device Name") or "AMD GPU",
                arch=card.get("GFX Version", "unknown"),
                memory_bytes=int(total) if total and total.isdigit() else None,
            )
        )
    return devices, data.get("system", {}).get("Driver version")


def probe_amd() -> DeviceReport:
    try:
        report = _from_amdsmi()
        if report.devices:
            return report
    except Exception:  # ImportError (no ROCm Python binding) or an amdsmi error: rocm-smi may still answer
        pass
    try:
        out = run_tool(SMI_QUERY, timeout_s=8)
    except CommandFailed as exc:
        return DeviceReport(vendor="amd", source="rocm-smi", problem=str(exc))
    if out is None:
        return DeviceReport(vendor="amd", source="none", note="no amdsmi, no rocm-smi")
    devices, driver = parse_smi_json(out)
    return DeviceReport(
        vendor="amd", source="rocm-smi", devices=devices, driver_version=driver, stack_version=rocm_release()
    )
