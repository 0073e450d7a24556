"""Read the parquet files a data set is built from, with errors a user can act on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verl.utils.errors import UserError


class DataError(UserError):
    """A data file is missing, unreadable, empty or lacks a column."""


def as_file_list(files: str | Path | list) -> list[str]:
    if isinstance(files, (str, Path)):
        return [str(files)]
    return [str(f) for f in files]


def read_parquet_files(files: str | Path | list, required_columns: list[str]):
    """Concatenate the parquet files into one pandas DataFrame, checking each one on the way."""
    import pandas as pd
    import pyarrow.parquet as pq

    paths = [Path(f).expanduser() for f in as_file_list(files)]
    if not paths:
        raise DataError("no data files given; pass one or more parquet files")
    frames = []
    for path in paths:
        if not path.is_file():
            raise DataError(f"data file {path} does not exist")
        try:
            frame = pq.read_table(path).to_pandas()
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for a corrupt or non-parquet file
            raise DataError(f"data file {path} is not a readable parquet file ({type(exc).__name__}: {exc})") from None
        if len(frame) == 0:
            raise DataError(f"data file {path} has no rows")
        missing = [column for column in required_columns if column not in frame.columns]
        if missing:
            raise DataError(f"data file {path} has no column {', '.join(repr(c) for c in missing)}; columns found: {', '.join(map(str, frame.columns))}")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def to_python(value: Any) -> Any:
    """Arrow gives nested lists back as numpy arrays; turn them into plain lists and dicts."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [to_python(v) for v in value.tolist()]
    if isinstance(value, list):
        return [to_python(v) for v in value]
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def config_value(config: Any, key: str, default: Any) -> Any:
    """Read `key` from a dict, an OmegaConf node, a pydantic model or a dataclass (None -> default)."""
    if config is None:
        return default
    value = config.get(key, default) if hasattr(config, "get") else getattr(config, key, default)
    return default if value is None else value
