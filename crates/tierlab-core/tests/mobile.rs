//! The mobile session simulator: LMK table logic, OOM badness, ProcessList's
//! minfree interpolation, reclaim formulas, scripts, and sessions.

use tierlab_core::device::DeviceCatalog;
use tierlab_core::mobile::lmk::{
    cached_slots, compute_minfree_kb, lmk_victim, oom_adj_to_score_adj, oom_badness, oom_victim,
    AdjScheme, Level, LmkTable, MinfreeTable, OomLevelInputs, ProcInfo,
};
use tierlab_core::mobile::reclaim::{scan_weights, swap_tendency};
use tierlab_core::mobile::scenario::{Step, StepOp, UsageModel};
use tierlab_core::mobile::{run_session, LaunchKind, Scenario, Session};

mod common;
use common::small_phone;

fn inputs(mb: i64, w: i64, h: i64) -> OomLevelInputs {
    OomLevelInputs {
        total_mem_mb: mb,
        display_w: w,
        display_h: h,
        mem_lo_mb: 350,
        mem_hi_mb: 700,
        minfree_abs_kb: -1,
        minfree_adj_kb: 0,
    }
}

#[test]
fn minfree_on_a_1gb_kitkat_phone_is_72_to_180_mb() {
    // REFERENCE.md: 72/90/108/126/144/180 MB for adj 0/1/2/3/9/15.
    let want = [72, 90, 108, 126, 144, 180].map(|m| m * 1024);
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Kitkat, &inputs(1024, 480, 800)),
        want
    );
    // The Galaxy S2's MemTotal (835 MB) is past the 700 MB end too.
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Kitkat, &inputs(835, 480, 800)),
        want
    );
    // What ActivityManager writes to the kernel: pages of 4 KiB.
    let t = LmkTable::new(&want, &[0, 1, 2, 3, 9, 15], AdjScheme::Kitkat, 4096).unwrap();
    let pages: Vec<u64> = t.levels.iter().map(|l| l.minfree_pages).collect();
    assert_eq!(pages, [18432, 23040, 27648, 32256, 36864, 46080]);
    let adj: Vec<i32> = t.levels.iter().map(|l| l.min_score_adj).collect();
    assert_eq!(adj, [0, 58, 117, 176, 529, 1000]);
}

#[test]
fn minfree_interpolates_between_the_low_and_high_tables() {
    // 512 MB, 320x480 (the display term is negative, memory decides):
    // scale = (512 - 350) / (700 - 350) = 0.462857 in Java float.
    let got = compute_minfree_kb(MinfreeTable::Kitkat, &inputs(512, 320, 480));
    // By hand: 12288 + 61440 * 0.462857 = 40725.9 -> 40725, and so on. Level 3
    // is 36864 + 92160 * 0.462857 = 79521.0 in exact arithmetic, but Java's
    // float gives 79520.99 and (int) truncates to 79520.
    assert_eq!(got, [40725, 52557, 64389, 79520, 91352, 111715]);
    // At or below 350 MB with a small screen: the low table.
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Kitkat, &inputs(300, 320, 480)),
        [12288, 18432, 24576, 36864, 43008, 49152]
    );
    // A 1280x800 screen takes the high table even with little memory.
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Kitkat, &inputs(400, 1280, 800)),
        [73728, 92160, 110592, 129024, 147456, 184320]
    );
    // The older tables at 1 GB: 48/60/72/84/96/120 MB.
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Jellybean, &inputs(1024, 480, 800)),
        [48, 60, 72, 84, 96, 120].map(|m| m * 1024)
    );
    // minfree_abs rescales so that the last level is the absolute value.
    let mut i = inputs(1024, 480, 800);
    i.minfree_abs_kb = 92160;
    assert_eq!(
        compute_minfree_kb(MinfreeTable::Kitkat, &i),
        [36864, 46080, 55296, 64512, 73728, 92160]
    );
}

