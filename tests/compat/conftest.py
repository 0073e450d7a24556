"""Fake systems for `verl doctor`: recorded vendor-tool output on PATH, fake installed distributions and
native modules on PYTHONPATH, and an image manifest; the real CLI runs against them as a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
VERL = Path(sys.executable).parent / "verl"  # the console script, as a user types it


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        return json.loads(self.stdout)

    def check(self, name: str) -> dict:
        found = [c for c in self.json["checks"] if c["name"] == name]
        assert found, f"no check {name!r} in {[c['name'] for c in self.json['checks']]}"
        return found[0]


class FakeSystem:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.site = root / "site"
        self.bin.mkdir()
        self.site.mkdir()
        self.env: dict[str, str] = {"VERL_IMAGE_MANIFEST": str(root / "no-manifest.json")}
        self.import_first: list[Path] = []  # put before the fake site dir, e.g. a mounted checkout

    def tool(self, name: str, fixture: str | None = None, *, args: str | None = None, exit_code: int = 0) -> None:
        """A fake vendor tool that prints a recorded output, and refuses arguments other than `args`."""
        check = (
            f'if [ "$*" != {shlex.quote(args)} ]; then echo "{name}: unexpected arguments: $*" >&2; exit 2; fi\n'
            if args
            else ""
        )
        printed = f"cat {shlex.quote(str(FIXTURES / fixture))}\n" if fixture else ""
        script = self.bin / name
        script.write_text(f"#!/bin/sh\n{check}{printed}exit {exit_code}\n")
        script.chmod(0o755)

    def nvidia_smi(self, fixture: str, exit_code: int = 0) -> None:
        self.tool(
            "nvidia-smi",
            fixture,
            exit_code=exit_code,
            args="--query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader",
        )

    def dist(self, name: str, version: str) -> None:
        """An installed distribution as pip leaves it: <name>-<version>.dist-info with METADATA."""
        folder = self.site / f"{name.replace('-', '_')}-{version}.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")

    def module(self, name: str, source: str) -> None:
        package = self.site / name
        package.mkdir()
        (package / "__init__.py").write_text(source)

    def manifest(self, **fields) -> Path:
        path = self.root / "manifest.json"
        path.write_text(json.dumps(fields))
        self.env["VERL_IMAGE_MANIFEST"] = str(path)
        return path

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("VERL_MATRIX", None)
        pythonpath = ":".join(map(str, [*self.import_first, self.site]))
        env.update(PATH=f"{self.bin}:{env['PATH']}", PYTHONPATH=pythonpath, COLUMNS="200", **self.env)
        return env

    def run(self, *args: str, prefix: list[str] | None = None, timeout: float = 60) -> Result:
        proc = subprocess.run(
            [*(prefix or []), str(VERL), *args],
            capture_output=True,
            text=True,
            env=self.environ(),
            timeout=timeout,
            cwd=self.root,
        )
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def fake(tmp_path: Path) -> FakeSystem:
    return FakeSystem(tmp_path)


@pytest.fixture(scope="session")
def undefined_symbol_so(tmp_path_factory) -> Path:
    """Compile a shared object that needs a libtorch symbol nobody exports: dlopen says "undefined symbol"."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return _compile("undefined_symbol.c", tmp_path_factory.mktemp("native") / f"flash_attn_2_cuda{suffix}")


def _compile(source: str, out: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the fake native library")
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(out), str(FIXTURES / source)], check=True)
    return out


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory) -> Path:
    """A directory holding a fake libnvidia-ml.so.1 (see fixtures/fake_nvml.c), for LD_LIBRARY_PATH."""
    folder = tmp_path_factory.mktemp("nvml")
    _compile("fake_nvml.c", folder / "libnvidia-ml.so.1")
    return folder
