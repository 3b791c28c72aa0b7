"""The ``tierlab`` command line. Every subcommand has examples in its ``--help``."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import tomllib
import unicodedata
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tierlab import _core, api, values
from tierlab.errors import ConfigError, TierlabError

# Wide tables stay readable when piped to a file or a pager.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True)

DESCRIPTION = """\
tierlab replays memory and storage traces through page replacement, placement and migration
policies over modeled devices (DRAM, PCM, eMRAM, CXL DRAM, flash, zram), and reports hits,
device I/O, modeled time and energy.

start with:
  tierlab info TRACE                          what is in a trace
  tierlab run TRACE -p lru -p clock -s 10%    replay it through policies at a size
  tierlab policies / tierlab devices          what can be simulated
"""


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a usage error on one line (``error: ...; see tierlab run --help``, exit 2)
    instead of the usage block, like every other error of the command, and descriptions and
    epilogs printed as written (their line breaks and examples kept); subcommands' parsers are
    of this class too."""

    def __init__(self, *args, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message: str):
        print(f"error: {self.prog}: {message}; see {self.prog} --help", file=sys.stderr)
        sys.exit(2)


def add_trace_args(p: argparse.ArgumentParser) -> None:
    """Adds TRACE, --format and -O KEY=VALUE (shared by every command that reads a trace)."""
    p.add_argument(
        "trace",
        help="trace file (gz/zst/xz/lzma are decompressed transparently) "
        "or a generator spec such as zipf:alpha=1.0,pages=100000,n=1000000,seed=1",
    )
    add_format_args(p)


def add_replay_args(p: argparse.ArgumentParser, policy_help: str, size_help: str) -> None:
    """Adds the trace arguments (:func:`add_trace_args`) and the repeatable -p POLICY and -s SIZE
    of a command that replays a trace through policies at sizes."""
    add_trace_args(p)
    p.add_argument("-p", "--policy", action="append", help=policy_help)
    p.add_argument("-s", "--size", action="append", help=size_help)


def add_format_args(p: argparse.ArgumentParser) -> None:
    """Adds --format and -O KEY=VALUE (the options of how a trace is read)."""
    p.add_argument("-f", "--format", help="trace format (default: guessed from the file name; see `tierlab formats`)")
    p.add_argument(
        "-O",
        "--trace-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="format option, e.g. -O page_size=8192 (repeatable; values are TOML)",
    )


