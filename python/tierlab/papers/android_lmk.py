"""Kim, Kwon, Shin: "Performance Study on Swap-Enabled Android Platform" (papers/android-swap-vs-lmk.md).

The paper's experiment (Section 5): on a Samsung Galaxy S2 (1 GB RAM, class-6 microSD as swap),
apps are launched in turn until memory runs out, then launched again. Figure 1: free and used
memory as apps start and the low-memory killer (LMK) frees memory; Figure 2: launch time of a
normal relaunch ("NO LMK": the app was still in memory), of a relaunch after an LMK kill, and of a
relaunch after swap-out (2.68x and 4.17x of a normal launch); Figure 3: pages allocated per app,
large where the relaunch after a kill is slow.

tierlab runs the same experiment in its session simulator (``tierlab_core::mobile``) on
``experiments/android_lmk.toml`` twice, without swap and with swap on the class-6 card, then sweeps
the swap device. The launch-cost model's CPU parameters are calibrated on Figure 2 (see the
scenario file); the device figures and the memory mechanics are not fitted.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from tierlab import _core, data, mobile  # noqa: E402
from tierlab.papers import Claim, PaperResult, android_modern  # noqa: E402
from tierlab.plot import save_figure  # noqa: E402

KEY = "android-lmk"
TITLE = "Swap vs the low-memory killer on Android (Kim, Kwon, Shin; Galaxy S2, class-6 microSD)"

#: The paper's Figure 2 ratios (Section 5.4).
PAPER_LMK_RATIO = 2.68
PAPER_SWAP_RATIO = 4.17
#: Why Figure 2's ratios are no evidence: the launch model's CPU parameters are fitted to them.
CALIBRATED_BY = (
    "the launch model's hot_start_ms, process_start_ms, anon_init_us_per_page, relaunch fractions and "
    "reclaim stall are fitted to Figure 2 (experiments/android_lmk.toml)"
)

#: Swap devices of the sweep: the paper's phone-era ones first, then today's presets when present.
SWEEP_DEVICES = [
    "microsd-class6-paper",
    "microsd-class10-paper",
    "emmc-gs2",
    "zram-gs2",
    "microsd-class6",
    "microsd-class10",
    "emmc",
    "ufs",
    "zram-lzo",
    "zram",
    "emram",
]


def scenario_path() -> Path:
    """The paper's scenario, shipped inside the package (the repository's
    experiments/android_lmk.toml links to it), so the reproduction runs from any directory."""
    return data.scenario("android_lmk")


def experiment_apps(path: Path) -> list[str]:
    """The apps the experiment launches (everything but the home screen)."""
    import tomllib

    with open(path, "rb") as f:
        doc = tomllib.load(f)
    return [a["name"] for a in doc["app"] if a.get("kind", "app") == "app"]


def _relaunches(r: mobile.MobileResult, apps: list[str]) -> pd.DataFrame:
    """Second-round launches of the experiment's apps (kinds other than first)."""
    df = r.launches[r.launches.app.isin(apps) & (r.launches.kind != "first")]
    return df[["app", "kind", "time_ms", "file_read_ms", "swap_read_ms", "anon_init_ms", "reclaim_ms"]]


def figure1(r: mobile.MobileResult, apps: list[str]) -> pd.DataFrame:
    """Memory after each first-round launch and after each LMK kill (the paper's Figure 1)."""
    mem = r.memory
    total_mb = r.totals["total_pages"] * r.page_mb
    rows = []
    first_round_end = r.launches[r.launches.kind == "first"].step.max()
    for _, m in mem[mem.step <= first_round_end].iterrows():
        ev = m.event
        if ev.startswith("launch ") and ev.split(" ", 1)[1] in apps or ev.startswith("lmk kill"):
            rows.append(
                {
                    "step": m.step,
                    "event": ev,
                    "free_mb": m.free_mb,
                    "used_mb": total_mb - m.free_mb,
                    "file_mb": m.file_mb,
                    "anon_mb": m.anon_mb,
                    "running_apps": m.running_apps,
                }
            )
    return pd.DataFrame(rows)


