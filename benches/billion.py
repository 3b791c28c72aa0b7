"""Scale: a long generated trace on disk replayed through 4 policies x 4 sizes in one pass, with
bounded memory.

    python benches/billion.py                       # 1e9 references, trace under /work/big
    python benches/billion.py --refs 1e7            # a small run first: file size, rate
    python benches/billion.py --refs 1e9 --keep     # keep the trace for a second replay

Steps, each in a child process so its time and peak RSS are its own (``os.wait4``):

1. ``tierlab convert`` writes ``--refs`` draws of a Zipf(``--alpha``) generator over ``--pages``
   pages, 20% writes, to tierlab's native format (``<dir>/zipf-<refs>.tlt``), unless it exists.
2. ``tierlab.run`` replays it once through every (policy, size) pair (4 x 4 = 16 instances,
   ``--threads`` replay threads), sizes as fractions of ``--pages``. The progress goes to stderr:
   a bar with refs/s and ETA on a terminal, else a line every ``--every`` seconds with the same.

Prints the file size, the conversion's time and rate, the replay's wall and CPU time, trace
references per second of wall time, instance-references per second, and the peak RSS of each
step. The trace is deleted at the end unless ``--keep``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SPEC = "zipf:alpha={alpha},pages={pages},n={refs},write=0.2,seed=1"


def child(cmd: list[str]) -> tuple[int, float, object]:
    """Runs ``cmd``; returns its exit status, wall seconds and rusage (its own, via wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, time.perf_counter() - t0, usage


def replay(args: argparse.Namespace) -> None:
    """The replay child: runs the sweep and prints one JSON line of results on stdout."""
    import tierlab

    total = int(float(args.refs))
    t0 = time.perf_counter()
    last = [t0]

    def report(done: int) -> None:
        now = time.perf_counter()
        if now - last[0] < args.every and done < total:
            return
        last[0] = now
        rate = done / max(now - t0, 1e-9)
        eta = (total - done) / rate if rate > 0 else float("inf")
        print(
            f"  {done:>14,} / {total:,} refs  {100 * done / total:5.1f}%  {rate / 1e6:6.2f} M refs/s  "
            f"elapsed {now - t0:7.0f} s  ETA {eta:7.0f} s",
            file=sys.stderr,
            flush=True,
        )

    sizes = [max(1, int(float(f) * int(float(args.pages)))) for f in args.sizes]
    df = tierlab.run(
        args.trace,
        policies=args.policies,
        sizes=sizes,
        threads=args.threads,
        progress=True if sys.stderr.isatty() else report,
    )
    rows = [
        {
            "policy": r["policy"],
            "size": int(r["capacity_pages"]) if "capacity_pages" in r else str(r["size"]),
            "accesses": int(r["accesses"]),
            "misses": int(r["misses"]),
            "policy_seconds": float(r["policy_seconds"]),
        }
        for _, r in df.iterrows()
    ]
    print(json.dumps({"rows": rows, "wall": time.perf_counter() - t0}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", default="1e9", help="references to generate (default 1e9)")
    ap.add_argument("--pages", default="1e7", help="distinct pages of the Zipf generator (default 1e7)")
    ap.add_argument("--alpha", default="0.9")
    ap.add_argument("--dir", default="/work/big", help="where the trace goes (not the repository)")
    ap.add_argument("--policies", nargs="+", default=["lru", "clock", "arc", "s3fifo"])
    ap.add_argument(
        "--sizes", nargs="+", default=["0.001", "0.01", "0.1", "0.3"], help="cache sizes as fractions of --pages"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between progress lines off a terminal")
    ap.add_argument("--keep", action="store_true", help="keep the trace afterwards")
    ap.add_argument("--replay-child", dest="trace", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.trace:
        replay(args)
        return

    refs = int(float(args.refs))
    out_dir = Path(args.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    trace = out_dir / f"zipf-{refs}.tlt"
    spec = SPEC.format(alpha=args.alpha, pages=int(float(args.pages)), refs=refs)
    print(f"trace: {spec}\n  -> {trace}", flush=True)
    if not trace.exists():
        code, wall, usage = child([str(Path(sys.executable).parent / "tierlab"), "convert", spec, str(trace)])
        if code:
            sys.exit(f"convert failed with status {code}")
        size = trace.stat().st_size
        print(
            f"convert: {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s cpu, "
            f"{refs / wall / 1e6:.2f} M refs/s, peak RSS {usage.ru_maxrss / 1024:.0f} MB, "
            f"file {size / 1e9:.3f} GB ({size / refs:.2f} B/ref)",
            flush=True,
        )
    else:
        print(f"convert: reusing {trace} ({trace.stat().st_size / 1e9:.3f} GB)", flush=True)

    cmd = [sys.executable, __file__, "--replay-child", str(trace), "--refs", str(refs), "--pages", args.pages]
    cmd += ["--policies", *args.policies, "--sizes", *args.sizes, "--threads", str(args.threads)]
    cmd += ["--every", str(args.every)]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    stdout = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"replay failed with status {os.waitstatus_to_exitcode(status)}")
    res = json.loads(stdout.strip().splitlines()[-1])
    cpu = usage.ru_utime + usage.ru_stime
    n_inst = len(res["rows"])
    print(
        f"replay: {n_inst} instances, {wall:.1f} s wall ({res['wall']:.1f} s inside run), {cpu:.1f} s cpu, "
        f"{refs / wall / 1e6:.2f} M trace refs/s, {n_inst * refs / wall / 1e6:.1f} M instance-refs/s, "
        f"peak RSS {usage.ru_maxrss / 1024:.0f} MB"
    )
    print(f"{'policy':10} {'size':>10} {'miss ratio':>10} {'loop s':>8} {'loop M/s':>9}")
    for r in res["rows"]:
        print(
            f"{r['policy']:10} {r['size']:>10} {r['misses'] / max(r['accesses'], 1):10.4f} "
            f"{r['policy_seconds']:8.1f} {r['accesses'] / max(r['policy_seconds'], 1e-9) / 1e6:9.2f}"
        )
    if not args.keep:
        trace.unlink()
        print(f"deleted {trace}")


if __name__ == "__main__":
    main()
