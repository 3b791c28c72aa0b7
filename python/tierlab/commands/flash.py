"""Flash commands (papers/bs-clock-flash-buffer.md, section IV): record the after-cache trace a
buffer cache sends to flash, and replay it on a real file or block device with O_DIRECT.

The after-cache trace is text (optionally .gz): ``# page_size=N`` comment, header
``op,store,first_page,pages``, then one device request per line, e.g. ``W,file,1234,16`` (a bulk
write of 16 pages is one line). See ``tierlab_core::device::replay``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tierlab import _core, api


def replay_device(
    after_trace: str | Path,
    target: str | Path,
    *,
    region_bytes: int | None = None,
    allow_block_device: bool = False,
    direct: bool = True,
    store: str | None = None,
    only: str | None = None,
) -> dict:
    """Replays an after-cache trace on ``target`` with O_DIRECT; returns the measured times (ns)."""
    return json.loads(
        _core.replay_device(str(after_trace), str(target), region_bytes, allow_block_device, direct, store, only)
    )


def after_cache_trace(
    trace: api.TraceLike,
    policy: str,
    size: api.SizeLike,
    out: str | Path,
    *,
    file_store: str = "microsd-samsung-c10",
    format: str | None = None,
    options: dict | None = None,
) -> dict:
    """Runs ``trace`` through ``policy`` at ``size`` over ``file_store`` and writes the after-cache
    trace to ``out``; returns the run's result row, the request count and the write-size histogram."""
    t = api.Trace.of(trace, format, options)
    pages = api.resolve_sizes(t, [size])[0]
    system = {"tiers": ["dram"], "file_store": file_store, "swap": None}
    return json.loads(_core.after_cache_trace(t.to_json(), policy, pages, json.dumps(system), str(out)))


def after_cache_traces(
    trace: api.TraceLike,
    policies: Sequence[str],
    size: api.SizeLike,
    outs: Sequence[str | Path],
    *,
    file_store: str = "microsd-samsung-c10",
    format: str | None = None,
    options: dict | None = None,
) -> list[dict]:
    """:func:`after_cache_trace` for each of ``policies`` (its after-cache trace to the matching
    path of ``outs``), run as instances of one pass over ``trace``: the same rows and traces as
    separate runs, for one read of the trace."""
    t = api.Trace.of(trace, format, options)
    pages = api.resolve_sizes(t, [size])[0]
    system = {"tiers": ["dram"], "file_store": file_store, "swap": None}
    return json.loads(
        _core.after_cache_traces(t.to_json(), list(policies), pages, json.dumps(system), [str(o) for o in outs])
    )


def model_after_cache(
    after_trace: str | Path, device: str, *, cursor: str = "per_direction", device_files: Sequence[str | Path] = ()
) -> dict:
    """Modeled time (ns) of an after-cache trace on a device model (a preset or a device from
    ``device_files``); ``cursor``: "per_direction" (as the engine charges) or "shared" (a read
    between two writes breaks the write stream)."""
    return json.loads(_core.model_after_cache(str(after_trace), device, "file", cursor, [str(f) for f in device_files]))


def model_after_cache_many(
    after_trace: str | Path, pricings: Sequence[tuple[str, str, Sequence[str | Path]]]
) -> list[dict]:
    """:func:`model_after_cache` under each ``(device, cursor, device_files)`` of ``pricings``, in
    order, with the after-cache trace read once."""
    jobs = [(device, cursor, [str(f) for f in files]) for device, cursor, files in pricings]
    return json.loads(_core.model_after_cache_many(str(after_trace), jobs, "file"))


def _fmt_ms(ns: float) -> str:
    return f"{ns / 1e6:,.1f} ms"


def _print_summary(headline: str, *details: str) -> None:
    """Prints a command's result: the headline, then each detail indented by two spaces."""
    print(headline)
    for line in details:
        print(f"  {line}")


