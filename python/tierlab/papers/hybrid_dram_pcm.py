"""Oh, Kang, Lee, Eom, "Hybrid Main Memory based Buffer Cache Scheme by Using Characteristics of
Mobile Applications" (KIISE 2015; papers/hybrid-dram-pcm-app-aware.md): Figures 4-7.

The paper replays two Nexus 7 traces (trace 1: Chrome in the foreground with Hangouts and Gmail
pushing in the background, 15:1; trace 2: many apps switched between foreground and background,
3:1) through its app-state-aware policy, LRU and 2Q on DRAM+PCM memory with DRAM at 5%, for
memory sizes of 10%-100% of the footprint, and reports overall and foreground hit ratios,
foreground execution time normalised to LRU (Figures 4, 5) and energy normalised to LRU
(Figures 6, 7).

Those traces are not public, so this reproduction uses tierlab's seeded session generator
(``session:preset=browser`` for trace 1, ``session:preset=switching`` for trace 2; see
crates/tierlab-core/src/trace/session_gen.rs for what they model). CLOCK-DWF, the paper's
reference [6], runs beside them.

Cost model (Section 4): DRAM read/write 1, PCM read 2, PCM write 50, a page evicted to storage
1000; foreground time counts the foreground app's memory operations and storage evictions caused
by the foreground app plus foreground pages evicted by background apps (the policies' ``fg_*``
counters). Energy is Table 1's per-bit energies on the policies' own counts of page reads and
writes in DRAM and PCM (memory only and no DRAM refresh, as Section 4 says: all schemes share the
same hybrid memory; storage energy 0). A miss is one page write into its tier (Figure 3: "write a
new page"), plus a read for a read miss; the engine's generic accounting (``total_energy_nj``)
charges a write miss as a fill plus a write and so differs from the paper's count by the write
misses.

The LRU baseline runs over the same hybrid memory (Section 4) with DRAM holding the top of the
LRU stack (a PCM hit migrates up: the paper adds reference counts to LRU "to reduce the overhead
of migrations between DRAM and PCM", Section 3). docs/hybrid.md has the numbers against the
paper's, also against LRU without that promotion, and why they differ.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tierlab.papers import Claim, PaperResult, Sensitivity, progress

KEY = "hybrid-dram-pcm"
TITLE = "App-state-aware buffer cache on hybrid DRAM+PCM memory (Oh et al., KIISE 2015)"

SYSTEM = {
    "tiers": ["dram-ratio", "pcm-ratio"],
    "file_store": "storage-ratio",
    "swap": "storage-ratio",
}
DRAM_RATIO = 0.05
POLICIES = ["app-aware", "hybrid-lru", "hybrid-2q", "clock-dwf"]
LABELS = {"app-aware": "proposed", "hybrid-lru": "LRU", "hybrid-2q": "2QLRU", "clock-dwf": "CLOCK-DWF"}
#: Section 4 time ratios.
T_DRAM, T_PCM_READ, T_PCM_WRITE, T_STORAGE = 1.0, 2.0, 50.0, 1000.0
#: Table 1 energies, nJ per bit, and bits of a 4 KiB page.
NJ_DRAM, NJ_PCM_READ, NJ_PCM_WRITE, PAGE_BITS = 0.1, 0.1, 1.0, 4096 * 8
#: Table 1 PCM endurance.
PCM_ENDURANCE = 1e8

#: trace key -> (generator preset, paper figure numbers, paper's mean fg-time and energy change)
TRACES = {
    "trace1": ("browser", (4, 6), -0.58, -0.22),
    "trace2": ("switching", (5, 7), -0.73, -0.23),
}


def fg_time(df: pd.DataFrame) -> pd.Series:
    """Foreground execution time in the paper's units from the policies' counters."""
    return (
        T_DRAM * (df["ctr_fg_dram_reads"] + df["ctr_fg_dram_writes"])
        + T_PCM_READ * df["ctr_fg_pcm_reads"]
        + T_PCM_WRITE * df["ctr_fg_pcm_writes"]
        + T_STORAGE * df["ctr_fg_storage_evictions"]
    )


def energy_nj(df: pd.DataFrame) -> pd.Series:
    """Memory energy in nJ (Table 1 per bit, whole 4 KiB pages) from the policies' counters."""
    return PAGE_BITS * (
        NJ_DRAM * (df["ctr_dram_reads"] + df["ctr_dram_writes"])
        + NJ_PCM_READ * df["ctr_pcm_reads"]
        + NJ_PCM_WRITE * df["ctr_pcm_writes"]
    )


