//! Hybrid DRAM+PCM main memory used as a buffer cache
//! (papers/hybrid-dram-pcm-app-aware.md: Oh, Kang, Lee, Eom, "Hybrid Main Memory
//! based Buffer Cache Scheme by Using Characteristics of Mobile Applications",
//! KIISE 2015).
//!
//! Every policy of this family runs on a system with two memory tiers, tier 0 =
//! DRAM and tier 1 = PCM (`tiers = ["dram-ratio", "pcm-ratio"]` for the paper's
//! cost ratios, `["dram-table1", "pcm-table1"]` for Table 1's latencies), and
//! splits the memory size between them by `dram_ratio` (the paper fixes DRAM at
//! 5% of memory, Section 4). Pages that leave memory go to storage.
//!
//! - [`app_aware`]: the paper's app-state-aware policy (Section 3, Figure 3);
//! - [`clock_dwf`]: CLOCK-DWF (Lee, Bahn, Noh, IEEE TC 2014), the paper's [6];
//! - [`lru`], [`two_q`]: the paper's baselines, LRU and 2Q run over the same
//!   hybrid memory (new pages enter DRAM, DRAM victims demote to PCM).
//!
//! Besides what the engine's accounting sink charges, each policy of the family
//! keeps a [`Meter`]: counts of DRAM/PCM page reads and writes, migrations and
//! storage evictions, overall and attributed to the foreground app as Section 4
//! attributes them, from which [`PaperCost`] computes the paper's foreground
//! execution time and memory energy (Figures 4-7).

pub mod app_aware;
pub mod clock_dwf;
pub mod experiment;
pub mod lru;
pub mod two_q;

use crate::error::{Error, Result};
use crate::policy::id_list::{id_links_in_field, prefetch_before, prefetch_neighbours, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{check_fraction, PolicyCtx};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::{Event, EventKind, Kind};

/// Tier index of DRAM.
pub const DRAM: u8 = 0;
/// Tier index of PCM.
pub const PCM: u8 = 1;

/// The paper's DRAM share of memory (Section 4: "DRAM의 비율을 전체 메모리의
/// 5%로 고정").
pub const PAPER_DRAM_RATIO: f64 = 0.05;

/// Splits `capacity` pages into (DRAM, PCM) frames: DRAM gets
/// `round(dram_ratio * capacity)` frames (possibly 0 for tiny memories, in which
/// case every page lives in PCM), PCM the rest.
pub fn split_capacity(capacity: usize, dram_ratio: f64) -> (usize, usize) {
    let d = ((capacity as f64) * dram_ratio).round() as usize;
    let d = d.min(capacity);
    (d, capacity - d)
}

/// Checks a hybrid policy's context and `dram_ratio`; returns the split.
pub fn hybrid_ctx(policy: &str, ctx: &PolicyCtx, dram_ratio: f64) -> Result<(usize, usize)> {
    check_fraction(policy, "dram_ratio", dram_ratio)?;
    // Every policy of the family declares `MIN_TIERS = 2`.
    if ctx.tiers < 2 {
        return Err(Error::config(format!(
            "policy '{policy}' needs a system with two memory tiers (tier 0 = DRAM, tier 1 = PCM), \
             e.g. tiers = [\"dram-ratio\", \"pcm-ratio\"]; this system has {}",
            ctx.tiers
        )));
    }
    Ok(split_capacity(ctx.capacity, dram_ratio))
}

/// Which app is in the foreground, from the trace's events, with the same
/// semantics as the engine's accounting (`sim::Accounting`): the app of the
/// latest `Foreground` (or `AppLaunch`) event is the one foreground app (Android
/// has one, Section 3) until its `Background`/`AppExit`; before any event every
/// app counts as foreground, so a trace without events behaves as an all-
/// foreground workload.
#[derive(Debug, Clone, Copy)]
pub struct Foreground {
    fg: Option<u32>,
}

const ALL_FOREGROUND: u32 = u32::MAX;

impl Default for Foreground {
    fn default() -> Self {
        Foreground {
            fg: Some(ALL_FOREGROUND),
        }
    }
}

impl Foreground {
    pub fn on_event(&mut self, e: &Event) {
        match e.kind {
            EventKind::Foreground | EventKind::AppLaunch => self.fg = Some(e.app),
            EventKind::Background | EventKind::AppExit => {
                if self.fg == Some(e.app) || self.fg == Some(ALL_FOREGROUND) {
                    self.fg = None;
                }
            }
        }
    }
    #[inline]
    pub fn is_foreground(&self, app: u32) -> bool {
        matches!(self.fg, Some(f) if f == app || f == ALL_FOREGROUND)
    }
}

/// Indices of the [`Meter`] counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum M {
    DramReads = 0,
    DramWrites,
    PcmReads,
    PcmWrites,
    StorageEvictions,
    MigrationsUp,
    MigrationsDown,
    FgRefs,
    FgDramReads,
    FgDramWrites,
    FgPcmReads,
    FgPcmWrites,
    FgStorageEvictions,
}

