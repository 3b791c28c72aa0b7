"""Plots from result DataFrames (the rows of :func:`tierlab.run` or a sweep store).

Each function draws on a matplotlib Axes (created if not given) and returns it, so figures can be
composed; :mod:`tierlab.report` embeds them in an HTML page.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

IO_COMPONENTS = ["file_read", "file_write", "swap_read", "swap_write", "migration"]


def save_figure(fig, path, dpi: int = 110, rect=None):
    """Lays `fig` out (within `rect` if given), writes it to `path` and closes it; returns `path`."""
    if rect is None:
        fig.tight_layout()
    else:
        fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _ax(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4))
    return ax


def miss_ratio_curve(df: pd.DataFrame, ax=None, by: str = "label", x: str = "size_pages", title: str | None = None):
    """Miss ratio against memory size, one line per policy (``by``)."""
    ax = _ax(ax)
    for name, g in df.sort_values(x).groupby(by, sort=False):
        ax.plot(g[x], g["miss_ratio"], marker="o", ms=3, label=str(name))
    ax.set_xlabel("memory size (pages)" if x == "size_pages" else x)
    ax.set_ylabel("miss ratio")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def time_components(df: pd.DataFrame) -> list[str]:
    """Time columns with any non-zero value: device I/O components, then memory tiers."""
    fixed = [f"time_{c}_ns" for c in IO_COMPONENTS if f"time_{c}_ns" in df and df[f"time_{c}_ns"].sum() > 0]
    tiers = [
        c
        for c in df.columns
        if c.startswith("time_")
        and c.endswith(("_read_ns", "_write_ns", "_fill_ns"))
        and c not in fixed
        and not any(c == f"time_{x}_ns" for x in IO_COMPONENTS)
        and df[c].sum() > 0
    ]
    return fixed + tiers


def io_time_bars(
    df: pd.DataFrame, ax=None, by: str = "label", normalize_to: str | None = None, title: str | None = None
):
    """Stacked bars of modeled time per component, one bar per policy (``by``), optionally
    normalised to one policy's total (as the papers' normalized I/O time figures)."""
    ax = _ax(ax)
    comps = time_components(df)
    g = df.groupby(by, sort=False)[comps].sum()
    if normalize_to is not None and normalize_to in g.index:
        g = g / g.loc[normalize_to].sum()
        ax.set_ylabel(f"time normalised to {normalize_to}")
    else:
        g = g / 1e9
        ax.set_ylabel("modeled time (s)")
    bottom = None
    for c in comps:
        ax.bar(g.index.astype(str), g[c], bottom=bottom, label=c.removeprefix("time_").removesuffix("_ns"))
        bottom = g[c] if bottom is None else bottom + g[c]
    ax.legend(fontsize=8)
    ax.tick_params(axis="x", rotation=30)
    if title:
        ax.set_title(title)
    return ax


def energy_bars(df: pd.DataFrame, ax=None, by: str = "label", title: str | None = None):
    """Total modeled energy per policy (J)."""
    ax = _ax(ax)
    g = df.groupby(by, sort=False)["total_energy_nj"].sum() / 1e9
    ax.bar(g.index.astype(str), g.values)
    ax.set_ylabel("energy (J)")
    ax.tick_params(axis="x", rotation=30)
    if title:
        ax.set_title(title)
    return ax


def counters_table(df: pd.DataFrame, by: str = "label") -> pd.DataFrame:
    """Each policy's own counters (``ctr_*`` columns) and the engine's main counters, summed."""
    cols = [
        "hits",
        "misses",
        "evictions",
        "dirty_evictions",
        "file_pages_written",
        "swap_pages_written",
        "migrations_up",
        "migrations_down",
    ] + [c for c in df.columns if c.startswith("ctr_")]
    cols = [c for c in cols if c in df]
    return df.groupby(by, sort=False)[cols].sum()