def sweep(
    preset: str, refs: int, sizes: list[int], policies: list[str] = POLICIES, session: dict | None = None
) -> pd.DataFrame:
    """Runs one generated session through the policies at ``sizes`` (percent of the footprint);
    ``session`` overrides the generator's keys (``bg_share``, ``burst_mean``, ...)."""
    import tierlab

    extra = "".join(f",{k}={v}" for k, v in (session or {}).items())
    trace = f"session:preset={preset},refs={refs},seed=1{extra}"
    df = tierlab.run(
        trace,
        policies=[{"name": p, "dram_ratio": DRAM_RATIO} for p in policies],
        sizes=[f"{s}%" for s in sizes],
        system=SYSTEM,
    )
    out = pd.DataFrame(
        {
            "policy": df["policy"],
            "scheme": df["policy"].map(LABELS),
            "size_pct": df["size"].str.rstrip("%").astype(int),
            "size_pages": df["size_pages"],
            "hit_ratio": df["hit_ratio"],
            "fg_hit_ratio": df["fg_hit_ratio"],
            "fg_time": fg_time(df),
            "energy_nj": energy_nj(df),
            "pcm_writes": df["ctr_pcm_writes"],
            "migrations_up": df["migrations_up"],
            "migrations_down": df["migrations_down"],
            "storage_evictions": df["ctr_storage_evictions"],
            "fg_storage_evictions": df["ctr_fg_storage_evictions"],
            "pcm_wear_max": df["wear_max_page_writes_tier1"],
            "pcm_wear_pages": df["wear_pages_tier1"],
        }
    )
    out["pcm_lifetime_replays"] = PCM_ENDURANCE / out["pcm_wear_max"].where(out["pcm_wear_max"] > 0)
    base = out[out["policy"] == "hybrid-lru"].set_index("size_pct")
    out["fg_time_norm"] = out["fg_time"] / out["size_pct"].map(base["fg_time"])
    out["energy_norm"] = out["energy_nj"] / out["size_pct"].map(base["energy_nj"])
    progress.step()
    return out.sort_values(["policy", "size_pct"]).reset_index(drop=True)


def _plot(df: pd.DataFrame, figs: tuple[int, int], name: str, outdir: Path) -> dict[str, Path]:
    from tierlab.plot import plt, save_figure

    paths = {}
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    panels = [
        ("hit_ratio", "(a) hit ratio"),
        ("fg_hit_ratio", "(b) foreground hit ratio"),
        ("fg_time_norm", "(c) foreground time / LRU"),
    ]
    for i, (col, title) in enumerate(panels):
        ax = axes[i]
        for pol, g in df.groupby("policy"):
            ax.plot(g["size_pct"], g[col], marker="o", label=LABELS[pol])
        ax.set_title(title)
        ax.set_xlabel("memory size (% of footprint)")
    axes[0].legend()
    fig.suptitle(f"Figure {figs[0]} ({name}, generated)")
    paths[f"figure{figs[0]}"] = save_figure(fig, outdir / f"figure{figs[0]}_{name}.png")

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for pol, g in df.groupby("policy"):
        ax.plot(g["size_pct"], g["energy_norm"], marker="o", label=LABELS[pol])
    ax.set_xlabel("memory size (% of footprint)")
    ax.set_ylabel("energy / LRU")
    ax.set_title(f"Figure {figs[1]} ({name}, generated)")
    ax.legend()
    paths[f"figure{figs[1]}"] = save_figure(fig, outdir / f"figure{figs[1]}_{name}.png")
    return paths