/// Counter names, in [`M`] order, as reported in the results' policy counters.
pub const METER_NAMES: [&str; 13] = [
    "dram_reads",
    "dram_writes",
    "pcm_reads",
    "pcm_writes",
    "storage_evictions",
    "migrations_up",
    "migrations_down",
    "fg_refs",
    "fg_dram_reads",
    "fg_dram_writes",
    "fg_pcm_reads",
    "fg_pcm_writes",
    "fg_storage_evictions",
];

/// Page operations on DRAM, PCM and storage, counted the way the paper's
/// Section 4 prices them, overall and for the foreground app.
///
/// Counting (one unit = one page): a hit reads or writes the page in its tier;
/// a miss writes the page into its tier (the fill) and, for a read, reads it;
/// a write miss is the fill alone (see [`Meter::miss`]); a migration reads
/// the page in its source tier and writes it in its destination; a page leaving
/// memory is one storage eviction, clean or dirty (the paper prices every
/// eviction at 1000).
///
/// Attribution to the foreground (Section 4: "저장장치로 추출되는 페이지의
/// 숫자는 포그라운드 애플리케이션에 의해서 추출되는 페이지와 백그라운드
/// 애플리케이션에 의하여 추출되는 포그라운드 페이지들의 총 합"): every operation
/// done for a reference of the foreground app counts (hits, fills, the
/// migrations and evictions it causes), and so does the storage eviction of a
/// foreground page caused by a background reference. A page belongs to the app
/// that referenced it last.
#[derive(Debug, Clone, Default)]
pub struct Meter {
    fg: Foreground,
    owner: Vec<u32>,
    cur_fg: bool,
    c: [u64; 13],
}

