"""Two builds of the extension, A and B, on the cells of ``policies.py`` (each policy on the system
its family needs, the telegram trace and the Zipf trace at 1%, 10% and 30% of the footprint), in
one run: per policy the median ratio B/A of ``policy_seconds`` per cell, and the same ratio between
two workers of build A (A/A), which is the noise this harness sees on this machine.

    python benches/ab.py --a /work/venvs/ab-before/bin/python --b /work/venvs/ab-after/bin/python
    python benches/ab.py --a PY_A --b PY_B --policies wtinylfu lhd --pairs 5 --json ab.json
    python benches/ab.py --a PY_A --b PY_B --a-path /build/a/python --b-path /build/b/python

Each build runs in its own long-lived worker process (the Python interpreter of its venv, or any
interpreter with ``--a-path``/``--b-path`` put first on its ``PYTHONPATH``); every worker converts
each trace to the native format once, into its own temporary directory, and replays from there.
Three workers: A1 and A2 (build A) and B. Each cell (policy x trace x size) runs ``--pairs`` times
the sequence A1, B, A2 or, every other time, A2, B, A1: B is always between two runs of A, and both
B/A1 and A2/A1 see A1 first half of the time. A cell's ratio is the median of its pairs; a
policy's line shows its cells' medians, the lowest and highest pair ratio of any of its cells
(spread), and the highest cell median of A/A. Both builds must make the same decisions: a cell
whose misses differ between the builds is reported.

``slower`` marks a policy with a cell whose B/A median exceeds 1.10 by more than the worst
deviation of an A/A cell median from 1 (over all policies of the run): the done-when of "no policy
more than 10% slower beyond the noise the same harness shows A/A".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from policies import SYSTEMS, cell_args  # noqa: E402


def worker() -> None:
    """One build's process: reads one JSON request a line on stdin, answers one JSON line."""
    import tempfile

    import tierlab

    tmp = tempfile.TemporaryDirectory()
    traces: dict[str, str] = {}
    out = sys.stdout
    sys.stdout = sys.stderr  # anything the library prints stays off the answer channel
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "registry":
                reg = tierlab.policies()
                ans = {"families": dict(zip(reg["name"], reg["family"], strict=True))}
            elif req["op"] == "trace":
                native = Path(tmp.name) / f"{req['name']}.tlt"
                tierlab.convert.convert(tierlab.Trace.of(req["src"]), native)
                traces[req["name"]] = str(native)
                ans = {"path": str(native)}
            else:
                df = tierlab.run(
                    traces[req["trace"]],
                    policies=[req["spec"]],
                    sizes=[req["size"]],
                    system=req["system"],
                    threads=1,
                )
                row = df.iloc[0]
                ans = {"seconds": float(row["policy_seconds"]), "misses": int(row["misses"])}
        except Exception as e:  # noqa: BLE001 - reported to the driver, which names the cell
            ans = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(ans) + "\n")
        out.flush()
    tmp.cleanup()


