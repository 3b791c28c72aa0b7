//! Flash-aware policies on hand-worked traces (papers/bs-clock-flash-buffer.md):
//! the paper's Figure 4/5 example for Spatial Clock and BS-CLOCK, and each
//! policy's mechanics with exact event sequences.

use std::collections::HashMap;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::flash::bs_clock::{BsClock, BsClockConfig};
use tierlab_core::policy::flash::ccf_lru::CcfLru;
use tierlab_core::policy::flash::cflru::{Cflru, CflruConfig};
use tierlab_core::policy::flash::fab::{Fab, FabConfig};
use tierlab_core::policy::flash::lru_wsr::LruWsr;
use tierlab_core::policy::flash::spatial_clock::SpatialClock;
use tierlab_core::policy::{Policy, PolicyCtx, PolicyDef};
use tierlab_core::sim::{Accounting, PageId, PageOut, PageRef, RefBatch, RefFields, Sink};
use tierlab_core::trace::{Kind, Op};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Hit(u64),
    Miss(u64),
    /// Page and whether it was dirty (written on eviction).
    Evict(u64, bool),
    /// Pages of one bulk write.
    WriteBack(Vec<u64>),
}
use Ev::*;

#[derive(Default)]
struct Rec {
    ev: Vec<Ev>,
}

