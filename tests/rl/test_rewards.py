"""Rewards: math answer matching, custom functions from files, the batched manager, the code sandbox."""

import socket

import numpy as np
import pytest
import torch

from verl.protocol import DataProto
from verl.utils.errors import UserError
from verl.utils.reward import default_compute_score, load_custom_reward_fn
from verl.utils.reward.manager import NaiveRewardManager
from verl.utils.reward.math_reward import compute_score, extract_answer, format_reward, normalize_answer
from verl.utils.reward.sandbox import compute_code_score, network_isolation_available, run_code


# ----------------------------------------------------------------------------- math
@pytest.mark.parametrize(
    "text, answer",
    [
        ("3+5=8\n#### 8", "8"),
        ("#### 1,234.", "1,234"),
        ("first #### 3 then #### 4\nbye", "4"),  # the last marker wins, up to the end of its line
        ("so \\boxed{\\frac{1}{2}} and finally \\boxed{x^{2}+1}", "x^{2}+1"),  # nested braces
        ("\\boxed{42", None),  # cut off
        ("the answer is 8", None),
        ("####   ", None),
    ],
)
def test_extract_answer(text, answer):
    assert extract_answer(text) == answer


@pytest.mark.parametrize("given, truth", [("1,000", "1000"), (" 8.0 ", "8"), ("$3.50", "3.5"), ("-0", "0"), ("6/4", "3/2"), ("\\text{yes}", "yes")])
def test_normalization_matches_equal_values(given, truth):
    assert normalize_answer(given) == normalize_answer(truth)


def test_math_compute_score_and_format_reward():
    assert compute_score("#### 1,000", "1000") == 1.0
    assert compute_score("#### 999", "1000") == 0.0
    assert compute_score("#### 999", "1000", format_score=0.1) == 0.1  # well-formed but wrong
    assert compute_score("1000", "1000", format_score=0.1) == 0.0  # no final answer at all
    assert compute_score("\\boxed{12}", "12", score=2.0) == 2.0
    assert format_reward("#### 7") == 1.0 and format_reward("seven") == 0.0


def test_default_compute_score_dispatches_by_data_source():
    assert default_compute_score("arithmetic", "#### 8", "8") == 1.0
    assert default_compute_score("openai/gsm8k", "#### 7", "8") == 0.0
    assert default_compute_score("lighteval/MATH", "\\boxed{8}", "8") == 1.0
    with pytest.raises(UserError, match="no built-in reward for data_source 'poetry'; built-in: arithmetic, .*custom_reward_function.path"):
        default_compute_score("poetry", "roses", "red")


# ----------------------------------------------------------------------------- custom reward functions
def test_custom_reward_function_from_a_file(tmp_path):
    path = tmp_path / "my_reward.py"
    path.write_text("LIMIT = 3\ndef short(data_source, solution_str, ground_truth, extra_info=None):\n    return float(len(solution_str) <= LIMIT)\n")
    fn = load_custom_reward_fn(path, "short")
    assert fn(data_source="x", solution_str="abc", ground_truth=None, extra_info=None) == 1.0


def test_custom_reward_errors_name_the_problem(tmp_path):
    with pytest.raises(UserError, match=r"custom_reward_function.path=.*missing.py: no such file"):
        load_custom_reward_fn(tmp_path / "missing.py", "f")
    path = tmp_path / "rewards.py"
    path.write_text("THRESHOLD = 1\ndef alpha(data_source, solution_str, ground_truth, extra_info): return 0.0\ndef beta(**kwargs): return 1.0\n")
    with pytest.raises(UserError, match=r"has no 'gamma' \(custom_reward_function.name\); functions defined there: alpha, beta"):
        load_custom_reward_fn(path, "gamma")
    with pytest.raises(UserError, match="'THRESHOLD' is a int, not a function"):
        load_custom_reward_fn(path, "THRESHOLD")
    assert load_custom_reward_fn(path, "beta")(data_source="a", solution_str="b", ground_truth="c", extra_info=None) == 1.0
    narrow = tmp_path / "narrow.py"
    narrow.write_text("def score(text, answer): return 1.0\n")
    with pytest.raises(UserError, match="must accept data_source, solution_str, ground_truth, extra_info"):
        load_custom_reward_fn(narrow, "score")
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\ny = 1 / 0\n")
    with pytest.raises(UserError, match="importing it failed at line 2: ZeroDivisionError"):
        load_custom_reward_fn(broken, "x")


