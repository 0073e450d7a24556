"""The batch that flows between the driver and the workers.

A `DataProto` holds three things about the same N samples:

- `batch`: a `tensordict.TensorDict` with batch size [N] (input_ids, log-probs, advantages, ...);
- `non_tensor_batch`: `str -> np.ndarray` of length N (object arrays for strings, dicts, ground truths);
- `meta_info`: a plain dict shared by the whole batch (temperature, metrics, global step, ...).

Every operation keeps the three aligned, and every constructor checks that they are (a mismatched
length is a clear `ValueError`, never a silent truncation). The names mirror upstream verl's
`verl.protocol`, which users of verl already know.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import torch
from tensordict import TensorDict

__all__ = ["DataProto", "DataProtoItem", "pad_dataproto_to_divisor", "unpad_dataproto", "to_object_array"]


def to_object_array(values: Iterable[Any]) -> np.ndarray:
    """A 1-D object array, one slot per value, even when the values are lists or dicts.

    `np.array(list_of_lists, dtype=object)` would build a 2-D array when the inner lists have equal
    length; filling an empty object array keeps one Python object per sample.
    """
    values = list(values)
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def _as_index(item: Any) -> Any:
    """Turn a user index (slice, int list, int/bool tensor or array) into something both
    TensorDict and numpy accept, checking bool masks are not silently mis-sized later."""
    if isinstance(item, slice):
        return item
    if isinstance(item, torch.Tensor):
        item = item.cpu().numpy()
    item = np.asarray(item)
    if item.dtype == bool:
        return item
    if not np.issubdtype(item.dtype, np.integer):
        raise TypeError(f"DataProto index must be an int, slice, int array or bool mask, got dtype {item.dtype}")
    return item.astype(np.int64)


@dataclass
class DataProtoItem:
    """One sample of a DataProto: `data[i]`."""

    batch: TensorDict | None = None
    non_tensor_batch: dict[str, Any] = field(default_factory=dict)
    meta_info: dict = field(default_factory=dict)


@dataclass
class DataProto:
    batch: TensorDict | None = None
    non_tensor_batch: dict[str, np.ndarray] = field(default_factory=dict)
    meta_info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.check_consistency()

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_dict(
        cls,
        tensors: dict[str, torch.Tensor] | None = None,
        non_tensors: dict[str, Any] | None = None,
        meta_info: dict | None = None,
    ) -> "DataProto":
        """Build from tensors (all with the same first dimension) and per-sample non-tensor values."""
        tensors = dict(tensors or {})
        non_tensors = dict(non_tensors or {})
        batch = None
        if tensors:
            sizes = {key: value.shape[0] if value.dim() > 0 else None for key, value in tensors.items()}
            if len(set(sizes.values())) != 1 or None in sizes.values():
                raise ValueError(f"DataProto.from_dict: tensors must share their first dimension, got {sizes}")
            batch = TensorDict(tensors, batch_size=[next(iter(sizes.values()))])
        arrays = {key: value if isinstance(value, np.ndarray) else to_object_array(value) for key, value in non_tensors.items()}
        return cls(batch=batch, non_tensor_batch=arrays, meta_info=dict(meta_info or {}))

    @classmethod
    def from_single_dict(cls, data: dict[str, Any], meta_info: dict | None = None) -> "DataProto":
        """Split one dict (as a collate_fn returns it) into tensors and non-tensor arrays."""
        tensors = {key: value for key, value in data.items() if isinstance(value, torch.Tensor)}
        non_tensors = {key: value for key, value in data.items() if not isinstance(value, torch.Tensor)}
        return cls.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info=meta_info)

    def check_consistency(self) -> None:
        if self.batch is not None:
            if not isinstance(self.batch, TensorDict):
                raise TypeError(f"DataProto.batch must be a TensorDict or None, got {type(self.batch).__name__}")
            if self.batch.batch_dims != 1:
                raise ValueError(f"DataProto.batch must have exactly one batch dimension, got batch_size={list(self.batch.batch_size)}")
        if not isinstance(self.non_tensor_batch, dict):
            raise TypeError(f"DataProto.non_tensor_batch must be a dict, got {type(self.non_tensor_batch).__name__}")
        if not isinstance(self.meta_info, dict):
            raise TypeError(f"DataProto.meta_info must be a dict, got {type(self.meta_info).__name__}")
        for key, value in self.non_tensor_batch.items():
            if not isinstance(value, np.ndarray):
                raise TypeError(f"non_tensor_batch[{key!r}] must be a numpy array, got {type(value).__name__}")
        lengths = {f"non_tensor_batch[{k!r}]": len(v) for k, v in self.non_tensor_batch.items()}
        if self.batch is not None:
            lengths["batch"] = self.batch.batch_size[0]
        if len(set(lengths.values())) > 1:
            raise ValueError(f"DataProto fields disagree on the batch size: {lengths}")

    # ----------------------------------------------------------------- size and indexing
    def __len__(self) -> int:
        if self.batch is not None:
            return self.batch.batch_size[0]
        for value in self.non_tensor_batch.values():
            return len(value)
        return 0

    def __getitem__(self, item: Any) -> "DataProto | DataProtoItem":
        if isinstance(item, (int, np.integer)):
            if not -len(self) <= item < len(self):
                raise IndexError(f"DataProto index {item} out of range for a batch of {len(self)}")
            return DataProtoItem(
                batch=self.batch[int(item)] if self.batch is not None else None,
                non_tensor_batch={key: value[item] for key, value in self.non_tensor_batch.items()},
                meta_info=self.meta_info,
            )
        index = _as_index(item)
        if isinstance(index, np.ndarray) and index.dtype == bool and len(index) != len(self):
            raise IndexError(f"bool mask of length {len(index)} for a DataProto of {len(self)}")
        batch = None
        if self.batch is not None:
            batch = self.batch[index if isinstance(index, slice) else torch.from_numpy(index)]
        return DataProto(
            batch=batch,
            non_tensor_batch={key: value[index] for key, value in self.non_tensor_batch.items()},
            meta_info=dict(self.meta_info),
        )

    def slice(self, start: int | None = None, end: int | None = None, step: int | None = None) -> "DataProto":
        return self[slice(start, end, step)]

    # ----------------------------------------------------------------- key selection
    def select(self, batch_keys=None, non_tensor_batch_keys=None, meta_info_keys=None, deepcopy: bool = False) -> "DataProto":
        """A DataProto holding only the named keys (None keeps all of that kind)."""
        batch = self.batch
        if batch is not None and batch_keys is not None:
            self._require_keys("batch", batch_keys, batch.keys())
            batch = batch.select(*batch_keys)
        non_tensor = self._pick("non_tensor_batch", self.non_tensor_batch, non_tensor_batch_keys)
        meta = self._pick("meta_info", self.meta_info, meta_info_keys)
        result = DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=meta)
        return copy.deepcopy(result) if deepcopy else result

    def pop(self, batch_keys=None, non_tensor_batch_keys=None, meta_info_keys=None) -> "DataProto":
        """Remove the named keys from this DataProto and return them as a new one."""
        batch_keys = list(batch_keys or [])
        non_tensor_batch_keys = list(non_tensor_batch_keys or [])
        meta_info_keys = list(meta_info_keys or [])
        if batch_keys:
            if self.batch is None:
                raise KeyError(f"cannot pop batch keys {batch_keys}: this DataProto has no tensor batch")
            self._require_keys("batch", batch_keys, self.batch.keys())
        self._require_keys("non_tensor_batch", non_tensor_batch_keys, self.non_tensor_batch.keys())
        self._require_keys("meta_info", meta_info_keys, self.meta_info.keys())
        tensors = {key: self.batch.pop(key) for key in batch_keys}
        non_tensors = {key: self.non_tensor_batch.pop(key) for key in non_tensor_batch_keys}
        meta = {key: self.meta_info.pop(key) for key in meta_info_keys}
        batch = TensorDict(tensors, batch_size=self.batch.batch_size) if tensors else None
        return DataProto(batch=batch, non_tensor_batch=non_tensors, meta_info=meta)

    def rename(self, old_keys: str | Sequence[str], new_keys: str | Sequence[str]) -> "DataProto":
        """Rename tensor keys in place (returns self, as upstream)."""
        old_keys = [old_keys] if isinstance(old_keys, str) else list(old_keys)
        new_keys = [new_keys] if isinstance(new_keys, str) else list(new_keys)
        if len(old_keys) != len(new_keys):
            raise ValueError(f"rename needs as many new keys as old ones: {old_keys} -> {new_keys}")
        if self.batch is None:
            raise KeyError("cannot rename: this DataProto has no tensor batch")
        self._require_keys("batch", old_keys, self.batch.keys())
        for old, new in zip(old_keys, new_keys):
            self.batch.rename_key_(old, new)
        return self

    @classmethod
    def _pick(cls, where: str, mapping: dict, keys: Iterable[str] | None) -> dict:
        """A shallow copy of `mapping` restricted to `keys` (all of it when keys is None)."""
        if keys is None:
            return dict(mapping)
        cls._require_keys(where, keys, mapping.keys())
        return {key: mapping[key] for key in keys}

    @staticmethod
    def _require_keys(where: str, wanted: Iterable[str], present: Iterable[str]) -> None:
        present = list(present)
        missing = [key for key in wanted if key not in present]
        if missing:
            raise KeyError(f"{where} has no key(s) {missing}; present: {sorted(present)}")

    # ----------------------------------------------------------------- combining
    def union(self, other: "DataProto") -> "DataProto":
        """Merge `other`'s keys into this one (in place, returns self).

        A key present in both must hold equal values; different values are an error, never an overwrite.
        """
        if len(self) != len(other) and (self.batch is not None or self.non_tensor_batch) and (other.batch is not None or other.non_tensor_batch):
            raise ValueError(f"cannot union DataProtos of different sizes: {len(self)} and {len(other)}")
        if other.batch is not None:
            if self.batch is None:
                self.batch = other.batch
            else:
                for key in other.batch.keys():
                    if key in self.batch.keys():
                        if not torch.equal(self.batch[key], other.batch[key]):
                            raise ValueError(f"union: batch key {key!r} exists in both with different values")
                    else:
                        self.batch[key] = other.batch[key]
        for key, value in other.non_tensor_batch.items():
            mine = self.non_tensor_batch.get(key)
            if mine is not None and not _arrays_equal(mine, value):
                raise ValueError(f"union: non_tensor_batch key {key!r} exists in both with different values")
            self.non_tensor_batch[key] = value
        for key, value in other.meta_info.items():
            if key in self.meta_info and not _values_equal(self.meta_info[key], value):
                raise ValueError(f"union: meta_info key {key!r} exists in both with different values")
            self.meta_info[key] = value
        self.check_consistency()
        return self

    @staticmethod
    def concat(data: Sequence["DataProto"]) -> "DataProto":
        """Stack DataProtos along the batch; meta_info comes from the first."""
        data = list(data)
        if not data:
            raise ValueError("DataProto.concat needs at least one DataProto")
        key_sets = [
            (sorted(d.batch.keys()) if d.batch is not None else None, sorted(d.non_tensor_batch)) for d in data
        ]
        if any(keys != key_sets[0] for keys in key_sets):
            raise ValueError(f"DataProto.concat: the parts have different keys: {key_sets}")
        batch = torch.cat([d.batch for d in data], dim=0) if data[0].batch is not None else None
        non_tensor = {key: np.concatenate([d.non_tensor_batch[key] for d in data], axis=0) for key in data[0].non_tensor_batch}
        return DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=dict(data[0].meta_info))

    def chunk(self, chunks: int) -> list["DataProto"]:
        """Split into `chunks` equal parts (the size must divide; pad first with pad_dataproto_to_divisor)."""
        if chunks <= 0 or len(self) % chunks != 0:
            raise ValueError(
                f"cannot chunk a DataProto of {len(self)} into {chunks} equal parts; "
                "use pad_dataproto_to_divisor(data, chunks) first"
            )
        return self.split(len(self) // chunks)

    def split(self, split_size: int) -> list["DataProto"]:
        """Consecutive parts of `split_size` samples (the last one may be smaller)."""
        if split_size <= 0:
            raise ValueError(f"split_size must be positive, got {split_size}")
        return [self[start : start + split_size] for start in range(0, len(self), split_size)]

    def repeat(self, repeat_times: int = 2, interleave: bool = True) -> "DataProto":
        """Repeat every sample: interleaved gives a,a,b,b; otherwise a,b,a,b."""
        if repeat_times < 1:
            raise ValueError(f"repeat_times must be >= 1, got {repeat_times}")
        order = np.arange(len(self))
        index = np.repeat(order, repeat_times) if interleave else np.tile(order, repeat_times)
        return self[index]

    # ----------------------------------------------------------------- iteration
    def make_iterator(self, mini_batch_size: int, epochs: int = 1, seed: int | None = None, shuffle: bool = True) -> Iterator["DataProto"]:
        """Yield mini-batches for `epochs` passes, shuffled with a seeded generator."""
        if mini_batch_size <= 0 or len(self) % mini_batch_size != 0:
            raise ValueError(f"mini_batch_size {mini_batch_size} must divide the batch size {len(self)}")
        generator = torch.Generator().manual_seed(seed) if seed is not None else None
        for _ in range(epochs):
            order = torch.randperm(len(self), generator=generator).numpy() if shuffle else np.arange(len(self))
            for start in range(0, len(self), mini_batch_size):
                yield self[order[start : start + mini_batch_size]]

    # ----------------------------------------------------------------- movement
    def to(self, device: str | torch.device) -> "DataProto":
        if self.batch is not None:
            self.batch = self.batch.to(device)
        return self

    def save_to_disk(self, filepath: str | Path) -> None:
        with open(filepath, "wb") as f:
            pickle.dump(self, f)

    @staticmethod
    def load_from_disk(filepath: str | Path) -> "DataProto":
        with open(filepath, "rb") as f:
            data = pickle.load(f)
        if not isinstance(data, DataProto):
            raise TypeError(f"{filepath} does not hold a DataProto (found {type(data).__name__})")
        return data

    def __getstate__(self) -> dict:
        # Tensors go through torch.save so that Ray and pickle move them the same way (contiguous, on CPU).
        import io

        buffer = io.BytesIO()
        batch = self.batch.to("cpu").contiguous() if self.batch is not None else None
        torch.save(batch.to_dict() if batch is not None else None, buffer)
        size = list(batch.batch_size) if batch is not None else None
        return {"batch": buffer.getvalue(), "batch_size": size, "non_tensor_batch": self.non_tensor_batch, "meta_info": self.meta_info}

    def __setstate__(self, state: dict) -> None:
        import io

        tensors = torch.load(io.BytesIO(state["batch"]), weights_only=False)
        self.batch = TensorDict(tensors, batch_size=state["batch_size"]) if tensors is not None else None
        self.non_tensor_batch = state["non_tensor_batch"]
        self.meta_info = state["meta_info"]

    def __repr__(self) -> str:
        keys = list(self.batch.keys()) if self.batch is not None else []
        return (
            f"DataProto(len={len(self)}, batch_keys={keys}, "
            f"non_tensor_keys={list(self.non_tensor_batch)}, meta_info_keys={list(self.meta_info)})"
        )


def _arrays_equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    return all(_values_equal(x, y) for x, y in zip(a.ravel(), b.ravel()))


def _values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # values without a usable __eq__ (rare): treat as different
        return False


def pad_dataproto_to_divisor(data: DataProto, size_divisor: int) -> tuple[DataProto, int]:
    """Pad `data` to a multiple of `size_divisor` by repeating its first samples (as upstream).

    Returns (padded, pad_size); `unpad_dataproto(padded, pad_size)` undoes it.
    """
    if size_divisor <= 0:
        raise ValueError(f"size_divisor must be positive, got {size_divisor}")
    if len(data) == 0:
        raise ValueError("cannot pad an empty DataProto")
    pad_size = (-len(data)) % size_divisor
    if pad_size == 0:
        return data, 0
    index = np.arange(pad_size) % len(data)
    return DataProto.concat([data, data[index]]), pad_size


def unpad_dataproto(data: DataProto, pad_size: int) -> DataProto:
    if pad_size < 0 or pad_size > len(data):
        raise ValueError(f"pad_size {pad_size} out of range for a DataProto of {len(data)}")
    return data[: len(data) - pad_size] if pad_size else data