impl Sink for Rec {
    fn hit(&mut self, r: &PageRef, _tier: u8) {
        self.ev.push(Hit(r.page()));
    }
    fn miss(&mut self, r: &PageRef, _tier: u8) {
        self.ev.push(Miss(r.page()));
    }
    fn miss_bypass(&mut self, r: &PageRef) {
        self.ev.push(Miss(r.page()));
    }
    fn evict(&mut self, p: PageOut) {
        self.ev.push(Evict(p.page, p.dirty));
    }
    fn write_back(&mut self, pages: &[PageOut]) {
        assert!(pages.iter().all(|p| p.dirty), "write_back of a clean page");
        for w in pages.windows(2) {
            assert_eq!(w[1].page, w[0].page + 1, "bulk write not consecutive");
        }
        self.ev
            .push(WriteBack(pages.iter().map(|p| p.page).collect()));
    }
    fn migrate(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {}
}

/// Feeds `(op, page)` references, assigning dense ids in first-seen order.
struct Feeder {
    ids: HashMap<u64, u32>,
    seq: u64,
}

impl Feeder {
    fn new() -> Self {
        Feeder {
            ids: HashMap::new(),
            seq: 0,
        }
    }
    fn feed<P: Policy, S: Sink>(&mut self, p: &mut P, s: &mut S, refs: &[(char, u64)]) {
        for &(op, page) in refs {
            let n = self.ids.len() as u32;
            let id = *self.ids.entry(page).or_insert(n);
            p.grow(self.ids.len());
            let one = RefBatch::single(
                self.seq,
                RefFields {
                    time: self.seq,
                    page,
                    id,
                    app: 0,
                    op: if op == 'W' { Op::Write } else { Op::Read },
                    kind: Kind::File,
                    req_start: true,
                },
            );
            let r = one.get(0);
            self.seq += 1;
            p.access(&r, s);
        }
    }
}

fn ctx(capacity: usize) -> PolicyCtx {
    PolicyCtx {
        capacity,
        tiers: 1,
        page_size: 4096,
    }
}

fn run<P: Policy>(p: &mut P, refs: &[(char, u64)]) -> Vec<Ev> {
    let mut rec = Rec::default();
    Feeder::new().feed(p, &mut rec, refs);
    rec.ev
}

/// Events after the first `skip` references' worth (the warm-up misses).
fn tail(ev: &[Ev], from: usize) -> Vec<Ev> {
    ev[from..].to_vec()
}

fn microsd_system() -> System {
    let spec = SystemSpec {
        tiers: vec!["dram".into()],
        file_store: "microsd-samsung-c10".into(),
        swap: None,
        write_miss_fetch: false,
    };
    System::resolve(&spec, &DeviceCatalog::default()).unwrap()
}

// ---------------------------------------------------------------------------
// The paper's Figure 4/5 example. 4 KB pages are 8 sectors, so the pages at
// logical sectors 16, 24, 32, 40 are pages 2, 3, 4, 5: consecutive. All four
// are dirty and unreferenced and the hand starts at sector 16. Page 6 (sector
// 48) is clean and page 9 (sector 72) is dirty but not adjacent.

const SECTORS_PER_PAGE: u64 = 8;
fn pg(sector: u64) -> u64 {
    sector / SECTORS_PER_PAGE
}

/// Fills a 6-page buffer: the hand rests on the first page inserted (sector 16).
fn figure4_setup() -> Vec<(char, u64)> {
    vec![
        ('W', pg(16)),
        ('W', pg(24)),
        ('W', pg(32)),
        ('W', pg(40)),
        ('R', pg(48)),
        ('W', pg(72)),
    ]
}

#[test]
fn figure4_spatial_clock_evicts_sector_16_alone() {
    let mut p = SpatialClock::build(&Default::default(), &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.push(('R', 1000));
    let ev = run(&mut p, &refs);
    assert_eq!(tail(&ev, 6), vec![Evict(pg(16), true), Miss(1000)]);
    // The next miss evicts sector 24, again a one-page write.
    let mut refs2 = refs.clone();
    refs2.push(('R', 1001));
    let mut p = SpatialClock::build(&Default::default(), &ctx(6)).unwrap();
    let ev = run(&mut p, &refs2);
    assert_eq!(
        tail(&ev, 6),
        vec![
            Evict(pg(16), true),
            Miss(1000),
            Evict(pg(24), true),
            Miss(1001)
        ]
    );
}

#[test]
fn figure5_bs_clock_writes_16_to_40_together_and_evicts_only_16() {
    let mut p = BsClock::build(&BsClockConfig::default(), &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.push(('R', 1000));
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 6),
        vec![
            WriteBack(vec![pg(16), pg(24), pg(32), pg(40)]),
            Evict(pg(16), false),
            Miss(1000)
        ]
    );
    assert_eq!(p.is_dirty(pg(16)), None, "victim evicted");
    for s in [24, 32, 40] {
        assert_eq!(
            p.is_dirty(pg(s)),
            Some(false),
            "sector {s} cleaned, resident"
        );
    }
    assert_eq!(
        p.is_dirty(pg(72)),
        Some(true),
        "non-adjacent page untouched"
    );
    assert_eq!(p.order_from_hand()[0], pg(24), "hand moves to sector 24");
    let c: HashMap<_, _> = p.counters().into_iter().collect();
    assert_eq!(c["bulk_writes"], 1);
    assert_eq!(c["pages_written_ahead"], 3);
}

#[test]
fn figure5_later_evictions_of_written_ahead_pages_cost_no_write() {
    let mut p = BsClock::build(&BsClockConfig::default(), &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.extend([('R', 1000), ('R', 1001), ('R', 1002), ('R', 1003)]);
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 9),
        vec![
            Evict(pg(24), false),
            Miss(1001),
            Evict(pg(32), false),
            Miss(1002),
            Evict(pg(40), false),
            Miss(1003)
        ]
    );
}

#[test]
fn figure4_5_through_the_accounting_sink() {
    let mut refs = figure4_setup();
    refs.push(('R', 1000));
    let mut sc = SpatialClock::build(&Default::default(), &ctx(6)).unwrap();
    let mut a = Accounting::new(microsd_system());
    a.grow(16);
    Feeder::new().feed(&mut sc, &mut a, &refs);
    assert_eq!(a.stats.file_pages_written, 1);
    assert_eq!(a.stats.fixed[1].ops, 1, "one file write request");

    let mut bs = BsClock::build(&Default::default(), &ctx(6)).unwrap();
    let mut b = Accounting::new(microsd_system());
    b.grow(16);
    b.log = Some(Vec::new());
    Feeder::new().feed(&mut bs, &mut b, &refs);
    assert_eq!(b.stats.file_pages_written, 4);
    assert_eq!(b.stats.fixed[1].ops, 1, "ONE bulk write request");
    assert_eq!(b.stats.file_write_sizes[2], 1, "of 4 pages (bucket 4..7)");
    assert_eq!(b.stats.evictions, 1);
    let log = b.log.unwrap();
    let writes: Vec<_> = log.iter().filter(|r| r.op == Op::Write).collect();
    assert_eq!(writes.len(), 1);
    assert_eq!((writes[0].first, writes[0].pages), (pg(16), 4));
}

