"""Every value a person types gets a right answer or one clear line.

A table of hostile values (zero, negatives, NaN, infinities, huge numbers, fractions, empty
text, binary files, unknown names, strings where lists are expected, control bytes) walks every
command and public function: each gets a right answer, or one line on stderr (exit 2 for a usage
error, 1 for bad data) and, from Python, one of tierlab's exception classes with the same text.
Property-based tests (Hypothesis) cover the size, count and policy-spec grammars. Everything
runs on a small generated trace or tiny files: seconds in CI.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import unicodedata
from io import StringIO
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import tierlab
from tierlab import _core, cli, values
from tierlab.errors import ConfigError, TierlabError, TierlabOSError, TraceFormatError

#: A small generated trace: 20,000 references over 2,000 pages.
GEN = "zipf:alpha=0.9,pages=2000,n=20000,seed=1"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    out = {
        "binary": d / "binary.csv",
        "escape": d / "escape.txt",
        "long": d / "long.txt",
        "empty": d / "empty.txt",
        "binary_toml": d / "binary.toml",
    }
    out["binary"].write_bytes(bytes(range(256)) * 64)
    out["binary_toml"].write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 10)
    out["escape"].write_bytes(b"abc\x1b[31mRED\x07 x y\n")
    out["long"].write_bytes(b"1" * (3 << 20) + b"\n")
    out["empty"].write_bytes(b"")
    return out


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err and "panicked" not in err and "\x1b" not in err and "\x07" not in err
    return lines[0]


# (arguments, exit code, words the line must hold). {binary} and friends are the files above.
CLI_CASES = [
    (["run", GEN, "-s", "0"], 2, ["'0'", "at least 1"]),
    (["run", GEN, "-s", "0.5"], 2, ["0.5", "not a whole number of pages", "50%", "2MiB"]),
    (["run", GEN, "-s", "1.5"], 2, ["'1.5' is not a whole number of pages:"]),
    (["run", GEN, "-s", "-3"], 2, ["-3"]),
    (["run", GEN, "-s", "nan"], 2, ["nan"]),
    (["run", GEN, "-s", "inf"], 2, ["inf"]),
    (["run", GEN, "-s", "nan%"], 2, ["nan%"]),
    (["run", GEN, "-s", "150%"], 2, ["150%", "(0%, 100%]"]),
    (["run", GEN, "-s", ""], 2, ["''"]),
    (["run", GEN, "-s", "4XB"], 2, ["unknown unit"]),
    (["run", GEN, "-s", "100B"], 2, ["less than one page"]),
    (["run", GEN, "-s", "1e400"], 2, ["1e400"]),
    (["run", GEN, "-s", str(2**61)], 2, ["largest size"]),
    (["run", GEN, "--threads", "-3"], 2, ["--threads", "-3", "whole number >= 1"]),
    (["run", GEN, "--threads", "0"], 2, ["--threads"]),
    (["run", GEN, "--threads", "1.5"], 2, ["--threads"]),
    (["run", GEN, "--limit", "-3"], 2, ["--limit", "-3"]),
    (["run", GEN, "--limit", "nan"], 2, ["--limit", "nan"]),
    (["run", GEN, "-p", "nosuch"], 2, ["unknown policy 'nosuch'"]),
    (["run", GEN, "-p", "lru("], 2, ["lru("]),
    (["run", GEN, "-f", "nosuchformat"], 2, ["nosuchformat"]),
    (["run", "{binary}", "-q"], 1, ["binary.csv"]),
    (["run", "/nonexistent/trace.csv", "-q"], 1, ["/nonexistent/trace.csv"]),
    (["info", "{escape}"], 1, ["escape.txt", "byte 0x1b"]),
    (["run", GEN, "-p", "lru\x1b[31m\x07"], 2, ["unknown policy 'lru\\x1b[31m\\x07'"]),
    (["info", "{long}"], 1, ["long.txt:line 1", "longer than 1 MiB"]),
    (["info", "{empty}"], 1, ["empty.txt"]),
    (["info", GEN, "--limit", "0"], 2, ["--limit"]),
    (["mrc", GEN, "--points", "1000000000000"], 2, ["--points", "10,000"]),
    (["mrc", GEN, "--points", "0"], 2, ["--points"]),
    (["mrc", GEN, "--shards", "2"], 2, ["--shards", "(0, 1]"]),
    (["reproduce", "nosuchpaper"], 2, ["unknown paper 'nosuchpaper'"]),
    (["reproduce", "--jobs", "-3"], 2, ["--jobs", "-3"]),
    (["kernel-check", "--limit", "0"], 2, ["--limit", "'0'"]),
    (["kernel-check", "--scale", "nan"], 2, ["--scale", "nan", "a number > 0"]),
    (["kernel-check", "--scale", "-1"], 2, ["--scale", "-1"]),
    (["kernel-check", "--max-refs", "1.5"], 2, ["--max-refs", "1.5"]),
    (["kernel-check", "--seed", "-1"], 2, ["--seed", "-1"]),
    (["capture", "--sample", "2", "-o", "x.tlt", "--", "true"], 2, ["--sample", "'2'"]),
    (["capture", "--skip", "-1", "-o", "x.tlt", "--", "true"], 2, ["--skip", "-1"]),
    (["report", "{binary}"], 1, ["binary.csv"]),
    (["sweep", "{binary_toml}"], 2, ["binary.toml", "not a TOML text file"]),
    (["sweep", "{binary_toml}", "--workers", "0"], 2, ["--workers"]),
    (["mobile", "experiments/android_lmk.toml", "--set", "phone.memory_mb=1e18"], 2, ["memory_mb", "1 TiB"]),
    (["devices", "--devices", "{binary}"], 1, ["binary.csv"]),
    (["convert", GEN, "out.txt"], 2, ["out.txt"]),
    (["nosuchcommand"], 2, ["nosuchcommand"]),
]


@pytest.mark.parametrize(("argv", "code", "words"), CLI_CASES, ids=[" ".join(c[0])[:60] for c in CLI_CASES])
def test_every_command_answers_a_hostile_value_with_one_line(argv, code, words, files, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent.parent)
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse usage errors
        rc = e.code
    line = one_line_error(capsys)
    assert rc == code, line
    for w in words:
        assert w in line, line


def test_a_size_beyond_the_footprint_hits_after_the_first_touch():
    """-p opt -s 1000000000, -p arc -s 10^12 and 10^18 pages: the footprint's worth of misses."""
    info = tierlab.info(GEN)
    df = tierlab.run(GEN, policies=["opt", "arc", "lru"], sizes=[1_000_000_000, 10**12, 10**18])
    assert (df["misses"] == info["distinct_pages"]).all()
    assert list(df["size_pages"]) == [1_000_000_000, 10**12, 10**18] * 3


