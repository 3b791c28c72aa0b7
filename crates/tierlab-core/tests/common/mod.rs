//! Helpers shared by the swap-family tests (`swap_policies.rs`, `mglru.rs`): a
//! sink that records what a policy reports, and a driver that feeds it
//! hand-written references; the eMRAM-swap phone (`capture.rs` too); for the
//! tests that run every registered policy (`determinism.rs`, `huge_capacity.rs`),
//! the machine each one needs; an in-memory trace reader (`flash_mobile.rs`,
//! `hybrid_traces.rs`); and the small phone of the Android tests (`mobile.rs`,
//! `mobile_modern.rs`).
#![allow(dead_code)] // each test binary uses its own subset

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::mobile::Scenario;
use tierlab_core::policy::{Policy, PolicyCtx, PolicySpec};
use tierlab_core::sim::check::{check_policy, make_refs};
use tierlab_core::sim::MAX_TIERS;
use tierlab_core::sim::{PageId, PageOut, PageRef, RefBatch, RefFields, Sink};
use tierlab_core::trace::{Event, Kind, Op, Record, TraceReader};

pub const R: Op = Op::Read;
pub const W: Op = Op::Write;
pub const A: Kind = Kind::Anon;
pub const F: Kind = Kind::File;

/// The fewest memory tiers the policy accepts with its defaults.
pub fn tiers_of(name: &str) -> usize {
    let refs = make_refs(&[(1, false)]);
    (1..=MAX_TIERS)
        .find(|&t| check_policy(&PolicySpec::new(name), 4, t, &refs).is_ok())
        .unwrap_or_else(|| panic!("{name} cannot be built with its defaults"))
}

/// A machine of `tiers` memory tiers: DRAM, then CXL DRAM, PCM, PCM.
pub fn system(tiers: usize) -> System {
    let names = ["dram", "cxl-dram", "pcm", "pcm"];
    let spec = SystemSpec {
        tiers: names[..tiers].iter().map(|s| s.to_string()).collect(),
        ..SystemSpec::default()
    };
    System::resolve(&spec, &DeviceCatalog::default()).unwrap()
}

/// The phone of the eMRAM swap experiments: DRAM, a UFS 3.1 file store and
/// swap on eMRAM, no fetch on a write miss.
pub fn emram_phone() -> System {
    let spec = SystemSpec {
        tiers: vec!["dram".into()],
        file_store: "flash-ufs31".into(),
        swap: Some("emram-swap".into()),
        write_miss_fetch: false,
    };
    System::resolve(&spec, &DeviceCatalog::default()).unwrap()
}

/// 64 MB phone, 16 MB of system, no framework files, eMMC file store: MemTotal
/// 16384 pages, watermarks min/low/high 256/320/384 pages (min_free_kbytes =
/// sqrt(65536 x 16) = 1024 KB). `extra` is appended (more sections/apps).
pub fn small_phone(extra: &str) -> Scenario {
    let text = format!(
        r#"
[phone]
memory_mb = 64
system_mb = 16
system_file_mb = 0
file_store = "emmc-gs2"
{extra}
"#
    );
    Scenario::from_toml_str(&text, "test").unwrap()
}

/// An in-memory trace of 4 KiB pages with named apps.
pub struct VecReader {
    pub recs: Vec<Record>,
    pub names: Vec<String>,
    pub pos: usize,
}

impl VecReader {
    pub fn new(recs: Vec<Record>, names: &[&str]) -> Self {
        VecReader {
            recs,
            names: names.iter().map(|n| n.to_string()).collect(),
            pos: 0,
        }
    }
}

impl TraceReader for VecReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> tierlab_core::Result<bool> {
        let end = (self.pos + max).min(self.recs.len());
        out.extend_from_slice(&self.recs[self.pos..end]);
        self.pos = end;
        Ok(self.pos < self.recs.len())
    }
    fn page_size(&self) -> u32 {
        4096
    }
    fn app_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn format(&self) -> &'static str {
        "vec"
    }
}

pub fn ctx(capacity: usize) -> PolicyCtx {
    PolicyCtx {
        capacity,
        tiers: 1,
        page_size: 4096,
    }
}

/// Records what the policy reports.
#[derive(Default)]
pub struct Rec {
    pub hits: u64,
    pub misses: u64,
    /// (original page, dirty) of each eviction, in order.
    pub evicted: Vec<(u64, bool)>,
    /// Pages of each bulk write-back, when the test expects them (else a
    /// write-back panics).
    pub written: Option<Vec<Vec<u64>>>,
}

impl Sink for Rec {
    fn hit(&mut self, _r: &PageRef, _tier: u8) {
        self.hits += 1;
    }
    fn miss(&mut self, _r: &PageRef, _tier: u8) {
        self.misses += 1;
    }
    fn miss_bypass(&mut self, _r: &PageRef) {
        panic!("no bypass expected")
    }
    fn evict(&mut self, p: PageOut) {
        self.evicted.push((p.page, p.dirty));
    }
    fn write_back(&mut self, pages: &[PageOut]) {
        match &mut self.written {
            Some(w) => w.push(pages.iter().map(|p| p.page).collect()),
            None => panic!("no write-back expected"),
        }
    }
    fn migrate(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {
        panic!("no migration expected")
    }
    fn event(&mut self, _e: &Event) {}
}

/// Feeds `(page, op, kind)` references; page ids are the page numbers.
pub struct Driver<P: Policy> {
    pub p: P,
    pub sink: Rec,
    pub seq: u64,
}

impl<P: Policy> Driver<P> {
    pub fn new(p: P) -> Self {
        let mut p = p;
        p.grow(1 << 15);
        Driver {
            p,
            sink: Rec::default(),
            seq: 0,
        }
    }
    /// One reference at trace time `time`.
    pub fn at(&mut self, page: u64, op: Op, kind: Kind, time: u64) {
        let one = RefBatch::single(
            self.seq,
            RefFields {
                time,
                page,
                id: page as u32,
                app: 0,
                op,
                kind,
                req_start: true,
            },
        );
        self.seq += 1;
        self.p.access(&one.get(0), &mut self.sink);
    }
    /// One reference; trace time is the reference's sequence number.
    pub fn go(&mut self, page: u64, op: Op, kind: Kind) {
        self.at(page, op, kind, self.seq);
    }
    pub fn counter(&self, name: &str) -> u64 {
        self.p.counters().iter().find(|c| c.0 == name).unwrap().1
    }
    pub fn evicted(&self) -> Vec<u64> {
        self.sink.evicted.iter().map(|e| e.0).collect()
    }
}
