"""Training refuses to start when the environment preflight fails, unless told to skip it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e_support import ENV, small_run

# An image manifest that promises a torch this environment does not have: the preflight must FAIL.
WRONG_MANIFEST = {
    "schema_version": 1, "entry": "cpu", "tags": ["cpu.latest"], "immutable_tag": "test", "platform": "cpu",
    "accelerator": None, "gpu_archs": [], "versions": {"torch": "1.0.0"}, "verl_version": "0.7.0",
    "git_revision": "test", "created": "2026-01-01T00:00:00Z",
}


def _verl_train(args: list[str], manifest: Path) -> subprocess.CompletedProcess:
    verl = str(Path(sys.executable).with_name("verl"))
    env = {**ENV, "VERL_IMAGE_MANIFEST": str(manifest)}
    return subprocess.run([verl, "train", *args], capture_output=True, text=True, env=env, timeout=300)


def test_a_failed_preflight_stops_training_and_skip_preflight_overrides_it(warm_start, tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(WRONG_MANIFEST))
    args = small_run(warm_start, tmp_path / "run", "trainer.total_training_steps=1", "trainer.skip_preflight=false")

    refused = _verl_train(args, manifest)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "preflight failed" in refused.stderr and "--skip-preflight" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "run").exists(), "nothing may be trained or written after a failed preflight"

    started = _verl_train(["--skip-preflight", *args], manifest)
    assert started.returncode == 0, started.stderr[-2000:]
    assert "starting anyway" in started.stderr
    assert (tmp_path / "run" / "global_step_1").is_dir()
