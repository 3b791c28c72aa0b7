"""Wall time and peak memory of a command's whole process tree (Linux).

Runs the command, and every ``--interval`` seconds (0.1 by default) sums the resident set size of
it and of every process below it (read from ``/proc/PID/stat`` and ``/proc/PID/statm``); prints
the wall time, the CPU time (user + system) of the tree's processes that were waited for (all of
them, when the command waits for its own children), the peak of that sum, the largest RSS any one
process reached, the number of processes seen and the load average before the start, one line (or
JSON with ``--json``).
``--repeats N`` runs the command N times and prints each run and the medians.

    python benches/tree_rss.py -- tierlab reproduce --quick -o /tmp/out
    python benches/tree_rss.py --repeats 3 --json runs.json -- tierlab reproduce -o /tmp/out

Cost: one scan of ``/proc`` per sample (a few ms on an idle machine). The sum counts the pages
processes share (the interpreter, the extension) once per process, as ``ps`` does. The command
runs with PR_SET_PDEATHSIG, so it dies with this script even when the script is killed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process now running."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields follow the last ')'
        fields = stat[stat.rindex(b")") + 2 :].split()
        out[int(name)] = int(fields[1])
    return out


def _tree(root: int) -> list[int]:
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo.extend(children.get(pid, ()))
    return seen


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0  # the process ended between the scan and the read


def measure(cmd: list[str], interval: float) -> dict:
    """Runs ``cmd`` once; its wall time, exit code and the peaks of its tree's RSS."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, preexec_fn=_die_with_parent, stdout=subprocess.DEVNULL)
    peak_tree = peak_one = 0
    pids: set[int] = set()
    try:
        while proc.poll() is None:
            tree = _tree(proc.pid)
            sizes = [_rss(p) for p in tree]
            pids.update(tree)
            peak_tree = max(peak_tree, sum(sizes))
            peak_one = max([peak_one, *sizes])
            time.sleep(interval)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_tree_mib": round(peak_tree / 2**20, 1),
        "peak_process_mib": round(peak_one / 2**20, 1),
        "processes": len(pids),
        "load_before": round(load, 2),
        "exit": proc.returncode,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--interval", type=float, default=0.1, help="seconds between samples (default 0.1)")
    p.add_argument("--repeats", type=int, default=1, help="runs of the command (default 1)")
    p.add_argument("--json", help="write every run and the medians to this file")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    args = p.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no command given (put it after --)")
    if args.interval <= 0 or args.repeats < 1:
        p.error("--interval must be > 0 and --repeats >= 1")
    runs = []
    for i in range(args.repeats):
        r = measure(cmd, args.interval)
        runs.append(r)
        print(f"run {i + 1}: " + ", ".join(f"{k} {v}" for k, v in r.items()), flush=True)
        if r["exit"] != 0:
            print(f"the command exited with {r['exit']}", file=sys.stderr)
            return 1
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s", "peak_tree_mib", "peak_process_mib")}
    print("median: " + ", ".join(f"{k} {v}" for k, v in med.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cmd": cmd, "runs": runs, "median": med}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
