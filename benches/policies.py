"""Every registered policy, each on the system its family needs, on one real trace with writes and
one Zipf trace with writes, at 1%, 10% and 30% of the trace's footprint: references per second of
the replay loop, the ratio to ``lru`` in the same run, and bytes of metadata per resident page.

    python benches/policies.py                                  # both traces, 5 repeats
    python benches/policies.py --repeats 1 --policies lru cflru --traces zipf
    TIERLAB_SHARED=/work/shared python benches/policies.py --json out.json

Rates are ``policy_seconds`` (CPU time of the single-threaded replay loop of one instance, so the
reading and decoding threads do not count against it), medians over ``--repeats``. Each repeat
runs every policy once per size, each right after a run of ``lru`` on the same trace and size:
``x lru`` is the median over the repeats of the ratio within each pair. The machine's speed drifts
by half within minutes (other tenants), and two runs a second apart see the same drift, where a
run of ``lru`` at the start of a repeat and a policy's run minutes later do not. ``lru``'s own
rate is the median of all its runs. Each trace is converted to the native format first, so
decoding costs the same for every policy.

Metadata is measured, not analytic: the ``memory`` example's counting allocator (live heap of one
policy instance after replaying the Zipf trace at 10% of its footprint). ``B/resident page`` is
everything but what ``grow(distinct)`` allocated, over the pages resident at the end;
``B/distinct page`` is what ``grow`` allocated (arrays indexed by page id: the id -> slot table,
LIRS's whole per-page entry), over the distinct pages. It needs the example built
(``cargo build --release -p tierlab-core --example memory``; the path is ``--memory-bin`` or
``TIERLAB_MEMORY_BIN``, default ``target/release/examples/memory``);
without it the column is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TIERLAB_SHARED", REPO.parent / "shared"))

#: The real trace: block I/O of an Android app (reads and writes).
REAL = "traces/mobile-block/telegram_exec.csv.gz"
#: The synthetic trace: Zipf(0.9) with 20% writes.
ZIPF = "zipf:alpha=0.9,pages=1000000,n=5000000,write=0.2,seed=1"

#: The system each family needs (every other family runs on the default DRAM + NVMe system).
SYSTEMS = {
    "hybrid": {"tiers": ["dram", "pcm"]},
    "tiered": {"tiers": ["nomad-local-dram", "nomad-remote-dram"]},
}


def run_one(trace: str, spec: str, family: str, size: str) -> tuple[float, int, int]:
    import tierlab

    df = tierlab.run(trace, policies=[spec], sizes=[size], system=SYSTEMS.get(family), threads=1)
    row = df.iloc[0]
    return float(row["policy_seconds"]), int(row["accesses"]), int(row["misses"])


def metadata(memory_bin: Path, zipf: str, specs: list[str]) -> dict[str, tuple[float, float]]:
    """Bytes per resident page and per distinct page from the ``memory`` example (Zipf trace, 10%
    cache)."""
    out = {}
    for spec in specs:
        args = [str(memory_bin), zipf, "0.1", spec]
        try:
            text = subprocess.run(args, capture_output=True, text=True, check=True, timeout=600).stdout
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            print(f"memory {spec}: {e}")
            continue
        for line in text.splitlines():
            parts = line.split()
            if parts and parts[0] == spec and len(parts) >= 4 and re.fullmatch(r"[0-9.]+", parts[2]):
                out[spec] = (float(parts[2]), float(parts[3]))
    return out


def cell_args(ap: argparse.ArgumentParser) -> None:
    """The options naming the cells: traces and sizes (shared with ``ab.py``)."""
    ap.add_argument("--traces", nargs="+", default=["real", "zipf"], choices=["real", "zipf"])
    ap.add_argument("--real", default=str(SHARED / REAL), help="the real trace")
    ap.add_argument("--zipf", default=ZIPF, help="the synthetic trace spec")
    ap.add_argument("--fractions", nargs="+", default=["1%", "10%", "30%"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cell_args(ap)
    ap.add_argument("--repeats", type=int, default=5, help="pairs per cell (a 25 ms lru run can catch a spike)")
    ap.add_argument("--policies", nargs="+", help="policy specs (default: every registered policy)")
    ap.add_argument(
        "--memory-bin",
        default=os.environ.get("TIERLAB_MEMORY_BIN", str(REPO / "target/release/examples/memory")),
        help="the memory example (bytes per resident page); skipped when absent",
    )
    ap.add_argument("--json", help="also write the results as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run as it ends")
    args = ap.parse_args()

    import tierlab

    reg = tierlab.policies()
    families = dict(zip(reg["name"], reg["family"], strict=True))
    # The learned policies run in Python (thousands of references a second once a model is
    # trained, hours on these traces): benches/learned.py measures them. Named with
    # --policies, they run here too.
    learned = [n for n, f in families.items() if f.startswith("learned")]
    if args.policies:
        specs = args.policies
    else:
        specs = [n for n in reg["name"] if n not in learned]
        print(f"not measured here (Python, see benches/learned.py): {', '.join(learned)}")
    specs = ["lru"] + [s for s in specs if s != "lru"]

    def family(spec: str) -> str:
        name = spec.split("(", 1)[0].strip()
        if name in families:
            return families[name]
        return families[tierlab.api.parse_policy(spec)["name"]]

    fam_of = {s: family(s) for s in specs}

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        traces = {}
        for which in args.traces:
            src = args.real if which == "real" else args.zipf
            if which == "real" and not Path(src).exists():
                print(f"{src} not found (set TIERLAB_SHARED): skipping the real trace")
                continue
            native = Path(tmp) / f"{which}.tlt"
            tierlab.convert.convert(tierlab.Trace.of(src), native)
            traces[which] = (src, str(native))
        for which, (src, native) in traces.items():
            print(f"\n== {which}: {src} (native copy), {args.repeats} repeats, sizes {' '.join(args.fractions)}")
            secs: dict[tuple[str, str], list[float]] = {}
            # (policy, size) -> [(seconds of the lru run just before, seconds of the policy)]
            pairs: dict[tuple[str, str], list[tuple[float, float]]] = {}
            info: dict[tuple[str, str], tuple[int, int]] = {}

            for _ in range(args.repeats):
                for frac in args.fractions:
                    for s in specs:
                        pair = []
                        for p in ["lru"] if s == "lru" else ["lru", s]:
                            sec, n, misses = run_one(native, p, fam_of[p], frac)
                            if args.verbose:
                                print(f"  {p} {frac}: {n / sec / 1e6:.2f} M/s ({sec:.2f} s)", flush=True)
                            secs.setdefault((p, frac), []).append(sec)
                            info[(p, frac)] = (n, misses)
                            pair.append(sec)
                        pairs.setdefault((s, frac), []).append((pair[0], pair[-1]))
            rate = {k: info[k][0] / statistics.median(v) for k, v in secs.items()}
            ratios = {k: [lru / sec for lru, sec in v] for k, v in pairs.items()}
            x_lru = {k: statistics.median(v) for k, v in ratios.items()}
            head = " ".join(f"{'M/s@' + f:>10}" for f in args.fractions)
            ratio_head = " ".join(f"{'x lru@' + f:>10}" for f in args.fractions)
            print(f"{'policy':24} {'family':8} {head} {ratio_head}")
            for s in specs:
                r = [rate[(s, f)] / 1e6 for f in args.fractions]
                x = [x_lru[(s, f)] for f in args.fractions]
                print(
                    f"{s:24} {fam_of[s]:8} "
                    + " ".join(f"{v:10.2f}" for v in r)
                    + " "
                    + " ".join(f"{v:10.2f}" for v in x)
                )
                for f, v, xv in zip(args.fractions, r, x, strict=True):
                    rows.append(
                        {
                            "trace": which,
                            "policy": s,
                            "family": fam_of[s],
                            "size": f,
                            "maps": v,
                            "x_lru": xv,
                            "x_lru_pairs": ratios[(s, f)],
                            "seconds": secs[(s, f)],
                            "lru_seconds_before": [lru for lru, _ in pairs[(s, f)]],
                            "accesses": info[(s, f)][0],
                            "misses": info[(s, f)][1],
                        }
                    )
            # Where a cell's pair ratios straddle a third, which side its median lands on is the
            # machine's noise as much as the policy's cost.
            straddle = [
                f"{s} {f} ({min(ratios[(s, f)]):.2f}-{max(ratios[(s, f)]):.2f}, median {x_lru[(s, f)]:.2f})"
                for s in specs
                for f in args.fractions
                if s != "lru" and min(ratios[(s, f)]) < 1 / 3 <= max(ratios[(s, f)])
            ]
            if straddle:
                print("pairs on both sides of a third of lru: " + "; ".join(straddle))
    mem_bin = Path(args.memory_bin)
    if mem_bin.exists():
        print(f"\n== metadata: live heap, {args.zipf} at 10% ({mem_bin.name} example)")
        print(f"{'policy':24} {'B/resident page':>16} {'B/distinct page':>16}")
        meta = metadata(mem_bin, args.zipf, specs)
        for s in specs:
            r, d = meta.get(s, (float("nan"), float("nan")))
            print(f"{s:24} {r:16.1f} {d:16.1f}")
        rows.append({"metadata_bytes_per_resident_page": meta})
    else:
        print(f"\n{mem_bin} not found: no metadata column (cargo build --release -p tierlab-core --example memory)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
