//! Today's Android in the session simulator (issue 19): zram's freed-memory
//! accounting, zswap in front of a swap device, lmkd in PSI mode, MGLRU as the
//! session's reclaim, and the errors on bad parameters. Hand-worked.

use tierlab_core::device::DeviceCatalog;
use tierlab_core::mobile::lmkd::KillReason;
use tierlab_core::mobile::{run_session, Scenario, Session};

mod common;
use common::small_phone;

fn catalog() -> DeviceCatalog {
    DeviceCatalog::default()
}

/// App `a`: `pages` anon pages, all built at launch; a relaunch touches 25%.
fn app_a(pages: u32) -> String {
    format!(
        "[[app]]\nname = \"a\"\nanon_mb = {}\nfile_mb = 0\nlaunch_anon = 1.0\nrelaunch_anon = 0.25\n",
        pages as f64 / 256.0
    )
}

const LAUNCH_A: &str = "[script]\nsteps = [{op = \"launch\", app = \"a\"}]\n";

/// Launches `a`, swaps all of it out; returns (pages swapped, free pages
/// gained) and the session.
fn swap_all_out(sc: Scenario) -> (u64, i64, Session) {
    let steps = sc.steps().unwrap();
    let mut s = Session::new(sc, &catalog()).unwrap();
    s.apply(&steps[0]).unwrap();
    let before = s.free_pages() as i64;
    let n = s.force_swap_out("a").unwrap();
    (n, s.free_pages() as i64 - before, s)
}

#[test]
fn zram_frees_n_times_one_minus_one_over_r_and_never_more() {
    // r = 4: each page keeps exactly 250/1000 of a page; 1024 pages keep 256
    // pages of pool and free 768 = 1024 (1 - 1/4).
    let swap = "[swap]\ndevice = \"zram\"\nsize_mb = 16\nzram_ratio = 4.0\n";
    let (n, freed, _) = swap_all_out(small_phone(&format!("{swap}{}{LAUNCH_A}", app_a(1024))));
    assert_eq!((n, freed), (1024, 768));
    // r = 3: 334/1000 per page (rounded up), 1024 x 334 = 342,016 -> 343
    // pages of pool: 681 freed, under 1024 x 2/3 = 682.67.
    let swap = "[swap]\ndevice = \"zram\"\nsize_mb = 16\nzram_ratio = 3.0\n";
    let (n, freed, _) = swap_all_out(small_phone(&format!("{swap}{}{LAUNCH_A}", app_a(1024))));
    assert_eq!((n, freed), (1024, 681));
    assert!(freed as f64 <= n as f64 * (1.0 - 1.0 / 3.0));
    // The app's own ratio overrides the scenario's: r = 2 frees half.
    let a = app_a(1024) + "zram_ratio = 2.0\n";
    let (n, freed, _) = swap_all_out(small_phone(&format!("{swap}{a}{LAUNCH_A}")));
    assert_eq!((n, freed), (1024, 512));
    // r = 1 frees nothing.
    let swap = "[swap]\ndevice = \"zram\"\nsize_mb = 16\nzram_ratio = 1.0\n";
    let (n, freed, _) = swap_all_out(small_phone(&format!("{swap}{}{LAUNCH_A}", app_a(1024))));
    assert_eq!((n, freed), (1024, 0));
    // Per-page ratios from the log-normal (mean compressed fraction 1/3):
    // what is freed is exactly what the pool does not hold.
    let swap = "[swap]\ndevice = \"zram\"\nsize_mb = 16\nzram_ratio = 3.0\n\
                [swap.compress]\nmodel = \"lognormal\"\nsigma = 0.8\nseed = 3\n";
    let (n, freed, s) = swap_all_out(small_phone(&format!("{swap}{}{LAUNCH_A}", app_a(1024))));
    assert_eq!(n, 1024);
    let r = s.finish();
    let pool = r.totals.compressed_pool_peak_pages as i64;
    assert_eq!(freed, 1024 - pool);
    // Around 1024 / 3 pages of pool, not the fixed ratio's 342 exactly.
    assert!((300..400).contains(&pool) && pool != 342, "{pool}");
}

