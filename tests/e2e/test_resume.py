"""Checkpoints survive SIGKILL: a killed run resumes where it stopped, and a kill during a save never
leaves a half-written checkpoint that resume would pick up."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from e2e_support import ENV, assert_ok, read_metrics, run_module, small_run

STEPS = 6


def _saved_step(run_dir) -> int | None:
    pointer = run_dir / "latest_checkpointed_iteration.txt"
    return int(pointer.read_text()) if pointer.is_file() else None


def _global_step(checkpoint) -> int:
    return torch.load(checkpoint / "trainer_state.pt", weights_only=False)["global_step"]


@pytest.mark.slow
def test_sigkill_mid_run_resumes_from_the_last_checkpoint(warm_start, tmp_path):
    out = tmp_path / "run"
    args = small_run(warm_start, out, f"trainer.total_training_steps={STEPS}", "trainer.save_freq=1")
    proc = subprocess.Popen([sys.executable, "-m", "verl.trainer.main_ppo", *args], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while (_saved_step(out) or 0) < 2 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _saved_step(out)
    assert killed_at is not None and 2 <= killed_at < STEPS, f"the run was not killed mid-way (saved step {killed_at})"

    result = run_module("verl.trainer.main_ppo", args)
    assert_ok(result)
    assert f"(global step {killed_at})" in result.stdout, result.stdout[-2000:]
    assert _global_step(out / f"global_step_{STEPS}") == STEPS
    # The resumed run logs only the steps after the checkpoint it resumed from.
    resumed_steps = [m["step"] for m in read_metrics(out)][-(STEPS - killed_at):]
    assert resumed_steps == list(range(killed_at + 1, STEPS + 1))


# Runs the real trainer, but SIGKILLs its own process in the middle of writing checkpoint 4: after the
# actor's shards are on disk, before the checkpoint is published.
KILL_DURING_SAVE = textwrap.dedent("""
    import os, signal, sys
    from verl.workers import fsdp_workers
    original = fsdp_workers._OffloadingTrainable.save_checkpoint
    def save_then_die(self, path):
        original(self, path)
        if "global_step_4" in path:
            os.kill(os.getpid(), signal.SIGKILL)
    fsdp_workers._OffloadingTrainable.save_checkpoint = save_then_die
    from verl.trainer.main_ppo import main
    main(sys.argv[1:])
""")


@pytest.mark.slow
def test_kill_while_saving_never_leaves_a_checkpoint_resume_would_use(warm_start, tmp_path):
    out = tmp_path / "run"
    args = small_run(warm_start, out, f"trainer.total_training_steps={STEPS}", "trainer.save_freq=2")
    killed = subprocess.run([sys.executable, "-c", KILL_DURING_SAVE, *args], env=ENV, capture_output=True, text=True,
                            timeout=600)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert (out / ".tmp-global_step_4" / "actor").is_dir(), "the kill did not land inside the save"
    assert not (out / "global_step_4").exists()
    assert _saved_step(out) == 2

    result = run_module("verl.trainer.main_ppo", args)
    assert_ok(result)
    assert "(global step 2)" in result.stdout, result.stdout[-2000:]
    assert not list(out.glob(".tmp-*")), "the half-written checkpoint was not cleaned up"
    assert _global_step(out / f"global_step_{STEPS}") == STEPS