#[test]
fn bs_clock_bulk_is_capped_by_seq_dirtied_pages_victim_included() {
    for (cap, want) in [(2, vec![2, 3]), (3, vec![2, 3, 4]), (16, vec![2, 3, 4, 5])] {
        let cfg = BsClockConfig {
            seq_dirtied_pages: cap,
        };
        let mut p = BsClock::build(&cfg, &ctx(6)).unwrap();
        let mut refs = figure4_setup();
        refs.push(('R', 1000));
        let ev = run(&mut p, &refs);
        assert_eq!(ev[6], WriteBack(want), "seq_dirtied_pages={cap}");
    }
    // 1 disables the write-ahead: a plain dirty eviction.
    let cfg = BsClockConfig {
        seq_dirtied_pages: 1,
    };
    let mut p = BsClock::build(&cfg, &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.push(('R', 1000));
    assert_eq!(run(&mut p, &refs)[6], Evict(pg(16), true));
    assert!(BsClock::build(
        &BsClockConfig {
            seq_dirtied_pages: 0
        },
        &ctx(6)
    )
    .is_err());
}

#[test]
fn bs_clock_stops_at_a_referenced_or_clean_follower_and_counts_rewrites() {
    // Sector 32 referenced after its insertion: its bit is set, so the run
    // stops after sector 24; the hand sweep starts at 16 (bit clear).
    let mut p = BsClock::build(&BsClockConfig::default(), &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.push(('R', pg(32)));
    refs.push(('R', 1000));
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 7),
        vec![
            WriteBack(vec![pg(16), pg(24)]),
            Evict(pg(16), false),
            Miss(1000)
        ]
    );
    // Writing a written-ahead page dirties it again: an unnecessary write.
    let mut f = Feeder::new();
    let mut rec = Rec::default();
    let mut p = BsClock::build(&BsClockConfig::default(), &ctx(6)).unwrap();
    let mut refs = figure4_setup();
    refs.push(('R', 1000));
    refs.push(('W', pg(24)));
    f.feed(&mut p, &mut rec, &refs);
    assert_eq!(p.is_dirty(pg(24)), Some(true));
    let c: HashMap<_, _> = p.counters().into_iter().collect();
    assert_eq!(c["rewritten_after_write_ahead"], 1);
}

/// xorshift for reproducible pseudo-random traces.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[test]
fn bs_clock_hits_equal_spatial_clock_and_writes_at_least_as_many_pages_in_fewer_requests() {
    let mut next = rng(7);
    let mut refs = Vec::new();
    for _ in 0..20_000 {
        let base = next() % 400;
        let len = 1 + next() % 12;
        let op = if next().is_multiple_of(3) { 'R' } else { 'W' };
        for k in 0..len {
            refs.push((op, base + k));
        }
    }
    for cap in [16, 64, 200] {
        let mut sc = SpatialClock::build(&Default::default(), &ctx(cap)).unwrap();
        let mut bs = BsClock::build(&BsClockConfig::default(), &ctx(cap)).unwrap();
        let (mut a, mut b) = (
            Accounting::new(microsd_system()),
            Accounting::new(microsd_system()),
        );
        a.grow(512);
        b.grow(512);
        Feeder::new().feed(&mut sc, &mut a, &refs);
        Feeder::new().feed(&mut bs, &mut b, &refs);
        assert_eq!(a.priced().hits, b.priced().hits, "cap {cap}");
        assert_eq!(a.stats.evictions, b.stats.evictions);
        assert!(b.stats.file_pages_written >= a.stats.file_pages_written);
        assert!(b.stats.fixed[1].ops < a.stats.fixed[1].ops, "cap {cap}");
        assert!(b.stats.fixed[1].time_ns < a.stats.fixed[1].time_ns);
        assert_eq!(sc.resident(), cap);
        let order = sc.order_from_hand();
        let rot = order
            .iter()
            .position(|&x| x == *order.iter().min().unwrap())
            .unwrap();
        let mut sorted = order[rot..].to_vec();
        sorted.extend(&order[..rot]);
        assert!(
            sorted.windows(2).all(|w| w[0] < w[1]),
            "ring sorted by page"
        );
    }
}

