"""A seeded, resumable batch loader: its position (epoch, batch) is part of every checkpoint."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch


class ResumableLoader:
    def __init__(self, dataset: Sequence, batch_size: int, collate_fn: Callable[[list], Any], shuffle: bool = True,
                 seed: int = 1, drop_last: bool = True):
        if len(dataset) == 0:
            raise ValueError("the dataset is empty")
        self.dataset = dataset
        self.batch_size = min(batch_size, len(dataset))
        self.collate_fn = collate_fn
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        self.position = 0  # batches already taken in this epoch

    def __len__(self) -> int:
        """Batches per epoch."""
        full, rest = divmod(len(self.dataset), self.batch_size)
        return full + (0 if self.drop_last or rest == 0 else 1)

    def _order(self) -> list[int]:
        if not self.shuffle:
            return list(range(len(self.dataset)))
        generator = torch.Generator().manual_seed(self.seed + self.epoch)  # same order after a resume
        return torch.randperm(len(self.dataset), generator=generator).tolist()

    def next_batch(self) -> Any:
        """The next batch, rolling over into the next epoch when this one is used up."""
        if self.position >= len(self):
            self.epoch, self.position = self.epoch + 1, 0
        start = self.position * self.batch_size
        indices = self._order()[start : start + self.batch_size]
        self.position += 1
        return self.collate_fn([self.dataset[i] for i in indices])

    def __iter__(self):
        """One pass over the data (for validation)."""
        order = self._order()
        for start in range(0, len(order), self.batch_size):
            yield self.collate_fn([self.dataset[i] for i in order[start : start + self.batch_size]])

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.position = state["epoch"], state["position"]
