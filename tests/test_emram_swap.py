"""The eMRAM swap paper (papers/emram-swap-four-area-clock.md): capture, the Figure 3 sweep on the
shipped captured traces and on the public address traces, and the paper module."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import tierlab
from tierlab import _core
from tierlab.papers import emram_swap as m

from conftest import trace_path


def test_shipped_traces_are_small_and_readable():
    traces = m.shipped_traces()
    assert {t.name.split(".")[0] for t in traces} >= {"sqlite-txn", "python-text", "xz-compress"}
    for t in traces:
        assert t.stat().st_size < 5_000_000
        info = tierlab.info(str(t), limit=200_000)
        assert info["format"] == "tlpages"
        assert info["page_size"] == 4096


def test_quick_reproduction_gives_figure3_and_claims(tmp_path):
    res = m.reproduce(True, tmp_path)
    df = res.tables["figure3_io_time"]
    n_traces = len(m.shipped_traces())
    assert len(df) == n_traces * len(m.SIZES) * len(m.POLICIES)
    assert set(df.memory) == {"5%", "10%", "15%", "20%"}
    # CLOCK is the reference of the relative scale.
    assert (df[df.policy == "clock"].relative_to_clock - 1.0).abs().max() < 1e-12
    assert (df.io_time_ns > 0).all()
    assert res.figures["figure3"].stat().st_size > 10_000
    claims = {c.claim: c for c in res.claims}
    assert claims["average I/O time improvement over CLOCK"].holds
    assert claims["four-area I/O time below CLOCK's (share of workload x memory cells)"].holds


@pytest.mark.parametrize("name", ["gcc", "swim"])
def test_sweep_on_public_address_traces(name):
    """The address traces hold only data references (all Anon): the sweep still yields Figure 3's
    data, and over the sweep the four-area policy spends less I/O time than CLOCK."""
    path = trace_path(f"address/{name}.trace.gz")
    try:
        df = tierlab.run(str(path), policies=list(m.POLICIES), sizes=list(m.SIZES), system=m.SYSTEM, format="addr")
    except _core.ConfigError as e:
        if "unknown trace format" in str(e):
            pytest.skip("this build has no 'addr' trace reader")
        raise
    df["io"] = df.time_file_read_ns + df.time_swap_read_ns + df.time_swap_write_ns
    assert (df.time_file_read_ns == 0).all()
    assert (df.io > 0).all()
    total = df.groupby("policy").io.sum()
    assert total["four-area"] < total["clock"]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_capture_command_end_to_end(tmp_path):
    out = tmp_path / "true.tlp.zst"
    summary = tmp_path / "summary.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tierlab.cli",
            "capture",
            "-q",
            "-o",
            str(out),
            "--limit",
            "50000",
            "--summary",
            str(summary),
            "--",
            "/bin/true",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "50,000 page references" in r.stdout
    info = tierlab.info(str(out))
    assert info["page_refs"] == 50_000
    assert info["file_refs"] > 0 and info["anon_refs"] > 0
    df = tierlab.run(str(out), policies=["clock", "four-area"], sizes=[10], system=m.SYSTEM)
    assert (df.misses > 0).all()

    # No command after '--' is a usage error.
    r = subprocess.run([sys.executable, "-m", "tierlab.cli", "capture", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "give the command" in r.stderr
