"""RL prompts from parquet files in verl's layout.

Each row: `data_source` (picks the reward function), `prompt` (a list of chat messages),
`ability`, `reward_model` ({"ground_truth": ..., "style": ...}) and `extra_info` (free-form dict).
Prompts go through the tokenizer's chat template with the generation prompt appended, are left-padded
to `max_prompt_length` (generation continues at the right edge), and come back with the row's other
fields, so the reward manager finds the ground truth next to the response it scores.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch.utils.data import Dataset

from verl.data.parquet import DataError, config_value, read_parquet_files, to_python
from verl.protocol import to_object_array
from verl.utils.torch_functional import compute_position_id_with_mask

logger = logging.getLogger(__name__)

TRUNCATIONS = ("error", "left", "right")


class RLHFDataset(Dataset):
    """`config` keys (dict, OmegaConf or object): prompt_key ("prompt"), max_prompt_length (512),
    filter_overlong_prompts (True), truncation ("error" | "left" | "right"), return_raw_chat (False)."""

    def __init__(self, parquet_files: str | list[str], tokenizer, config: Any = None):
        self.tokenizer = tokenizer
        self.prompt_key = config_value(config, "prompt_key", "prompt")
        self.max_prompt_length = int(config_value(config, "max_prompt_length", 512))
        self.filter_overlong_prompts = bool(config_value(config, "filter_overlong_prompts", True))
        self.truncation = config_value(config, "truncation", "error")
        self.return_raw_chat = bool(config_value(config, "return_raw_chat", False))
        if self.truncation not in TRUNCATIONS:
            raise DataError(f"data.truncation must be one of {', '.join(TRUNCATIONS)}, got {self.truncation!r}")
        if tokenizer.pad_token_id is None:
            raise DataError("the tokenizer has no pad token; RL prompts are left-padded and need one")

        frame = read_parquet_files(parquet_files, required_columns=[self.prompt_key])
        self.rows = [{key: to_python(value) for key, value in row.items()} for row in frame.to_dict(orient="records")]
        self.prompt_ids = [self._encode(row[self.prompt_key], i) for i, row in enumerate(self.rows)]
        self._drop_or_truncate_overlong()

    def _encode(self, messages: Any, row: int) -> list[int]:
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
            raise DataError(
                f"row {row}: column {self.prompt_key!r} must be a list of chat messages like "
                f"[{{'role': 'user', 'content': '...'}}], got {str(messages)[:80]!r}"
            )
        text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _drop_or_truncate_overlong(self) -> None:
        overlong = [i for i, ids in enumerate(self.prompt_ids) if len(ids) > self.max_prompt_length]
        if not overlong:
            return
        if self.filter_overlong_prompts:
            keep = set(range(len(self.rows))) - set(overlong)
            self.rows = [row for i, row in enumerate(self.rows) if i in keep]
            self.prompt_ids = [ids for i, ids in enumerate(self.prompt_ids) if i in keep]
            logger.warning(
                "filtered %d of %d prompts longer than max_prompt_length=%d tokens (data.filter_overlong_prompts=true)",
                len(overlong), len(overlong) + len(self.rows), self.max_prompt_length,
            )
            if not self.rows:
                raise DataError(f"every prompt is longer than max_prompt_length={self.max_prompt_length} tokens; raise data.max_prompt_length")
        elif self.truncation == "error":
            first = overlong[0]
            raise DataError(
                f"{len(overlong)} prompt(s) exceed max_prompt_length={self.max_prompt_length} tokens "
                f"(row {first} has {len(self.prompt_ids[first])}); set data.filter_overlong_prompts=true, "
                "data.truncation=left|right, or raise data.max_prompt_length"
            )
        else:
            for i in overlong:
                ids = self.prompt_ids[i]
                self.prompt_ids[i] = ids[-self.max_prompt_length :] if self.truncation == "left" else ids[: self.max_prompt_length]

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, item: int) -> dict[str, Any]:
        row = dict(self.rows[item])
        ids = self.prompt_ids[item]
        pad = self.max_prompt_length - len(ids)
        input_ids = torch.tensor([self.tokenizer.pad_token_id] * pad + ids, dtype=torch.long)
        attention_mask = torch.tensor([0] * pad + [1] * len(ids), dtype=torch.long)
        messages = row.pop(self.prompt_key)
        out = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "position_ids": compute_position_id_with_mask(attention_mask),
            "raw_prompt_ids": list(ids),
            "index": _row_index(row, item),
            **row,
        }
        if self.return_raw_chat:
            out["raw_prompt"] = messages
        return out


def _row_index(row: dict, item: int) -> Any:
    """The row's own id (extra_info.index, as upstream) or its position in the data set."""
    extra = row.get("extra_info")
    return extra.get("index", item) if isinstance(extra, dict) else item


def collate_fn(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Stack tensors; everything else becomes a 1-D object array (what `DataProto.from_single_dict` takes)."""
    batch: dict[str, Any] = {}
    for key in samples[0]:
        values = [sample[key] for sample in samples]
        batch[key] = torch.stack(values) if isinstance(values[0], torch.Tensor) else to_object_array(values)
    return batch


__all__ = ["RLHFDataset", "collate_fn", "DataError"]