#[test]
fn zswap_rejects_when_full_and_writes_back_the_oldest_entries() {
    // Pool limit 1% of 16384 pages = 163 pages, accept at 50% = 81 pages;
    // ratio 2 (half a page per entry). App a has 326 pages, swapped out in
    // page order to slots 0..325: 325 entries fill the pool to 163 pages;
    // the 326th store is rejected (written to the device) and the shrink
    // worker writes back the 163 oldest entries (slots 0..162) until 162
    // entries = 81 pages remain.
    let swap = "[swap]\ndevice = \"emmc-gs2\"\nsize_mb = 16\nzram_ratio = 2.0\npage_cluster = 0\n\
                [swap.zswap]\nenabled = true\nmax_pool_percent = 1\naccept_threshold_percent = 50\n";
    let script =
        "[script]\nsteps = [{op = \"launch\", app = \"a\"}, {op = \"launch\", app = \"a\"}, \
                  {op = \"use\", seconds = 1}]\n";
    let sc = small_phone(&format!("{swap}{}{script}", app_a(326)));
    let steps = sc.steps().unwrap();
    let mut s = Session::new(sc, &catalog()).unwrap();
    s.apply(&steps[0]).unwrap();
    let before = s.free_pages();
    assert_eq!(s.force_swap_out("a").unwrap(), 326);
    // 326 pages left RAM, 81 pages of pool came in.
    assert_eq!(s.free_pages() - before, 326 - 81);
    // The written-back and rejected pages are on the device, the rest not.
    // A relaunch touches 25% = 82 pages (0..81): all written back, read from
    // the device one slot at a time (page_cluster 0).
    s.apply(&steps[1]).unwrap();
    assert_eq!(s.launches()[1].swap_pages_in, 82);
    // Using the app touches everything: slots 163..324 come from the pool.
    s.apply(&steps[2]).unwrap();
    let r = s.finish();
    let z = r.totals.zswap;
    assert_eq!(
        (z.stored, z.rejected, z.written_back, z.pool_loads),
        (325, 1, 163, 162)
    );
    assert_eq!(r.totals.swap_pages_out, 164);
    // Device reads: 82 + the other 82 on the device (82..162 and 325).
    assert_eq!(r.totals.swap_read_requests, 164);
    assert_eq!(r.totals.compressed_pool_peak_pages, 163);
}

/// Apps a, b, c of 12 MB anon each and d of 12 MB, modern oom_score_adj;
/// 8 MB of framework files give reclaim something to scan; 1 ms of stall
/// per page scanned.
fn lmkd_phone(killer: &str) -> Scenario {
    let mut apps = String::new();
    for n in ["a", "b", "c", "d"] {
        apps += &format!("[[app]]\nname = \"{n}\"\nanon_mb = 12\nfile_mb = 0\nlaunch_anon = 1.0\n");
    }
    let text = format!(
        r#"
[phone]
memory_mb = 64
system_mb = 8
system_file_mb = 8
system_file_touch = 0.0
file_store = "emmc-gs2"
[lmk]
killer = "{killer}"
scheme = "modern"
minfree_kb = [1024, 2048, 3072, 4096, 5120, 6144]
[reclaim]
stall = 1.0
scan_ns_per_page = 1000000
{apps}
[script]
steps = [{{op = "launch", app = "a"}}, {{op = "launch", app = "b"}}, {{op = "launch", app = "c"}},
         {{op = "launch", app = "d"}}]
"#
    );
    Scenario::from_toml_str(&text, "test").unwrap()
}

#[test]
fn lmkd_kills_the_oldest_cached_app_once_stall_crosses_the_partial_threshold() {
    // 64 - 8 - 8 = 48 MB for apps: a, b, c (36 MB) fit; d's launch runs
    // reclaim on the framework files; every page scanned stalls the launch
    // 1 ms, so the 70th page scanned within a second is a medium PSI event.
    // Free memory is then under the low watermark: LowMem, kill
    // oom_score_adj >= 701. Levels: d foreground, c previous (700), b and a
    // cached (a the least recent, the highest score): a dies.
    let r = run_session(&lmkd_phone("lmkd"), &catalog()).unwrap();
    let k = &r.kills[0];
    assert_eq!(
        (k.app.as_str(), k.killer.as_str(), k.reason, k.threshold),
        ("a", "lmkd", Some(KillReason::LowMem), 701)
    );
    assert!(k.score_adj >= 701);
    assert_eq!(r.totals.psi_events_medium, 1);
    assert_eq!(r.totals.psi_events_critical, 0);
    assert!(r.totals.psi_some_ms >= 70.0);
    // Before the event, reclaim had scanned 70 pages (70 ms of stall).
    assert!(r.totals.pages_scanned >= 70);
    // Nothing under 701 dies: b is killed only if still short after a.
    assert!(r.kills.iter().all(|k| k.threshold == 701 && k.app != "c"));
}

