"""A reward function from the user's own file drives a training run end to end."""

from __future__ import annotations

import json

import pytest

from e2e_support import assert_ok, read_metrics, run_module, small_run

REWARD_FILE = '''
import json, os

def starts_with_hashes(data_source, solution_str, ground_truth, extra_info):
    """1.0 for a response that starts with '####' and whose last character is the answer's last digit."""
    with open(os.environ["REWARD_LOG"], "a") as log:
        log.write(json.dumps({"data_source": data_source, "ground_truth": ground_truth, "solution": solution_str}) + "\\n")
    ok = solution_str.startswith("####") and solution_str.strip()[-1:] == str(ground_truth)[-1:]
    return {"score": 1.0 if ok else -0.5, "acc": ok}
'''


@pytest.mark.slow
def test_custom_reward_function_from_a_file_drives_training(warm_start, tmp_path, monkeypatch):
    import e2e_support

    reward_file = tmp_path / "my_reward.py"
    reward_file.write_text(REWARD_FILE)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setitem(e2e_support.ENV, "REWARD_LOG", str(log))
    out = tmp_path / "run"
    result = run_module("verl.trainer.main_ppo", small_run(
        warm_start, out, f"custom_reward_function.path={reward_file}", "custom_reward_function.name=starts_with_hashes",
        "trainer.total_training_steps=2",
    ))
    assert_ok(result)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 2 * 8 * 4  # steps x prompts x rollouts
    assert {c["data_source"] for c in calls} == {"arithmetic"}
    for step, metrics in zip((1, 2), read_metrics(out)):
        batch = calls[(step - 1) * 32 : step * 32]
        expected = sum(1.0 if c["solution"].startswith("####") and c["solution"].strip()[-1:] == c["ground_truth"][-1:] else -0.5
                       for c in batch) / 32
        assert metrics["critic/score/mean"] == pytest.approx(expected, abs=1e-6)
