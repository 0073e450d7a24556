"""Check data files before any model is loaded, so a bad path or file costs seconds, not minutes."""

from __future__ import annotations

from pathlib import Path

from verl.utils.errors import UserError


def as_list(files: str | list[str]) -> list[str]:
    return [files] if isinstance(files, str) else list(files)


def check_parquet_files(key: str, files: str | list[str], required_columns: list[str]) -> list[str]:
    """Each file must exist, be readable parquet, have rows and the columns the trainer reads."""
    import pyarrow.parquet as pq

    paths = [str(Path(f).expanduser()) for f in as_list(files) if f]
    if not paths:
        raise UserError(f"config error: {key} is empty; give one or more parquet files")
    for path in paths:
        if not Path(path).is_file():
            raise UserError(f"data error: {key}: {path} does not exist")
        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for corrupt files
            raise UserError(f"data error: {key}: {path} is not a readable parquet file ({exc})") from None
        if parquet.metadata.num_rows == 0:
            raise UserError(f"data error: {key}: {path} has no rows")
        columns = set(parquet.schema_arrow.names)
        missing = [c for c in required_columns if c not in columns]
        if missing:
            raise UserError(f"data error: {key}: {path} lacks column(s) {', '.join(missing)} "
                            f"(it has: {', '.join(sorted(columns))})")
    return paths