#[test]
fn with_no_stall_lmkd_waits_and_the_in_kernel_lmk_does_not() {
    // Without stall (scanning is free) no PSI event fires: lmkd never wakes
    // and d's launch is served by dropping framework files (2048 pages
    // cover it), whereas the in-kernel LMK kills by its minfree table as
    // soon as free memory and the 2048 file pages are both under a level:
    // the first is 10 MB (2560 pages), adj 900.
    let minfree = vec![2048, 4096, 6144, 8192, 10240, 12288];
    let mut sc = lmkd_phone("lmkd");
    sc.reclaim.scan_ns_per_page = 0.0;
    sc.lmk.minfree_kb = Some(minfree.clone());
    let r = run_session(&sc, &catalog()).unwrap();
    assert_eq!(r.totals.psi_events_medium, 0);
    assert!(r.kills.is_empty());
    assert!(r.totals.file_pages_dropped > 0);
    let mut sc = lmkd_phone("kernel");
    sc.reclaim.scan_ns_per_page = 0.0;
    sc.lmk.minfree_kb = Some(minfree);
    let r = run_session(&sc, &catalog()).unwrap();
    assert!(r.kills.iter().all(|k| k.killer == "lmk"));
    assert_eq!((r.kills[0].app.as_str(), r.kills[0].threshold), ("a", 900));
}

#[test]
fn lmkd_minfree_fallback_kills_by_the_table_on_an_event() {
    // use_minfree_levels: the old strategy's 70 ms some trigger (low), then
    // the minfree table decides: the first level with free and file memory
    // under its minfree gives the minimum oom_score_adj.
    // At the first event (70 pages scanned) free memory is near the
    // watermarks and the framework files are ~1978 pages: the first level
    // both are under is 10 MB (2560 pages), adj 900.
    let mut sc = lmkd_phone("lmkd");
    sc.lmkd.use_minfree_levels = true;
    sc.lmk.minfree_kb = Some(vec![2048, 4096, 6144, 8192, 10240, 12288]);
    let r = run_session(&sc, &catalog()).unwrap();
    let k = &r.kills[0];
    assert_eq!(
        (k.app.as_str(), k.reason, k.threshold),
        ("a", Some(KillReason::Minfree), 900)
    );
}

#[test]
fn mglru_in_a_session_evicts_file_pages_first_and_no_anon_without_swap() {
    // a: 30 MB anon; b: 12 MB of files read at launch; c: 8 MB anon: 50 MB
    // for 48 MB. With no refaults yet, MGLRU's type controller picks file
    // (the anon side has no refaults to compare), so reclaim drops b's
    // files and swaps nothing, even with a swap device.
    let apps = "[[app]]\nname = \"a\"\nanon_mb = 30\nfile_mb = 0\nlaunch_anon = 1.0\n\
                [[app]]\nname = \"b\"\nanon_mb = 0\nfile_mb = 12\nlaunch_file = 1.0\n\
                [[app]]\nname = \"c\"\nanon_mb = 8\nfile_mb = 0\nlaunch_anon = 1.0\n\
                [script]\nsteps = [{op = \"launch\", app = \"b\"}, {op = \"launch\", app = \"a\"}, \
                {op = \"launch\", app = \"c\"}]\n";
    let text = format!(
        "[lmk]\nenabled = false\n[reclaim]\npolicy = \"mglru\"\n[launch]\nfile_cache_warm = false\n\
         [swap]\ndevice = \"zram\"\nsize_mb = 32\n{apps}"
    );
    let sc = small_phone(&text);
    let steps = sc.steps().unwrap();
    let mut s = Session::new(sc, &catalog()).unwrap();
    for st in &steps {
        s.apply(st).unwrap();
    }
    for i in [0, 5000, 7679] {
        assert_eq!(s.page_state("a", true, i), Some(true), "a's page {i}");
    }
    let r = s.finish();
    assert_eq!(r.totals.swap_pages_out, 0);
    assert!(r.totals.file_pages_dropped > 0);
    assert_eq!(r.totals.oom_kills + r.totals.lmk_kills, 0);
    // Without swap, the same pressure never evicts anon either.
    let text = text.replace("device = \"zram\"", "device = \"none\"");
    let r = run_session(&small_phone(&text), &catalog()).unwrap();
    assert_eq!(r.totals.swap_pages_out, 0);
    assert!(r.totals.file_pages_dropped > 0);
}

