"""The traces the throughput benchmarks share with libCacheSim: tierlab's ``zipf:`` generator (or
any trace tierlab reads) converted to the native format, and the same page references as a
libCacheSim oracleGeneral file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tierlab
from tierlab.interop import page_sequence, write_oracle_general


def zipf_trace(tmp: Path, alpha: float, pages: int, n: int) -> tuple[str, Path, np.ndarray, Path]:
    """Writes the trace into ``tmp``: (generator spec, native file, page sequence, oracleGeneral file)."""
    spec = f"zipf:alpha={alpha},pages={pages},n={n},seed=1"
    native = Path(tmp) / "zipf.tlt"
    tierlab.convert.convert(tierlab.Trace.of(spec), native)
    seq = page_sequence(tierlab.Trace.of(native))
    oracle = write_oracle_general(seq, Path(tmp) / "zipf.oracleGeneral.bin")
    return spec, native, seq, oracle


def file_trace(tmp: Path, path: str) -> tuple[str, Path, np.ndarray, Path]:
    """``zipf_trace`` for a trace file tierlab reads (a real trace): requests expanded into pages."""
    native = Path(tmp) / "trace.tlt"
    tierlab.convert.convert(tierlab.Trace.of(path), native)
    seq = page_sequence(tierlab.Trace.of(native))
    oracle = write_oracle_general(seq, Path(tmp) / "trace.oracleGeneral.bin")
    return path, native, seq, oracle