def reproduce(quick: bool, outdir: Path) -> PaperResult:
    outdir.mkdir(parents=True, exist_ok=True)
    path = scenario_path()
    apps = experiment_apps(path)
    res = PaperResult(KEY, TITLE)

    no_swap = mobile.run_scenario(path, {"swap": {"device": "none"}})
    c6 = mobile.run_scenario(path, {"swap": {"device": "microsd-class6-paper"}})
    ratios = mobile.relaunch_ratios(no_swap, c6, apps)

    # Figure 1.
    f1 = figure1(no_swap, apps)
    res.tables["figure1_memory"] = f1
    fig, ax = plt.subplots(figsize=(8, 4))
    x = range(len(f1))
    ax.plot(x, f1.used_mb, marker="o", label="used (MB)")
    ax.plot(x, f1.free_mb, marker="s", label="free (MB)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(
        [e.replace("launch ", "").replace("lmk kill ", "LMK: ") for e in f1.event], rotation=60, ha="right", fontsize=8
    )
    for i, e in enumerate(f1.event):
        if e.startswith("lmk"):
            ax.axvline(i, color="red", alpha=0.2)
    ax.set_ylabel("MB")
    ax.set_title("Figure 1: memory as apps launch; the LMK frees memory (no swap)")
    ax.legend()
    res.figures["figure1"] = save_figure(fig, outdir / "figure1_memory.png")

    # Figure 2: per-app relaunch times, without swap (hot or cold after a kill) and with swap.
    a = _relaunches(no_swap, apps).rename(columns={"kind": "kind_no_swap", "time_ms": "ms_no_swap"})
    b = _relaunches(c6, apps).rename(columns={"kind": "kind_swap", "time_ms": "ms_swap"})
    f2 = a[["app", "kind_no_swap", "ms_no_swap"]].merge(b[["app", "kind_swap", "ms_swap"]], on="app", how="outer")
    res.tables["figure2_relaunch"] = f2
    means = pd.DataFrame(
        [
            {"category": "NO LMK (hot relaunch)", "mean_ms": ratios["normal_ms"], "ratio": 1.0, "paper_ratio": 1.0},
            {
                "category": "after LMK kill (cold)",
                "mean_ms": ratios["lmk_ms"],
                "ratio": ratios["lmk_ratio"],
                "paper_ratio": PAPER_LMK_RATIO,
            },
            {
                "category": "after swap-out (class-6 microSD)",
                "mean_ms": ratios["swap_ms"],
                "ratio": ratios["swap_ratio"],
                "paper_ratio": PAPER_SWAP_RATIO,
            },
        ]
    )
    res.tables["figure2_means"] = means
    # Where the time of each category goes.
    comp = []
    for label, r, kind in (("NO LMK", no_swap, "hot"), ("LMK", no_swap, "cold"), ("swap", c6, "swap")):
        d = _relaunches(r, apps)
        d = d[d.kind == kind]
        comp.append(
            {
                "category": label,
                "fixed_ms": d.time_ms.mean()
                - d[["file_read_ms", "swap_read_ms", "anon_init_ms", "reclaim_ms"]].sum(axis=1).mean(),
                **{c: d[c].mean() for c in ("file_read_ms", "swap_read_ms", "anon_init_ms", "reclaim_ms")},
            }
        )
    res.tables["figure2_components"] = pd.DataFrame(comp)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [2, 1]})
    colors = {"hot": "tab:green", "cold": "tab:orange", "swap": "tab:red"}
    order = [x for x in apps if x in set(f2.app)]
    f2o = f2.set_index("app").loc[order]
    xs = range(len(order))
    ax1.bar(
        [i - 0.2 for i in xs],
        f2o.ms_no_swap,
        width=0.4,
        color=[colors.get(k, "grey") for k in f2o.kind_no_swap],
        edgecolor="black",
        label="no swap",
    )
    ax1.bar(
        [i + 0.2 for i in xs],
        f2o.ms_swap,
        width=0.4,
        color=[colors.get(k, "grey") for k in f2o.kind_swap],
        edgecolor="black",
        hatch="//",
        label="swap (class-6 microSD)",
    )
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(order, rotation=45, ha="right")
    ax1.set_ylabel("relaunch time (ms)")
    ax1.set_title("per app (green hot, orange after LMK kill, red after swap-out)", fontsize=9)
    from matplotlib.patches import Patch

    ax1.legend(
        handles=[
            Patch(facecolor="white", edgecolor="black", label="no swap"),
            Patch(facecolor="white", edgecolor="black", hatch="//", label="swap on the class-6 microSD"),
            *[Patch(facecolor=c, label=k) for k, c in colors.items()],
        ],
        fontsize=8,
    )
    w = 0.35
    ax2.bar([i - w / 2 for i in range(3)], means.ratio, width=w, label="tierlab")
    ax2.bar([i + w / 2 for i in range(3)], means.paper_ratio, width=w, label="paper")
    ax2.set_xticks(range(3))
    ax2.set_xticklabels(["NO LMK", "LMK", "swap"])
    ax2.set_ylabel("relaunch time / normal relaunch")
    ax2.legend(fontsize=8)
    fig.suptitle("Figure 2: launch time after an LMK kill and after swap-out")
    res.figures["figure2"] = save_figure(fig, outdir / "figure2_relaunch.png")

    # Figure 3: pages per app, and the relaunch time after a kill.
    ap = no_swap.apps[no_swap.apps.app.isin(apps)][["app", "anon_pages", "file_pages", "peak_pages", "lmk_kills"]]
    cold = _relaunches(no_swap, apps)
    cold = cold[cold.kind == "cold"][["app", "time_ms"]].rename(columns={"time_ms": "cold_relaunch_ms"})
    f3 = ap.merge(cold, on="app", how="left")
    res.tables["figure3_pages"] = f3
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(f3.app, f3.peak_pages, color=["tab:orange" if k > 0 else "tab:blue" for k in f3.lmk_kills])
    ax.set_ylabel("pages allocated (4 KiB)")
    ax.set_title("Figure 3: pages per app (orange: killed by the LMK)")
    ax.tick_params(axis="x", rotation=45)
    res.figures["figure3"] = save_figure(fig, outdir / "figure3_pages.png")

    # Sweep over swap devices: where does swapping beat killing?
    known = {d["name"] for d in json.loads(_core.devices())} if hasattr(_core, "devices") else set(SWEEP_DEVICES)
    devices = [d for d in SWEEP_DEVICES if d in known]
    if quick:
        devices = [d for d in devices if d in ("microsd-class6-paper", "emmc-gs2", "zram-gs2")]
    rows = []
    for dev in devices:
        r = c6 if dev == "microsd-class6-paper" else mobile.run_scenario(path, {"swap": {"device": dev}})
        rr = mobile.relaunch_ratios(no_swap, r, apps)
        exp = r.launches[r.launches.app.isin(apps)]
        t = r.totals
        rows.append(
            {
                "swap_device": dev,
                "swap_relaunch_ms": rr["swap_ms"],
                "swap_ratio": rr["swap_ratio"],
                "lmk_relaunch_ms": ratios["lmk_ms"],
                "swap_beats_kill": bool(rr["swap_ms"] < ratios["lmk_ms"]),
                "all_launches_ms": exp.time_ms.mean(),
                "lmk_kills": t["lmk_kills"],
                "swap_written_mb": t["swap_bytes_written"] / 2**20,
                "erase_blocks": t["erase_blocks_written"],
                "wear_cycles_per_block": t["wear_cycles_per_block"],
            }
        )
    exp0 = no_swap.launches[no_swap.launches.app.isin(apps)]
    rows.insert(
        0,
        {
            "swap_device": "none (LMK only)",
            "swap_relaunch_ms": float("nan"),
            "swap_ratio": float("nan"),
            "lmk_relaunch_ms": ratios["lmk_ms"],
            "swap_beats_kill": False,
            "all_launches_ms": exp0.time_ms.mean(),
            "lmk_kills": no_swap.totals["lmk_kills"],
            "swap_written_mb": 0.0,
            "erase_blocks": 0.0,
            "wear_cycles_per_block": 0.0,
        },
    )
    sweep = pd.DataFrame(rows)
    res.tables["swap_device_sweep"] = sweep
    fig, ax = plt.subplots(figsize=(8, 4))
    sw = sweep.iloc[1:]
    ax.bar(sw.swap_device, sw.swap_relaunch_ms, color=["tab:green" if b else "tab:red" for b in sw.swap_beats_kill])
    ax.axhline(ratios["lmk_ms"], color="black", ls="--", label="relaunch after an LMK kill (no swap)")
    ax.axhline(ratios["normal_ms"], color="grey", ls=":", label="hot relaunch")
    ax.set_ylabel("mean relaunch after swap-out (ms)")
    ax.set_title("Swap device sweep: green = swapping beats killing")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize=8)
    res.figures["swap_sweep"] = save_figure(fig, outdir / "swap_device_sweep.png")

    # Swappiness (Section 3.2): the paper's 2.6 formula against 3.x get_scan_count, on the class-6 card.
    if not quick:
        srows = []
        for mode in ("swap_tendency", "scan_count"):
            for sw in (0, 60, 100):
                r = mobile.run_scenario(
                    path, {"swap": {"device": "microsd-class6-paper", "mode": mode, "swappiness": sw}}
                )
                rr = mobile.relaunch_ratios(no_swap, r, apps)
                srows.append(
                    {
                        "mode": mode,
                        "swappiness": sw,
                        "swap_relaunch_ms": rr["swap_ms"],
                        "all_launches_ms": r.launches[r.launches.app.isin(apps)].time_ms.mean(),
                        "lmk_kills": r.totals["lmk_kills"],
                        "swap_written_mb": r.totals["swap_bytes_written"] / 2**20,
                    }
                )
        res.tables["swappiness"] = pd.DataFrame(srows)

    # Beyond the paper: a generated day of use (experiments/android_session.toml) on the same phone.
    session = path.with_name("android_session.toml")
    if not quick and session.exists():
        drows = []
        for dev in ["none", *[d for d in devices if d.endswith(("-paper", "-gs2"))]]:
            r = mobile.run_scenario(session, {"swap": {"device": dev}})
            m = r.launch_means()
            drows.append(
                {
                    "swap_device": dev,
                    "mean_launch_ms": r.launches.time_ms.mean(),
                    "cold_ms": m.get("cold", float("nan")),
                    "swap_ms": m.get("swap", float("nan")),
                    "lmk_kills": r.totals["lmk_kills"],
                    "swap_written_mb": r.totals["swap_bytes_written"] / 2**20,
                    "wear_cycles_per_block": r.totals["wear_cycles_per_block"],
                }
            )
        res.tables["generated_session"] = pd.DataFrame(drows)

    # Beyond the paper: the same session on MGLRU + zram + lmkd (papers/android_modern.py).
    modern_tables = android_modern.run(path, apps, quick)
    res.tables.update(modern_tables)
    res.figures["modern_phone"] = android_modern.figure(modern_tables, outdir / "modern_phone.png")

    # Claims.
    kills = no_swap.kills
    first_kill_mb = (kills.free_mb_after - kills.free_mb_before).iloc[0] if not kills.empty else 0.0
    res.claims.append(
        Claim(
            "the LMK kills apps when memory runs out and the freed memory shows up as free (Figure 1)",
            "first LMK event: Naver and the browser killed, +42.5 MB free",
            f"first kills: {', '.join(kills.app.head(2))}; first kill +{first_kill_mb:.1f} MB free",
            word="happens",
            measured=[float(len(kills)), float(first_kill_mb) if len(kills) else 0.0],
        )
    )
    for claim, paper, ratio, detail in (
        (
            "relaunch after an LMK kill is slower than a normal launch (Figure 2)",
            PAPER_LMK_RATIO,
            ratios["lmk_ratio"],
            f"{ratios['lmk_ms']:.0f} vs {ratios['normal_ms']:.0f} ms",
        ),
        (
            "relaunch after swap-out to the class-6 microSD is slower still (Figure 2)",
            PAPER_SWAP_RATIO,
            ratios["swap_ratio"],
            f"{ratios['swap_ms']:.0f} ms",
        ),
    ):
        res.claims.append(
            Claim(
                claim,
                f"{paper}x",
                f"{ratio:.2f}x ({detail})",
                paper=paper,
                tierlab=ratio,
                neutral=1.0,
                unit="x",
                calibrated=True,
                calibrated_by=CALIBRATED_BY,
            )
        )
    with_cold = f3.dropna(subset=["cold_relaunch_ms"])
    # Spearman = Pearson on ranks (no scipy needed).
    corr = with_cold.peak_pages.rank().corr(with_cold.cold_relaunch_ms.rank()) if len(with_cold) > 2 else float("nan")
    res.claims.append(
        Claim(
            "apps whose relaunch after a kill is slowest hold the most pages (Figure 3)",
            "qualitative",
            f"Spearman rank correlation pages vs cold relaunch = {corr:.2f} over {len(with_cold)} apps",
            word="correlates",
            measured=float(corr),
        )
    )
    c10 = sweep[sweep.swap_device == "microsd-class10-paper"]
    if not c10.empty:
        c10r = float(c10.swap_ratio.iloc[0])
        res.claims.append(
            Claim(
                "a class-10 card makes the swap penalty minor (Section 5.4: 'minor', expected)",
                "expected, not measured",
                f"{c10r:.2f}x a normal launch vs {ratios['swap_ratio']:.2f}x on class 6; "
                f"{'beats' if c10r < ratios['lmk_ratio'] else 'still slower than'} a cold start after a kill",
                word="minor",
                measured=(c10r, 1.0),
            )
        )
    beats = sweep[sweep.swap_beats_kill].swap_device.tolist()
    res.claims.append(
        Claim(
            "faster swap devices make swapping beat killing (Section 6, future work)",
            "not measured",
            "swap beats killing on: " + (", ".join(beats) if beats else "none"),
            word="lower",
            measured=(float(sweep.swap_relaunch_ms.min()), float(ratios["lmk_ms"])),
        )
    )
    res.claims.extend(android_modern.claims(modern_tables))
    wear = (
        float(sweep[sweep.swap_device == "microsd-class6-paper"].wear_cycles_per_block.iloc[0])
        if ("microsd-class6-paper" in set(sweep.swap_device))
        else float("nan")
    )
    sessions = 10_000 / wear if wear > 0 else float("inf")
    import tomllib

    with open(path, "rb") as f:
        swap_mb = float(tomllib.load(f).get("swap", {}).get("size_mb", 1024))
    res.notes.append(
        f"Flash wear (Section 1: ~10,000 erase cycles per microSD block): one session writes "
        f"{c6.totals['swap_bytes_written'] / 2**20:.0f} MB of swap = {c6.totals['erase_blocks_written']:.0f} erase "
        f"blocks, {wear:.3g} cycles per block of the {swap_mb:.0f} MB swap area with ideal wear "
        f"leveling: ~{sessions:,.0f} such sessions to wear it out."
    )
    res.notes.append(
        "Normal launch = a relaunch of an app still in memory (the paper's 'NO LMK' bars); "
        f"first launches average {ratios['first_ms']:.0f} ms. What drives the ratios: a cold start after a kill "
        "pays process creation, re-reading its code from eMMC (the page cache was drained before the LMK fired: "
        "it kills only when file pages are below minfree) and rebuilding its heap at a CPU cost per page, so it "
        "grows with the app's size (Figure 3); a relaunch after swap-out pays reads from the microSD for the "
        "pages it touches (1.2 ms per random 4 KiB read, 0.68 ms per page at the paper's 6 MB/s, 8-page "
        "clusters), plus the writes of the pages reclaimed to make room for them (6 MB/s), which a cold start "
        "does not pay because the LMK frees memory at once."
    )
    res.notes.append(
        "Calibrated (not derived): hot_start_ms = 300, process_start_ms = 250, anon_init_us_per_page = 80, "
        "relaunch fractions 0.15 (anon, after Kim & Bahn's hot 15%) / 0.4 (file), reclaim.stall = 0.2. "
        "The device figures come from the presets' cited sources."
    )
    return res
