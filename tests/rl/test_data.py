"""Data sets from parquet (RL prompts, SFT pairs) and the arithmetic task generator."""

import logging
import subprocess
import sys

import pandas as pd
import pytest

from verl.data.arithmetic import make_problems, write_arithmetic_dataset
from verl.data.parquet import DataError
from verl.data.rl_dataset import RLHFDataset, collate_fn
from verl.data.sft_dataset import SFTDataset
from verl.protocol import DataProto


@pytest.fixture(scope="module")
def arithmetic(tmp_path_factory):
    return write_arithmetic_dataset(tmp_path_factory.mktemp("arith"), n_train=64, n_test=16, max_operand=20, seed=0)


# ----------------------------------------------------------------------------- task generator
def test_arithmetic_files_have_the_verl_layout_and_right_answers(arithmetic):
    train = pd.read_parquet(arithmetic["train"])
    assert list(train.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert len(train) == 64 and set(train["data_source"]) == {"arithmetic"}
    for prompt, reward, extra in zip(train["prompt"], train["reward_model"], train["extra_info"]):
        assert prompt[0]["role"] == "user" and prompt[0]["content"] == f"What is {extra['a']}+{extra['b']}?"
        assert reward["ground_truth"] == str(extra["a"] + extra["b"])
    sft = pd.read_parquet(arithmetic["sft_train"])
    assert sft.loc[0, "response"] == f"#### {eval(sft.loc[0, 'prompt'][8:-1])}"


def test_test_problems_are_held_out_and_generation_is_seeded():
    train, test = make_problems(n_train=500, n_test=50, max_operand=20, ops="+-", seed=1)
    assert not set(train) & set(test)
    assert make_problems(500, 50, 20, "+-", seed=1) == (train, test)
    assert make_problems(500, 50, 20, "+-", seed=2) != (train, test)
    assert all(0 <= a <= 20 and 0 <= b <= 20 and op in "+-" for a, op, b in train)
    with pytest.raises(ValueError, match="only 100 with max_operand=9"):
        make_problems(10, 100, 9, "+", 0)
    with pytest.raises(ValueError, match=r"unknown operation\(s\) \['/'\]; allowed: \+, -, \*"):
        make_problems(10, 10, 9, "+/", 0)


def test_second_operand_has_its_own_bound():
    """The quickstart's task: "a+b" with a <= 99, b <= 9 (1,000 problems, 200 held out)."""
    train, test = make_problems(n_train=800, n_test=200, max_operand=99, ops="+", seed=0, max_second_operand=9)
    assert len(set(train)) == 800 and len(set(test)) == 200 and not set(train) & set(test)
    assert {b for _, _, b in train + test} == set(range(10)) and max(a for a, _, _ in train) == 99
    with pytest.raises(ValueError, match="must be at least 1, got 99 and 0"):
        make_problems(10, 10, 99, "+", 0, max_second_operand=0)


def test_generator_command(tmp_path):
    result = subprocess.run([sys.executable, "-m", "verl.data.arithmetic", "--out", str(tmp_path), "--n-train", "20", "--n-test", "5"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sft_test.parquet", "sft_train.parquet", "test.parquet", "train.parquet"]
    bad = subprocess.run([sys.executable, "-m", "verl.data.arithmetic", "--out", str(tmp_path), "--ops", "%"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown operation" in bad.stderr and "Traceback" not in bad.stderr


# ----------------------------------------------------------------------------- RL data set
def test_rl_prompts_are_chat_templated_and_left_padded(arithmetic, tokenizer):
    dataset = RLHFDataset(arithmetic["test"], tokenizer, {"max_prompt_length": 40})
    item = dataset[0]
    ids, mask = item["input_ids"], item["attention_mask"]
    assert ids.shape == mask.shape == item["position_ids"].shape == (40,)
    n_pad = int((mask == 0).sum())
    assert n_pad > 0 and mask[:n_pad].sum() == 0 and mask[n_pad:].all()  # left padding
    assert (ids[:n_pad] == tokenizer.pad_token_id).all()
    assert item["position_ids"][n_pad:].tolist() == list(range(40 - n_pad))
    question = f"What is {item['extra_info']['a']}+{item['extra_info']['b']}?"
    assert tokenizer.decode(ids[n_pad:]) == f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
    assert item["raw_prompt_ids"] == ids[n_pad:].tolist()
    assert item["reward_model"]["ground_truth"] == str(item["extra_info"]["a"] + item["extra_info"]["b"])
    assert item["data_source"] == "arithmetic" and item["index"] == 0


def test_collate_gives_what_dataproto_takes(arithmetic, tokenizer):
    dataset = RLHFDataset(arithmetic["test"], tokenizer, {"max_prompt_length": 40, "return_raw_chat": True})
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(4)]))
    assert len(batch) == 4 and batch.batch["input_ids"].shape == (4, 40)
    assert batch.non_tensor_batch["reward_model"][3]["ground_truth"] == dataset[3]["reward_model"]["ground_truth"]
    assert batch.non_tensor_batch["raw_prompt"][0][0]["role"] == "user"


def test_overlong_prompts_are_filtered_with_a_count_in_the_log(arithmetic, tokenizer, caplog):
    lengths = [len(ids) for ids in RLHFDataset(arithmetic["train"], tokenizer, {"max_prompt_length": 64}).prompt_ids]
    limit = sorted(lengths)[len(lengths) // 2]
    expected_dropped = sum(length > limit for length in lengths)
    with caplog.at_level(logging.WARNING, logger="verl.data.rl_dataset"):
        dataset = RLHFDataset(arithmetic["train"], tokenizer, {"max_prompt_length": limit})
    assert len(dataset) == 64 - expected_dropped > 0
    assert f"filtered {expected_dropped} of 64 prompts longer than max_prompt_length={limit}" in caplog.text


def test_overlong_prompts_without_filtering_error_or_truncate(arithmetic, tokenizer):
    config = {"max_prompt_length": 20, "filter_overlong_prompts": False}
    with pytest.raises(DataError, match=r"prompt\(s\) exceed max_prompt_length=20 tokens .*data.filter_overlong_prompts=true"):
        RLHFDataset(arithmetic["test"], tokenizer, config)
    left = RLHFDataset(arithmetic["test"], tokenizer, {**config, "truncation": "left"})[0]
    right = RLHFDataset(arithmetic["test"], tokenizer, {**config, "truncation": "right"})[0]
    assert tokenizer.decode(left["input_ids"]).endswith("<|im_start|>assistant\n")
    assert tokenizer.decode(right["input_ids"]).startswith("<|im_start|>user\nWhat is")
    with pytest.raises(DataError, match="data.truncation must be one of error, left, right, got 'middle'"):
        RLHFDataset(arithmetic["test"], tokenizer, {"truncation": "middle"})


# ----------------------------------------------------------------------------- bad files
def test_bad_files_are_clear_errors(tmp_path, tokenizer, arithmetic):
    with pytest.raises(DataError, match=r"data file .*nope.parquet does not exist"):
        RLHFDataset(tmp_path / "nope.parquet", tokenizer)
    empty = tmp_path / "empty.parquet"
    pd.DataFrame({"prompt": pd.Series([], dtype=object)}).to_parquet(empty)
    with pytest.raises(DataError, match="has no rows"):
        RLHFDataset(empty, tokenizer)
    garbage = tmp_path / "garbage.parquet"
    garbage.write_text("this is not parquet")
    with pytest.raises(DataError, match="is not a readable parquet file"):
        SFTDataset(garbage, tokenizer)
    with pytest.raises(DataError, match="has no column 'question'; columns found: data_source, prompt, ability, reward_model, extra_info"):
        RLHFDataset(arithmetic["test"], tokenizer, {"prompt_key": "question"})
    strings = tmp_path / "strings.parquet"
    pd.DataFrame({"prompt": ["What is 1+1?"]}).to_parquet(strings)
    with pytest.raises(DataError, match="row 0: column 'prompt' must be a list of chat messages"):
        RLHFDataset(strings, tokenizer)


# ----------------------------------------------------------------------------- SFT data set
def test_sft_loss_mask_covers_the_response_and_eos_only(arithmetic, tokenizer):
    dataset = SFTDataset(arithmetic["sft_train"], tokenizer, max_length=48)
    item = dataset[0]
    assert all(item[key].shape == (48,) for key in ("input_ids", "attention_mask", "position_ids", "loss_mask"))
    response = pd.read_parquet(arithmetic["sft_train"]).loc[0, "response"]
    assert tokenizer.decode(item["input_ids"][item["loss_mask"].bool()]) == response + "<|im_end|>"
    n_real = int(item["attention_mask"].sum())
    assert item["attention_mask"][:n_real].all() and not item["attention_mask"][n_real:].any()  # right padding
    assert not item["loss_mask"][n_real:].any()


def test_sft_truncation(arithmetic, tokenizer):
    with pytest.raises(DataError, match=r"row 0 is \d+ tokens, over max_length=16"):
        SFTDataset(arithmetic["sft_train"], tokenizer, max_length=16)
    left = SFTDataset(arithmetic["sft_train"], tokenizer, max_length=16, truncation="left")[0]
    right = SFTDataset(arithmetic["sft_train"], tokenizer, max_length=16, truncation="right")[0]
    assert tokenizer.decode(left["input_ids"]).endswith("<|im_end|>") and left["loss_mask"][-1] == 1
    assert tokenizer.decode(right["input_ids"]).startswith("<|im_start|>user") and right["loss_mask"].sum() == 0
    with pytest.raises(DataError, match="has no column 'answer'; columns found: prompt, response"):
        SFTDataset(arithmetic["sft_train"], tokenizer, response_key="answer")
