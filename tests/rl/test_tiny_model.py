"""The tiny model maker writes a checkpoint that the standard Auto classes load, offline."""

import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def test_command_writes_a_loadable_model_and_tokenizer(tmp_path):
    out = tmp_path / "tiny"
    result = subprocess.run([sys.executable, "-m", "verl.models.tiny", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "wrote a tiny Llama model" in result.stdout
    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert model.config.head_dim == 32 and model.config.tie_word_embeddings
    assert model.config.vocab_size == len(tokenizer)
    assert 0.5e6 < sum(p.numel() for p in model.parameters()) < 2e6


def test_bad_arguments_are_a_usage_error_not_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "verl.models.tiny", "--out", str(tmp_path), "--hidden-size", "100"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert "hidden_size (100) must equal num_heads x head_dim (4 x 32)" in result.stderr
    assert "Traceback" not in result.stderr


def test_tokenizer_round_trips_text_and_has_a_chat_template(tokenizer):
    text = "What is 12+7?\n#### 19, ok"
    ids = tokenizer(text)["input_ids"]
    assert len(ids) == len(text)  # character level, no special tokens added
    assert tokenizer.decode(ids) == text
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False)
    assert chat == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.eos_token_id != tokenizer.pad_token_id
    assert tokenizer.decode(tokenizer("é")["input_ids"]) == "<unk>"


def test_same_seed_same_weights_and_generation_stops_at_eos(tiny_model_dir, tmp_path):
    from verl.models.tiny import make_tiny_model

    again = AutoModelForCausalLM.from_pretrained(make_tiny_model(tmp_path / "again", seed=0))
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    for (name, p), (_, q) in zip(model.named_parameters(), again.named_parameters()):
        assert torch.equal(p, q), name
    assert model.generation_config.eos_token_id == AutoTokenizer.from_pretrained(tiny_model_dir).eos_token_id
    logits = model(torch.tensor([[1, 14, 15]])).logits
    assert logits.shape == (1, 3, model.config.vocab_size)