impl Meter {
    pub fn grow(&mut self, n: usize) {
        if self.owner.len() < n {
            self.owner.resize(n, u32::MAX);
        }
    }
    pub fn event(&mut self, e: &Event) {
        self.fg.on_event(e);
    }
    /// Starts loading `id`'s owner entry, which [`Meter::begin`] will write (see
    /// [`crate::policy::Policy::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, id: PageId) {
        prefetch(&self.owner, id as usize);
    }
    /// Starts a reference; returns whether its app is in the foreground.
    #[inline]
    pub fn begin(&mut self, r: &PageRef) -> bool {
        self.owner[r.id as usize] = r.app();
        self.begin_unowned(r)
    }
    /// [`Meter::begin`] for a policy that keeps each page's owner (the app of its latest
    /// reference) in its own per-page state and hands it to [`Meter::evict_owned`]: the meter's
    /// owner table is then neither grown nor read.
    #[inline]
    pub fn begin_unowned(&mut self, r: &PageRef) -> bool {
        self.cur_fg = self.fg.is_foreground(r.app());
        if self.cur_fg {
            self.c[M::FgRefs as usize] += 1;
        }
        self.cur_fg
    }
    #[inline]
    fn add(&mut self, all: M, fg: M, is_fg: bool) {
        self.c[all as usize] += 1;
        if is_fg {
            self.c[fg as usize] += 1;
        }
    }
    #[inline]
    fn op(&mut self, tier: u8, write: bool) {
        let fg = self.cur_fg;
        match (tier, write) {
            (DRAM, false) => self.add(M::DramReads, M::FgDramReads, fg),
            (DRAM, true) => self.add(M::DramWrites, M::FgDramWrites, fg),
            (_, false) => self.add(M::PcmReads, M::FgPcmReads, fg),
            (_, true) => self.add(M::PcmWrites, M::FgPcmWrites, fg),
        }
    }
    /// Counter value.
    #[inline]
    pub fn get(&self, m: M) -> u64 {
        self.c[m as usize]
    }
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        METER_NAMES
            .iter()
            .copied()
            .zip(self.c.iter().copied())
            .collect()
    }
    /// Rebuilds a meter's counts from reported counters (missing ones are 0).
    pub fn from_counters<'a>(counters: impl IntoIterator<Item = (&'a str, u64)>) -> Meter {
        let mut m = Meter::default();
        for (k, v) in counters {
            if let Some(i) = METER_NAMES.iter().position(|n| *n == k) {
                m.c[i] = v;
            }
        }
        m
    }

    /// Reports a hit in `tier` to the sink and counts it.
    #[inline]
    pub fn hit<S: Sink>(&mut self, sink: &mut S, r: &PageRef, tier: u8) {
        sink.hit(r, tier);
        self.op(tier, r.is_write());
    }
    /// Reports a miss filled into `tier` and counts it: one page write (the
    /// fill, Figure 3 lines 17 and 21: "write a new page on DRAM/PCM"), and for
    /// a read one read of the page. A write miss is that one write: the paper's
    /// system does not fetch a page it overwrites (`write_miss_fetch = false`),
    /// so its new data is what the fill writes. (The engine's generic
    /// accounting charges a write miss as fill + write; this meter follows the
    /// paper's model instead.)
    #[inline]
    pub fn miss<S: Sink>(&mut self, sink: &mut S, r: &PageRef, tier: u8) {
        sink.miss(r, tier);
        self.op(tier, true);
        if !r.is_write() {
            self.op(tier, false);
        }
    }
    /// Reports and counts a migration of page (`id`, `page`) between tiers.
    #[inline]
    pub fn migrate<S: Sink>(&mut self, sink: &mut S, id: PageId, page: u64, from: u8, to: u8) {
        sink.migrate(id, page, from, to);
        self.op(from, false);
        self.op(to, true);
        if to < from {
            self.c[M::MigrationsUp as usize] += 1;
        } else {
            self.c[M::MigrationsDown as usize] += 1;
        }
    }
    /// Reports and counts page `id` leaving memory from `tier`, as its entry `e` (which keeps
    /// the page's owner, see [`Meter::begin_unowned`]) describes it.
    #[inline]
    pub(crate) fn evict_entry<S: Sink, E: OwnedEntry>(
        &mut self,
        sink: &mut S,
        id: PageId,
        e: &E,
        tier: u8,
    ) {
        let (p, owner) = e.leaving(id, tier);
        self.evict_owned(sink, p, owner);
    }
    /// Reports and counts a page leaving memory for storage.
    #[inline]
    pub fn evict<S: Sink>(&mut self, sink: &mut S, p: PageOut) {
        let owner = self.owner.get(p.id as usize).copied().unwrap_or(u32::MAX);
        self.evict_owned(sink, p, owner);
    }
    /// [`Meter::evict`] with the page's owner given (see [`Meter::begin_unowned`]; `u32::MAX`
    /// for none).
    #[inline]
    pub fn evict_owned<S: Sink>(&mut self, sink: &mut S, p: PageOut, owner: u32) {
        sink.evict(p);
        let owner_fg = owner != u32::MAX && self.fg.is_foreground(owner);
        self.add(
            M::StorageEvictions,
            M::FgStorageEvictions,
            self.cur_fg || owner_fg,
        );
    }
}