#[test]
fn oom_adj_converts_to_oom_score_adj_as_the_kernel_does() {
    assert_eq!(oom_adj_to_score_adj(15), 1000);
    assert_eq!(oom_adj_to_score_adj(9), 529);
    assert_eq!(oom_adj_to_score_adj(7), 411);
    assert_eq!(oom_adj_to_score_adj(1), 58);
    assert_eq!(oom_adj_to_score_adj(0), 0);
    assert_eq!(oom_adj_to_score_adj(-12), -705);
    assert_eq!(oom_adj_to_score_adj(-17), -1000);
    assert_eq!(AdjScheme::Kitkat.score_adj(Level::Previous), 411);
    assert_eq!(AdjScheme::Modern.score_adj(Level::Previous), 700);
    assert_eq!(AdjScheme::Modern.score_adj(Level::Cached(20)), 999);
}

#[test]
fn cached_processes_spread_over_kitkat_slots() {
    assert_eq!(cached_slots(2), [0, 1]);
    assert_eq!(cached_slots(6), [0, 0, 1, 1, 2, 2]);
    assert_eq!(cached_slots(7), [0, 0, 1, 1, 2, 2, 3]);
    let adj: Vec<i32> = (0..6)
        .map(|s| AdjScheme::Kitkat.raw_adj(Level::Cached(s)))
        .collect();
    assert_eq!(adj, [9, 10, 12, 14, 15, 15]);
}

fn kitkat_1gb() -> LmkTable {
    let kb = compute_minfree_kb(MinfreeTable::Kitkat, &inputs(1024, 480, 800));
    LmkTable::new(&kb, &[0, 1, 2, 3, 9, 15], AdjScheme::Kitkat, 4096).unwrap()
}

#[test]
fn lmk_level_depends_on_free_and_file_memory() {
    let t = kitkat_1gb();
    let mb = |m: u64| m * 256; // pages of 4 KiB
                               // Plenty of memory: nothing happens.
    assert_eq!(t.min_score_adj(mb(200), mb(200)), None);
    // Under 180 MB: cached processes at oom_adj 15 (score 1000).
    assert_eq!(t.min_score_adj(mb(170), mb(170)), Some(1000));
    // Under 144 MB: every cached process (oom_adj >= 9, score >= 529).
    assert_eq!(t.min_score_adj(mb(140), mb(140)), Some(529));
    // Under 126 MB: backup and up (oom_adj >= 3), so previous and home too.
    assert_eq!(t.min_score_adj(mb(120), mb(120)), Some(176));
    assert_eq!(t.min_score_adj(mb(100), mb(100)), Some(117));
    assert_eq!(t.min_score_adj(mb(80), mb(80)), Some(58));
    // Under 72 MB: even the foreground app.
    assert_eq!(t.min_score_adj(mb(60), mb(60)), Some(0));
    // Exactly at a level is not below it.
    assert_eq!(t.min_score_adj(mb(180), mb(10)), None);
    // Both free and file memory must be low: a big page cache holds the LMK
    // back (the kernel reclaims it first).
    assert_eq!(t.min_score_adj(mb(10), mb(200)), None);
    assert_eq!(t.min_score_adj(mb(10), mb(130)), Some(529));
}

#[test]
fn lmk_kills_the_highest_adj_then_the_largest() {
    let procs = [
        ProcInfo::resident(0, 0, 50_000),
        ProcInfo::resident(1, 529, 20_000),
        ProcInfo::resident(2, 1000, 10_000),
        ProcInfo::resident(3, 1000, 30_000),
        ProcInfo::resident(4, 411, 90_000),
        ProcInfo::resident(5, 1000, 0), // a zombie with no memory is skipped
    ];
    assert_eq!(lmk_victim(&procs, 1000), Some(3));
    assert_eq!(lmk_victim(&procs, 529), Some(3));
    let without_cached = [
        ProcInfo::resident(0, 0, 50_000),
        ProcInfo::resident(4, 411, 90_000),
        ProcInfo::resident(6, 411, 95_000),
    ];
    assert_eq!(lmk_victim(&without_cached, 529), None);
    assert_eq!(lmk_victim(&without_cached, 176), Some(6));
    assert_eq!(lmk_victim(&without_cached, 0), Some(6));
    // Equal adj and RSS: the first one listed.
    assert_eq!(
        lmk_victim(
            &[ProcInfo::resident(7, 900, 5), ProcInfo::resident(8, 900, 5)],
            0
        ),
        Some(7)
    );
}