def cmd_replay_device(args) -> int:
    r = replay_device(
        args.after_trace,
        args.target,
        region_bytes=args.region,
        allow_block_device=args.allow_block_device,
        direct=not args.buffered,
        store=args.store,
        only=args.only,
    )
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    _print_summary(
        f"replayed {r['requests']:,} requests of {args.after_trace} on {r['target']}",
        f"O_DIRECT: {'yes' if r['direct'] else 'no (page cache: not a device measurement)'}",
        f"region:   {r['region_bytes'] / 2**20:,.1f} MiB, page size {r['page_size']} B",
        f"reads:    {r['reads']:,} requests, {r['pages_read']:,} pages, {_fmt_ms(r['read_ns'])}",
        f"writes:   {r['writes']:,} requests, {r['pages_written']:,} pages, {_fmt_ms(r['write_ns'])}",
        f"fsync:    {_fmt_ms(r['fsync_ns'])}",
        f"I/O time: {_fmt_ms(r['io_ns'])}",
    )
    return 0


def cmd_after_cache(args) -> int:
    from tierlab.cli import parse_kv

    r = after_cache_trace(
        args.trace,
        args.policy,
        args.size,
        args.out,
        file_store=args.file_store,
        format=args.format,
        options=parse_kv(args.trace_option, "--trace-option"),
    )
    row = r["row"]
    sizes = ", ".join(f"{k}p:{v}" for k, v in sorted(r["write_sizes"].items(), key=lambda kv: int(kv[0])))
    _print_summary(
        f"wrote {r['requests']:,} device requests to {args.out}",
        f"hit ratio {row['hit_ratio']:.4f}, pages written {row['file_pages_written']:,}",
        f"write requests by size (pages:count): {sizes or '-'}",
        f"modeled flash I/O time on {args.file_store}: {_fmt_ms(row['io_time_ns'])}",
    )
    return 0


def add_parser(sub) -> None:
    from tierlab.cli import add_trace_args

    p = sub.add_parser(
        "replay-device",
        help="replay an after-cache trace on a real file or block device with O_DIRECT",
        description="Replays an after-cache trace (see `tierlab after-cache`) on TARGET with O_DIRECT, "
        "one request at a time, and reports the measured I/O time, as the BS-CLOCK paper did on "
        "microSD cards. Page numbers are folded into a region at the start of TARGET. TARGET is "
        "created and filled when missing; tmpfs/ramfs targets are refused (O_DIRECT does not reach "
        "a device there).",
        epilog="examples:\n"
        "  tierlab after-cache trace.csv.gz -p bs-clock -s 4MiB -o bs.csv\n"
        "  tierlab replay-device bs.csv --target /mnt/sdcard/replay.img --region 256MiB\n"
        "  tierlab replay-device bs.csv --target /dev/mmcblk0 --allow-block-device",
    )
    p.add_argument("after_trace", metavar="AFTER_TRACE", help="after-cache trace file")
    p.add_argument("--target", required=True, help="file or block device to replay on")
    p.add_argument(
        "--region",
        type=_bytes,
        default=None,
        help="bytes of TARGET to fold the trace into (default: TARGET's size, or 64MiB for a new file)",
    )
    p.add_argument("--store", choices=["file", "swap"], help="replay only this store's requests")
    p.add_argument(
        "--only",
        choices=["reads", "writes"],
        help="replay only reads or only writes (e.g. writes, to compare policies with equal misses)",
    )
    p.add_argument("--allow-block-device", action="store_true", help="allow a block device (its data is overwritten)")
    p.add_argument("--buffered", action="store_true", help="no O_DIRECT (not a device measurement)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_replay_device)

    p = sub.add_parser(
        "after-cache",
        help="record the after-cache trace (device requests) of one policy run",
        description="Runs TRACE through one policy at one buffer size over a flash file store and "
        "writes every device request the buffer cache issued (a bulk write is one request).",
        epilog="example:\n  tierlab after-cache app.csv.gz -f android -p 'bs-clock(seq_dirtied_pages=16)' "
        "-s 4MiB -o bs.csv",
    )
    add_trace_args(p)
    p.add_argument("-p", "--policy", required=True, help="policy spec, e.g. bs-clock(seq_dirtied_pages=16)")
    p.add_argument("-s", "--size", required=True, help="buffer size: pages, bytes (4MiB) or a fraction (10%%)")
    p.add_argument("-o", "--out", required=True, help="after-cache trace to write (.gz to compress)")
    p.add_argument(
        "--file-store",
        default="microsd-samsung-c10",
        help="device model of the flash store (default microsd-samsung-c10; see `tierlab devices`)",
    )
    p.set_defaults(func=cmd_after_cache)


def _bytes(text: str) -> int:
    return api.resolve_size(text if not text.isdigit() else int(text), 1, lambda: 0)