# ----------------------------------------------------------------------------- reward manager
def scored_batch(tokenizer, responses, truths, prompt_len=6, response_len=10):
    """A rollout-shaped DataProto: left-padded prompts, right-padded responses ending in EOS."""
    n = len(responses)
    prompts = torch.full((n, prompt_len), tokenizer.pad_token_id)
    resp = torch.full((n, response_len), tokenizer.pad_token_id)
    mask = torch.zeros(n, prompt_len + response_len, dtype=torch.long)
    for i, text in enumerate(responses):
        p_ids = tokenizer("Q?")["input_ids"]
        r_ids = tokenizer(text)["input_ids"] + [tokenizer.eos_token_id]
        prompts[i, prompt_len - len(p_ids) :] = torch.tensor(p_ids)
        resp[i, : len(r_ids)] = torch.tensor(r_ids)
        mask[i, prompt_len - len(p_ids) : prompt_len] = 1
        mask[i, prompt_len : prompt_len + len(r_ids)] = 1
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": resp, "attention_mask": mask},
        non_tensors={"data_source": ["arithmetic"] * n, "reward_model": [{"ground_truth": t, "style": "rule"} for t in truths], "extra_info": [{"index": i} for i in range(n)]},
    )


def test_manager_puts_each_score_on_the_last_response_token(tokenizer, capsys):
    data = scored_batch(tokenizer, ["#### 8", "#### 12", "no idea"], ["8", "13", "5"])
    result = NaiveRewardManager(tokenizer, num_examine=1)(data, return_dict=True)
    rewards = result["reward_tensor"]
    assert rewards.shape == (3, 10)
    # "#### 8" + EOS is 7 tokens: the score sits on index 6 (the EOS), nowhere else
    assert rewards[0].tolist() == [0.0] * 6 + [1.0] + [0.0] * 3
    assert rewards[1].sum() == 0.0 and rewards[2].sum() == 0.0
    assert result["reward_extra_info"] == {"score": [1.0, 0.0, 0.0], "acc": [True, False, False]}
    assert "[response] #### 8\n[ground_truth] 8\n[score] 1.0" in capsys.readouterr().out
    assert torch.equal(NaiveRewardManager(tokenizer)(data), rewards)


def test_manager_with_a_custom_function_returning_extra_metrics(tokenizer):
    seen = []

    def reward(data_source, solution_str, ground_truth, extra_info):
        seen.append(extra_info["index"])
        return {"score": 0.5, "acc": True, "length": len(solution_str)}

    data = scored_batch(tokenizer, ["ab", "abcd"], ["1", "2"])
    result = NaiveRewardManager(tokenizer, compute_score=reward)(data, return_dict=True)
    assert seen == [0, 1]
    assert result["reward_extra_info"] == {"length": [2, 4], "score": [0.5, 0.5], "acc": [True, True]}
    assert result["reward_tensor"][1, 4].item() == 0.5  # "abcd" + EOS: 5 tokens


def test_manager_reports_missing_keys(tokenizer):
    data = scored_batch(tokenizer, ["#### 1"], ["1"])
    data.pop(non_tensor_batch_keys=["reward_model"])
    with pytest.raises(KeyError, match=r"needs key\(s\) \['reward_model'\]"):
        NaiveRewardManager(tokenizer)(data)


# ----------------------------------------------------------------------------- sandbox
def test_sandbox_passes_fails_and_fences_runaway_programs():
    assert run_code("a, b = map(int, input().split())\nprint(a + b)", stdin="2 3\n").stdout == "5\n"
    failed = run_code("raise SystemExit('bad input')")
    assert failed.status == "error" and "bad input" in failed.stderr
    looped = run_code("while True:\n    pass", timeout_s=1.5)
    assert looped.status == "timeout" and looped.duration_s < 10
    hog = run_code("blocks = [bytearray(64 * 1024 * 1024) for _ in range(64)]", memory_mb=256)
    assert hog.status == "memory"
    chatty = run_code("while True:\n    print('x' * 1000)", timeout_s=10)
    assert chatty.status == "output_limit"


def test_sandbox_code_cannot_reach_the_network():
    if not network_isolation_available():
        pytest.skip("this kernel does not let us create a network namespace (needs root or user namespaces)")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = run_code(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')")
        assert result.status == "error" and "connected" not in result.stdout
    finally:
        server.close()


def test_code_score_from_test_cases():
    truth = {"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]}
    good = "Here you go:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    wrong = "```python\nprint(3)\n```"
    assert compute_code_score(good, truth) == 1.0
    assert compute_code_score(wrong, truth) == 0.0
    assert default_compute_score("code", good, '{"inputs": ["4 4"], "outputs": ["8"]}') == 1.0
    assert np.isclose(compute_code_score("while True: pass", {"inputs": [""], "outputs": [""]}, timeout_s=1), 0.0)
