"""The kernel check's results side by side: a table of the kernel's count and each policy's
prediction and relative error per cell and metric, grouped error bars against the 5% band, and
an HTML page with both and each cell's parameters (docs/kernel-check.md).

Cost: a pivot of the result rows, and one matplotlib figure per metric.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and metric: the kernel's count, then each policy's prediction and error (NA
    where the policy has no such count: a one-tier policy's promotions)."""
    wide = df.pivot_table(index=["cell", "metric"], columns="policy", values=["model", "error"], sort=False)
    kernel = df.groupby(["cell", "metric"], sort=False)["kernel"].first()
    out = pd.DataFrame({"kernel": kernel})
    for p in df["policy"].unique():
        out[p] = wide[("model", p)].astype("Int64")
        out[f"{p} error"] = wide[("error", p)]
    return out.reset_index()


def psi_summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and policy with a PSI stall on both sides (cells under ``--kernel``): the
    group's memory.pressure *some* and *full* totals and the lmkd model's stall for the same
    references (``tierlab.kernel.psi_model``), in ms, and ``kernel/model``, the ratio of the
    *some* totals. Empty without such cells. The ratio is what may be compared across cells of
    one swap device (docs/kernel-check.md, "PSI beside the lmkd model"), not its value."""
    cols = ["psi_some_us", "psi_full_us", "model_psi_some_us", "model_psi_full_us"]
    if df.empty or not set(cols) <= set(df.columns):
        return pd.DataFrame()
    d = df.dropna(subset=cols).drop_duplicates(["cell", "policy"])
    out = pd.DataFrame(
        {
            "cell": d["cell"],
            "swap": d["swap"],
            "policy": d["policy"],
            "kernel some ms": d["psi_some_us"] / 1e3,
            "kernel full ms": d["psi_full_us"] / 1e3,
            "model some ms": d["model_psi_some_us"] / 1e3,
            "model full ms": d["model_psi_full_us"] / 1e3,
        }
    )
    out["kernel/model"] = out["kernel some ms"] / out["model some ms"]
    return out.reset_index(drop=True)


def error_figure(df: pd.DataFrame, metric: str = "misses"):
    """Grouped bars: each policy's relative error against the kernel, per cell, with the 5% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = df[df["metric"] == metric]
    cells = list(dict.fromkeys(d["cell"]))
    pols = list(dict.fromkeys(d["policy"]))
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(cells) + 2), 4))
    width = 0.8 / max(1, len(pols))
    for j, p in enumerate(pols):
        e = d[d["policy"] == p].set_index("cell")["error"].reindex(cells) * 100
        ax.bar([i + j * width for i in range(len(cells))], e, width, label=p)
    ax.axhspan(-5, 5, color="0.9", zorder=0, label="within 5%")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cells))], cells, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{metric}: (model - kernel) / kernel, %")
    ax.set_title(f"tierlab vs the Linux kernel ({os.uname().release}): {metric}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_report(df: pd.DataFrame, out: str | os.PathLike) -> Path:
    """An HTML page: the error figures, the side-by-side table, and each cell's parameters."""
    import html

    import matplotlib.pyplot as plt

    from tierlab import report

    body = [
        "<p class='note'>Each cell ran against the real kernel in a fresh memory cgroup; the model ran the "
        "same page references at the capacity derived from the cgroup's accounting "
        "(docs/kernel-check.md).</p>"
    ]
    for metric in dict.fromkeys(df["metric"]):
        fig = error_figure(df, metric)
        body.append(f"<h2>{html.escape(metric)}</h2>{report.fig_to_img(fig)}")
        plt.close(fig)
    body.append("<h2>side by side</h2>" + report.table_html(summary(df), max_rows=1000))
    cells = pd.DataFrame(df.attrs.get("cells", []))
    if not cells.empty:
        cells["params"] = cells["params"].map(json.dumps)
        body.append("<h2>cells</h2>" + report.table_html(cells, max_rows=1000))
    path = Path(out)
    path.write_text(report.page("tierlab kernel-check", "\n".join(body)))
    return path
