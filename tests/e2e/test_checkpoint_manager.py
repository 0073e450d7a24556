"""The atomic checkpoint directory protocol, without a model (the SIGKILL tests cover it with one)."""

from __future__ import annotations

import pytest

from verl.utils.checkpoint import POINTER, CheckpointManager


def _write(files: dict[str, str]):
    def write(tmp):
        for name, text in files.items():
            (tmp / name).write_text(text)

    return write


def test_a_failed_save_leaves_the_previous_checkpoint_as_latest(tmp_path):
    manager = CheckpointManager(tmp_path, max_to_keep=2)
    manager.save(1, _write({"weights": "one"}))

    def crash(tmp):
        (tmp / "weights").write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        manager.save(2, crash)
    assert (tmp_path / ".tmp-global_step_2").exists()
    step, path = manager.latest()
    assert step == 1 and (path / "weights").read_text() == "one"
    assert not (tmp_path / ".tmp-global_step_2").exists(), "latest() must clear a partial save"


def test_pointer_pruning_and_fallback(tmp_path):
    manager = CheckpointManager(tmp_path, max_to_keep=2)
    for step in (1, 2, 3):
        manager.save(step, _write({"step": str(step)}))
    assert sorted(p.name for p in tmp_path.glob("global_step_*")) == ["global_step_2", "global_step_3"]
    assert (tmp_path / POINTER).read_text().strip() == "3"
    (tmp_path / POINTER).write_text("garbage")  # a hand-edited pointer: fall back to the newest directory
    assert manager.latest()[0] == 3
    manager.save(3, _write({"step": "3 again"}))  # re-saving a step replaces it whole
    assert (manager.step_dir(3) / "step").read_text() == "3 again"