#[test]
fn oom_badness_is_rss_swap_pagetables_plus_scaled_adj() {
    let total = 262_144; // 1 GiB of 4 KiB pages, no swap
    let p = ProcInfo {
        id: 0,
        score_adj: 0,
        rss: 10_000,
        swap: 2_000,
        pgtables: 24,
    };
    assert_eq!(oom_badness(&p, total), 12_024);
    // oom_score_adj 500 adds 500 * (262144 / 1000) = 500 * 262 pages.
    assert_eq!(
        oom_badness(
            &ProcInfo {
                score_adj: 500,
                ..p
            },
            total
        ),
        12_024 + 131_000
    );
    // A negative adj can push it to the floor of 1 (still killable)...
    assert_eq!(
        oom_badness(
            &ProcInfo {
                score_adj: -999,
                ..p
            },
            total
        ),
        1
    );
    // ...but -1000 means never.
    assert_eq!(
        oom_badness(
            &ProcInfo {
                score_adj: -1000,
                ..p
            },
            total
        ),
        0
    );
    // Swap entries count: a small resident process with much swapped wins.
    let a = ProcInfo {
        id: 1,
        score_adj: 0,
        rss: 5_000,
        swap: 0,
        pgtables: 10,
    };
    let b = ProcInfo {
        id: 2,
        score_adj: 0,
        rss: 1_000,
        swap: 6_000,
        pgtables: 14,
    };
    assert_eq!(oom_victim(&[a, b], total), Some(2));
    // The adj term dominates a size difference of less than adj * total/1000.
    let c = ProcInfo {
        id: 3,
        score_adj: 100,
        rss: 1_000,
        swap: 0,
        pgtables: 2,
    };
    assert_eq!(oom_victim(&[a, b, c], total), Some(3));
    assert_eq!(
        oom_victim(
            &[ProcInfo {
                score_adj: -1000,
                ..a
            }],
            total
        ),
        None
    );
}

#[test]
fn swap_tendency_reaches_100_at_80_percent_mapped_with_swappiness_60() {
    // Section 3.2: with swappiness 60 and no distress, swap-out starts once
    // 80% of memory is in use (mapped).
    assert_eq!(swap_tendency(80, 12, 60), 100);
    assert!(swap_tendency(79, 12, 60) < 100);
    // Distress grows as reclaim priority drops: at priority 0 always.
    assert_eq!(swap_tendency(0, 0, 0), 100);
    assert_eq!(swap_tendency(50, 2, 60), 25 + 25 + 60);
    // swappiness 100 swaps whenever anything is mapped... even with 0 distress.
    assert!(swap_tendency(0, 12, 100) >= 100);
}

#[test]
fn scan_count_weights_follow_swappiness_and_rotation() {
    // No history: anon:file = (sw+1):(201-sw).
    assert_eq!(scan_weights(60, [0, 0], [0, 0]), (61, 141));
    assert_eq!(scan_weights(100, [0, 0], [0, 0]), (101, 101));
    assert_eq!(scan_weights(0, [0, 0], [0, 0]), (1, 201));
    // File pages that keep getting re-referenced (rotated) push reclaim to anon.
    // ap = 61 * 101 / 1, fp = 141 * 101 / 100 = 142 (integer division).
    let (ap, fp) = scan_weights(60, [100, 100], [0, 99]);
    assert_eq!((ap, fp), (6161, 142));
}