def parse_kv(pairs: list[str], what: str) -> dict:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; values are TOML, bare words are strings."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise _core.ConfigError(f"{what}: expected KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        try:
            out[k.strip()] = tomllib.loads(f"v = {v.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            out[k.strip()] = v.strip()
    return out


def trace_of(args) -> api.Trace:
    return api.Trace.of(args.trace, args.format, parse_kv(args.trace_option, "--trace-option"))


def _fmt_time(ns: float) -> str:
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return f"{ns / div:.3g} {unit}"
    return f"{ns:.3g} ns"


def fit_table(title: str, columns: list[tuple[str, str, bool]], rows: list[list[str]], wide: bool = False) -> None:
    """Prints a table that fits the terminal: ``columns`` are (name, justify, required); the
    required ones always show, the others in order while they fit, and a line under the table
    names what was left out and how to see it (``--wide``, ``-o``). A cell is never cut: each
    column is at least as wide as its widest cell (a table wider than the terminal wraps)."""
    from rich.measure import Measurement

    keep = list(range(len(columns)))
    width = console.width

    def build(idx: list[int]) -> Table:
        t = Table(title=title, title_justify="left")
        for k in idx:
            name, justify, _ = columns[k]
            cells = [r[k] for r in rows]
            t.add_column(
                name,
                justify=justify,
                no_wrap=True,
                min_width=max([len(c) for c in cells] + [min(len(name), 8)]),
                overflow="fold",
            )
        for r in rows:
            t.add_row(*[r[k] for k in idx])
        return t

    def natural(t: Table) -> int:
        return Measurement.get(console, console.options.update(width=10_000), t).maximum

    hidden: list[str] = []
    if not wide:
        keep = [k for k, c in enumerate(columns) if c[2]]
        for k, c in enumerate(columns):
            if c[2]:
                continue
            trial = sorted(keep + [k])
            if natural(build(trial)) <= width:
                keep = trial
            else:
                hidden.append(c[0])
    table = build(keep)
    if wide:
        console.print(table, width=max(width, natural(table)), crop=False)
    else:
        console.print(table, crop=False)
    if hidden:
        err_console.print(
            f"{len(hidden)} more columns ({', '.join(hidden)}) do not fit in {width} columns: "
            "--wide shows them, -o FILE.csv writes every column",
            highlight=False,
        )


def print_results(df, title: str, wide: bool = False) -> None:
    """The run table: hits, I/O fetched and written back, and modeled time per component. At
    the terminal's width it keeps policy, size, hit ratio, misses and total time whole and
    drops the other columns first (``wide``: all)."""
    comps = [
        c
        for c in ("file_read", "file_write", "swap_read", "swap_write", "migration")
        if df.get(f"time_{c}_ns") is not None and df[f"time_{c}_ns"].sum() > 0
    ]
    mem_cols = [
        c
        for c in df.columns
        if c.startswith("time_")
        and c.endswith(("_read_ns", "_write_ns", "_fill_ns"))
        and not any(c == f"time_{x}_ns" for x in ("file_read", "file_write", "swap_read", "swap_write"))
        and df[c].sum() > 0
    ]
    columns = [
        ("policy", "left", True),
        ("size", "left", True),
        ("hit ratio", "right", True),
        ("misses", "right", True),
        ("total time", "right", True),
        ("pages", "right", False),
        ("pages read", "right", False),
        ("dirty write-backs", "right", False),
        ("pages written", "right", False),
    ]
    columns += [(f"{c} time", "right", False) for c in comps]
    if mem_cols:
        columns.append(("memory time", "right", False))
    rows = []
    for _, r in df.iterrows():
        row = [
            str(r["label"]),
            str(r["size"]),
            f"{r['hit_ratio']:.4f}",
            f"{r['misses']:,}",
            _fmt_time(r["total_time_ns"]),
            f"{r['size_pages']:,}",
            f"{r['file_pages_read'] + r['swap_pages_read']:,}",
            f"{r['dirty_evictions']:,}",
            f"{r['file_pages_written'] + r['swap_pages_written']:,}",
        ]
        row += [_fmt_time(r[f"time_{c}_ns"]) for c in comps]
        if mem_cols:
            row.append(_fmt_time(sum(r[c] for c in mem_cols)))
        rows.append(row)
    fit_table(title, columns, rows, wide)


def print_object_results(df, title: str, wide: bool = False) -> None:
    """The run table of object-size mode: object and byte miss ratios."""
    columns = [
        ("policy", "left", True),
        ("size", "left", True),
        ("miss ratio", "right", True),
        ("misses", "right", True),
        ("byte miss ratio", "right", True),
        ("bytes", "right", False),
        ("byte misses", "right", False),
        ("too large", "right", False),
    ]
    rows = [
        [
            str(r["label"]),
            str(r["size"]),
            f"{r['miss_ratio']:.4f}",
            f"{r['misses']:,}",
            f"{r['byte_miss_ratio']:.4f}",
            f"{r['size_bytes']:,}",
            f"{r['byte_misses']:,}",
            f"{r['too_large']:,}",
        ]
        for _, r in df.iterrows()
    ]
    fit_table(title, columns, rows, wide)


def save_frame(df, path: str) -> None:
    p = Path(path)
    if p.suffix == ".parquet":
        df.to_parquet(p, index=False)
    elif p.suffix == ".csv":
        df.to_csv(p, index=False)
    elif p.suffix == ".json":
        df.to_json(p, orient="records", indent=1)
    else:
        raise _core.ConfigError(f"{path}: output must end in .parquet, .csv or .json")
    err_console.print(f"wrote {len(df)} rows to {p}")


def cmd_run(args) -> int:
    system = None
    if args.system:
        system = parse_kv(args.system, "--system")
        if isinstance(system.get("tiers"), str):
            system["tiers"] = [t for t in system["tiers"].split(",") if t]
    df = api.run(
        trace_of(args),
        policies=args.policy or ["lru"],
        sizes=args.size or ["10%"],
        system=system,
        device_files=args.devices,
        threads=args.threads,
        limit=args.limit,
        progress=not args.quiet and sys.stderr.isatty(),
        object_sizes=args.object_sizes,
    )
    meta = df.attrs.get("meta", {})
    title = (
        f"{Path(args.trace).name}: {meta.get('page_refs', 0):,} page refs, "
        f"{meta.get('distinct_pages', 0):,} distinct pages, replayed in {meta.get('elapsed_s', 0):.2f} s"
    )
    if args.object_sizes:
        title = (
            f"{Path(args.trace).name}: {meta.get('page_refs', 0):,} object requests "
            f"({meta.get('byte_accesses', 0):,} bytes), {meta.get('distinct_pages', 0):,} distinct objects, "
            f"replayed in {meta.get('elapsed_s', 0):.2f} s"
        )
        print_object_results(df, title, args.wide)
    else:
        print_results(df, title, args.wide)
    if args.output:
        save_frame(df, args.output)
    return 0


def cmd_info(args) -> int:
    inf = api.info(trace_of(args), limit=args.limit, progress=not args.quiet and sys.stderr.isatty())
    if args.json:
        print(json.dumps(inf, indent=1))
        return 0
    t = Table(title=f"{args.trace} ({inf['format']})", show_header=False, title_justify="left")
    t.add_column("what")
    t.add_column("value", justify="right")
    refs = max(inf["page_refs"], 1)
    t.add_row("requests", f"{inf['requests']:,}")
    t.add_row("page references", f"{inf['page_refs']:,} (mean request {inf['mean_request_pages']:.2f} pages)")
    t.add_row("page size", f"{inf['page_size']} B")
    t.add_row("distinct pages (footprint)", f"{inf['distinct_pages']:,} ({inf['footprint_bytes'] / 2**20:,.1f} MiB)")
    t.add_row("reads / writes", f"{inf['reads'] / refs:.1%} / {inf['writes'] / refs:.1%}")
    t.add_row("file / anon", f"{inf['file_refs'] / refs:.1%} / {inf['anon_refs'] / refs:.1%}")
    t.add_row("pages ever written", f"{inf['written_pages']:,}")
    t.add_row("re-references", f"{inf['reuses']:,} ({inf['reuses'] / refs:.1%})")
    if inf["reuse_time_percentiles"]:
        t.add_row(
            "reuse time p10/p50/p90/p99 (refs, <=)",
            " / ".join(f"{v:,}" for p, v in inf["reuse_time_percentiles"] if p in (10, 50, 90, 99)),
        )
    t.add_row("events", f"{inf['events']:,}")
    apps = sorted(zip(inf["apps"], inf["refs_per_app"], strict=False), key=lambda x: -x[1])
    t.add_row(
        "apps",
        f"{len(inf['apps'])}: " + ", ".join(f"{a} ({n:,})" for a, n in apps[:5]) + (" ..." if len(apps) > 5 else ""),
    )
    console.print(t)
    return 0


def cmd_policies(args) -> int:
    df = api.policies()
    if args.json:
        print(df.to_json(orient="records", indent=1))
        return 0
    t = Table(title="policies (use -p NAME or -p 'NAME(key=value,...)')", title_justify="left")
    for c in ("name", "family", "summary", "defaults", "object sizes"):
        t.add_column(c)
    for _, r in df.iterrows():
        aliases = f" ({', '.join(r['aliases'])})" if len(r["aliases"]) else ""
        t.add_row(
            r["name"] + aliases,
            r["family"],
            r["summary"],
            r["defaults"].strip().replace("\n", ", "),
            "yes" if r["object_sizes"] else "",
        )
    console.print(t)
    t = Table(
        title="admission policies (any policy, either mode: -p 'lru+bloom', -p 'lru+prob(p=0.2)')",
        title_justify="left",
    )
    for c in ("name", "summary", "defaults"):
        t.add_column(c)
    for _, r in api.admissions().iterrows():
        aliases = f" ({', '.join(r['aliases'])})" if len(r["aliases"]) else ""
        t.add_row(r["name"] + aliases, r["summary"], r["defaults"].strip().replace("\n", ", "))
    console.print(t)
    return 0


def cmd_devices(args) -> int:
    devs = json.loads(_core.devices([str(f) for f in args.devices]))
    if args.json:
        print(json.dumps(devs, indent=1))
        return 0
    t = Table(title="devices (times per request: setup random/sequential + per 4 KiB page)", title_justify="left")
    for c in ("name", "class", "read", "write", "hit r/w", "source"):
        t.add_column(c, overflow="fold")
    for d in devs:

        def io(c):
            return f"{_fmt_time(c['random_setup_ns'])}/{_fmt_time(c['seq_setup_ns'])} + {_fmt_time(c['per_page_ns'])}"

        hit = f"{_fmt_time(d['access_read_ns'])}/{_fmt_time(d['access_write_ns'])}" if d["class"] == "memory" else ""
        t.add_row(d["name"], d["class"], io(d["read"]), io(d["write"]), hit, d["source"])
    console.print(t)
    return 0


def cmd_formats(args) -> int:
    t = Table(title="trace formats (use -f NAME, options with -O KEY=VALUE)", title_justify="left")
    for c in ("name", "reads", "options (defaults)"):
        t.add_column(c, overflow="fold")
    for name, summary, options in _core.format_summaries():
        t.add_row(name, summary, options)
    console.print(t)
    return 0


def cmd_convert(args) -> int:
    from tierlab import convert

    n = convert.convert(trace_of(args), args.output, progress=sys.stderr.isatty())
    err_console.print(f"wrote {n:,} records to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="tierlab", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"tierlab {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="replay a trace through policies at memory sizes",
        description="Replay TRACE once through every policy x size and print one row each.",
        epilog="examples:\n"
        "  tierlab run telegram_exec.csv.gz -p lru -s 10%\n"
        "  tierlab run OLTP.lis.zst -p lru -p arc -p 'clock(bits=2)' -s 1000 -s 4MiB -o out.parquet\n"
        "  tierlab run app.tlt -p lru -s 5% --system tiers=dram file_store=emmc swap=zram\n"
        "  tierlab run cloudPhysicsIO.oracleGeneral.bin --object-sizes -p lru -p 'lru+bloom' -s 64MiB\n\n"
        "sizes: whole pages (1000), bytes with a unit (4MiB, 512KB) or a share of the trace's\n"
        "footprint (10%); 0, negatives and fractions without % (0.5) are refused. A size\n"
        "beyond the footprint is fine (nothing is evicted). The table shows the hit ratio,\n"
        "misses and modeled time, then, as the terminal's width allows, pages read on misses,\n"
        "dirty write-backs, pages written and time per component (--wide: all; -o: every\n"
        "column to a file).\n\n"
        "--object-sizes: every request is one object of the size the trace gives\n"
        "(oracleGeneral, lcs, binary with a size field, csv with a size column, vscsi);\n"
        "sizes are bytes (a plain number too) or a share of the distinct objects' bytes;\n"
        "byte_misses/byte_miss_ratio in -o.\n"
        "An admission policy follows a '+' (see `tierlab policies`).",
    )
    add_replay_args(p, "policy (repeatable; see `tierlab policies`)", "memory size (repeatable; default 10%%)")
    p.add_argument(
        "--object-sizes",
        action="store_true",
        help="object-size mode: one object per request, sized from the trace; sizes in bytes",
    )
    p.add_argument(
        "--system",
        nargs="+",
        metavar="KEY=VALUE",
        help="system: tiers=dram[,pcm] file_store=DEVICE swap=DEVICE write_miss_fetch=true",
    )
    p.add_argument("--devices", action="append", default=[], help="TOML file of extra [[device]] tables")
    threads = values.count_arg("--threads", maximum=4096)
    p.add_argument("--threads", type=threads, help="threads across instances (default: all cores)")
    p.add_argument("--limit", type=values.count_arg("--limit"), help="replay only the first N page references")
    p.add_argument("-o", "--output", help="also write the rows to .parquet, .csv or .json")
    p.add_argument("--wide", action="store_true", help="every column, however wide the terminal")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "info",
        help="summarise a trace",
        description="Requests, page references, footprint, read/write and file/anon mix,\n"
        "apps and reuse of a trace, in one streaming pass (a progress bar on stderr when it is a\n"
        "terminal).",
        epilog="example:\n  tierlab info ../shared/traces/mobile-block/telegram_exec.csv.gz",
    )
    add_trace_args(p)
    p.add_argument("--limit", type=values.count_arg("--limit"), help="read only the first N page references")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser(
        "convert",
        help="convert a trace to the native format or Parquet",
        description="Stream TRACE into OUTPUT: the native compact format (.tlt) for fast\n"
        "repeated sweeps, or Parquet (.parquet) for analysis in pandas/duckdb.",
        epilog="example:\n  tierlab convert OLTP.lis.zst oltp.tlt",
    )
    add_trace_args(p)
    p.add_argument("output", help="output file: .tlt (native) or .parquet")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("policies", help="list the policies and their parameters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_policies)

    p = sub.add_parser("devices", help="list the device models and where their numbers come from")
    p.add_argument("--devices", action="append", default=[], help="TOML file of extra [[device]] tables")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_devices)

    p = sub.add_parser("formats", help="list the trace formats")
    p.set_defaults(func=cmd_formats)

    # Further commands live one module each in tierlab.commands (add_parser(subparsers)).
    import tierlab.commands as commands

    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"tierlab.commands.{mod.name}")
        if hasattr(module, "add_parser"):
            module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except BaseException as e:  # noqa: BLE001 - every failure becomes one line, never a traceback
        if isinstance(e, SystemExit):
            raise
        print(f"error: {error_line(e)}", file=sys.stderr)
        return exit_code(e)


def error_line(e: BaseException) -> str:
    """An exception as one plain line, never wrapped (editors and scripts jump to file:line from
    it): control bytes escaped, long text cut; an exception that is not tierlab's own (a bug, or
    a library's) says its type."""
    text = " ".join(str(e).split()) or type(e).__name__
    if not isinstance(e, (TierlabError, OSError, ValueError, MemoryError)):
        text = f"{type(e).__name__}: {text}"
    return values.show(text, 2000)[1:-1] if any(unicodedata.category(c) == "Cc" for c in text) else text[:2000]


def exit_code(e: BaseException) -> int:
    """2 for a usage error (a bad value or option: the command line must change), 1 for bad
    data or a failure on the way (a malformed or unreadable file, not enough memory)."""
    return 2 if isinstance(e, ConfigError) else 1


if __name__ == "__main__":
    sys.exit(main())
