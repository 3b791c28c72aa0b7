"""``tierlab mobile``: run a phone session (apps, the low-memory killer, swap) from a scenario file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from tierlab import mobile


def add_parser(sub) -> None:
    p = sub.add_parser(
        "mobile",
        help="simulate a phone session: app launches, the low-memory killer, swap",
        description="Run SCENARIO.toml: apps launched, used and sent to the background on a phone of\n"
        "a given memory size, with Android's low-memory killer, the OOM killer, and optional swap\n"
        "to a device. Prints the LMK table, launch times by kind (first, hot, swap, cold after a\n"
        "kill), the kills, and swap traffic with flash wear. Scenario reference: the comments of\n"
        "experiments/android_lmk.toml.",
        epilog="examples:\n"
        "  tierlab mobile experiments/android_lmk.toml\n"
        "  tierlab mobile experiments/android_lmk.toml --swap microsd-class6-paper --launches\n"
        "  tierlab mobile experiments/android_lmk.toml --compare none,microsd-class6-paper,emmc-gs2,zram-gs2\n"
        "  tierlab mobile experiments/android_lmk.toml --set swap.mode=scan_count --set swap.swappiness=100 "
        "--swap zram-gs2\n"
        "  tierlab mobile experiments/android_lmk.toml -o out/session  (writes out/session_*.csv)\n"
        "  tierlab mobile experiments/android_lmk.toml --reclaim mglru --killer lmkd --set lmk.scheme=modern \\\n"
        "      --devices experiments/devices/compressed.toml --swap zram-lz4-gs2 --set swap.page_cluster=0\n"
        "  tierlab mobile experiments/android_lmk.toml --swap emmc-gs2 --set swap.zswap.enabled=true",
    )
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--swap", help="swap device (a preset or one from --devices); 'none' for no swap")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a scenario value, e.g. --set phone.memory_mb=1900 (repeatable; values are TOML)",
    )
    p.add_argument(
        "--killer",
        choices=["kernel", "lmkd"],
        help="low-memory killer: the in-kernel LMK table (kernel, the default) or lmkd in PSI mode ([lmkd] section)",
    )
    p.add_argument(
        "--reclaim",
        choices=["two-list", "mglru"],
        help="page reclaim: Linux's two lists (the default) or the multi-generational LRU",
    )
    p.add_argument("--compare", help="comma-separated swap devices (or 'none') to run side by side")
    p.add_argument("--devices", action="append", default=[], help="TOML file of extra [[device]] tables")
    p.add_argument("--launches", action="store_true", help="print every launch")
    p.add_argument("-o", "--output", help="write PREFIX_launches.csv, _kills.csv, _memory.csv, _apps.csv")
    p.set_defaults(func=run)


def parse_sets(pairs: list[str]) -> dict:
    """``["swap.swappiness=100"]`` -> ``{"swap": {"swappiness": 100}}`` (values are TOML, bare words strings)."""
    out: dict = {}
    for pair in pairs:
        if "=" not in pair or "." not in pair.split("=", 1)[0]:
            raise SystemExit(f"--set: expected SECTION.KEY=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            v = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            v = value.strip()
        *path, last = key.strip().split(".")
        d = out
        for k in path:
            d = d.setdefault(k, {})
        d[last] = v
    return out


def _with_swap(over: dict, dev: str | None) -> dict:
    if dev is None:
        return over
    swap = dict(over.get("swap", {}))
    swap["device"] = "none" if dev.lower() == "none" else dev
    return {**over, "swap": swap}


def kind_table(df: pd.DataFrame) -> pd.DataFrame:
    """Count, mean and median launch time per kind."""
    if df.empty:
        return pd.DataFrame(columns=["kind", "launches", "mean_ms", "median_ms"])
    g = df.groupby("kind").time_ms
    out = pd.DataFrame({"launches": g.size(), "mean_ms": g.mean(), "median_ms": g.median()}).reset_index()
    order = {k: i for i, k in enumerate(mobile.KINDS)}
    return out.sort_values("kind", key=lambda s: s.map(order)).reset_index(drop=True)


def _with_choices(over: dict, args) -> dict:
    """Applies --killer and --reclaim over the --set overrides."""
    if getattr(args, "killer", None):
        over = {**over, "lmk": {**over.get("lmk", {}), "killer": args.killer}}
    if getattr(args, "reclaim", None):
        policy = args.reclaim.replace("-", "_")
        over = {**over, "reclaim": {**over.get("reclaim", {}), "policy": policy}}
    return over


def run(args) -> int:
    console = Console(width=150)
    over = _with_choices(parse_sets(args.set), args)
    if args.compare:
        rows = []
        for dev in [d.strip() for d in args.compare.split(",") if d.strip()]:
            r = mobile.run_scenario(args.scenario, _with_swap(over, dev), devices=args.devices)
            means = r.launch_means()
            t = r.totals
            rows.append(
                {
                    "swap": dev,
                    **{f"{k}_ms": means.get(k, float("nan")) for k in mobile.KINDS if k != "restart"},
                    "all_ms": r.launches.time_ms.mean(),
                    "lmk_kills": t["lmk_kills"],
                    "oom_kills": t["oom_kills"],
                    "swap_out_mb": t["swap_pages_out"] * r.page_mb,
                    "swap_in_mb": (t["swap_pages_in"] + t["swap_readahead_pages"]) * r.page_mb,
                    "erase_blocks": t["erase_blocks_written"],
                }
            )
        df = pd.DataFrame(rows)
        table = Table(title=f"{args.scenario}: swap devices compared (launch means in ms)", title_justify="left")
        for c in df.columns:
            table.add_column(c, justify="left" if c == "swap" else "right")
        for _, row in df.iterrows():
            table.add_row(*[v if isinstance(v, str) else f"{v:,.1f}" for v in row])
        console.print(table)
        if args.output:
            Path(args.output).parent.mkdir(parents=True, exist_ok=True)
            df.to_csv(f"{args.output}_compare.csv", index=False)
        return 0

    r = mobile.run_scenario(args.scenario, _with_swap(over, args.swap), devices=args.devices)
    mb = r.page_mb
    t = r.totals
    console.print(
        f"[bold]{args.scenario}[/]: MemTotal {t['total_pages'] * mb:.0f} MB, system {t['system_pages'] * mb:.0f} MB, "
        f"watermarks min/low/high {t['wmark_min'] * mb:.1f}/{t['wmark_low'] * mb:.1f}/{t['wmark_high'] * mb:.1f} MB, "
        f"file store {r.file_store}, swap {r.swap_device or 'none'}"
    )
    sc_killer = over.get("lmk", {}).get("killer", "kernel")
    if t.get("compressed_pool_peak_pages") or sc_killer == "lmkd":
        z = t.get("zswap", {})
        console.print(
            f"compressed pool peak {t['compressed_pool_peak_pages'] * mb:.1f} MB; zswap stored {z.get('stored', 0)}, "
            f"rejected {z.get('rejected', 0)}, written back {z.get('written_back', 0)}; PSI stall some "
            f"{t['psi_some_ms']:.0f} ms, full {t['psi_full_ms']:.0f} ms; lmkd events medium "
            f"{t['psi_events_medium']}, critical {t['psi_events_critical']}; file refaults {t['file_refaults']}"
        )
    lt = Table(title="low-memory killer levels", title_justify="left")
    for c in ("minfree MB", "kill oom_score_adj >="):
        lt.add_column(c, justify="right")
    for _, row in r.lmk.iterrows():
        lt.add_row(f"{row.minfree_kb / 1024:.0f}", str(row.min_score_adj))
    console.print(lt)

    kt = Table(title="launch time by kind", title_justify="left")
    for c in ("kind", "launches", "mean ms", "median ms"):
        kt.add_column(c, justify="right")
    for _, row in kind_table(r.launches).iterrows():
        kt.add_row(row.kind, str(row.launches), f"{row.mean_ms:,.0f}", f"{row.median_ms:,.0f}")
    console.print(kt)

    if args.launches:
        lt = Table(title="launches", title_justify="left")
        cols = [
            "step",
            "app",
            "kind",
            "time_ms",
            "start_ms",
            "file_read_ms",
            "swap_read_ms",
            "anon_init_ms",
            "reclaim_ms",
            "file_pages_read",
            "swap_pages_in",
        ]
        for c in cols:
            lt.add_column(c, justify="left" if c in ("app", "kind") else "right")
        for _, row in r.launches.iterrows():
            lt.add_row(*[f"{row[c]:,.0f}" if isinstance(row[c], float) else str(row[c]) for c in cols])
        console.print(lt)

    if not r.kills.empty:
        kt = Table(title="kills", title_justify="left")
        for c in ("step", "app", "killer", "oom_score_adj", "RSS MB", "free MB before", "file MB", "free MB after"):
            kt.add_column(c, justify="right")
        for _, k in r.kills.iterrows():
            kt.add_row(
                str(k.step),
                k.app,
                k.killer,
                str(k.score_adj),
                f"{k.rss_mb:.1f}",
                f"{k.free_mb_before:.1f}",
                f"{k.file_mb_before:.1f}",
                f"{k.free_mb_after:.1f}",
            )
        console.print(kt)
    console.print(
        f"kills: {t['lmk_kills']} by the LMK, {t['oom_kills']} by the OOM killer; "
        f"swap: {t['swap_pages_out'] * mb:.1f} MB out, {t['swap_pages_in'] * mb:.1f} MB faulted in "
        f"(+{t['swap_readahead_pages'] * mb:.1f} MB read ahead), {t['swap_bytes_written'] / 2**20:.1f} MB written = "
        f"{t['erase_blocks_written']:.1f} erase blocks ({t['wear_cycles_per_block']:.3g} cycles per block of the "
        f"swap area); file pages read {t['file_pages_read'] * mb:.1f} MB; session {t['session_ms'] / 1000:.1f} s"
    )
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        for name in ("launches", "kills", "memory", "apps"):
            getattr(r, name).to_csv(f"{args.output}_{name}.csv", index=False)
        console.print(f"wrote {args.output}_{{launches,kills,memory,apps}}.csv")
    return 0