/// A per-page entry that keeps its page's number, kind, dirty bit and owner (the app of its
/// latest reference): what [`Meter::evict_entry`] reports of the page leaving memory.
pub(crate) trait OwnedEntry {
    /// Page `id`, this entry's, as it leaves `tier`, and its owner.
    fn leaving(&self, id: PageId, tier: u8) -> (PageOut, u32);
}

/// Implements [`OwnedEntry`] for an entry type with `page`, `kind`, `dirty` and `owner` fields.
macro_rules! owned_entry_in_fields {
    ($entry:ty) => {
        impl $crate::policy::hybrid::OwnedEntry for $entry {
            #[inline(always)]
            fn leaving(&self, id: $crate::sim::PageId, tier: u8) -> ($crate::sim::PageOut, u32) {
                let p = $crate::sim::PageOut {
                    id,
                    page: self.page,
                    kind: self.kind,
                    dirty: self.dirty,
                    tier,
                };
                (p, self.owner)
            }
        }
    };
}
use owned_entry_in_fields;

/// The link pairs of a [`PageEntry`]: its place in the policy's own residency order (the LRU
/// stack, or the one 2Q queue it is in) and in DRAM's recency order.
pub(crate) const OWN: usize = 0;
pub(crate) const IN_DRAM: usize = 1;

/// `PageEntry::state` of a page the policy holds nowhere (the policy numbers the others).
pub(crate) const ABSENT: u8 = 0;

/// Everything about one page id for `hybrid-lru` and `hybrid-2q`, in one 32-byte entry
/// (32-aligned, so never across two cache lines): its links in the policy's own order and in
/// DRAM's, where the policy holds it (`state`), whether it is in DRAM, its page number, kind
/// and dirty bit, and its owner (the app of its latest reference, which the [`Meter`] needs
/// when the page leaves memory).
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(crate) struct PageEntry {
    pub links: [[u32; 2]; 2],
    pub page: u64,
    pub owner: u32,
    pub state: u8,
    pub in_dram: bool,
    pub dirty: bool,
    pub kind: Kind,
}
id_links_in_field!(PageEntry);
owned_entry_in_fields!(PageEntry);
const _: () = assert!(std::mem::size_of::<PageEntry>() == 32);

impl PageEntry {
    pub const EMPTY: PageEntry = PageEntry {
        links: [[NIL; 2]; 2],
        page: 0,
        owner: u32::MAX,
        state: ABSENT,
        in_dram: false,
        dirty: false,
        kind: Kind::File,
    };
}

/// DRAM's recency order over [`PageEntry`]s (link pair [`IN_DRAM`]), as `hybrid-lru` and
/// `hybrid-2q` place pages: new pages and promoted PCM pages enter at DRAM's MRU end, and
/// DRAM's LRU page demotes to PCM when DRAM is full.
#[derive(Debug, Default)]
pub(crate) struct DramOrder {
    list: IdList<IN_DRAM>,
    cap: usize,
}

impl DramOrder {
    pub fn new(cap: usize) -> DramOrder {
        DramOrder {
            list: IdList::default(),
            cap,
        }
    }

    /// Page ids in DRAM, MRU first.
    pub fn ids(&self, entries: &[PageEntry]) -> Vec<PageId> {
        self.list.iter(entries).collect()
    }