fn catalog() -> DeviceCatalog {
    DeviceCatalog::default()
}

/// A small phone: 64 MB with 16 MB of system; app `a` has 4 MB of anon
/// (1024 pages) built entirely at launch.
fn small_scenario(swap: Option<&str>, page_cluster: u32) -> Scenario {
    let swap_line = swap
        .map(|d| format!("device = \"{d}\""))
        .unwrap_or_default();
    small_phone(&format!(
        r#"
[swap]
{swap_line}
size_mb = 16
page_cluster = {page_cluster}
[[app]]
name = "a"
anon_mb = 4
file_mb = 0
launch_anon = 1.0
relaunch_anon = 0.25
[[app]]
name = "b"
anon_mb = 4
file_mb = 1
[script]
steps = [{{op = "launch", app = "a"}}]
"#
    ))
}

/// A session of `small_scenario` after the script's launch of app `a`, and
/// that launch step (to launch `a` again).
fn after_first_launch(swap: Option<&str>, page_cluster: u32) -> (Session, Step) {
    let sc = small_scenario(swap, page_cluster);
    let launch = sc.steps().unwrap().remove(0);
    let mut s = Session::new(sc, &catalog()).unwrap();
    s.apply(&launch).unwrap();
    (s, launch)
}

#[test]
fn a_swapped_out_app_pages_in_only_what_it_touches() {
    let (mut s, launch) = after_first_launch(Some("microsd-class6-paper"), 0);
    assert_eq!(s.launches()[0].kind, LaunchKind::First);
    assert_eq!(s.launches()[0].anon_pages_built, 1024);
    assert_eq!(s.force_swap_out("a").unwrap(), 1024);
    for i in [0, 255, 256, 1023] {
        assert_eq!(s.page_state("a", true, i), Some(false));
    }
    // Bring it back: a hot relaunch touches 25% of its anon pages.
    s.apply(&launch).unwrap();
    let l = &s.launches()[1];
    assert_eq!(l.kind, LaunchKind::Swap);
    assert_eq!(l.swap_pages_in, 256);
    assert_eq!(l.file_pages_read, 0);
    assert_eq!(l.anon_pages_built, 0);
    for i in [0, 100, 255] {
        assert_eq!(
            s.page_state("a", true, i),
            Some(true),
            "page {i} was touched"
        );
    }
    for i in [256, 500, 1023] {
        assert_eq!(
            s.page_state("a", true, i),
            Some(false),
            "page {i} was not touched"
        );
    }
    // 256 single-page reads from the class-6 card: the first random, the rest
    // continue the previous one (the slots were written in order).
    let dev = catalog().get("microsd-class6-paper").unwrap().read;
    let want = 300.0 + (dev.time_ns(1, false) + 255.0 * dev.time_ns(1, true)) / 1e6;
    assert!((l.time_ms - want).abs() < 1e-6, "{} vs {want}", l.time_ms);
    let r = s.finish();
    assert_eq!(r.totals.swap_pages_out, 1024);
    assert_eq!(r.totals.swap_pages_in, 256);
    assert_eq!(r.totals.swap_readahead_pages, 0);
    assert_eq!(r.totals.swap_read_requests, 256);
    assert_eq!(r.totals.swap_bytes_written, 1024 * 4096);
}

#[test]
fn page_cluster_reads_aligned_windows_of_slots() {
    // page_cluster 3: one read per aligned window of 8 slots; the 256 touched
    // pages sit in 32 whole windows, so nothing untouched comes in.
    let (mut s, launch) = after_first_launch(Some("microsd-class6-paper"), 3);
    s.force_swap_out("a").unwrap();
    s.apply(&launch).unwrap();
    assert_eq!(s.launches()[1].swap_pages_in, 256);
    assert_eq!(s.page_state("a", true, 256), Some(false));
    let r = s.finish();
    assert_eq!(r.totals.swap_read_requests, 32);
    assert_eq!(r.totals.swap_pages_in, 32);
    assert_eq!(r.totals.swap_readahead_pages, 224);
}

