"""Self-contained HTML reports: figures embedded as PNG data URIs, tables as HTML."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import pandas as pd

from tierlab import plot

CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{border-bottom:2px solid #444} h2{margin-top:2em;border-bottom:1px solid #aaa}
table{border-collapse:collapse;font-size:0.85em;margin:1em 0} td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#f0f0f0} .ok{color:#070;font-weight:bold} .no{color:#b00;font-weight:bold}
.warn{color:#a60;font-weight:bold} .cal{color:#559;font-style:italic}
img{max-width:100%} .note{color:#555;font-size:0.9em}
"""


def fig_to_img(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def png_to_img(path: str | Path) -> str:
    return f'<img src="data:image/png;base64,{base64.b64encode(Path(path).read_bytes()).decode()}">'


def table_html(df: pd.DataFrame, max_rows: int = 200) -> str:
    return df.head(max_rows).to_html(float_format=lambda v: f"{v:.4g}", border=0)


def page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def results_sections(df: pd.DataFrame) -> str:
    """Miss-ratio curves, normalised time bars, energy and counters, per trace and system."""
    import matplotlib.pyplot as plt

    parts = []
    group_cols = [c for c in ("trace", "system") if c in df]
    groups = df.groupby(group_cols, sort=False) if group_cols else [("all", df)]
    for key, g in groups:
        name = " / ".join(map(str, key)) if isinstance(key, tuple) else str(key)
        parts.append(f"<h2>{html.escape(name)}</h2>")
        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        plot.miss_ratio_curve(g, ax=axes[0], title="miss ratio")
        sizes = sorted(g["size_pages"].unique())
        mid = sizes[len(sizes) // 2]
        at = g[g["size_pages"] == mid]
        base = at["label"].iloc[0]
        plot.io_time_bars(at, ax=axes[1], normalize_to=base, title=f"time by component at {mid:,} pages")
        parts.append(fig_to_img(fig))
        if at["total_energy_nj"].sum() > 0:
            fig, ax = plt.subplots(figsize=(6, 3.5))
            plot.energy_bars(at, ax=ax, title=f"energy at {mid:,} pages")
            parts.append(fig_to_img(fig))
        parts.append("<h3>counters (summed over sizes)</h3>" + table_html(plot.counters_table(g)))
        cols = [
            c
            for c in (
                "label",
                "size",
                "size_pages",
                "hit_ratio",
                "misses",
                "io_time_ns",
                "total_time_ns",
                "total_energy_nj",
            )
            if c in g
        ]
        parts.append("<h3>rows</h3>" + table_html(g[cols]))
    return "\n".join(parts)


def write_results_report(df: pd.DataFrame, out: str | Path, title: str = "tierlab results") -> Path:
    out = Path(out)
    out.write_text(page(title, results_sections(df)))
    return out
