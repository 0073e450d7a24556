"""The vendor-tool parsers against recorded output."""

from __future__ import annotations

from pathlib import Path

from compat.probes.amd import parse_smi_json
from compat.probes.ascend import cann_release, parse_npu_smi
from compat.probes.devices import MIB
from compat.probes.nvidia import parse_smi_csv

FIXTURES = Path(__file__).parent / "fixtures"


def test_nvidia_smi_csv():
    devices, driver = parse_smi_csv((FIXTURES / "nvidia-smi-h100-570.csv").read_text())
    assert driver == "570.124.06" and len(devices) == 4
    assert devices[0].name == "NVIDIA H100 80GB HBM3" and devices[0].arch == "9.0"
    assert devices[0].memory_bytes == 81559 * MIB


def test_rocm_smi_json():
    devices, driver = parse_smi_json((FIXTURES / "rocm-smi-mi300x.json").read_text())
    assert driver == "6.8.5" and [d.arch for d in devices] == ["gfx942", "gfx942"]
    assert devices[0].name == "AMD Instinct MI300X OAM" and devices[0].memory_bytes == 205822885888


def test_npu_smi_table_skips_headers_and_the_process_table():
    devices, version = parse_npu_smi((FIXTURES / "npu-smi-910b.txt").read_text())
    assert version == "25.2.0"
    assert [(d.name, d.memory_bytes) for d in devices] == [("910B4-1", 65536 * MIB)] * 2


def test_cann_release_from_the_toolkit_install_info(tmp_path, monkeypatch):
    arch_dir = tmp_path / "latest" / "aarch64-linux"
    arch_dir.mkdir(parents=True)
    (arch_dir / "ascend_toolkit_install.info").write_text((FIXTURES / "ascend_toolkit_install.info").read_text())
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path / "latest"))
    assert cann_release() == "8.3.RC1"