#[test]
fn a_resident_app_is_a_hot_start_and_a_killed_one_cold() {
    let (mut s, launch) = after_first_launch(None, 0);
    s.apply(&launch).unwrap();
    let l = &s.launches()[1];
    assert_eq!(l.kind, LaunchKind::Hot);
    assert_eq!(l.time_ms, 300.0);
    // Swapping needs a swap device.
    assert_eq!(s.force_swap_out("a").unwrap(), 0);
}

/// The mean time of the `kind` launches of apps other than the launcher (ms).
fn mean_launch_ms(r: &tierlab_core::mobile::SessionResult, kind: LaunchKind) -> f64 {
    let v: Vec<f64> = r
        .launches
        .iter()
        .filter(|l| l.kind == kind && l.app != "launcher")
        .map(|l| l.time_ms)
        .collect();
    assert!(!v.is_empty(), "{kind:?} launches");
    v.iter().sum::<f64>() / v.len() as f64
}

/// The paper's experiment (experiments/android_lmk.toml).
fn paper(swap: Option<&str>) -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/android_lmk.toml"
    );
    let mut sc = Scenario::from_toml_file(std::path::Path::new(path)).unwrap();
    sc.swap.device = swap.map(str::to_string);
    sc
}

#[test]
fn paper_scenario_lmk_kills_follow_the_table() {
    let sc = paper(None);
    let r = run_session(&sc, &catalog()).unwrap();
    assert!(
        r.totals.lmk_kills >= 3,
        "the phone runs out of memory: {}",
        r.totals.lmk_kills
    );
    assert_eq!(r.totals.oom_kills, 0);
    assert_eq!(r.totals.swap_pages_out, 0);
    for k in &r.kills {
        // The level that fired: the first minfree above both free and file.
        let level = r
            .lmk
            .levels
            .iter()
            .find(|l| {
                k.free_pages_before < l.minfree_pages && k.file_pages_before < l.minfree_pages
            })
            .expect("a kill happens only below a minfree level");
        assert_eq!(k.threshold, level.min_score_adj as i64);
        assert!(k.score_adj >= level.min_score_adj);
        assert!(k.free_pages_after > k.free_pages_before);
    }
    // The first victims are the apps launched first (cached the longest):
    // the paper's Figure 1 shows Naver and the browser killed after The Sims.
    let first: Vec<&str> = r.kills.iter().take(2).map(|k| k.app.as_str()).collect();
    assert_eq!(first, ["browser", "naver"]);
    // Relaunches of killed apps are cold and slower than hot relaunches.
    let mean = |k: LaunchKind| mean_launch_ms(&r, k);
    assert!(mean(LaunchKind::Cold) > 2.0 * mean(LaunchKind::Hot));
}

#[test]
fn paper_scenario_with_class6_swap_swaps_instead_of_killing() {
    let r = run_session(&paper(Some("microsd-class6-paper")), &catalog()).unwrap();
    assert_eq!(r.totals.lmk_kills, 0);
    assert!(r.totals.swap_pages_out > 0 && r.totals.swap_pages_in > 0);
    assert!(r.launches.iter().any(|l| l.kind == LaunchKind::Swap));
    assert!(!r.launches.iter().any(|l| l.kind == LaunchKind::Cold));
    assert_eq!(r.totals.swap_bytes_written, r.totals.swap_pages_out * 4096);
    // 4 MiB erase blocks.
    assert!((r.totals.erase_blocks_written - r.totals.swap_pages_out as f64 / 1024.0).abs() < 1e-9);
}

