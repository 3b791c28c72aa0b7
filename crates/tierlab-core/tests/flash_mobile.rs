//! The BS-CLOCK paper's claims (papers/bs-clock-flash-buffer.md, section 4.2,
//! Tables 4 and 5, Figures 8 and 9) on the Android block traces in
//! ../shared/traces/mobile-block at the paper's 4 MB buffer (1024 x 4 KB
//! pages): against Spatial Clock, BS-CLOCK keeps the hit ratio within 1 %,
//! writes at least as many pages, and takes less modeled flash I/O time, on
//! every trace and on both calibrated microSD presets.
//!
//! The traces are `proces,device,rw_flag,sector,size,timestamp` csv.gz (512-byte
//! sectors), read by the `android` reader: one row is one request of the pages
//! it covers.

use tierlab_core::device::replay::{model_time, read_device_log, save_device_log, CursorMode};
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::accounting::{DeviceRequest, Store};
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::sim::Stats;
use tierlab_core::trace::{Record, TraceSpec};

mod common;
use common::VecReader;

const TRACES: [&str; 3] = ["cod_exec", "telegram_exec", "you_cut_exec"];
const BUFFER_PAGES: usize = 1024; // 4 MB of 4 KB pages (section 4.1)

fn trace_path(name: &str) -> String {
    format!(
        "{}/../../../shared/traces/mobile-block/{name}.csv.gz",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The whole trace, read by the `android` reader (512-byte sectors, 4 KB pages, one request per
/// row), so the pair of policies can be run on the same records.
fn load_android(path: &str) -> Vec<Record> {
    let mut reader = tierlab_core::trace::open(&TraceSpec::new(path)).unwrap();
    assert_eq!(reader.format(), "android");
    assert_eq!(reader.page_size(), 4096);
    tierlab_core::trace::read_all(reader.as_mut()).unwrap()
}

fn system(store: &str) -> System {
    let spec = SystemSpec {
        tiers: vec!["dram".into()],
        file_store: store.into(),
        swap: None,
        write_miss_fetch: false,
    };
    System::resolve(&spec, &DeviceCatalog::default()).unwrap()
}

struct Outcome {
    stats: Stats,
    log: Vec<DeviceRequest>,
}

/// Spatial Clock and BS-CLOCK in one pass, on the Samsung preset, with the
/// after-cache trace recorded.
fn run_pair(recs: &[Record]) -> (Outcome, Outcome) {
    let inst: Vec<InstanceSpec> = ["spatial-clock", "bs-clock"]
        .iter()
        .map(|p| InstanceSpec {
            policy: PolicySpec::new(p),
            capacity: BUFFER_PAGES,
        })
        .collect();
    let mut reader = VecReader::new(recs.to_vec(), &["all"]);
    let opts = RunOptions {
        record_device_log: true,
        ..RunOptions::default()
    };
    let out = run(&mut reader, &inst, &system(SAMSUNG), &opts, &mut |_| Ok(())).unwrap();
    let mut it = out.results.into_iter().map(|r| Outcome {
        stats: r.stats,
        log: r.device_log.unwrap(),
    });
    (it.next().unwrap(), it.next().unwrap())
}

const SAMSUNG: &str = "microsd-samsung-c10";
const SANDISK: &str = "microsd-sandisk-c10";

fn hit_ratio(s: &Stats) -> f64 {
    s.hits_total() as f64 / s.accesses as f64
}

#[test]
fn bs_clock_claims_hold_on_every_mobile_block_trace() {
    let cat = DeviceCatalog::default();
    for name in TRACES {
        let recs = load_android(&trace_path(name));
        let (sc, bs) = run_pair(&recs);
        // Keep the after-cache traces for `tierlab replay-device` (target/tmp).
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mobile_after");
        std::fs::create_dir_all(&dir).unwrap();
        for (o, p) in [(&sc, "spatial-clock"), (&bs, "bs-clock")] {
            save_device_log(&dir.join(format!("{name}_{p}.csv.gz")), &o.log, 4096).unwrap();
            let back = read_device_log(&dir.join(format!("{name}_{p}.csv.gz"))).unwrap();
            assert_eq!(back.requests.len(), o.log.len());
        }
        let (hs, hb) = (hit_ratio(&sc.stats), hit_ratio(&bs.stats));
        let (ws, wb) = (sc.stats.file_pages_written, bs.stats.file_pages_written);
        assert!(ws > 0, "{name}: the buffer must write to flash");
        assert!(
            (hs - hb).abs() <= 0.01 * hs,
            "{name}: hit ratio {hb} not within 1% of {hs}"
        );
        assert!(wb >= ws, "{name}: BS-CLOCK wrote fewer pages");
        assert!(
            bs.stats.fixed[1].ops < sc.stats.fixed[1].ops,
            "{name}: fewer write requests"
        );
        let mean = |s: &Stats| s.fixed[1].pages as f64 / s.fixed[1].ops as f64;
        assert!(
            mean(&bs.stats) > mean(&sc.stats),
            "{name}: larger write requests"
        );
        // The log costed per direction is what the accounting charged.
        let dev = cat.get(SAMSUNG).unwrap();
        for o in [&sc, &bs] {
            let m = model_time(&o.log, Store::File, dev, CursorMode::PerDirection);
            let charged = o.stats.fixed[0].time_ns + o.stats.fixed[1].time_ns;
            assert!((m.total_ns() - charged).abs() <= 1e-9 * charged);
            assert_eq!(m.writes, o.stats.fixed[1].ops);
        }
        for store in [SAMSUNG, SANDISK] {
            let dev = cat.get(store).unwrap();
            for mode in [CursorMode::PerDirection, CursorMode::Shared] {
                let ms = model_time(&sc.log, Store::File, dev, mode);
                let mb = model_time(&bs.log, Store::File, dev, mode);
                println!(
                    "{name} {store} {mode:?}: hit {hs:.4} vs {hb:.4}; pages written {ws} vs {wb}; \
                     write requests {} vs {}; flash I/O {:.2} s vs {:.2} s ({:.1}% less); \
                     write time {:.2} s vs {:.2} s ({:.1}% less)",
                    ms.writes,
                    mb.writes,
                    ms.total_ns() / 1e9,
                    mb.total_ns() / 1e9,
                    100.0 * (1.0 - mb.total_ns() / ms.total_ns()),
                    ms.write_ns / 1e9,
                    mb.write_ns / 1e9,
                    100.0 * (1.0 - mb.write_ns / ms.write_ns),
                );
                assert!(
                    mb.total_ns() < ms.total_ns(),
                    "{name} {store} {mode:?}: BS-CLOCK not faster"
                );
                assert!(mb.write_ns < ms.write_ns);
            }
        }
    }
}
