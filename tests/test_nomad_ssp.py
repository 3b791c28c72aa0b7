"""The NOMAD / SSP paper module: the quick reproduction runs, writes its figures, and the
paper's directions hold; the nomad_bench generator runs through the public API."""

from __future__ import annotations

import pytest

import tierlab
from tierlab import api
from tierlab.papers import load


def test_nomad_bench_trace_through_the_api():
    t = api.Trace(
        "nomad_bench",
        format="nomad_bench",
        options={"working_set": 200, "resident_set": 400, "ops_per_round": 1000, "rounds": 2, "mode": "write"},
    )
    df = tierlab.run(
        t,
        policies=["nomad(fast_pages=180, measure_from=400)", "ssp(fast_pages=180, measure_from=400)"],
        sizes=[436],
        system={"tiers": ["nomad-local-dram", "nomad-remote-dram"]},
    )
    assert list(df["policy"]) == ["nomad", "ssp"]
    assert (df["accesses"] == 400 + 2 * 1000).all()
    # Every page is touched once in the warm-up: 400 first touches, no swapping.
    assert (df["misses"] == 400).all()
    assert (df["ctr_measured_accesses"] == 2000).all()
    # Every shadow ends created, faulted, reclaimed, remapped or still held.
    for _, r in df.iterrows():
        gone = r["ctr_shadow_faults"] + r["ctr_shadow_reclaims"] + r["ctr_shadow_remaps"]
        assert r["ctr_shadow_copies"] == gone + r["ctr_shadow_pages_end"]
    assert df["remaps"].tolist() == df["ctr_shadow_remaps"].tolist()
    with pytest.raises(tierlab._core.ConfigError, match="working_set"):
        tierlab.run(
            api.Trace("nomad_bench", format="nomad_bench", options={"working_set": 10, "resident_set": 5}),
            policies=["nomad"],
            sizes=[100],
            system={"tiers": ["nomad-local-dram", "nomad-remote-dram"]},
        )


def test_quick_reproduction_directions_hold(tmp_path):
    mod = load("nomad-ssp")
    res = mod.reproduce(quick=True, outdir=tmp_path)
    assert {"figure2_mixed", "figure3_write_read", "figure4_shadow_copies", "figure5_bandwidth"} <= set(res.figures)
    for f in res.figures.values():
        assert f.exists() and f.stat().st_size > 1000
    # The paper's directions, from the runs' medians (its words' bounds are the grades' business).
    med = res.tables["runs"].groupby(["mode", "policy"]).median(numeric_only=True)
    for mode in ("write", "mixed"):
        s, n = med.loc[(mode, "ssp")], med.loc[(mode, "nomad")]
        for k in ("shadow_copies", "shadow_faults", "shadow_reclaims"):
            assert s[k] < n[k], (mode, k)
        assert s["bandwidth_mb_s"] >= n["bandwidth_mb_s"], mode
    s, n = med.loc[("read", "ssp")], med.loc[("read", "nomad")]
    assert s["shadow_remaps"] == n["shadow_remaps"] and s["shadow_copies"] == n["shadow_copies"]
    # Every qualitative claim is graded by a word's bound; the numeric ones' directions hold.
    for c in res.claims:
        assert c.numeric or c.bound.startswith(c.word + ": "), c.claim
    assert all(c.holds for c in res.claims if c.numeric), [c.claim for c in res.claims if c.numeric and not c.holds]
    # Every shadow event is counted once under the page's history when the shadow was made, and
    # SSP makes no shadow (so takes no shadow fault) after a dirty fast-tier stay.
    runs = res.tables["runs"]
    shadowing = runs[runs.policy.isin(["nomad", "ssp"])]
    for e, total in (("copies", "shadow_copies"), ("faults", "shadow_faults"), ("reclaims", "shadow_reclaims")):
        by_class = shadowing[[f"{e}_{c}" for c in mod.SHADOW_CLASSES]].sum(axis=1)
        assert (by_class == shadowing[total]).all(), e
    ssp = shadowing[shadowing.policy == "ssp"]
    assert (ssp["copies_after_dirty"] == 0).all() and (ssp["faults_after_dirty"] == 0).all()
    nomad = shadowing[(shadowing.policy == "nomad") & (shadowing["mode"] == "write")]
    assert (nomad["copies_after_dirty"] > 0).all()
    assert (shadowing["shadow_fault_pages"] <= shadowing["shadow_faults"]).all()
    hist = res.tables["shadow_history"]
    assert set(hist["event"]) == set(mod.SHADOW_EVENTS) and "after a dirty stay" in " ".join(res.notes)
    t1 = res.tables["table1_nomad_faults_reclaims"]
    # Table 1's shape: NOMAD reclaims far more shadows than write faults free.
    assert (t1["tierlab_reclaims"] > 10 * t1["tierlab_faults"]).all()
