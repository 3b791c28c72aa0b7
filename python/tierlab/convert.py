"""Trace conversion: the native compact format (written by the Rust core) and Parquet.

pyarrow is imported where a Parquet file is written, not with the package: ``tierlab
reproduce``'s worker process runs without it (``tierlab.papers.harness``)."""

from __future__ import annotations

from pathlib import Path

from tierlab import _core
from tierlab.api import Trace


def schema():
    """The Parquet columns (a ``pyarrow.Schema``), in the record model's terms (DESIGN.md,
    "Record model")."""
    import pyarrow as pa

    return pa.schema(
        [
            ("time", pa.uint64()),
            ("page", pa.uint64()),
            ("npages", pa.uint32()),
            ("op", pa.uint8()),
            ("kind", pa.uint8()),
            ("app", pa.uint32()),
            ("event", pa.uint8()),
        ]
    )


def to_parquet(trace: Trace, out: str | Path, batch: int = 1 << 20) -> int:
    """Streams ``trace`` into a Parquet file; returns the number of records. The page size and
    app names are kept in the file's metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = schema()
    batches = trace.batches(batch)
    n = 0
    meta = {b"tierlab.page_size": str(batches.page_size()).encode()}
    writer = None
    try:
        for b in batches:
            table = pa.table({k: b[k] for k in columns.names}, schema=columns)
            if writer is None:
                writer = pq.ParquetWriter(str(out), columns.with_metadata(meta), compression="zstd")
            writer.write_table(table)
            n += table.num_rows
        if writer is None:
            writer = pq.ParquetWriter(str(out), columns.with_metadata(meta), compression="zstd")
        apps = "\n".join(batches.app_names())
        writer.add_key_value_metadata({"tierlab.apps": apps})
    finally:
        if writer is not None:
            writer.close()
    return n


def convert(trace: Trace, out: str | Path, progress: bool = False) -> int:
    """Converts to the format named by ``out``'s suffix: ``.parquet`` or ``.tlt`` (native)."""
    suffix = Path(out).suffix
    if suffix == ".parquet":
        return to_parquet(trace, out)
    if suffix == ".tlt":
        if not hasattr(_core, "convert_native"):
            raise _core.ConfigError("this build has no native trace writer")
        return int(_core.convert_native(trace.to_json(), str(out)))
    raise _core.ConfigError(f"{out}: output must end in .tlt (native) or .parquet")
