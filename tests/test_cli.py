"""The command line and the native call's behaviour under Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

import tierlab
from tierlab.cli import main

from conftest import trace_path


def test_mrc_exact_equals_lru_runs(capsys, tmp_path):
    path = trace_path("lirs/sprite.trace.gz")
    out = tmp_path / "mrc.csv"
    assert main(["mrc", str(path), "--points", "12", "-o", str(out)]) == 0
    import pandas as pd

    curve = pd.read_csv(out)
    runs = tierlab.run(path, policies=["lru"], sizes=curve["size_pages"].tolist())
    assert curve["miss_ratio"].tolist() == pytest.approx(runs["miss_ratio"].tolist(), abs=0)


def test_mrc_shards_reports_its_error(capsys):
    path = trace_path("arc/OLTP.lis.zst")
    assert main(["mrc", str(path), "--shards", "0.05", "--compare", "--points", "8"]) == 0
    out = capsys.readouterr().out
    assert "SHARDS vs exact: mean absolute error" in out
    mae = float(out.split("mean absolute error ")[1].split(",")[0])
    assert mae < 0.02


def test_formats_policies_devices_list_everything(capsys):
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for f in ("lirs", "arc", "csv", "oracle", "vscsi", "android", "vfs", "native", "synth"):
        assert f in out
    assert main(["policies", "--json"]) == 0
    names = {p["name"] for p in json.loads(capsys.readouterr().out)}
    assert {"lru", "arc", "lirs", "s3fifo", "four-area", "linux-two-list", "mglru", "nomad", "app-aware"} <= names
    assert main(["devices"]) == 0
    assert "microsd-class6" in capsys.readouterr().out


def test_ctrl_c_interrupts_a_long_native_run_within_a_second():
    code = (
        "import tierlab, sys\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    tierlab.run('zipf:alpha=1.0,pages=1000000,n=2000000000,seed=1', policies=['lru'], sizes=[1000])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True); sys.exit(3)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    time.sleep(1.5)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=5)
    finally:
        proc.kill()
    waited = time.perf_counter() - sent
    assert proc.returncode == 3 and proc.stdout.read().strip() == "interrupted"
    assert waited < 1.0, f"took {waited:.2f} s to stop"
