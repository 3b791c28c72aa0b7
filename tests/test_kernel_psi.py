"""kernel-check's PSI beside the lmkd model: the stall the model prices for a cell's replay
(``tierlab.kernel.psi_model``, ``mobile/lmkd.rs`` ``psi_stall``) and the side-by-side table
(``psi_summary``), on hand-worked cells; no kernel or VM needed."""

from __future__ import annotations

import pandas as pd
import pytest

from tierlab import api
from tierlab import kernel as kc


def _page_ns(device: str, op: str) -> float:
    """One random one-page request of ``device`` from the catalog, ns."""
    d = api.devices().set_index("name").loc[device]
    return float(d[f"{op}.random_setup_ns"] + d[f"{op}.per_page_ns"])


def test_brd_cell_prices_faults_as_some_and_reclaim_as_both():
    # brd swap and the data file on brd are the catalog's dram: 250 ns a page (50 + 200).
    assert _page_ns("dram", "read") == _page_ns("dram", "write") == 250.0
    row = {
        "swap_pages_read": 100,
        "swap_pages_written": 200,
        "file_pages_read": 50,
        "ctr_scanned_anon": 300,
        "ctr_scanned_file": 100,
    }
    # 20 of the 50 file reads are first reads (an unlimited cache makes them too): 30 refaults.
    # some = (100 + 30) x 250 ns + reclaim; reclaim = 200 x 250 ns + 400 scanned x 1 us, all
    # waited for (memory.max reclaim runs in the task): 450 us.
    p = kc.psi_model("brd", row, None, 20)
    assert p == {"some_us": 482.5, "full_us": 450.0}
    # No file reads beyond the first ones, no scan counters (a policy without them): swap only,
    # some = 4 x 250 ns of swap-ins + 8 x 250 ns of swap-outs, full the swap-outs.
    p = kc.psi_model("brd", {"swap_pages_read": 4, "swap_pages_written": 8, "file_pages_read": 7}, None, 7)
    assert p == {"some_us": 3.0, "full_us": 2.0}
    # A policy without them replayed beside one with them: its row has NaN there.
    row = pd.Series(
        {"swap_pages_read": 4, "swap_pages_written": 8, "file_pages_read": 7, "ctr_scanned_anon": float("nan")}
    )
    assert kc.psi_model("brd", row, None, 7) == {"some_us": 3.0, "full_us": 2.0}


def test_zswap_cell_prices_pool_loads_and_stores_with_lzo_and_the_rest_on_brd():
    zs = {"zswap_device_reads": 10, "zswap_pool_loads": 40, "zswap_device_writes": 5, "zswap_stored": 60}
    row = {"swap_pages_read": 50, "swap_pages_written": 65, "file_pages_read": 0}
    lzo_in, lzo_out, brd = _page_ns("zram-lzo", "read"), _page_ns("zram-lzo", "write"), 250.0
    reclaim = 5 * brd + 60 * lzo_out
    p = kc.psi_model("zswap", row, zs, 0)
    assert p["full_us"] == pytest.approx(reclaim / 1e3, rel=1e-12)
    assert p["some_us"] == pytest.approx((10 * brd + 40 * lzo_in + reclaim) / 1e3, rel=1e-12)
    # zram: every swap-out is an lz4 compression, every swap-in a decompression.
    p = kc.psi_model("zram", row, None, 0)
    assert p["some_us"] == pytest.approx((50 * _page_ns("zram", "read") + 65 * _page_ns("zram", "write")) / 1e3)


def test_psi_summary_is_one_row_per_cell_and_policy_with_the_ratio_of_some():
    base = {"swap": "brd", "kernel": 1, "model": 1, "error": 0.0}
    psi = {"psi_some_us": 6000, "psi_full_us": 5000, "model_psi_some_us": 2000.0, "model_psi_full_us": 1000.0}
    df = pd.DataFrame(
        [
            {**base, "cell": "a@16MiB+brd", "policy": "mglru", "metric": m, **psi}
            for m in ("misses", "swap_ins", "swap_outs")
        ]
        + [{**base, "cell": "f@16MiB", "swap": "", "policy": "mglru", "metric": "misses"}]
    )
    s = kc.psi_summary(df)
    assert s.to_dict("records") == [
        {
            "cell": "a@16MiB+brd",
            "swap": "brd",
            "policy": "mglru",
            "kernel some ms": 6.0,
            "kernel full ms": 5.0,
            "model some ms": 2.0,
            "model full ms": 1.0,
            "kernel/model": 3.0,
        }
    ]
    assert kc.psi_summary(df.drop(columns=list(psi))).empty
