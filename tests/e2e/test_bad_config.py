"""User mistakes in the config or the data give one clear message and exit code 2, never a traceback."""

from __future__ import annotations

import pytest

from e2e_support import run_module, small_run


def _bad_parquet(kind: str, tmp_path):
    path = tmp_path / f"{kind}.parquet"
    if kind == "empty":
        import pandas as pd

        pd.DataFrame({"prompt": [], "data_source": []}).to_parquet(path)
    else:
        path.write_text("this is not parquet\n")
    return path


CASES = {
    "misspelt key": (["actor_rollout_ref.actor.ppo_mini_batch_sise=8"],
                     ["actor_rollout_ref.actor.ppo_mini_batch_sise: unknown key",
                      "did you mean 'actor_rollout_ref.actor.ppo_mini_batch_size'"]),
    "wrong type": (["data.train_batch_size=lots"], ["data.train_batch_size", "valid integer", "'lots'"]),
    "bad choice": (["algorithm.kl_ctrl.type=sometimes"], ["algorithm.kl_ctrl.type", "'fixed' or 'adaptive'"]),
    "missing model path": (["actor_rollout_ref.model.path=/nonexistent/model"],
                           ["actor_rollout_ref.model.path=/nonexistent/model does not exist", "verl.models.tiny"]),
    "empty parquet": ("empty", ["data.train_files", "has no rows"]),
    "malformed parquet": ("malformed", ["data.train_files", "not a readable parquet file"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_config_is_a_clear_error_with_exit_code_2(case, warm_start, tmp_path):
    change, expected = CASES[case]
    if isinstance(change, str):
        change = [f"data.train_files={_bad_parquet(change, tmp_path)}"]
    result = run_module("verl.trainer.main_ppo", small_run(warm_start, tmp_path / "run", *change), timeout=180)
    message = result.stderr + result.stdout
    assert result.returncode == 2, message[-3000:]
    assert "Traceback" not in message
    for text in expected:
        assert text in " ".join(message.split()), f"{text!r} not in:\n{message[-2000:]}"


def test_verl_train_cli_rejects_a_misspelt_section(tmp_path):
    """Through the `verl` entry point too, without needing a model."""
    import shutil
    import subprocess

    from e2e_support import ENV

    verl = shutil.which("verl") or str(__import__("pathlib").Path(__import__("sys").executable).with_name("verl"))
    result = subprocess.run([verl, "train", "trainr.total_epochs=2"], capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 2
    assert "did you mean 'trainer'" in result.stderr and "Traceback" not in result.stderr