def test_an_object_cache_beyond_the_footprint_hits_after_the_first_touch():
    """Object-size mode, 10^18 bytes: every policy with an object-size mode (W-TinyLFU's sketch
    is sized by the capacity and capped) misses only on first requests."""
    from conftest import trace_path

    path = trace_path("libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    names = [p["name"] for p in json.loads(_core.policies()) if p["object_sizes"]]
    df = tierlab.run(path, policies=names, sizes=[10**18], object_sizes=True, limit=20_000)
    import numpy as np

    batch = next(iter(tierlab.Trace.of(path).batches()))
    distinct = len(np.unique(batch["page"][batch["event"] == 255][:20_000]))
    assert (df["misses"] == distinct).all(), df[["policy", "misses"]]


# (keyword arguments of tierlab.run, exception class or None, words of its message)
API_CASES = [
    ({"policies": "lru"}, None, []),
    ({"sizes": "10%"}, None, []),
    ({"sizes": 0.25}, None, []),
    ({"policies": []}, ConfigError, ["policies", "empty"]),
    ({"sizes": []}, ConfigError, ["sizes", "empty"]),
    ({"sizes": ["0.5"]}, ConfigError, ["'0.5' is not a whole number of pages", "50%"]),
    ({"sizes": [0]}, ConfigError, ["at least 1"]),
    ({"sizes": [-1]}, ConfigError, ["-1"]),
    ({"sizes": [1.5]}, ConfigError, ["1.5"]),
    ({"sizes": [math.nan]}, ConfigError, ["nan"]),
    ({"sizes": [math.inf]}, ConfigError, ["inf"]),
    ({"sizes": [None]}, ConfigError, ["None"]),
    ({"sizes": [True]}, ConfigError, ["True"]),
    ({"sizes": [b"10"]}, ConfigError, ["b'10'"]),
    ({"sizes": [[1]]}, ConfigError, ["list"]),
    ({"sizes": [10**19]}, ConfigError, ["largest size"]),
    ({"sizes": ["\x1b[31m5\x07"]}, ConfigError, ["\\x1b[31m5\\x07"]),
    ({"sizes": ["9" * 5000]}, ConfigError, ["more characters"]),
    ({"policies": ["nosuch"]}, ConfigError, ["unknown policy"]),
    ({"policies": [5]}, ConfigError, ["unknown policy '5'"]),
    ({"policies": [{"name": "clock", "bits": math.nan}]}, ConfigError, ["bits = nan is not a finite number"]),
    ({"threads": 0}, ConfigError, ["threads"]),
    ({"threads": -1}, ConfigError, ["threads"]),
    ({"threads": "x"}, ConfigError, ["threads"]),
    ({"threads": True}, ConfigError, ["threads"]),
    ({"limit": -3}, ConfigError, ["limit"]),
    ({"limit": 1.5}, ConfigError, ["limit"]),
    ({"limit": math.nan}, ConfigError, ["limit"]),
    ({"system": {"tiers": ["nosuchdevice"]}}, ConfigError, ["nosuchdevice"]),
    ({"system": {"tiers": "dram"}}, ConfigError, []),
]


@pytest.mark.parametrize(("kwargs", "exc", "words"), API_CASES, ids=[repr(c[0])[:60] for c in API_CASES])
def test_run_answers_a_hostile_value_with_its_own_exception(kwargs, exc, words):
    args = {"policies": ["lru"], "sizes": ["10%"], "limit": 5000} | kwargs
    if exc is None:
        df = tierlab.run(GEN, **args)
        assert len(df) == 1 and df["misses"].iloc[0] > 0
        return
    with pytest.raises(exc) as e:
        tierlab.run(GEN, **args)
    text = str(e.value)
    assert isinstance(e.value, TierlabError) and isinstance(e.value, ValueError)
    assert "\n" not in text and "\x1b" not in text and len(text) < 700, text
    for w in words:
        assert w in text, text


def test_the_other_public_functions_raise_tierlab_errors(files):
    with pytest.raises(TierlabOSError) as e:
        tierlab.info("/nonexistent/trace.csv")
    assert isinstance(e.value, OSError)
    with pytest.raises(TraceFormatError):
        tierlab.info(str(files["binary"]))
    with pytest.raises(ConfigError):
        tierlab.info(GEN, limit=-3)
    with pytest.raises(ConfigError):
        tierlab.info(GEN, format="nosuchformat")
    with pytest.raises(TierlabError):
        tierlab.devices([str(files["binary"])])
    with pytest.raises(ConfigError, match="unknown paper 'nosuch'"):
        tierlab.reproduce(["nosuch"])
    with pytest.raises(ConfigError, match="unknown paper 'nosuch'"):
        tierlab.reproduce("nosuch")
    assert len(tierlab.policies()) > 40 and len(tierlab.admissions()) > 0
    # Native classes are tierlab's own: the core raises the same classes.
    assert _core.ConfigError is ConfigError and _core.TraceFormatError is TraceFormatError


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_opt_refuses_a_future_larger_than_memory_with_one_line():
    """OPT holds 33 B per reference: with 1 GiB of room left (``ulimit -v``), a trace of 10^12
    references is refused before the allocation that would fail, with the sizes and a --limit."""
    code = (
        "import resource, tierlab\n"
        "vm = int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1]) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))\n"
        "try:\n"
        "    tierlab.run('zipf:alpha=0.9,pages=2000,n=1000000000000,seed=1', policies=['opt'], sizes=[100])\n"
        "except tierlab.ResourceError as e:\n"
        "    assert isinstance(e, MemoryError)\n"
        "    print(e)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    line = proc.stdout.strip()
    assert "\n" not in line and "33 B per page reference" in line and "--limit" in line, line


# ---- property-based tests over the grammars ----

FOOTPRINT = 1000


def _controls(text: str) -> list[str]:
    """The control characters (Unicode category Cc: newline, ESC, BEL, ...) of ``text``."""
    return [c for c in text if unicodedata.category(c) == "Cc"]


def size_of(v):
    return values.parse_size(v, page_size=4096, footprint=lambda: FOOTPRINT)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=30), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.none()))
