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
    python benches/kernel_heldout.py table --out DIR

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
        pols = df.attrs["policies"]
        df["heldout"] = df["workload"].map(by_label)
        df["check"] = args.tag
        df["trace_file"] = [
            str(keep / f"{''.join(ch if ch.isalnum() or ch in '._-' else '-' for ch in c)}.tlt") for c in df["cell"]
        ]
        df["policy_spec"] = [kc._for_device(pols[p], s or None) for p, s in zip(df["policy"], df["swap"], strict=True)]
        df["spec"] = df["heldout"].map({n: s for s, n in specs.items()})
        path = out / (f"{args.tag}-{limit}.csv" if names == HELDOUT else f"{args.tag}-{limit}-{'+'.join(names)}.csv")
        df.to_csv(path, index=False)
        print(f"wrote {path} ({len(df)} rows)", file=sys.stderr)
    return 0


def _frames(out: Path) -> pd.DataFrame:
    paths = sorted(out.glob("*.csv"))
    if not paths:
        raise SystemExit(f"{out}: no CSV written by 'run' here")
    return pd.concat([pd.read_csv(p, keep_default_na=False) for p in paths], ignore_index=True)


def replay(args) -> int:
    df = _frames(Path(args.out))
    bad = 0
    for (trace, spec, cap), rows in df.groupby(["trace_file", "policy_spec", "capacity_pages"], sort=False):
        r = api.run(trace, policies=[spec], sizes=[int(cap)]).iloc[0]
        for _, row in rows.iterrows():
            got = int(r[kc.METRICS[row["metric"]]])
            if got != int(row["model"]):
                bad += 1
                print(f"{row['check']} {row['cell']} {row['policy']} {row['metric']}: run {row['model']}, replay {got}")
    print(f"replayed {len(df)} model counts: {len(df) - bad} equal, {bad} differ")
    return 1 if bad else 0


def table(args) -> int:
    df = _frames(Path(args.out))
    print("| kernel | workload | limit | swap | metric | kernel count | policy | model | error |")
    print("|---|---|---:|---|---|---:|---|---:|---:|")
    for _, r in df.iterrows():
        err = f"{float(r['error']):+.1%}" if r["kernel"] else ""
        within = "**" if r["kernel"] >= 200 and abs(float(r["error"])) <= 0.05 else ""
        print(
            f"| {r['check']} | {r['heldout']} | {r['limit_mib']} | {r['swap'] or '-'} | {r['metric']} | "
            f"{int(r['kernel']):,} | {r['policy']} | {int(r['model']):,} | {within}{err}{within} |"
        )
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
    for name, fn in (("replay", replay), ("table", table)):
        s = sub.add_parser(name)
        s.add_argument("--out", required=True)
        s.set_defaults(func=fn)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