#[test]
fn bad_parameters_are_named() {
    let err = |extra: &str| {
        let sc = Scenario::from_toml_str(
            &format!(
                "[phone]\nmemory_mb = 64\nsystem_mb = 16\n{extra}\n{}{LAUNCH_A}",
                app_a(8)
            ),
            "t.toml",
        );
        match sc {
            Err(e) => e.to_string(),
            Ok(sc) => match run_session(&sc, &catalog()) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("accepted: {extra}"),
            },
        }
    };
    let cases = [
        (
            "[swap.zswap]\nenabled = true\n",
            "zswap needs a swap device",
        ),
        (
            "[swap]\ndevice = \"zram\"\n[swap.zswap]\nenabled = true\n",
            "is compressed (zram)",
        ),
        (
            "[swap]\ndevice = \"emmc\"\n[swap.zswap]\nenabled = true\ncompressor = \"emmc\"\n",
            "swap.zswap.compressor",
        ),
        (
            "[swap]\ndevice = \"emmc\"\n[swap.zswap]\nenabled = true\nmax_pool_percent = 0\n",
            "max_pool_percent",
        ),
        (
            "[swap]\ndevice = \"emmc\"\n[swap.zswap]\naccept_threshold_percent = 101\n",
            "accept_threshold_percent",
        ),
        ("[swap.compress]\nsigma = -1.0\n", "swap.compress.sigma"),
        ("[swap.compress]\nmodel = \"gamma\"\n", "unknown variant"),
        (
            "[lmkd]\npsi_partial_stall_ms = 1500.0\n",
            "cannot exceed the window",
        ),
        (
            "[lmkd]\nswap_free_low_percentage = 101\n",
            "swap_free_low_percentage",
        ),
        ("[lmkd]\npsi_window_ms = 0.0\n", "psi_window_ms"),
        ("[lmk]\nkiller = \"userspace\"\n", "unknown variant"),
        ("[reclaim]\npolicy = \"clock\"\n", "unknown variant"),
        ("[reclaim]\nmglru_swappiness = 201\n", "mglru_swappiness"),
        ("[lmkd]\nbogus = 1\n", "unknown field"),
    ];
    for (extra, want) in cases {
        let e = err(extra);
        assert!(e.contains(want), "{extra:?}: {e}");
    }
    let bad_app = Scenario::from_toml_str(
        &format!("{}zram_ratio = 0.5\n{LAUNCH_A}", app_a(8)),
        "t.toml",
    )
    .unwrap();
    let e = run_session(&bad_app, &catalog()).unwrap_err().to_string();
    assert!(e.contains("zram_ratio must be >= 1"), "{e}");
}

#[test]
fn the_compressed_device_file_loads_with_its_cited_speeds() {
    let mut cat = catalog();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/devices/compressed.toml"
    );
    cat.load_toml_file(std::path::Path::new(path)).unwrap();
    // lz4 1.10.0: 675 MB/s compression, 3,850 MB/s decompression per 4 KiB.
    let lz4 = cat.get("zram-lz4-lzbench").unwrap();
    assert!((lz4.write.time_ns(1, false) - 4096.0 / 675e6 * 1e9).abs() < 0.1);
    assert!((lz4.read.time_ns(1, false) - 4096.0 / 3850e6 * 1e9).abs() < 0.1);
    // The phone versions are 10x slower; zstd compresses slower than lz4.
    let gs2 = cat.get("zram-lz4-gs2").unwrap();
    assert!((gs2.write.per_page_ns / lz4.write.per_page_ns - 10.0).abs() < 1e-3);
    let zstd = cat.get("zram-zstd-gs2").unwrap();
    assert!(zstd.write.per_page_ns > gs2.write.per_page_ns);
    for d in [lz4, gs2, zstd] {
        assert_eq!(d.class, tierlab_core::device::DeviceClass::Compressed);
    }
}
