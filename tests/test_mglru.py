"""MGLRU beside Linux's two-list reclaim on a phone block trace (docs/mglru.md, "MGLRU and two-list
side by side"): the relations the note states, on the full telegram and cod traces at 10% memory."""

from __future__ import annotations

import json

import pytest

import tierlab

from conftest import trace_path

POLICIES = ["linux-two-list", "mglru", "linux-two-list(file_access='read')", "mglru(file_access='read')"]


def _runs(name: str):
    df = tierlab.run(str(trace_path(f"mobile-block/{name}.csv.gz")), policies=POLICIES, sizes=["10%"])
    df["read"] = df.params.map(lambda p: json.loads(p).get("file_access") == "read")
    return {(r.policy, r.read): r for r in df.itertuples()}


@pytest.mark.parametrize("name", ["telegram_exec", "cod_exec"])
def test_through_page_tables_mglru_and_two_list_are_within_a_third_of_a_point(name):
    r = _runs(name)
    two, mg = r[("linux-two-list", False)], r[("mglru", False)]
    assert abs(two.miss_ratio - mg.miss_ratio) < 0.003
    assert two.swap_pages_read == mg.swap_pages_read == 0  # block traces hold file pages only


def test_through_read_mglru_never_ages_and_loses_to_use_twice_on_cod():
    r = _runs("cod_exec")
    two, mg = r[("linux-two-list", True)], r[("mglru", True)]
    # read() pages join the oldest generation, which never empties: no aging.
    assert mg.ctr_aging == 0
    assert mg.miss_ratio > two.miss_ratio + 0.005


def test_through_read_mglru_beats_two_list_on_telegram():
    r = _runs("telegram_exec")
    two, mg = r[("linux-two-list", True)], r[("mglru", True)]
    assert mg.miss_ratio < two.miss_ratio - 0.01
    assert two.ctr_kept > 10_000
