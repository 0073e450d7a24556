"""SFT pairs from parquet: the prompt through the chat template, the response plus EOS, loss on the response only.

Each item holds `input_ids`, `attention_mask`, `position_ids` and `loss_mask`, right-padded to
`max_length`. `loss_mask` is aligned with the tokens: it is 1 on every response token (EOS included)
and 0 on the prompt and the padding. A trainer predicting token t+1 from position t therefore uses
`logits[:, :-1]` against `input_ids[:, 1:]` with `loss_mask[:, 1:]`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import Dataset

from verl.data.parquet import DataError, read_parquet_files, to_python
from verl.utils.torch_functional import compute_position_id_with_mask

TRUNCATIONS = ("error", "left", "right")


class SFTDataset(Dataset):
    def __init__(
        self,
        parquet_files: str | list[str],
        tokenizer,
        prompt_key: str = "prompt",
        response_key: str = "response",
        max_length: int = 1024,
        truncation: str = "error",
    ):
        if truncation not in TRUNCATIONS:
            raise DataError(f"truncation must be one of {', '.join(TRUNCATIONS)}, got {truncation!r}")
        if tokenizer.pad_token_id is None or tokenizer.eos_token is None:
            raise DataError("the tokenizer needs a pad token and an EOS token for SFT")
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.truncation = truncation
        frame = read_parquet_files(parquet_files, required_columns=[prompt_key, response_key])
        self.examples = [
            self._encode(to_python(prompt), to_python(response), row)
            for row, (prompt, response) in enumerate(zip(frame[prompt_key], frame[response_key]))
        ]

    def _encode(self, prompt: Any, response: Any, row: int) -> tuple[list[int], list[int]]:
        # A plain string is one user turn; a list of messages is used as it is.
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        if not isinstance(messages, list) or not isinstance(response, str):
            raise DataError(f"row {row}: the prompt must be a string or a list of chat messages and the response a string")
        prompt_text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        prompt_ids = self.tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
        response_ids = self.tokenizer(response + self.tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        length = len(prompt_ids) + len(response_ids)
        if length > self.max_length:
            if self.truncation == "error":
                raise DataError(
                    f"row {row} is {length} tokens, over max_length={self.max_length}; "
                    "raise max_length or set truncation to left or right"
                )
            ids, mask = prompt_ids + response_ids, [0] * len(prompt_ids) + [1] * len(response_ids)
            cut = slice(length - self.max_length, None) if self.truncation == "left" else slice(None, self.max_length)
            return ids[cut], mask[cut]
        return prompt_ids + response_ids, [0] * len(prompt_ids) + [1] * len(response_ids)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, item: int) -> dict[str, torch.Tensor]:
        ids, loss = self.examples[item]
        pad = self.max_length - len(ids)
        attention_mask = torch.tensor([1] * len(ids) + [0] * pad, dtype=torch.long)
        return {
            "input_ids": torch.tensor(ids + [self.tokenizer.pad_token_id] * pad, dtype=torch.long),
            "attention_mask": attention_mask,
            "position_ids": compute_position_id_with_mask(attention_mask),
            "loss_mask": torch.tensor(loss + [0] * pad, dtype=torch.long),
        }
