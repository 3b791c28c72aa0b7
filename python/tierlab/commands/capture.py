"""``tierlab capture -o OUT -- CMD ARGS...``: record the page references of a real program.

The program runs under valgrind's lackey tool (``--trace-mem=yes``); its output is read from a
pipe and reduced to 4 KiB page references as it arrives (the raw text is never stored):
instruction fetches become File reads, loads Anon reads, stores and modifies Anon writes, and
data addresses inside file mappings (sampled from /proc/PID/maps during the run) become File.
The references stream into OUT in tierlab's native format (``.tlt``), or with ``--format
tlpages`` in a compact zstd stream that is several times smaller for long memory traces; any tierlab
command reads both. The conversion rules and their limits are documented in
crates/tierlab-core/src/trace/capture/.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tierlab import values

HELP = "run a program under valgrind and record its page references"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "capture",
        help=HELP,
        description=__doc__,
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        type=Path,
        help="trace file to write (e.g. run.tlt, or run.tlp.zst with --format tlpages)",
    )
    p.add_argument(
        "--format",
        choices=["native", "tlpages"],
        default="native",
        help="output format: native (.tlt) or tlpages (.tlp.zst, 3-17x smaller for memory traces)",
    )
    p.add_argument("--limit", type=values.count_arg("--limit"), default=None, help="stop after N page references")
    p.add_argument(
        "--time-budget",
        type=values.positive_arg("--time-budget"),
        default=None,
        metavar="SECONDS",
        help="stop after this much wall time",
    )
    p.add_argument(
        "--skip",
        type=values.count_arg("--skip", minimum=0),
        default=0,
        help="drop the first N page references (start-up)",
    )
    p.add_argument(
        "--sample",
        type=values.positive_arg("--sample", maximum=1),
        default=1.0,
        help="spatial sampling rate in (0,1]: keep this fraction of pages (SHARDS)",
    )
    p.add_argument(
        "--collapse",
        action="store_true",
        help="keep only the first two of a run of identical page references "
        "(miss counts of LRU/CLOCK-like policies are unchanged; hit counts drop)",
    )
    p.add_argument(
        "--modify",
        choices=["write", "read-write"],
        default="write",
        help="how a lackey 'M' (modify) counts: one write, or a read then a write",
    )
    p.add_argument("--page-size", type=values.count_arg("--page-size", minimum=512, maximum=1 << 30), default=4096)
    p.add_argument("--no-maps", action="store_true", help="do not read /proc/PID/maps: every data reference is Anon")
    p.add_argument(
        "--maps-interval",
        type=values.positive_arg("--maps-interval"),
        default=0.2,
        metavar="SECONDS",
        help="how often to re-read /proc/PID/maps",
    )
    p.add_argument(
        "--trace-children",
        action="store_true",
        help="follow child processes (for shells and shims such as pyenv's python3)",
    )
    p.add_argument(
        "--program-stdout", type=Path, default=None, help="file for the traced program's stdout (default: discarded)"
    )
    p.add_argument("--valgrind", default="valgrind", help="valgrind executable")
    p.add_argument("--summary", type=Path, default=None, help="write the capture summary as JSON here")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    p.set_defaults(func=run)
    return p


def options_from_args(args: argparse.Namespace) -> dict:
    return {
        "lackey": {
            "page_size": args.page_size,
            "modify": args.modify,
            "collapse": bool(args.collapse),
            "sample": args.sample,
        },
        "format": args.format,
        "skip": args.skip,
        "limit": args.limit,
        "time_budget_s": args.time_budget,
        "use_maps": not args.no_maps,
        "maps_interval_s": args.maps_interval,
        "valgrind": args.valgrind,
        "trace_children": bool(args.trace_children),
        "program_stdout": str(args.program_stdout) if args.program_stdout else None,
    }


def capture(command: list[str], output: Path, options: dict | None = None, progress=None) -> dict:
    """Python API: capture ``command``'s page references into ``output``; returns the summary."""
    from tierlab import _core

    return json.loads(_core.capture(list(command), str(output), json.dumps(options or {}), progress))


def _progress_printer(stream):
    last = [0.0]

    def show(p: dict) -> None:
        now = time.monotonic()
        if now - last[0] < 0.45:
            return
        last[0] = now
        st = p["stats"]
        data = st["loads"] + st["stores"] + st["modifies"]
        file_pct = 100.0 * st["data_file"] / data if data else 0.0
        stream.write(
            f"\r{p['elapsed_s']:7.1f}s  {p['written']:>12,} page refs written  "
            f"{st['references']:>12,} lackey refs  {p['distinct_pages']:>8,} pages  "
            f"{file_pct:4.1f}% data in files  "
        )
        stream.flush()

    return show


def run(args: argparse.Namespace) -> int:
    from tierlab import _core

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        print(
            "tierlab capture: give the command after '--', e.g. tierlab capture -o t.tlp.zst -- ls -l", file=sys.stderr
        )
        return 2
    progress = None if args.quiet else _progress_printer(sys.stderr)
    try:
        summary = capture(cmd, args.output, options_from_args(args), progress)
    except (_core.TierlabError, OSError) as e:
        print(f"\ntierlab capture: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        sys.stderr.write("\n")
    st = summary["stats"]
    print(
        f"{summary['output']}: {summary['written']:,} page references, {summary['distinct_pages']:,} "
        f"distinct pages, from {st['references']:,} lackey references "
        f"(I {st['instr']:,}, L {st['loads']:,}, S {st['stores']:,}, M {st['modifies']:,}); "
        f"stopped by {summary['stopped_by']} after {summary['elapsed_s']:.1f}s"
    )
    if args.summary:
        args.summary.write_text(json.dumps({"options": options_from_args(args), **summary}, indent=2))
    return 0