    /// Puts page `id` (new, or moving up from PCM) at DRAM's MRU end, demoting DRAM's LRU page
    /// to PCM first when DRAM is full; returns the tier it ends in (PCM when DRAM has no
    /// frames) and reports the migrations.
    #[inline]
    pub fn place<S: Sink>(
        &mut self,
        entries: &mut [PageEntry],
        meter: &mut Meter,
        id: PageId,
        page: u64,
        from_pcm: bool,
        sink: &mut S,
    ) -> u8 {
        if self.cap == 0 {
            return PCM;
        }
        if self.list.len() == self.cap {
            let v = self.list.pop_back(entries);
            let ve = &mut entries[v as usize];
            ve.in_dram = false;
            let vpage = ve.page;
            meter.migrate(sink, v, vpage, DRAM, PCM);
            // The next demotion's page: the entry after it, and its wear count in PCM.
            let t = self.list.tail();
            prefetch_before(entries, t, IN_DRAM);
            if t != NIL {
                sink.prefetch(t);
            }
        }
        if from_pcm {
            meter.migrate(sink, id, page, PCM, DRAM);
        }
        entries[id as usize].in_dram = true;
        self.list.push_front(entries, id);
        DRAM
    }

    /// The tier of a page hit that was in DRAM (moved to DRAM's MRU end) or in PCM (promoted
    /// when `promote`, else left in PCM).
    #[inline]
    pub fn hit<S: Sink>(
        &mut self,
        entries: &mut [PageEntry],
        meter: &mut Meter,
        id: PageId,
        page: u64,
        promote: bool,
        sink: &mut S,
    ) -> u8 {
        if entries[id as usize].in_dram {
            self.list.move_to_front(entries, id);
            DRAM
        } else if promote {
            self.place(entries, meter, id, page, true, sink)
        } else {
            PCM
        }
    }

    /// Takes page `id`, leaving memory, out of DRAM if it is there; returns the tier it left.
    #[inline]
    pub fn leave(&mut self, entries: &mut [PageEntry], id: PageId) -> u8 {
        if entries[id as usize].in_dram {
            self.list.unlink(entries, id);
            entries[id as usize].in_dram = false;
            DRAM
        } else {
            PCM
        }
    }

    /// Starts loading the entries a move of `e` to DRAM's MRU end rewrites (a speed hint).
    #[inline(always)]
    pub fn prefetch_neighbours(entries: &[PageEntry], e: &PageEntry) {
        if e.in_dram {
            prefetch_neighbours(entries, e, IN_DRAM);
        }
    }
}

/// What `hybrid-lru` and `hybrid-2q` keep besides their own residency lists: the [`PageEntry`]s
/// (which those lists link through, link pair [`OWN`]), DRAM's order, the [`Meter`], and the
/// steps both take the same way: a hit's DRAM placement, a new page's entry and placement, a
/// victim leaving memory.
#[derive(Debug)]
pub(crate) struct HybridPages {
    pub entries: Vec<PageEntry>,
    pub dram: DramOrder,
    pub meter: Meter,
    /// Whether a PCM hit migrates the page to DRAM.
    promote: bool,
}

impl HybridPages {
    pub fn new(dram_frames: usize, promote: bool) -> HybridPages {
        HybridPages {
            entries: Vec::new(),
            dram: DramOrder::new(dram_frames),
            meter: Meter::default(),
            promote,
        }
    }

