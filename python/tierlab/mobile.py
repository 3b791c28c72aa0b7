"""Mobile sessions: apps on a phone, the low-memory killer versus swap.

A thin layer over ``tierlab._core.mobile_run`` (the Rust session simulator in
``tierlab_core::mobile``): it runs a scenario TOML (see ``experiments/android_lmk.toml``)
and returns its records as DataFrames.

    >>> from tierlab import mobile
    >>> r = mobile.run_scenario("experiments/android_lmk.toml", {"swap": {"device": "microsd-class6-paper"}})
    >>> r.launches.groupby("kind").time_ms.mean()
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Union

import pandas as pd

from tierlab import _core

#: Launch kinds, in the order the paper's Figure 2 shows them.
KINDS = ("first", "hot", "cold", "swap", "restart")


@dataclass
class MobileResult:
    """Everything one session yields (one DataFrame per record type)."""

    launches: pd.DataFrame
    kills: pd.DataFrame
    memory: pd.DataFrame
    apps: pd.DataFrame
    totals: dict
    lmk: pd.DataFrame
    minfree_kb: list
    swap_device: str | None
    file_store: str
    overrides: dict = field(default_factory=dict)

    @property
    def page_mb(self) -> float:
        return self.totals["page_size"] / 2**20

    def launch_means(self) -> pd.Series:
        """Mean launch time (ms) per launch kind."""
        return self.launches.groupby("kind").time_ms.mean()


def _frame(rows: list, columns: Iterable[str] = ()) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=list(columns))
    return df


def run_scenario(
    scenario: Union[str, Path],
    overrides: Mapping | None = None,
    devices: Iterable[Union[str, Path]] = (),
    text: bool = False,
    base_dir: Union[str, Path] | None = None,
) -> MobileResult:
    """Runs a scenario file (or TOML text with ``text=True``) with ``overrides`` merged over it.

    ``overrides`` is a nested mapping such as ``{"swap": {"device": "zram-gs2", "swappiness": 100}}``;
    ``devices`` are TOML files of extra ``[[device]]`` tables.
    """
    over = dict(overrides or {})
    raw = _core.mobile_run(
        str(scenario),
        json.dumps(over),
        text,
        None if base_dir is None else str(base_dir),
        [str(d) for d in devices],
    )
    d = json.loads(raw)
    ps = d["totals"]["page_size"]
    mb = ps / 2**20
    launches = _frame(d["launches"], ["step", "t_ms", "app", "kind", "time_ms"])
    kills = _frame(d["kills"], ["step", "t_ms", "app", "killer", "score_adj", "rss_pages"])
    memory = _frame(d["memory"], ["step", "t_ms", "event", "free_pages", "file_pages", "anon_pages"])
    for df, cols in (
        (kills, ["rss_pages", "swap_pages", "free_pages_before", "free_pages_after", "file_pages_before"]),
        (memory, ["free_pages", "file_pages", "anon_pages", "swap_pages", "zram_pages"]),
    ):
        for c in cols:
            if c in df:
                df[c.replace("_pages", "_mb")] = df[c] * mb
    apps = _frame(d["apps"], ["app"])
    lmk = pd.DataFrame(
        [
            {"minfree_kb": kb, "minfree_pages": lv["minfree_pages"], "min_score_adj": lv["min_score_adj"]}
            for kb, lv in zip(d["minfree_kb"], d["lmk"]["levels"], strict=True)
        ]
    )
    return MobileResult(
        launches=launches,
        kills=kills,
        memory=memory,
        apps=apps,
        totals=d["totals"],
        lmk=lmk,
        minfree_kb=d["minfree_kb"],
        swap_device=d["swap_device"],
        file_store=d["file_store"],
        overrides=over,
    )


def minfree_kb(memory_mb: int, display=(480, 800), table: str = "kitkat", **kw) -> list:
    """ProcessList.updateOomLevels: the six LMK minfree levels (KB) of a phone."""
    return list(_core.mobile_minfree(int(memory_mb), int(display[0]), int(display[1]), table, **kw))


def relaunch_ratios(no_swap: MobileResult, with_swap: MobileResult, apps: Iterable[str] | None = None) -> dict:
    """The paper's Figure 2 ratios: mean relaunch time after an LMK kill (no-swap run) and after
    swap-out (swap run), each over the mean "normal" relaunch (hot: the process was still in
    memory, no swap) of the no-swap run. ``apps`` restricts to the experiment's apps."""

    def sel(r: MobileResult, kind: str) -> pd.Series:
        df = r.launches
        if apps is not None:
            df = df[df.app.isin(list(apps))]
        return df[df.kind == kind].time_ms

    hot = sel(no_swap, "hot").mean()
    cold = sel(no_swap, "cold").mean()
    swap = sel(with_swap, "swap").mean()
    return {
        "normal_ms": hot,
        "lmk_ms": cold,
        "swap_ms": swap,
        "lmk_ratio": cold / hot if hot else float("nan"),
        "swap_ratio": swap / hot if hot else float("nan"),
        "first_ms": sel(no_swap, "first").mean(),
    }
