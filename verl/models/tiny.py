"""Make a tiny Hugging Face causal LM and its tokenizer locally (no model hub needed).

    python -m verl.models.tiny --out ~/models/tiny

The result is an ordinary transformers checkpoint directory: `AutoTokenizer.from_pretrained(DIR)` and
`AutoModelForCausalLM.from_pretrained(DIR)` load it, so every code path that loads a real model from a
directory is exercised. The tokenizer is character-level (printable ASCII plus newline and tab) with
ChatML special tokens and a chat template; the model is a Llama architecture with head_dim 32, the size
vLLM's CPU attention kernels accept. (Llama rather than Qwen2: transformers 5 swaps a Qwen2 checkpoint's
tokenizer for its byte-level Qwen2Tokenizer, which would drop our character vocabulary's spaces.)
"""

from __future__ import annotations

import argparse
import string
from pathlib import Path

PAD_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
UNK_TOKEN = "<unk>"
SPECIAL_TOKENS = [PAD_TOKEN, IM_START, IM_END, UNK_TOKEN]

# ChatML, as Qwen uses: the assistant turn ends with <|im_end|>, which is also the EOS token.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tokenizer():
    """A character-level `PreTrainedTokenizerFast` built with the `tokenizers` library."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    characters = [c for c in string.printable if c not in "\r\x0b\x0c"]  # printable ASCII, space, \n, \t
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + characters)}
    # BPE with no merges splits text into single characters; unknown characters become <unk>.
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=UNK_TOKEN))
    core.decoder = decoders.Fuse()  # join characters back without spaces
    core.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token=PAD_TOKEN,
        eos_token=IM_END,
        unk_token=UNK_TOKEN,
        chat_template=CHAT_TEMPLATE,
        padding_side="left",
        model_max_length=512,
    )


def build_model(tokenizer, hidden_size: int = 128, num_layers: int = 4, num_heads: int = 4, head_dim: int = 32, seed: int = 0):
    """A Llama causal LM sized for CPU tests (about 0.8M parameters at the defaults)."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    if hidden_size != num_heads * head_dim:
        raise ValueError(f"hidden_size ({hidden_size}) must equal num_heads x head_dim ({num_heads} x {head_dim})")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 3,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        head_dim=head_dim,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        use_cache=True,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = None
    return model


def make_tiny_model(out: str | Path, seed: int = 0, **model_kwargs) -> Path:
    """Write the tokenizer and a freshly initialised tiny model to `out`; returns the directory."""
    out = Path(out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, seed=seed, **model_kwargs)
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m verl.models.tiny", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory to write the model and tokenizer into")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--num-heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=32, choices=[32, 64], help="32 or 64 (what vLLM's CPU kernels accept)")
    args = parser.parse_args(argv)
    try:
        out = make_tiny_model(
            args.out, seed=args.seed, hidden_size=args.hidden_size, num_layers=args.num_layers, num_heads=args.num_heads, head_dim=args.head_dim
        )
    except (ValueError, OSError) as error:
        parser.error(str(error))
    from transformers import AutoModelForCausalLM

    n_params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(out).parameters())
    print(f"wrote a tiny Llama model ({n_params / 1e6:.2f}M parameters) and its tokenizer to {out}")


if __name__ == "__main__":
    main()