    /// A hit by `r` on its resident page (the policy has updated its own order): the page is
    /// dirty from a write on, belongs to `r`'s app, moves up in DRAM (or from PCM, when
    /// promoting) and the hit is reported from the tier it ends in.
    #[inline]
    pub fn hit<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let e = &mut self.entries[r.id as usize];
        e.dirty |= r.is_write();
        e.owner = r.app();
        let tier = self.dram.hit(
            &mut self.entries,
            &mut self.meter,
            r.id,
            r.page(),
            self.promote,
            sink,
        );
        self.meter.hit(sink, r, tier);
    }

    /// `r`'s page, missed, enters memory (the policy has made room): its entry is filled, it is
    /// held as `state` at the MRU end of the policy's `list` and placed at DRAM's MRU end
    /// (demoting DRAM's LRU page), and the miss is reported from the tier it ends in.
    #[inline]
    pub fn insert<S: Sink>(
        &mut self,
        r: &PageRef,
        state: u8,
        list: &mut IdList<OWN>,
        sink: &mut S,
    ) {
        let e = &mut self.entries[r.id as usize];
        e.page = r.page();
        e.kind = r.kind();
        e.dirty = r.is_write();
        e.owner = r.app();
        e.state = state;
        list.push_front(&mut self.entries, r.id);
        let tier = self.dram.place(
            &mut self.entries,
            &mut self.meter,
            r.id,
            r.page(),
            false,
            sink,
        );
        self.meter.miss(sink, r, tier);
    }

    /// Victim `v`, already unlinked from the policy's order, leaves memory from whichever tier
    /// holds it (its `state` is the policy's to set).
    #[inline]
    pub fn evict<S: Sink>(&mut self, v: PageId, sink: &mut S) {
        let e = self.entries[v as usize];
        let tier = self.dram.leave(&mut self.entries, v);
        self.meter.evict_entry(sink, v, &e, tier);
    }

    /// Page ids below `n` may now appear.
    pub fn grow(&mut self, n: usize) {
        if self.entries.len() < n {
            self.entries.resize(n, PageEntry::EMPTY);
        }
    }
}

/// The paper's cost model (Section 4 for time, Table 1 for energy).
///
/// Time is in the paper's units: a DRAM read or write costs 1, a PCM read 2, a
/// PCM write 50 and a page evicted to storage 1000 ("DRAM의 읽기 및 쓰기 시간을
/// 1, PCM의 읽기 시간을 2, PCM의 쓰기 시간을 50, 저장장치로 추출되는 시간을
/// 1000의 비율로 가정"). Energy follows Table 1 per bit moved: DRAM read and
/// write 0.1 nJ/b, PCM read 0.1 nJ/b, PCM write 1 nJ/b, one page operation
/// moving the whole page; storage energy and DRAM refresh are left out as the
/// paper leaves them out (Section 4: all three schemes share the same hybrid
/// memory, so retention power is not counted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperCost {
    pub dram: f64,
    pub pcm_read: f64,
    pub pcm_write: f64,
    pub storage: f64,
    pub dram_nj_per_bit: f64,
    pub pcm_read_nj_per_bit: f64,
    pub pcm_write_nj_per_bit: f64,
}

impl Default for PaperCost {
    fn default() -> Self {
        PaperCost {
            dram: 1.0,
            pcm_read: 2.0,
            pcm_write: 50.0,
            storage: 1000.0,
            dram_nj_per_bit: 0.1,
            pcm_read_nj_per_bit: 0.1,
            pcm_write_nj_per_bit: 1.0,
        }
    }
}

impl PaperCost {
    /// Foreground execution time (Figures 4(c), 5(c) before normalisation).
    pub fn fg_time(&self, m: &Meter) -> f64 {
        self.dram * (m.get(M::FgDramReads) + m.get(M::FgDramWrites)) as f64
            + self.pcm_read * m.get(M::FgPcmReads) as f64
            + self.pcm_write * m.get(M::FgPcmWrites) as f64
            + self.storage * m.get(M::FgStorageEvictions) as f64
    }
    /// Time of the whole workload, same units.
    pub fn time(&self, m: &Meter) -> f64 {
        self.dram * (m.get(M::DramReads) + m.get(M::DramWrites)) as f64
            + self.pcm_read * m.get(M::PcmReads) as f64
            + self.pcm_write * m.get(M::PcmWrites) as f64
            + self.storage * m.get(M::StorageEvictions) as f64
    }
    /// Memory energy in nJ (Figures 6, 7 before normalisation).
    pub fn energy_nj(&self, m: &Meter, page_size: u32) -> f64 {
        let bits = page_size as f64 * 8.0;
        bits * (self.dram_nj_per_bit * (m.get(M::DramReads) + m.get(M::DramWrites)) as f64
            + self.pcm_read_nj_per_bit * m.get(M::PcmReads) as f64
            + self.pcm_write_nj_per_bit * m.get(M::PcmWrites) as f64)
    }
}
