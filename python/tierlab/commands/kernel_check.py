"""``tierlab kernel-check``: tierlab's Linux models against the real kernel of this machine."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from tierlab import kernel as kc
from tierlab import values
from tierlab.cli import add_format_args, parse_kv, save_frame


def add_parser(sub) -> None:
    p = sub.add_parser(
        "kernel-check",
        help="run workloads against the real kernel in a memory cgroup and compare tierlab's models",
        description="Runs each workload against this machine's kernel in a fresh memory cgroup (v1) at\n"
        "each limit, counting what the kernel did (page-cache insertions, pages written back, swap-ins\n"
        "and swap-outs) from its tracepoints and counters; replays the same page references through\n"
        "tierlab's policies at the capacity the cgroup's accounting gives; prints both side by side.\n"
        "Needs root, memory cgroup v1 and tracefs; swap support and zram0 (or zswap) for the anonymous and\n"
        "mixed workloads.\n"
        "Everything it sets up (cgroup, trace instance, swap file, zram, zswap, debugfs, vm.page-cluster) is\n"
        "removed afterwards, also on error and Ctrl-C. With --kernel the cells run instead in that kernel booted\n"
        "under QEMU (cgroup v2 memory.max, one boot for all cells; needs root, apt and cargo; nothing is\n"
        "set up on the host). Method and results: docs/kernel-check.md.\n\n"
        "Any workload: --trace takes a trace tierlab reads (file and/or anonymous pages, reads and\n"
        "writes, as its kind and op columns say) or a generator spec; its page references run through\n"
        "the same driver and counters as the built-in workloads, which stay as presets.\n\n"
        "PSI: under --kernel each swap cell's memory.pressure some/full totals are printed beside the\n"
        "stall the lmkd model prices for the same references (a second table; the columns psi_* and\n"
        "model_psi_* in -o): the times differ in kind (an emulator's against the model's devices),\n"
        "so only their ratio across cells of one swap device is a comparison.\n\n"
        f"workloads: {', '.join(kc.WORKLOADS)}",
        epilog="examples:\n"
        "  tierlab kernel-check\n"
        "  tierlab kernel-check --quick\n"
        "  tierlab kernel-check -w hot_scan -w zipf_read --limit 32 --limit 128 -o cells.csv\n"
        "  tierlab kernel-check -w anon_zipf --swap zram -p linux-two-list -p lru --report kc.html\n"
        "  tierlab kernel-check --trace python/tierlab/data/captured/sqlite-txn.tlp.zst --max-refs 2000000 --limit 2\n"
        "  tierlab kernel-check --trace zipf:alpha=0.99,pages=40000,n=400000,seed=1 --limit 64\n"
        "  tierlab kernel-check --kernel debian:6.12 -p mglru -p linux-two-list\n"
        "  tierlab kernel-check --kernel debian:6.1 --lru-gen off -w hot_scan --limit 16\n"
        "  tierlab kernel-check --kernel debian:6.12 --fast-node 300 --limit 256 -p tpp \\\n"
        "      --trace zipf:kind=anon,alpha=0.9,pages=32768,n=600000,write=0.3,seed=1",
    )
    p.add_argument(
        "-w",
        "--workload",
        action="append",
        choices=kc.WORKLOADS,
        help="workload (default: all, or none when --trace is given)",
    )
    p.add_argument(
        "--limit",
        action="append",
        type=values.count_arg("--limit", maximum=1 << 20),
        metavar="MIB",
        help="memory cgroup limit in MiB (default 32 and 64; 16 and 32 with --kernel)",
    )
    p.add_argument(
        "--swap",
        action="append",
        choices=["file", "zram", "zswap", "brd"],
        help="swap for the anonymous and mixed workloads: a swap file, zram0, or zswap in front of a swap file "
        "(default file and zram); with --kernel: zram, brd (a RAM disk in the VM) or zswap in front of brd with "
        "memory.zswap.max at 1/256 of the limit (default zram and brd); zswap cells add the zswap model's stored, "
        "written-back, straight-to-device and rejected pages beside the kernel's",
    )
    p.add_argument(
        "-t",
        "--trace",
        action="append",
        default=[],
        help="a user's workload: a trace file or a generator spec (repeatable; alone, only the traces run)",
    )
    add_format_args(p)
    p.add_argument(
        "--max-refs", type=values.count_arg("--max-refs"), help="replay only the first N page references of each trace"
    )
    p.add_argument(
        "-p",
        "--policy",
        action="append",
        help="policy to replay; a bare linux-two-list (and under --kernel mglru) is the configured row "
        "kernel-check compares, linux-two-list() the policy's own defaults (default: see docs/kernel-check.md); "
        "every linux-two-list row but 6.1's gets the statistics flushes the kernel made during the cell "
        "(stats_flush_at, where they can be recorded; the -o file's policy_spec column)",
    )
    p.add_argument(
        "--scale",
        type=values.positive_arg("--scale", maximum=1000),
        default=1.0,
        help="multiply every workload's references by this",
    )
    p.add_argument("--seed", type=values.count_arg("--seed", minimum=0), default=1, help="workload seed (default 1)")
    p.add_argument("--quick", action="store_true", help="one 16 MiB limit and a quarter of the references")
    p.add_argument("--workdir", default=str(kc.DEFAULT_WORKDIR), help="directory for the data and swap files")
    p.add_argument(
        "--keep-traces",
        metavar="DIR",
        help="keep each cell's reference trace (.tlt) in DIR (under --kernel with TIERLAB_VM_LRU_GEN=SECONDS "
        "also each cell's reclaims and MGLRU generations over the run, as <cell>.tlt.lru_gen)",
    )
    p.add_argument(
        "--kernel",
        metavar="KERNEL",
        help="boot this kernel under QEMU and run the cells there: debian:6.1, debian:6.12 or a vmlinuz path "
        "(the file cells unless -w or --trace is given; the Debian packages are downloaded and cached; "
        "docs/kernel-check.md)",
    )
    p.add_argument("--lru-gen", choices=["on", "off"], help="with --kernel: MGLRU on or off (default: the kernel's)")
    p.add_argument(
        "--fast-node",
        type=values.count_arg("--fast-node", maximum=1 << 20),
        metavar="MIB",
        help="with --kernel: node 0 (the CPU) gets MIB MiB and a CPU-less, ten times slower node 1 the rest of the "
        "VM's memory; demotion and numa_balancing=2 (memory tiering) on; adds the kernel's promotions and demotions "
        "beside tpp's (-p tpp), whose fast tier and hint-scan period each cell gives (docs/kernel-check.md)",
    )
    p.add_argument(
        "--clear-kernel-cache", action="store_true", help="remove the cached kernels and in-VM driver, and exit"
    )
    p.add_argument("-o", "--output", help="write every row to .csv, .parquet or .json")
    p.add_argument("--report", metavar="HTML", help="write an HTML report with the error figures")
    p.set_defaults(func=run)


def run(args) -> int:
    console = Console(width=200)
    if args.clear_kernel_cache:
        from tierlab import kernel_image

        for r in kernel_image.clear_kernel_cache():
            console.print(f"removed {r}")
        return 0
    limits = args.limit or ([16] if args.quick else [16, 32] if args.kernel else [32, 64])
    scale = args.scale * (0.25 if args.quick else 1.0)
    try:
        df = kc.kernel_check(
            workloads=args.workload,
            limits_mib=limits,
            swap=args.swap or (("zram", "brd") if args.kernel else ("file", "zram")),
            policies=args.policy,
            scale=scale,
            seed=args.seed,
            workdir=args.workdir,
            keep_traces=args.keep_traces,
            progress=lambda m: console.print(m, style="dim"),
            traces=args.trace,
            trace_format=args.format,
            trace_options=parse_kv(args.trace_option, "--trace-option"),
            max_refs=args.max_refs,
            kernel=args.kernel,
            lru_gen=args.lru_gen,
            fast_node_mib=args.fast_node,
        )
    except kc.KernelCheckUnavailable as e:
        console.print(f"[red]{e}[/]")
        return 2
    s = kc.summary(df)
    release = df["kernel_release"].iloc[0] if "kernel_release" in df else kc.os.uname().release
    where = f"{args.kernel}: {release} under QEMU" if args.kernel else release
    t = Table(title=f"kernel ({where}) vs tierlab", title_justify="left")
    for c in s.columns:
        t.add_column(str(c), justify="left" if c in ("cell", "metric") else "right")
    for _, r in s.iterrows():
        cells = []
        for c in s.columns:
            v = r[c]
            if not isinstance(v, str) and pd.isna(v):  # a count this policy does not have
                cells.append("")
            elif str(c).endswith(" error"):
                style = "green" if abs(v) <= 0.05 else "red"
                cells.append(f"[{style}]{v:+.1%}")
            elif isinstance(v, str):
                cells.append(v)
            else:
                cells.append(f"{int(v):,}")
        t.add_row(*cells)
    console.print(t)
    psi = kc.psi_summary(df)
    if not psi.empty:
        pt = Table(
            title="PSI: the group's memory.pressure (TCG time) beside the lmkd model's stall (its device times)",
            title_justify="left",
        )
        for c in psi.columns:
            pt.add_column(str(c), justify="left" if c in ("cell", "swap", "policy") else "right")
        for _, r in psi.iterrows():
            pt.add_row(*(f"{v:,.1f}" if isinstance(v, float) else str(v) for v in r))
        console.print(pt)
    for tr in args.trace:
        spec, why = kc.two_list_for(tr, args.format)
        console.print(
            f"{tr}: kernel-check replays file pages with pread/pwrite, so its row is file_access='read'; "
            f"for a tierlab run of this trace: {spec} ({why})",
            style="dim",
        )
    if args.output:
        save_frame(df, args.output)
    if args.report:
        out = kc.write_report(df, args.report)
        console.print(f"report: {out.resolve()}")
    return 0