def test_any_size_is_pages_or_one_line(v):
    try:
        n = size_of(v)
    except ConfigError as e:
        text = str(e)
        assert "\n" not in text and len(text) < 400
        assert not _controls(text), text
        return
    assert isinstance(n, int) and 1 <= n <= values.MAX_SIZE


@given(st.integers(min_value=1, max_value=values.MAX_SIZE))
def test_whole_page_counts_are_themselves(n):
    assert size_of(n) == n == size_of(str(n)) == size_of(f"{n}p") == size_of(f"{n:,}")


@given(st.floats(min_value=0.001, max_value=100))
def test_a_share_is_of_the_footprint(pct):
    n = size_of(f"{pct}%")
    assert 1 <= n <= FOOTPRINT and abs(n - max(1, round(pct * FOOTPRINT / 100))) <= 1


@given(st.integers(min_value=1, max_value=1 << 40), st.sampled_from(["KiB", "MiB", "GiB", "KB", "MB"]))
def test_bytes_with_a_unit_are_whole_pages(n, unit):
    expected = n * values.UNITS[unit.lower()] // 4096
    if expected < 1:
        with pytest.raises(ConfigError, match="less than one page"):
            size_of(f"{n}{unit}")
    else:
        assert size_of(f"{n}{unit}") == expected