class Worker:
    def __init__(self, name: str, python: str, path: str | None):
        env = dict(os.environ)
        if path:
            env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
        self.name = name
        self.proc = subprocess.Popen(
            [python, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd="/",  # never import the working tree's python/ by accident
        )

    def ask(self, **req) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.name} exited (code {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--a", default=sys.executable, help="Python interpreter of build A (its venv's bin/python)")
    ap.add_argument("--b", default=sys.executable, help="Python interpreter of build B")
    ap.add_argument("--a-path", help="put first on build A's PYTHONPATH (a directory holding tierlab)")
    ap.add_argument("--b-path", help="put first on build B's PYTHONPATH")
    cell_args(ap)
    ap.add_argument("--pairs", type=int, default=5, help="pairs per cell")
    ap.add_argument("--policies", nargs="+", help="policy specs (default: every registered non-learned policy)")
    ap.add_argument("--json", help="also write every pair as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every cell as it ends")
    args = ap.parse_args()
    if args.worker:
        worker()
        return

    started = time.monotonic()
    a1 = Worker("A1", args.a, args.a_path)
    a2 = Worker("A2", args.a, args.a_path)
    b = Worker("B", args.b, args.b_path)
    workers = [a1, a2, b]
    try:
        fam_a = a1.ask(op="registry")["families"]
        fam_b = b.ask(op="registry")["families"]
        if args.policies:
            specs = args.policies
        else:
            specs = [n for n, f in fam_a.items() if not f.startswith("learned")]
            missing = [n for n in specs if n not in fam_b]
            if missing:
                print(f"not in build B, skipped: {', '.join(missing)}")
            specs = [n for n in specs if n in fam_b]

        def family(spec: str) -> str:
            return fam_a.get(spec.split("(", 1)[0].strip(), "classic")

        traces = []
        for which in args.traces:
            src = args.real if which == "real" else args.zipf
            if which == "real" and not Path(src).exists():
                print(f"{src} not found (set TIERLAB_SHARED): skipping the real trace")
                continue
            for w in workers:
                ans = w.ask(op="trace", name=which, src=src)
                if "error" in ans:
                    raise SystemExit(f"worker {w.name}: converting {src}: {ans['error']}")
            traces.append(which)

        cells = []  # one dict per (policy, trace, size)
        for spec in specs:
            for which in traces:
                for frac in args.fractions:
                    runs: dict[str, list[float]] = {"A1": [], "A2": [], "B": []}
                    misses: dict[str, set[int]] = {"A1": set(), "A2": set(), "B": set()}
                    error = None
                    for k in range(args.pairs):
                        for w in [a1, b, a2] if k % 2 == 0 else [a2, b, a1]:
                            ans = w.ask(op="run", trace=which, spec=spec, size=frac, system=SYSTEMS.get(family(spec)))
                            if "error" in ans:
                                error = f"{w.name}: {ans['error']}"
                                break
                            runs[w.name].append(ans["seconds"])
                            misses[w.name].add(ans["misses"])
                        if error:
                            break
                    if error:
                        print(f"{spec} {which} {frac}: {error}")
                        continue
                    ba = [bs / a for bs, a in zip(runs["B"], runs["A1"], strict=True)]
                    aa = [a2s / a for a2s, a in zip(runs["A2"], runs["A1"], strict=True)]
                    cell = {
                        "policy": spec,
                        "trace": which,
                        "size": frac,
                        "b_over_a": statistics.median(ba),
                        "a_over_a": statistics.median(aa),
                        "b_over_a_pairs": ba,
                        "a_over_a_pairs": aa,
                        "seconds": runs,
                        "same_misses": len(misses["A1"] | misses["B"]) == 1,
                        "misses": sorted(misses["A1"] | misses["B"]),
                    }
                    cells.append(cell)
                    if args.verbose:
                        print(
                            f"  {spec} {which} {frac}: B/A {cell['b_over_a']:.3f} ({min(ba):.2f}-{max(ba):.2f}),"
                            f" A/A {cell['a_over_a']:.3f} ({min(aa):.2f}-{max(aa):.2f}),"
                            f" A {statistics.median(runs['A1']):.3f} s",
                            flush=True,
                        )
    finally:
        for w in workers:
            w.close()

    if not cells:
        raise SystemExit("no cell ran")
    noise = max(abs(c["a_over_a"] - 1) for c in cells)
    bound = 1.10 + noise
    cols = [f"{t}@{f}" for t in traces for f in args.fractions]
    print(
        f"\n{len(cells)} cells, {args.pairs} pairs each, {time.monotonic() - started:.0f} s."
        f" B/A per cell (median of its pairs); A/A: worst cell median {1 + noise:.3f} or {1 - noise:.3f}"
        f" -> slower means a cell above {bound:.3f}"
    )
    print(f"{'policy':22} " + " ".join(f"{c:>11}" for c in cols) + f" {'B/A spread':>11} {'A/A worst':>9}  verdict")
    for spec in specs:
        mine = [c for c in cells if c["policy"] == spec]
        if not mine:
            continue
        by = {f"{c['trace']}@{c['size']}": c for c in mine}
        pairs = [r for c in mine for r in c["b_over_a_pairs"]]
        aa_worst = max(mine, key=lambda c: abs(c["a_over_a"] - 1))["a_over_a"]
        worst = max(c["b_over_a"] for c in mine)
        verdict = "slower" if worst > bound else "ok"
        if not all(c["same_misses"] for c in mine):
            verdict += ", MISSES DIFFER"
        print(
            f"{spec:22} "
            + " ".join(f"{by[c]['b_over_a']:11.3f}" if c in by else f"{'-':>11}" for c in cols)
            + f" {min(pairs):5.2f}-{max(pairs):<5.2f} {aa_worst:9.3f}  {verdict}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"noise": noise, "cells": cells}, indent=1))


if __name__ == "__main__":
    main()
