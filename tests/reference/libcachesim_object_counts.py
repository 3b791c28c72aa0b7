"""libCacheSim's object and byte misses with object sizes (the reference for
crates/tierlab-core/tests/libcachesim_object_conformance.rs and
tests/test_admission_libcachesim.py).

The trace is cloudPhysicsIO in the three size-carrying forms of ../shared/traces/libcachesim
(csv with its `size` column, oracleGeneral, vscsi), each read by libCacheSim's own reader with
object sizes. Cache sizes are bytes: 64 KiB (below the largest object, so some objects are too
large to cache) and 0.1%, 1%, 10% and 25% of the bytes of the distinct objects. Belady needs the
next-access times only the oracleGeneral form carries, so it runs on that form only. The forms
hold the same object ids, but not the same sizes: the oracleGeneral file gives some requests other
sizes than the csv and vscsi forms (which agree), so every form has its own request and byte
totals (`totals`).

Admission (`admission`): libCacheSim's BloomFilter and Size admissioners in front of FIFO, LRU,
CLOCK, SIEVE, LFU and S3-FIFO, with object sizes (oracleGeneral form, same byte sizes) and with
unit sizes (`ignore_obj_size`, cache sizes in objects).

Counts are `round(ratio * n)` of `process_trace`'s (object miss ratio, byte miss ratio).

Run: python3 tests/reference/libcachesim_object_counts.py  (writes libcachesim_object_counts.json
next to this file; needs `pip install libcachesim` 0.3.x).
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import libcachesim as lcs

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent.parent.parent.parent / "shared" / "traces"
if not TRACES.exists():
    TRACES = Path("/work/shared/traces")
CP = TRACES / "libcachesim" / "cloudPhysicsIO"

FRACTIONS = [0.001, 0.01, 0.1, 0.25]
TINY = 64 * 1024
UNIT_FRACTIONS = [0.01, 0.05, 0.1, 0.25]

POLICIES = {
    "fifo": lcs.FIFO,
    "lru": lcs.LRU,
    "clock": lcs.Clock,
    "sieve": lcs.Sieve,
    "lfu": lcs.LFU,
    "opt": lcs.Belady,
    "s3fifo": lcs.S3FIFO,
}
ADMISSION_POLICIES = ["fifo", "lru", "clock", "sieve", "lfu", "s3fifo"]
SIZE_THRESHOLD = 16384
ADMISSIONS = {
    "bloom": lambda: lcs.BloomFilterAdmissioner(),
    f"size(threshold={SIZE_THRESHOLD})": lambda: lcs.SizeAdmissioner(size_threshold=SIZE_THRESHOLD),
}

#: libCacheSim's trace type and reader parameters for each form of cloudPhysicsIO, by file suffix.
READERS = {
    "csv": (
        lcs.TraceType.CSV_TRACE,
        dict(has_header=True, has_header_set=True, delimiter=",", fields=(2, 5, 4)),
    ),
    "txt": (lcs.TraceType.PLAIN_TXT_TRACE, {}),
    "oracleGeneral.bin": (lcs.TraceType.ORACLE_GENERAL_TRACE, {}),
    "vscsi": (lcs.TraceType.VSCSI_TRACE, {}),
}
#: The forms that carry object sizes.
FORMS = ["csv", "oracleGeneral.bin", "vscsi"]


def lcs_reader(path, suffix: str, ignore_size: bool = False):
    """libCacheSim's own reader of the ``suffix`` form at ``path``; a fresh one per run (never
    close() it: double free)."""
    ttype, kw = READERS[suffix]
    kw = dict(kw)
    fields = kw.pop("fields", None)
    params = lcs.ReaderInitParam(ignore_obj_size=ignore_size, **kw)
    if fields:
        # libCacheSim's csv reader knows no SCSI opcodes (it warns on every `2a`): op column unset.
        params.time_field, params.obj_id_field, params.obj_size_field = fields
    return lcs.TraceReader(str(path), ttype, params)


def reader(suffix: str, ignore_size: bool = False):
    return lcs_reader(f"{CP}.{suffix}", suffix, ignore_size)


def oracle_requests() -> list[tuple[int, int]]:
    data = Path(f"{CP}.oracleGeneral.bin").read_bytes()
    return [(o, s) for _, o, s, _ in struct.iter_unpack("<IQIq", data)]


def counts(make, size: int, suffix: str, n: int, nbytes: int, ignore_size: bool = False, admit=None) -> list[int]:
    cache = make(size) if admit is None else make(size, admissioner=admit())
    ratio, byte_ratio = cache.process_trace(reader(suffix, ignore_size))
    return [round(ratio * n), round(byte_ratio * nbytes)]


def main() -> None:
    reqs = oracle_requests()
    n = len(reqs)
    nbytes = sum(s for _, s in reqs)
    distinct: dict[int, int] = {}
    for o, s in reqs:
        distinct[o] = s
    footprint = sum(distinct.values())
    sizes = [TINY] + [round(f * footprint) for f in FRACTIONS]
    unit_sizes = [round(f * len(distinct)) for f in UNIT_FRACTIONS]
    out: dict = {
        "generator": "tests/reference/libcachesim_object_counts.py",
        "libcachesim_version": getattr(lcs, "__version__", "?"),
        "trace": "libcachesim/cloudPhysicsIO",
        "requests": n,
        "bytes": nbytes,
        "distinct": len(distinct),
        "distinct_bytes": footprint,
        "sizes": sizes,
        "forms": {},
        "admission": {"sizes": sizes, "unit_sizes": unit_sizes, "object": {}, "unit": {}},
    }
    out["totals"] = {}
    for suffix in FORMS:
        sz = [r.obj_size for r in reader(suffix)]
        fn, fbytes = len(sz), sum(sz)
        out["totals"][suffix] = [fn, fbytes]
        cells = {}
        for pol, make in POLICIES.items():
            if pol == "opt" and suffix != "oracleGeneral.bin":
                continue
            cells[pol] = [counts(make, size, suffix, fn, fbytes) for size in sizes]
        out["forms"][suffix] = cells
        print(suffix, file=sys.stderr)
    for adm, admit in ADMISSIONS.items():
        out["admission"]["object"][adm] = {
            pol: [counts(POLICIES[pol], s, "oracleGeneral.bin", n, nbytes, admit=admit) for s in sizes]
            for pol in ADMISSION_POLICIES
        }
        out["admission"]["unit"][adm] = {
            pol: [counts(POLICIES[pol], s, "oracleGeneral.bin", n, n, True, admit)[0] for s in unit_sizes]
            for pol in ADMISSION_POLICIES
        }
    (HERE / "libcachesim_object_counts.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