#[test]
fn swap_relaunch_beats_a_cold_start_only_on_fast_swap() {
    // The paper's conclusion (Figure 2, Section 6): on the class-6 card a
    // swapped-out app relaunches slower than a killed one; a faster device
    // changes that. zram on the same phone must beat killing.
    let mean = mean_launch_ms;
    let lmk = mean(
        &run_session(&paper(None), &catalog()).unwrap(),
        LaunchKind::Cold,
    );
    let c6 = mean(
        &run_session(&paper(Some("microsd-class6-paper")), &catalog()).unwrap(),
        LaunchKind::Swap,
    );
    let zram = mean(
        &run_session(&paper(Some("zram-gs2")), &catalog()).unwrap(),
        LaunchKind::Swap,
    );
    assert!(c6 > lmk, "class 6: swap {c6} vs kill {lmk}");
    assert!(zram < lmk, "zram: swap {zram} vs kill {lmk}");
}

#[test]
fn zram_pool_is_counted_against_ram_and_never_frees_more_than_n_times_one_minus_one_over_r() {
    // Swapping N pages to zram at ratio r keeps at least N / r pages of RAM
    // for the compressed pool, so it frees at most N (1 - 1/r): at every
    // memory sample, zram_pages x r >= swap_pages; the pool is kept in
    // thousandths of a page, rounded up, so it is at most N / 1000 above N / r.
    for ratio in [1.0, 2.5, 3.0] {
        let mut sc = paper(Some("zram-gs2"));
        sc.swap.zram_ratio = ratio;
        let r = run_session(&sc, &catalog()).unwrap();
        assert!(r.totals.swap_pages_out > 0, "ratio {ratio}");
        let mut swapped_some = false;
        for m in &r.memory {
            let n = m.swap_pages as f64;
            let pool = m.zram_pages as f64;
            assert!(
                pool * ratio >= n - 1e-9,
                "ratio {ratio}: {pool} pool pages for {n}"
            );
            assert!(
                pool <= (n / ratio + n / 1000.0).ceil(),
                "ratio {ratio}: {pool} for {n}"
            );
            let freed = n - pool;
            assert!(freed <= n * (1.0 - 1.0 / ratio) + 1e-9);
            swapped_some |= m.swap_pages > 0;
        }
        assert!(swapped_some);
        if ratio == 1.0 {
            // Ratio 1 frees nothing: the pool holds every swapped page.
            assert!(r.memory.iter().all(|m| m.zram_pages == m.swap_pages));
        }
    }
}

#[test]
fn swappiness_modes_both_run_and_zero_swappiness_swaps_less() {
    let mut sc = paper(Some("microsd-class6-paper"));
    sc.swap.mode = tierlab_core::mobile::scenario::SwappinessMode::ScanCount;
    let modern = run_session(&sc, &catalog()).unwrap();
    assert!(modern.totals.swap_pages_out > 0);
    sc.swap.swappiness = 0;
    let zero = run_session(&sc, &catalog()).unwrap();
    assert!(zero.totals.swap_pages_out < modern.totals.swap_pages_out);
}

#[test]
fn csv_scripts_report_file_and_line() {
    let sc = small_scenario(None, 0);
    let ok = sc
        .parse_csv("op,app,seconds\nlaunch,a,\n# c\nuse,,2.5\nhome\n", "s.csv")
        .unwrap();
    assert_eq!(ok.len(), 3);
    assert_eq!(ok[1].op, StepOp::Use);
    assert_eq!(ok[1].seconds, 2.5);
    assert_eq!(ok[2].op, StepOp::Background);
    let e = sc
        .parse_csv("launch,a\nfly,a\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s.csv:line 2") && e.contains("unknown op 'fly'"),
        "{e}"
    );
    let e = sc
        .parse_csv("launch,zz\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 1") && e.contains("unknown app 'zz'") && e.contains("a, b"),
        "{e}"
    );
    let e = sc
        .parse_csv("use,,soon\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("seconds: expected a number"), "{e}");
    let e = sc.parse_csv("launch,,\n", "s.csv").unwrap_err().to_string();
    assert!(e.contains("needs an app"), "{e}");
}

