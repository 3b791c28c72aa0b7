//! The hybrid-memory experiment on a real Android block trace
//! (../shared/traces/mobile-block/telegram_exec.csv.gz): Telegram's threads
//! (grouped by an app-state schedule) are the foreground app, every other
//! process (kernel writeback, f2fs checkpointing, system services) is in the
//! background, as the paper splits processes by oom_adj (Section 4).

use tierlab_core::policy::hybrid::experiment::{mean_ratio, sweep};
use tierlab_core::trace::{info::summarize, open, TraceSpec};

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/traces/mobile-block/telegram_exec.csv.gz"
);

const SCHEDULE: &str = r#"
[[group]]
app = "telegram"
members = ["writeFileQueue", "files_database_", "storageQueue_", "statsSaveQueue",
           "ExoPlayer", "egram.messenger", "decodeQueue", "fileUploadQueue",
           "DispatchQueue", "globalQueue"]

[[state]]
time = 0
app = "telegram"
state = "foreground"
"#;

fn spec() -> TraceSpec {
    assert!(
        tierlab_core::trace::readers::FORMAT_NAMES.contains(&"android"),
        "this test needs the Android block csv reader (format 'android')"
    );
    let dir = std::env::temp_dir().join(format!("tierlab-hybrid-android-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sched = dir.join("telegram.toml");
    std::fs::write(&sched, SCHEDULE).unwrap();
    let mut s = TraceSpec::new(TRACE).with_format("android");
    s.options.insert(
        "schedule".into(),
        toml::Value::String(sched.display().to_string()),
    );
    s
}

#[test]
fn telegram_split_into_foreground_and_background() {
    let spec = spec();
    let info = summarize(open(&spec).unwrap().as_mut(), None).unwrap();
    // The schedule's app comes first, then the trace's other processes.
    assert_eq!(info.apps[0], "telegram");
    assert!(info.apps.len() > 20);
    assert_eq!(info.events, 1);
    let fg = info.refs_per_app[0] as f64 / info.page_refs as f64;
    assert!((0.05..0.5).contains(&fg), "foreground share {fg}");

    let pcts = [10, 40, 70, 100];
    let (cells, _) = sweep(&spec, &["app-aware", "hybrid-lru"], &pcts, 0.05).unwrap();
    let get = |p: &str, pct: u32| {
        cells
            .iter()
            .find(|c| c.policy == p && c.size_pct == pct)
            .unwrap()
    };
    for &pct in &pcts {
        let (a, l) = (get("app-aware", pct), get("hybrid-lru", pct));
        // The paper's claim: less foreground time than LRU.
        assert!(
            a.fg_time < l.fg_time,
            "{pct}%: {} vs {}",
            a.fg_time,
            l.fg_time
        );
        // Background writes (76% of this trace) land in PCM directly, one PCM
        // write per fill; LRU fills DRAM but demotes a DRAM page into PCM on
        // every miss and migrates every PCM hit up, so it writes PCM more and
        // spends more energy (Figures 6-7's claim, Section 4).
        assert!(a.pcm_writes < l.pcm_writes, "{pct}%");
        assert!(a.energy_nj < l.energy_nj, "{pct}%");
        assert!(a.migrations_up < l.migrations_up, "{pct}%");
    }
    assert!(mean_ratio(&cells, "app-aware", "hybrid-lru", |c| c.fg_time) < 0.9);
    assert!(mean_ratio(&cells, "app-aware", "hybrid-lru", |c| c.energy_nj) < 0.8);
    // With memory = footprint nothing is evicted under LRU.
    assert_eq!(get("hybrid-lru", 100).storage_evictions, 0);
}