// ---------------------------------------------------------------------------
// Spatial Clock mechanics.

#[test]
fn spatial_clock_sweeps_in_sector_order_clearing_reference_bits() {
    let mut p = SpatialClock::build(&Default::default(), &ctx(4)).unwrap();
    // Inserted out of order; the hand rests on 50 (first inserted).
    let refs = [
        ('R', 50),
        ('R', 10),
        ('W', 30),
        ('R', 70),
        ('R', 50), // hit: 50 referenced
        ('R', 70), // hit: 70 referenced
        ('R', 20), // miss: hand at 50 (ref) -> clear, 70 (ref) -> clear, 10 -> victim;
        //            the hand moves to 30; 20 is inserted behind it (between 70 and 30)
        ('R', 60), // miss: hand at 30 (dirty, clear) -> victim, written; hand to 50
        ('R', 40), // miss: hand at 50 (cleared on the first sweep) -> victim
    ];
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 6),
        vec![
            Evict(10, false),
            Miss(20),
            Evict(30, true),
            Miss(60),
            Evict(50, false),
            Miss(40)
        ]
    );
    assert_eq!(p.order_from_hand(), vec![60, 70, 20, 40]);
}

// ---------------------------------------------------------------------------
// CFLRU, LRU-WSR, CCF-LRU, FAB.

#[test]
fn cflru_evicts_the_lru_clean_page_of_the_window_else_the_lru_page() {
    let mut p = Cflru::build(&CflruConfig { window: 0.5 }, &ctx(4)).unwrap();
    assert_eq!(p.window_pages(), 2);
    // LRU order after the warm-up, MRU first: 4 3 2 1 (1 and 3 dirty).
    let refs = [
        ('W', 1),
        ('R', 2),
        ('W', 3),
        ('R', 4),
        ('R', 5), // window {1, 2}: 2 is the LRU clean page
        ('R', 6), // window {1, 3}: both dirty -> LRU page 1
        ('R', 7), // window {3, 4}: 4 clean
    ];
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 4),
        vec![
            Evict(2, false),
            Miss(5),
            Evict(1, true),
            Miss(6),
            Evict(4, false),
            Miss(7)
        ]
    );
    // Plain LRU would have evicted 1, 2, 3: CFLRU saved a dirty eviction.
    assert!(Cflru::build(&CflruConfig { window: 0.0 }, &ctx(4)).is_err());
}

#[test]
fn lru_wsr_gives_dirty_pages_a_second_chance_with_the_cold_flag() {
    let mut p = LruWsr::build(&Default::default(), &ctx(3)).unwrap();
    let refs = [
        ('W', 1),
        ('R', 2),
        ('W', 3), // MRU first: 3 2 1
        ('R', 4), // 1 dirty, not cold -> cold, to MRU; 2 clean -> evicted
        ('R', 5), // order 4 1 3: 3 dirty not cold -> cold, MRU; 1 dirty cold -> evicted
        ('R', 3), // hit: 3's cold flag cleared
        ('R', 6), // order 3 5 4: 4 clean -> evicted
        ('R', 7), // order 6 3 5: 5 clean -> evicted
        ('R', 8), // order 7 6 3: 3 dirty, not cold -> second chance; 6 clean -> evicted
    ];
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 3),
        vec![
            Evict(2, false),
            Miss(4),
            Evict(1, true),
            Miss(5),
            Hit(3),
            Evict(4, false),
            Miss(6),
            Evict(5, false),
            Miss(7),
            Evict(6, false),
            Miss(8)
        ]
    );
    let c: HashMap<_, _> = p.counters().into_iter().collect();
    assert_eq!(c["second_chances"], 3);
}