#: Sensitivity sweeps (issue 16). The background apps' share of references, which the paper states
#: (trace 1 15:1, trace 2 3:1), from 1/32 to 1/2; at three lengths of a background burst (references
#: in a row, the generator's 40 and a quarter and four times it), which the paper does not state.
SENS_BG_SHARES = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2)
SENS_BURSTS = (10.0, 40.0, 160.0)
PAPER_BG_SHARE = {"trace1": 1 / 16, "trace2": 1 / 4}
#: The probability that an app's stream run revisits one of its last 16 runs (long-distance reuse,
#: which LRU handles badly), for every app: none to nine in ten (the presets use 0.3-0.6). Section 4
#: says the paper's trace 2 has such reuse: its LRU and 2QLRU saturate at 80% of the footprint,
#: the proposed scheme at 40%.
SENS_REVISITS = (0.0, 0.3, 0.6, 0.9)


def sensitivity(preset: str, refs: int, sizes: list[int]) -> pd.DataFrame:
    """The proposed policy's foreground time and energy against LRU's (mean over ``sizes``, in %)
    over background share x burst length, and over the stream revisit probability (the preset's
    background share); one row per session."""
    sessions = [{"bg_share": bg, "burst_mean": burst} for burst in SENS_BURSTS for bg in SENS_BG_SHARES]
    sessions += [{"revisit": r} for r in SENS_REVISITS]
    rows = []
    for session in sessions:
        df = sweep(preset, refs, sizes, ["app-aware", "hybrid-lru"], session=session)
        prop = df[df["policy"] == "app-aware"]
        lru = df[df["policy"] == "hybrid-lru"]
        rows.append(
            {
                "bg_share": session.get("bg_share", float("nan")),
                "burst_mean": session.get("burst_mean", float("nan")),
                "revisit": session.get("revisit", float("nan")),
                "fg_time_pct": 100 * (prop["fg_time_norm"].mean() - 1),
                "energy_pct": 100 * (prop["energy_norm"].mean() - 1),
                "hit_ratio_gain_points": 100 * (prop["hit_ratio"].mean() - lru["hit_ratio"].mean()),
            }
        )
    return pd.DataFrame(rows)


