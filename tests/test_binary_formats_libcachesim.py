"""The `binary` (any fixed-size layout) and `lcs` readers read what pip libcachesim reads: on
generated files of every layout (and every lcs version libCacheSim writes) the ids, sizes, ops and
times equal libCacheSim's request for request; raw arrays of 32-bit ids in either byte order go
through `run`, `mrc`, `convert` and `info`; a binary file without a layout and malformed input
get one line naming the file, offset or value."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest

import tierlab
from tierlab.cli import main

lcs = pytest.importorskip("libcachesim")

# layout, tierlab options (field numbers from 1), libCacheSim ReaderInitParam fields.
LAYOUTS = [
    ("<I", {"id": 1}),
    ("<Q", {"id": 1}),
    ("<IQIq", {"time": 1, "id": 2, "size": 3, "next": 4}),
    ("<QI", {"id": 1, "size": 2}),
    ("<bhiqBHIQ", {"id": 8, "size": 7, "op": 5, "time": 4}),
    ("<dIQ", {"time": 1, "size": 2, "id": 3}),
    ("<iHB", {"id": 1, "size": 2, "op": 3}),
]
LCS_FIELDS = {"id": "obj_id_field", "size": "obj_size_field", "op": "op_field", "time": "time_field"}
BITS = {"b": 8, "B": 8, "h": 16, "H": 16, "i": 32, "I": 32, "q": 64, "Q": 64}
SIGNED = set("bhiq")


def _values(layout: str, fields: dict, n: int, rng) -> list[tuple]:
    """`n` records: ids over the whole range of their type (high bits set too), sizes in 1 ..
    (the signed range, which libCacheSim reads), ops among libCacheSim's codes, times >= 0."""
    role = {k - 1: r for r, k in fields.items() if r != "next"}
    rows = []
    for _ in range(n):
        row = []
        for i, c in enumerate(layout[1:]):
            r = role.get(i)
            if c in "fd":
                row.append(float(rng.integers(0, 10**6)) + 0.25)
            elif r == "size":
                row.append(int(rng.integers(1, 2 ** (BITS[c] - 1))))
            elif r == "op":
                row.append(int(rng.choice([0, 1, 2, 3, 9, 12, 13, 14])))
            elif r == "time":
                row.append(int(rng.integers(0, 10**6)))
            else:
                bits = BITS[c]
                lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if c in SIGNED else (0, 2**bits)
                # A few distinct ids, some repeated, across the type's range.
                cands = [lo, hi - 1, 0, 1, 7, (lo + hi) // 3]
                row.append(cands[int(rng.integers(len(cands)))])
        rows.append(tuple(row))
    return rows


def _lcs_read(path, layout: str | None, fields: dict) -> pd.DataFrame:
    if layout is None:
        reader = lcs.TraceReader(str(path), lcs.TraceType.LCS_TRACE)
    else:
        p = lcs.ReaderInitParam(binary_fmt_str=layout)
        for r, k in fields.items():
            if r in LCS_FIELDS:
                setattr(p, LCS_FIELDS[r], k)
        reader = lcs.TraceReader(str(path), lcs.TraceType.BIN_TRACE, p)
    rows = [(r.obj_id, r.obj_size, int(r.op), r.clock_time) for r in reader]
    return pd.DataFrame(rows, columns=["id", "size", "op", "time"])


def _tierlab_read(path, fmt: str, options: dict) -> pd.DataFrame:
    parts = [b for b in tierlab.Trace.of(path, fmt, options).batches()]
    cols = {k: np.concatenate([b[k] for b in parts]) for k in ("page", "size", "op", "time", "event")}
    acc = cols["event"] == 255
    return pd.DataFrame({k: cols[k][acc] for k in ("page", "size", "op", "time")})


WRITES = {3, 4, 5, 6, 7, 8, 10, 11, 13, 14}


def _lcs_id(v: int, c: str) -> int:
    """The id libCacheSim reads for tierlab's id `v` of type `c`: libCacheSim sign-extends unsigned
    types too (binary.c reads `I` as int32_t); signed ones are the 64-bit two's complement in
    both."""
    bits = BITS[c]
    if c not in SIGNED and v >= 2 ** (bits - 1) and bits < 64:
        v -= 2**bits
    return v % 2**64


@pytest.mark.parametrize("layout,fields", LAYOUTS, ids=[x[0] for x in LAYOUTS])
def test_binary_layouts_read_what_libcachesim_reads(tmp_path, layout, fields):
    rng = np.random.default_rng(len(layout))
    rows = _values(layout, fields, 400, rng)
    path = tmp_path / "t.bin"
    path.write_bytes(b"".join(struct.pack(layout, *r) for r in rows))
    theirs = _lcs_read(path, layout, fields)
    ours = _tierlab_read(path, "binary", {"layout": layout, **fields})
    assert len(ours) == len(theirs) == len(rows)
    idc = layout[fields["id"]]
    # tierlab reads unsigned fields as Python does, libCacheSim sign-extends them: map ours.
    assert [_lcs_id(int(p), idc) for p in ours["page"]] == theirs["id"].tolist()
    assert [int(p) for p in ours["page"]] == [r[fields["id"] - 1] % 2**64 for r in rows]
    if "size" in fields:
        assert ours["size"].tolist() == theirs["size"].tolist()
    if "op" in fields:
        assert ours["op"].tolist() == [int(o in WRITES) for o in theirs["op"]]
    if "time" in fields:
        # Seconds in libCacheSim (a float truncated), nanoseconds in tierlab.
        assert (ours["time"] // 10**9).tolist() == theirs["time"].tolist()
    # Big-endian: the same records written with '>' read the same in tierlab.
    big = ">" + layout[1:]
    bpath = tmp_path / "t.be.bin"
    bpath.write_bytes(b"".join(struct.pack(big, *r) for r in rows))
    assert _tierlab_read(bpath, "binary", {"layout": big, **fields}).equals(ours)


def test_lcs_every_version_reads_what_libcachesim_reads(tmp_path):
    rng = np.random.default_rng(7)
    n = 500
    ids = rng.choice([1, 2, 3, 2**40, 2**63 + 5, 17], size=n)
    sizes = rng.integers(1, 10**6, size=n)
    ops = rng.choice(["get", "set", "read", "write", "delete", "gets", "update"], size=n)
    csv = tmp_path / "t.csv"
    csv.write_text("".join(f"{t},{i},{s},{o}\n" for t, (i, s, o) in enumerate(zip(ids, sizes, ops, strict=True))))
    p = lcs.ReaderInitParam(has_header=False, has_header_set=True, delimiter=",")
    p.time_field, p.obj_id_field, p.obj_size_field, p.op_field = 1, 2, 3, 4
    for ver in range(1, 9):
        out = tmp_path / f"t.v{ver}.lcs"
        lcs.Util.convert_to_lcs(lcs.TraceReader(str(csv), lcs.TraceType.CSV_TRACE, p)._reader, str(out), lcs_ver=ver)
        theirs = _lcs_read(out, None, {})
        ours = _tierlab_read(out, None, {})  # guessed from the name and the magic
        assert len(ours) == len(theirs) == n, ver
        assert ours["page"].tolist() == theirs["id"].tolist(), ver
        assert ours["size"].tolist() == theirs["size"].tolist(), ver
        assert (ours["time"] // 10**9).tolist() == theirs["time"].tolist(), ver
        # Version 1 has no op (libCacheSim reads nop: a read).
        assert ours["op"].tolist() == [int(o in WRITES) for o in theirs["op"]], ver
        if ver >= 2:
            # The ops matter: about 3 in 7 of the csv's ops are writes.
            assert 100 < sum(ours["op"]) < 300
        # The magic is recognised under any name.
        other = tmp_path / f"renamed{ver}.dat"
        other.write_bytes(out.read_bytes())
        assert tierlab.info(tierlab.Trace.of(other))["format"] == "lcs"


def _raw32(tmp_path, order: str):
    rng = np.random.default_rng(3)
    blocks = (rng.zipf(1.3, size=5000) % 700).astype(np.uint32) + np.uint32(2**31)
    path = tmp_path / f"blocks.{order}.trace"
    path.write_bytes(blocks.astype(np.dtype(order + "u4")).tobytes())
    return path, blocks


@pytest.mark.parametrize("order", ["<", ">"])
def test_raw_32_bit_arrays_work_through_run_mrc_convert_info(tmp_path, capsys, order):
    path, blocks = _raw32(tmp_path, order)
    opts = ["-f", "binary", "-O", f"layout={order}I"]
    # info
    assert main(["info", str(path), *opts, "--json"]) == 0
    import json

    inf = json.loads(capsys.readouterr().out)
    assert inf["format"] == "binary"
    assert inf["requests"] == 5000 and inf["distinct_pages"] == len(set(blocks.tolist()))
    # run: LRU misses equal libCacheSim's LRU on the same ids.
    size = 50
    out = tmp_path / "run.csv"
    assert main(["run", str(path), *opts, "-p", "lru", "-s", str(size), "-q", "-o", str(out)]) == 0
    misses = int(pd.read_csv(out)["misses"].iloc[0])
    cache = lcs.LRU(size, hashpower=12)
    want = 0
    for b in blocks.tolist():
        req = lcs.Request()
        req.obj_id, req.obj_size = b, 1
        want += not cache.get(req)
    assert misses == want
    # mrc
    curve = tmp_path / "mrc.csv"
    assert main(["mrc", str(path), *opts, "-s", str(size), "-o", str(curve)]) == 0
    assert round(pd.read_csv(curve)["miss_ratio"].iloc[0] * 5000) == want
    # convert: the native file holds the same pages.
    tlt = tmp_path / "blocks.tlt"
    assert main(["convert", str(path), *opts, str(tlt)]) == 0
    pages = np.concatenate([b["page"][b["event"] == 255] for b in tierlab.Trace.of(tlt).batches()])
    assert pages.tolist() == blocks.tolist()


def test_binary_without_a_layout_lists_the_layouts(tmp_path, capsys):
    path, _ = _raw32(tmp_path, "<")
    # Guessed: named like a text trace, but binary: no text guess (the data is not the text it
    # claims to be: exit 1, as for any bad data).
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "binary data" in err and "'<I' / '>I'" in err and "-f binary -O layout=" in err, err
    assert str(path) in err
    # -f binary without a layout.
    assert main(["info", str(path), "-f", "binary"]) == 2
    err = capsys.readouterr().err
    assert "needs a record layout" in err and "'<IQIq'" in err, err
    # A name that says nothing.
    raw = tmp_path / "blocks.raw"
    raw.write_bytes(path.read_bytes())
    assert main(["info", str(raw)]) == 1
    assert "binary data" in capsys.readouterr().err


@pytest.mark.parametrize(
    "data,options,code,needle",
    [
        # bad data: exit 1
        (
            b"\x01\x00\x00\x00\x02\x00",
            {"layout": "<I"},
            1,
            "6 bytes are not a whole number of 4-byte records of layout '<I' (2 bytes left over)",
        ),
        (b"\x01\x00\x00\x00" * 2, {"layout": "<HH", "size": 2, "op": 0}, 1, "offset 0"),
        (b"\x01\x00\x20\x00", {"layout": "<HH", "op": 2}, 1, "op field 2 = 32: expected a libCacheSim op code"),
        # a bad layout option: exit 2
        (b"\x01\x00\x00\x00", {"layout": "<I5s"}, 2, "layout '<I5s': 's' (character 4): strings are not supported"),
        (b"\x01\x00\x00\x00", {"layout": "I"}, 2, "no byte order"),
        (b"\x01\x00\x00\x00", {"layout": "<I", "size": 2}, 2, "size = 2, but layout '<I' has 1 field"),
        (b"\x01\x00\x00\x00", {"layout": "<f", "id": 1}, 2, "id = 1 is a float field"),
    ],
)
def test_malformed_binary_input_gets_one_line(tmp_path, capsys, data, options, code, needle):
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    args = ["info", str(path), "-f", "binary"]
    for k, v in options.items():
        args += ["-O", f"{k}={v}"]
    assert main(args) == code
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert needle in err, err


def test_malformed_lcs_gets_one_line(tmp_path, capsys):
    good = tmp_path / "g.lcs"
    header = bytearray(8192)
    struct.pack_into("<QQ", header, 0, 0x123456789ABCDEF0, 9)
    struct.pack_into("<Q", header, 8184, 0x123456789ABCDEF0)
    good.write_bytes(bytes(header) + bytes(24))
    assert main(["info", str(good)]) == 1
    assert "lcs version 9: expected 1 to 8" in capsys.readouterr().err
    struct.pack_into("<Q", header, 8, 1)
    good.write_bytes(bytes(header) + bytes(30))
    assert main(["info", str(good)]) == 1
    assert "not a whole number of 24-byte records of layout '<IQIq'" in capsys.readouterr().err
    good.write_bytes(bytes(100))
    assert main(["info", str(good), "-f", "lcs"]) == 1
    assert "truncated lcs header (8192 bytes): expected 8192 bytes, found 100" in capsys.readouterr().err


def test_integer_times_are_exact_nanoseconds(tmp_path):
    # Epoch seconds: nanoseconds beyond 2^53, where a float would round.
    times = [1_700_000_000 + k for k in (0, 1, 7, 123_456)]
    path = tmp_path / "t.bin"
    path.write_bytes(b"".join(struct.pack("<QI", t, 5) for t in times))
    ours = _tierlab_read(path, "binary", {"layout": "<QI", "time": 1, "id": 2})
    assert [int(t) for t in ours["time"]] == [t * 10**9 for t in times]
    assert int(ours["time"].iloc[1]) - int(ours["time"].iloc[0]) == 10**9