@given(st.one_of(st.text(max_size=20), st.integers(), st.floats(), st.booleans()))
def test_any_count_is_a_whole_number_or_one_line(v):
    try:
        n = values.parse_count(v, "--limit")
    except ConfigError as e:
        assert str(e).startswith("--limit ") and "\n" not in str(e)
        return
    assert isinstance(n, int) and n >= 1 and not isinstance(v, bool)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_policy_spec_parses_or_is_one_config_line(text):
    try:
        tierlab.api.parse_policy(text)
    except ConfigError as e:
        assert not _controls(str(e)), str(e)


@given(st.lists(st.text(max_size=15), max_size=4))
def test_any_option_list_parses_or_is_one_config_line(pairs):
    try:
        out = cli.parse_kv(pairs, "--trace-option")
    except ConfigError as e:
        assert "\n" not in str(e)
        return
    assert isinstance(out, dict)


# ---- the terminal: 80 columns, progress, python -m ----


def test_the_run_table_fits_80_columns_with_its_numbers_whole(monkeypatch, tmp_path):
    out, err = StringIO(), StringIO()
    monkeypatch.setattr(cli, "console", Console(width=80, file=out))
    monkeypatch.setattr(cli, "err_console", Console(width=80, file=err))
    csv = tmp_path / "rows.csv"
    argv = ["run", GEN, "-p", "lru", "-p", "arc", "-s", "10%", "-s", "1000000000", "-q", "-o", str(csv)]
    assert cli.main(argv) == 0
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "…" not in text
    import pandas as pd

    df = pd.read_csv(csv)
    for _, r in df.iterrows():
        assert f"{r['misses']:,}" in text and f"{r['hit_ratio']:.4f}" in text and r["label"] in text
    for head in ("policy", "size", "hit ratio", "misses", "total time"):
        assert head in text
    assert "--wide" in err.getvalue() and "-o" in err.getvalue()


def test_python_dash_m_tierlab_is_the_command():
    proc = subprocess.run([sys.executable, "-m", "tierlab", "run", GEN, "-s", "0"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "at least 1" in proc.stderr


def test_no_rust_backtrace_reaches_the_user(files):
    env = dict(os.environ, RUST_BACKTRACE="1")
    code = f"import tierlab; tierlab.run({GEN!r}, policies=['lru'], sizes=[10**18], limit=1000)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_workers_end_with_their_parent_on_sigkill(tmp_path):
    """`tierlab sweep --workers 2` killed with SIGKILL while its two workers replay leaves none."""
    traces = "\n".join(
        f'[[trace]]\npath = "zipf:alpha=0.9,pages=200000,n=400000000,seed={i}"\nlabel = "t{i}"\n' for i in (1, 2)
    )
    exp = tmp_path / "exp.toml"
    exp.write_text(f'name = "orphans"\nsizes = [1000]\n{traces}\n[[policy]]\nname = "lru"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "tierlab", "sweep", str(exp), "--workers", "2", "-q", "--results", str(tmp_path / "r")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def children(pid: int) -> list[int]:
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    stat = Path(f"/proc/{d}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        return out

    try:
        deadline = time.time() + 60
        while len(workers := children(proc.pid)) < 2 and time.time() < deadline:
            time.sleep(0.2)
        assert len(workers) >= 2, "the workers did not start"
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.time() + 10
        while (alive := [w for w in workers if _running(w)]) and time.time() < deadline:
            time.sleep(0.2)
        assert not alive, f"workers {alive} outlived their parent"
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in locals().get("workers", []):
            try:
                os.kill(w, signal.SIGKILL)
            except OSError:
                pass


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
