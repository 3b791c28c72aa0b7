"""kernel-check on the held-out workloads (``tierlab.kernel_heldout``), and their offline replay.

``run`` runs the four held-out generator specs through ``tierlab kernel-check --trace`` (the API
``kernel_check``), one call per limit because each spec is instantiated for its limit, keeping each
cell's reference trace (``--keep-traces``) and writing the rows (kernel count, model count, error)
to ``OUT/TAG-LIMIT.csv`` with the workload's held-out name, the trace kept and the exact policy
spec replayed. ``replay`` replays every model row of those CSVs on the kept traces at the cell's
capacity, without root or a kernel, and checks that it gives the model column again. ``table``
prints the rows as the markdown table of docs/kernel-check.md ("Held-out workloads").

    sudo python benches/kernel_heldout.py run --out DIR --tag host --limit 16 --limit 32 \\
        --swap zram -p linux-two-list -p lru
    sudo python benches/kernel_heldout.py run --out DIR --tag 6.12 --kernel debian:6.12 \\
        --limit 16 --limit 32 --swap zram --swap brd -p mglru -p linux-two-list
    sudo python benches/kernel_heldout.py run --out DIR --tag 6.1-off --kernel debian:6.1 --lru-gen off \\
        --limit 16 --limit 32 --swap zram --swap brd -p linux-two-list
    python benches/kernel_heldout.py replay --out DIR
    python benches/kernel_heldout.py table --out DIR --out DIR2   # DIR2: the same commands again

Cost: a kernel-check run per limit (host: about a minute; under QEMU the boot and TCG, minutes);
the replay one ``tierlab.run`` per cell and policy (seconds). DIR holds the kept traces (a few MB):
keep it outside the repository.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from tierlab import api
from tierlab import kernel as kc
from tierlab.kernel_heldout import HELDOUT, heldout_spec
from tierlab.kernel_workloads import _trace_label


def run(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for limit in args.limit:
        names = args.workload or HELDOUT
        specs = {heldout_spec(n, limit): n for n in names}
        keep = out / f"traces-{args.tag}-{limit}"
        df = kc.kernel_check(
            traces=list(specs),
            limits_mib=[limit],
            swap=args.swap,
            policies=args.policy,
            keep_traces=keep,
            kernel=args.kernel,
            lru_gen=args.lru_gen,
            progress=lambda m: print(m, file=sys.stderr, flush=True),
        )
        by_label = {_trace_label(s): n for s, n in specs.items()}
        # the specs the check replayed, in the order of its policies (set up for the cell's device)
        labels = list(df.attrs["policies"])
        spec_of = {(d["cell"], p): s for d in df.attrs["cells"] for p, s in zip(labels, d["policy_specs"], strict=True)}
        df["heldout"] = df["workload"].map(by_label)
        df["check"] = args.tag
        df["trace_file"] = [str(kc.kept_trace(keep, c)) for c in df["cell"]]
        df["policy_spec"] = [spec_of[c, p] for c, p in zip(df["cell"], df["policy"], strict=True)]
        df["spec"] = df["heldout"].map({n: s for s, n in specs.items()})
        path = out / (f"{args.tag}-{limit}.csv" if names == HELDOUT else f"{args.tag}-{limit}-{'+'.join(names)}.csv")
        df.to_csv(path, index=False)
        print(f"wrote {path} ({len(df)} rows)", file=sys.stderr)
    return 0


#: the counts the issue's bar counts (pages written back are shown, not counted)
COUNTED = ("misses", "swap_ins", "swap_outs")


def _frames(out: Path) -> pd.DataFrame:
    paths = sorted(out.glob("*.csv"))
    if not paths:
        raise SystemExit(f"{out}: no CSV written by 'run' here")
    return pd.concat([pd.read_csv(p, keep_default_na=False) for p in paths], ignore_index=True)


def replay(args) -> int:
    df = _frames(Path(args.out))
    bad = 0
    for (trace, spec, cap), rows in df.groupby(["trace_file", "policy_spec", "capacity_pages"], sort=False):
        r = api.run(trace, policies=[kc.replayable_spec(spec, trace)], sizes=[int(cap)]).iloc[0]
        for _, row in rows.iterrows():
            got = int(r[kc.METRICS[row["metric"]]])
            if got != int(row["model"]):
                bad += 1
                print(f"{row['check']} {row['cell']} {row['policy']} {row['metric']}: run {row['model']}, replay {got}")
    print(f"replayed {len(df)} model counts: {len(df) - bad} equal, {bad} differ")
    return 1 if bad else 0


def table(args) -> int:
    """One row per check, cell, policy and metric: the kernel's count and the model's in each run
    given (``--out`` repeated: the same commands run again), the errors, and in bold the misses,
    swap-ins and swap-outs of at least 200 pages within 5%."""
    runs = [_frames(Path(o)) for o in args.out]
    keys = ["check", "heldout", "limit_mib", "swap", "metric", "policy"]
    df = runs[0][keys].copy()
    for i, r in enumerate(runs):
        df = df.merge(
            r[[*keys, "kernel", "model"]].rename(columns={"kernel": f"k{i}", "model": f"m{i}"}), on=keys, how="left"
        )
    n = len(runs)
    runs_h = " / ".join(f"run {i + 1}" for i in range(n))
    print(f"| kernel | cell | metric | policy | kernel: {runs_h} | model: {runs_h} | error: {runs_h} |")
    print("|---|---|---|---|---:|---:|---:|")
    tally: dict[tuple[str, str], list[int]] = {}
    for _, r in df.iterrows():
        errs = []
        for i in range(n):
            k, m = r[f"k{i}"], r[f"m{i}"]
            if pd.isna(k):
                errs.append("")
                continue
            e = f"{(m - k) / k:+.1%}" if k else ""
            if k >= 200 and r["metric"] in COUNTED:
                t = tally.setdefault((r["check"], r["policy"]), [0, 0])
                t[1] += 1
                if abs(m - k) / k <= 0.05:
                    t[0] += 1
                    e = f"**{e}**"
            errs.append(e)
        cell = f"{r['heldout']}@{r['limit_mib']}MiB" + (f"+{r['swap']}" if r["swap"] else "")
        ks = " / ".join("" if pd.isna(r[f"k{i}"]) else f"{int(r[f'k{i}']):,}" for i in range(n))
        ms = " / ".join("" if pd.isna(r[f"m{i}"]) else f"{int(r[f'm{i}']):,}" for i in range(n))
        print(f"| {r['check']} | {cell} | {r['metric']} | {r['policy']} | {ks} | {ms} | {' / '.join(errs)} |")
    print()
    for (check, policy), (w, t) in tally.items():
        print(f"{check}, {policy}: {w} of {t} counts of at least 200 pages within 5% (all runs)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="kernel-check on the held-out workloads (root)")
    r.add_argument("--out", required=True, help="directory for the CSVs and kept traces")
    r.add_argument("--tag", required=True, help="name of this check in the CSVs (host, 6.12, 6.1-off...)")
    r.add_argument("--limit", type=int, action="append", required=True, help="limit in MiB (repeatable)")
    r.add_argument("--swap", action="append", required=True, help="swap device for the mixed workloads")
    r.add_argument("-p", "--policy", action="append", required=True)
    r.add_argument("-w", "--workload", action="append", choices=HELDOUT, help="held-out workload (default: all)")
    r.add_argument("--kernel")
    r.add_argument("--lru-gen", choices=["on", "off"])
    r.set_defaults(func=run)
    s = sub.add_parser("replay", help="replay the models on the kept traces and compare")
    s.add_argument("--out", required=True)
    s.set_defaults(func=replay)
    s = sub.add_parser("table", help="the markdown table of one run or several (--out repeated)")
    s.add_argument("--out", action="append", required=True)
    s.set_defaults(func=table)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
