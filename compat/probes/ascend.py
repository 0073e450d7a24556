"""Huawei Ascend NPUs through `npu-smi info`, and the CANN toolkit release from its install info file."""

from __future__ import annotations

import os
import re
from pathlib import Path

from compat.probes._command import CommandFailed, run_tool
from compat.probes.devices import MIB, Device, DeviceReport

# "| 0     910B4-1             | OK            | 91.3        33                0    / 0             |"
_NPU_ROW = re.compile(r"^\|\s*(\d+)\s+([^|\s][^|]*?)\s*\|\s*([A-Za-z]+)\s*\|")
# the row below it ends with HBM usage: "... 3197 / 65536         |"
_HBM = re.compile(r"(\d+)\s*/\s*(\d+)\s*\|\s*$")
_SMI_VERSION = re.compile(r"Version:\s*(\S+)")


def cann_info_files() -> list[Path]:
    roots = [os.environ.get("ASCEND_TOOLKIT_HOME"), os.environ.get("ASCEND_HOME_PATH")]
    roots += ["/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann"]
    found = []
    for root in filter(None, roots):
        found += sorted(Path(root).glob("*/ascend_toolkit_install.info"))
    return found


def cann_release() -> str | None:
    for info in cann_info_files():
        for line in info.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "version" and value.strip():
                return value.strip()
    return None


def parse_npu_smi(text: str) -> tuple[list[Device], str | None]:
    version = _SMI_VERSION.search(text)
    lines = text.splitlines()
    devices = []
    for index, line in enumerate(lines):
        row = _NPU_ROW.match(line)
        if not row:
            continue
        below = lines[index + 1] if index + 1 < len(lines) else ""
        hbm = _HBM.search(below)
        name = row.group(2).strip()
        devices.append(Device(name=name, arch=name, memory_bytes=int(hbm.group(2)) * MIB if hbm else None))
    return devices, version.group(1) if version else None


def probe_ascend() -> DeviceReport:
    try:
        out = run_tool(["npu-smi", "info"], timeout_s=8)
    except CommandFailed as exc:
        return DeviceReport(vendor="ascend", source="npu-smi", problem=str(exc), stack_version=cann_release())
    if out is None:
        return DeviceReport(vendor="ascend", source="none", note="no npu-smi", stack_version=cann_release())
    devices, driver = parse_npu_smi(out)
    return DeviceReport(
        vendor="ascend", source="npu-smi", devices=devices, driver_version=driver, stack_version=cann_release()
    )