#[test]
fn unknown_keys_and_bad_values_are_named() {
    let e = Scenario::from_toml_str("[phone]\nram_mb = 3\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("ram_mb"), "{e}");
    let mut sc = small_scenario(None, 0);
    sc.swap.swappiness = 150;
    let e = sc.validate().unwrap_err().to_string();
    assert!(e.contains("swap.swappiness"), "{e}");
    let mut sc = small_scenario(None, 0);
    sc.apps[0].relaunch_anon = 1.5;
    assert!(sc
        .validate()
        .unwrap_err()
        .to_string()
        .contains("relaunch_anon"));
    let mut sc = small_scenario(None, 0);
    sc.launch.hot_start_ms = -1.0;
    assert!(sc
        .validate()
        .unwrap_err()
        .to_string()
        .contains("launch.hot_start_ms"));
    let mut sc = small_scenario(None, 0);
    sc.lmk.mem_hi_mb = 100;
    assert!(sc.validate().unwrap_err().to_string().contains("mem_hi_mb"));
    let mut sc = small_scenario(Some("no_such_card"), 0);
    sc.script.steps.clear();
    sc.script.model = Some(UsageModel::default());
    let e = run_session(&sc, &catalog()).err().unwrap().to_string();
    assert!(e.contains("unknown device 'no_such_card'"), "{e}");
}

#[test]
fn generated_sessions_are_deterministic_per_seed() {
    let sc = paper(None);
    let m = UsageModel {
        seed: 7,
        switches: 40,
        ..Default::default()
    };
    let a = sc.generate(&m);
    assert_eq!(a, sc.generate(&m));
    assert_ne!(
        a,
        sc.generate(&UsageModel {
            seed: 8,
            ..m.clone()
        })
    );
    let launches: Vec<usize> = a
        .iter()
        .filter(|s| s.op == StepOp::Launch)
        .map(|s| s.app.unwrap())
        .collect();
    assert_eq!(launches.len(), 40);
    // Only ordinary apps are picked (not the launcher), and the Zipf law
    // favours the first-listed app over the last.
    assert!(launches.iter().all(|&i| sc.apps[i].name != "launcher"));
    let mut many = sc.clone();
    many.script.csv = None;
    many.script.model = Some(UsageModel {
        seed: 3,
        switches: 2000,
        zipf: 1.0,
        ..Default::default()
    });
    let steps = many.steps().unwrap();
    let l: Vec<usize> = steps
        .iter()
        .filter(|s| s.op == StepOp::Launch)
        .map(|s| s.app.unwrap())
        .collect();
    let c = |i: usize| l.iter().filter(|&&x| x == i).count();
    assert!(c(1) > 3 * c(9), "{} vs {}", c(1), c(9));
    // And a generated session runs.
    let r = run_session(&many, &catalog()).unwrap();
    assert_eq!(
        r.launches.iter().filter(|l| l.app != "launcher").count(),
        2000
    );
}

#[test]
fn the_shipped_generated_session_runs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/android_session.toml"
    );
    let sc = Scenario::from_toml_file(std::path::Path::new(path)).unwrap();
    let m = sc.script.model.clone().expect("a generated script");
    let r = run_session(&sc, &catalog()).unwrap();
    let app_launches = r.launches.iter().filter(|l| l.app != "launcher").count();
    assert_eq!(app_launches, m.switches);
    assert!(r.totals.lmk_kills > 0 && r.totals.oom_kills == 0);
    // Every sample's memory adds up: free + file + anon + system <= MemTotal.
    for s in &r.memory {
        assert!(
            s.free_pages + s.file_pages + s.anon_pages + r.totals.system_pages
                <= r.totals.total_pages
        );
    }
}