def reproduce(quick: bool, outdir: Path) -> PaperResult:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    refs = 40_000 if quick else 400_000
    sizes = [10, 40, 70, 100] if quick else list(range(10, 101, 10))
    res = PaperResult(KEY, TITLE)
    # A progress step per session replayed: each trace, then its sensitivity sessions.
    progress.expect(len(TRACES) * (1 + len(SENS_BURSTS) * len(SENS_BG_SHARES) + len(SENS_REVISITS)))
    for name, (preset, figs, paper_time, paper_energy) in TRACES.items():
        df = sweep(preset, refs, sizes)
        res.tables[f"{name}_figures{figs[0]}_{figs[1]}"] = df
        res.figures.update(_plot(df, figs, name, outdir))
        prop = df[df["policy"] == "app-aware"]
        lru = df[df["policy"] == "hybrid-lru"].set_index("size_pct")
        t = prop["fg_time_norm"].mean() - 1
        e = prop["energy_norm"].mean() - 1
        wins = int((prop["fg_time_norm"] < 1).sum())
        for claim, paper, ours, detail in (
            (
                f"foreground execution time vs LRU, mean over sizes (Figure {figs[0]}(c))",
                paper_time,
                t,
                f" (lower at {wins} of {len(prop)} sizes)",
            ),
            (f"energy vs LRU, mean over sizes (Figure {figs[1]})", paper_energy, e, ""),
        ):
            res.claims.append(
                Claim(
                    f"{name}: {claim}",
                    f"{paper:+.0%}",
                    f"{ours:+.1%}{detail}",
                    paper=100 * paper,
                    tierlab=100 * ours,
                    unit="%",
                )
            )
        hits = prop.set_index("size_pct")["hit_ratio"]
        worst = (hits - lru["hit_ratio"]).min()
        res.claims.append(
            Claim(
                f"{name}: overall hit ratio never lower than LRU's (Figure {figs[0]}(a))",
                "never lower",
                f"worst difference {worst * 100:+.2f} points",
                word="never lower",
                measured=[(float(hits[k]), float(lru.loc[k, "hit_ratio"])) for k in hits.index],
            )
        )
        res.notes.append(
            f"{name}: PCM wear, most writes to one PCM page: proposed "
            f"{int(prop['pcm_wear_max'].max())}, LRU {int(lru['pcm_wear_max'].max())}, "
            f"CLOCK-DWF {int(df[df['policy'] == 'clock-dwf']['pcm_wear_max'].max())} "
            f"(endurance 10^8: {PCM_ENDURANCE / prop['pcm_wear_max'].max():.3g} replays of the trace "
            "for the proposed policy without wear levelling)."
        )
    # Sensitivities (issue 16, scope 3).
    for name, (preset, figs, paper_time, paper_energy) in TRACES.items():
        sens = sensitivity(preset, refs, sizes)
        res.tables[f"sensitivity_{name}"] = sens
        grid = sens.dropna(subset=["bg_share"])
        rev = sens.dropna(subset=["revisit"])
        for col, paper, claim in (
            (
                "fg_time_pct",
                paper_time,
                f"{name}: foreground execution time vs LRU, mean over sizes (Figure {figs[0]}(c))",
            ),
            ("energy_pct", paper_energy, f"{name}: energy vs LRU, mean over sizes (Figure {figs[1]})"),
        ):
            res.sensitivities.append(
                Sensitivity(
                    claim=claim,
                    parameter="background share of references",
                    points=pd.DataFrame(
                        {"x": grid.bg_share, "figure": grid[col], "series": [f"burst {b:g}" for b in grid.burst_mean]}
                    ),
                    main_series="burst 40",
                    paper_figure=100 * paper,
                    paper_x=PAPER_BG_SHARE[name],
                    stated=True,
                    ours_x=PAPER_BG_SHARE[name],
                    log_x=True,
                    why="1/32-1/2 around the paper's 15:1 and 3:1; bursts of 10, 40 and 160 references (not stated)",
                )
            )
            res.sensitivities.append(
                Sensitivity(
                    claim=claim,
                    parameter="stream revisit probability (every app)",
                    points=pd.DataFrame({"x": rev.revisit, "figure": rev[col]}),
                    paper_figure=100 * paper,
                    why="none to nine in ten (the presets use 0.3-0.6); long-distance reuse, which Section 4 "
                    "says LRU mishandles on the paper's trace 2",
                )
            )
    res.notes.append(
        "Traces are generated (the paper's Nexus 7 traces are not public); time uses the paper's "
        "ratios (DRAM 1, PCM read 2, PCM write 50, storage eviction 1000), energy Table 1's "
        "nJ/bit for 4 KiB pages. Normalised values are per size and then averaged, as in the paper."
    )
    res.notes.append(
        "Why the time gap is smaller than the paper's (58%, 73%): on these sessions the proposed "
        "policy's hit ratios stay within about 1.5 points of LRU's, so its foreground storage "
        "evictions (1000 each, 60-90% of LRU's foreground time below 100% memory) are only a few "
        "percent fewer; the savings come from memory operations (LRU's promotions and demotions "
        "write PCM at 50). The paper's trace 2 saturates at 40% of memory under the proposed policy "
        "and at 80% under LRU, a reuse pattern these generated sessions do not have. Energy: the "
        "proposed policy writes PCM less than LRU, whose every miss demotes a DRAM page into PCM and "
        "every PCM hit migrates up; without that promotion (hybrid-lru with promote=false) LRU's "
        "energy is lower and the gap shrinks (docs/hybrid.md)."
    )
    return res