#[test]
fn ccf_lru_evicts_cold_clean_first_then_cold_dirty() {
    let mut p = CcfLru::build(&Default::default(), &ctx(3)).unwrap();
    let refs = [
        ('R', 1),
        ('R', 2),
        ('W', 3),
        ('R', 1), // hit: 1 becomes hot clean (mixed list)
        ('R', 4), // cold clean 2 evicted
        ('R', 5), // cold clean 4 evicted
        ('W', 6), // cold clean 5 evicted; mixed: 6 1 3
        ('R', 7), // 3 dirty -> cold, MRU; 1 hot clean -> demoted; 6 -> cold, MRU; 3 cold dirty evicted
        ('R', 8), // cold clean list (MRU first): 7 1 -> 1 evicted
    ];
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 3),
        vec![
            Hit(1),
            Evict(2, false),
            Miss(4),
            Evict(4, false),
            Miss(5),
            Evict(5, false),
            Miss(6),
            Evict(3, true),
            Miss(7),
            Evict(1, false),
            Miss(8)
        ]
    );
    assert_eq!(p.list_lengths(), (2, 1));
    let c: HashMap<_, _> = p.counters().into_iter().collect();
    assert_eq!(c["demotions"], 1);
    assert_eq!(c["second_chances"], 2);
}

#[test]
fn fab_evicts_the_fullest_block_whole_writing_dirty_runs_in_one_request_each() {
    let mut p = Fab::build(&FabConfig { pages_per_block: 4 }, &ctx(6)).unwrap();
    let refs = [
        ('W', 0),
        ('W', 1),
        ('R', 2),
        ('W', 3),  // block 0: 4 pages (full), dirty runs [0,1] and [3]
        ('W', 5),  // block 1
        ('R', 9),  // block 2
        ('R', 0),  // hit: block 0 becomes the most recent, still the fullest
        ('R', 12), // full: block 0 (4 pages) evicted whole
    ];
    let ev = run(&mut p, &refs);
    assert_eq!(
        tail(&ev, 7),
        vec![
            WriteBack(vec![0, 1]),
            WriteBack(vec![3]),
            Evict(0, false),
            Evict(1, false),
            Evict(2, false),
            Evict(3, false),
            Miss(12)
        ]
    );
    assert_eq!(p.resident(), 3);
    assert_eq!(p.blocks(), 3);
    // Ties go to the least recently used block.
    let mut p = Fab::build(&FabConfig { pages_per_block: 4 }, &ctx(3)).unwrap();
    let refs = [('R', 0), ('R', 4), ('R', 8), ('R', 0), ('R', 12)];
    let ev = run(&mut p, &refs);
    assert_eq!(tail(&ev, 4), vec![Evict(4, false), Miss(12)]);
}

#[test]
fn flash_policies_are_registered_with_paper_parameter_names() {
    let names: Vec<_> = tierlab_core::policy::all_policies()
        .into_iter()
        .filter(|p| p.family == "flash")
        .map(|p| (p.name, p.defaults))
        .collect();
    let find = |n: &str| names.iter().find(|(m, _)| *m == n).unwrap().1.clone();
    assert!(find("bs-clock").contains("seq_dirtied_pages = 16"));
    assert!(find("cflru").contains("window = 0.1"));
    assert!(find("fab").contains("pages_per_block = 32"));
    assert_eq!(names.len(), 6);
    let spec = tierlab_core::policy::PolicySpec::parse("bs-clock(seq_dirtied_pages=64)").unwrap();
    assert_eq!(spec.config::<BsClock>().unwrap().seq_dirtied_pages, 64);
    let bad = tierlab_core::policy::PolicySpec::parse("bs-clock(seq_dirty_pages=64)").unwrap();
    assert!(bad.config::<BsClock>().is_err());
}
