//! The accounting sink: counters, and device time/energy per component.

use super::{PageId, PageOut, PageRef, Sink, MAX_TIERS};
use crate::device::{IoCost, System};
use crate::error::{Error, Result};
use crate::trace::{Event, EventKind, Kind, Op};

/// Time, energy and volume of one cost component (e.g. "swap_write").
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Component {
    /// Device requests (or CPU accesses for memory hits).
    pub ops: u64,
    /// Pages moved (0 for CPU accesses).
    pub pages: u64,
    pub time_ns: f64,
    pub energy_nj: f64,
}

impl Component {
    #[inline]
    fn add(&mut self, pages: u64, time_ns: f64, energy_nj: f64) {
        self.ops += 1;
        self.pages += pages;
        self.time_ns += time_ns;
        self.energy_nj += energy_nj;
    }
}

/// Cost components charged by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Comp {
    FileRead = 0,
    FileWrite,
    SwapRead,
    SwapWrite,
    Migration,
}
const N_FIXED: usize = 5;
pub const COMPONENT_NAMES: [&str; N_FIXED] = [
    "file_read",
    "file_write",
    "swap_read",
    "swap_write",
    "migration",
];

/// Every counter of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub accesses: u64,
    pub requests: u64,
    /// Bytes requested and bytes missed: object sizes in object-size mode
    /// ([`super::object::ObjectSink`]); in page mode `byte_accesses` is `accesses * page_size`
    /// and `byte_misses` is left 0 (the result row derives it from the misses).
    pub byte_accesses: u64,
    pub byte_misses: u64,
    /// Object-size mode: misses of objects larger than the whole cache, never admitted (as
    /// libCacheSim's `cache_can_insert_default` refuses them).
    pub too_large: u64,
    /// `[kind][op]`, kind File=0 Anon=1, op Read=0 Write=1.
    pub hits: [[u64; 2]; 2],
    pub misses: [[u64; 2]; 2],
    /// Misses not kept in memory.
    pub bypasses: u64,
    pub hits_by_tier: [u64; MAX_TIERS],
    /// Pages read from the file store / swap on misses.
    pub file_pages_read: u64,
    pub swap_pages_read: u64,
    /// Anon misses satisfied by a fresh zero page (never swapped out).
    pub zero_fills: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    /// Pages written back while staying resident (bulk cleaning writes).
    pub cleaned_in_place: u64,
    pub file_pages_written: u64,
    pub swap_pages_written: u64,
    /// Write requests to the file store by size: bucket i counts requests of
    /// 2^i .. 2^(i+1)-1 pages.
    pub file_write_sizes: [u64; 21],
    pub migrations_up: u64,
    pub migrations_down: u64,
    /// Tier changes without a copy (`Sink::remap`, e.g. NOMAD shadow remaps).
    pub remaps: u64,
    /// Hits and misses of references made by the app in the foreground (the
    /// app named by the latest `Foreground` event, until its `Background` or
    /// `AppExit`); all references count as foreground when the trace has no
    /// events.
    pub fg_hits: u64,
    pub fg_misses: u64,
    pub fixed: [Component; N_FIXED],
    /// Wear of memory tiers whose device has an endurance (e.g. PCM): page
    /// writes into the tier (fills, CPU writes, migrations in), counted per
    /// page; their total, the pages written at least once, and the most writes
    /// any one page received (0 for tiers without endurance).
    pub wear_writes: [u64; MAX_TIERS],
    pub wear_pages: [u64; MAX_TIERS],
    pub wear_max_page_writes: [u64; MAX_TIERS],
    /// Per tier: [CPU reads, CPU writes, page fills].
    pub tier: [[Component; 3]; MAX_TIERS],
}

impl Stats {
    pub fn hits_total(&self) -> u64 {
        self.hits.iter().flatten().sum()
    }
    pub fn misses_total(&self) -> u64 {
        self.misses.iter().flatten().sum()
    }
    pub fn comp(&self, c: Comp) -> &Component {
        &self.fixed[c as usize]
    }
    pub fn total_time_ns(&self) -> f64 {
        self.fixed.iter().map(|c| c.time_ns).sum::<f64>()
            + self.tier.iter().flatten().map(|c| c.time_ns).sum::<f64>()
    }
    pub fn total_energy_nj(&self) -> f64 {
        self.fixed.iter().map(|c| c.energy_nj).sum::<f64>()
            + self.tier.iter().flatten().map(|c| c.energy_nj).sum::<f64>()
    }
}

/// Tracks where the previous request of one direction ended on a device, to
/// tell sequential requests from random ones.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    next: Option<u64>,
}

impl Cursor {
    #[inline]
    fn advance(&mut self, first: u64, pages: u64) -> bool {
        let seq = self.next == Some(first);
        self.next = Some(first + pages);
        seq
    }
}

/// One request the cache issued to a backing device (the "after-cache trace").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRequest {
    pub store: Store,
    pub op: Op,
    pub first: u64,
    pub pages: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    File,
    Swap,
}

/// The device costs of one further system an [`Accounting`] prices every request under
/// (`RunOptions::variants`). The policy's decisions, and so every count, are those of the run;
/// only time and energy differ, and they are added up request by request in the same order as a
/// run on that system alone, so the figures are the same to the last bit.
struct Variant {
    /// Cost of a request per fixed component ([`Comp`]; migration uses `migrate_cost`).
    io: [IoCost; 4],
    access_cost: [[(f64, f64); 2]; MAX_TIERS],
    fill_cost: [(f64, f64); MAX_TIERS],
    migrate_cost: [[(f64, f64); MAX_TIERS]; MAX_TIERS],
    fixed: [Component; N_FIXED],
}

/// Per tier, per op: (time ns, energy nJ) of one CPU access; per tier: of filling one page; per
/// (from, to) tier: of migrating one page (a read in `from`, a write in `to`).
type TierCosts = (
    [[(f64, f64); 2]; MAX_TIERS],
    [(f64, f64); MAX_TIERS],
    [[(f64, f64); MAX_TIERS]; MAX_TIERS],
);

fn tier_costs(system: &System) -> TierCosts {
    let mut access_cost = [[(0.0, 0.0); 2]; MAX_TIERS];
    let mut fill_cost = [(0.0, 0.0); MAX_TIERS];
    for (t, dev) in system.tiers.iter().take(MAX_TIERS).enumerate() {
        access_cost[t] = [
            (dev.access_read_ns, dev.access_read_energy_nj),
            (dev.access_write_ns, dev.access_write_energy_nj),
        ];
        fill_cost[t] = (dev.write.time_ns(1, false), dev.write.energy_nj_per_page);
    }
    let mut migrate_cost = [[(0.0, 0.0); MAX_TIERS]; MAX_TIERS];
    for (f, src) in system.tiers.iter().take(MAX_TIERS).enumerate() {
        for (t, dst) in system.tiers.iter().take(MAX_TIERS).enumerate() {
            migrate_cost[f][t] = (
                src.read.time_ns(1, false) + dst.write.time_ns(1, false),
                src.read.energy_nj_per_page + dst.write.energy_nj_per_page,
            );
        }
    }
    (access_cost, fill_cost, migrate_cost)
}

/// Checks that `variant` differs from `base` in device costs only: the same number of tiers,
/// endurance on the same tiers, a swap device on both or neither, the same `write_miss_fetch`
/// (each of those changes what is counted, not only its price).
fn check_variant(base: &System, variant: &System, k: usize) -> Result<()> {
    let differs = |what: &str| {
        Err(Error::config(format!(
            "pricing variant {k}: {what} differs from the run's system; a variant may change \
             device costs only"
        )))
    };
    if base.tiers.len() != variant.tiers.len() {
        return differs("the number of memory tiers");
    }
    let endurance = |s: &System| -> Vec<bool> {
        s.tiers
            .iter()
            .map(|d| d.endurance_writes.is_some())
            .collect()
    };
    if endurance(base) != endurance(variant) {
        return differs("which tiers have an endurance");
    }
    if base.swap.is_some() != variant.swap.is_some() {
        return differs("having a swap device");
    }
    if base.write_miss_fetch != variant.write_miss_fetch {
        return differs("write_miss_fetch");
    }
    Ok(())
}

/// The engine's sink: charges device costs and keeps [`Stats`].
pub struct Accounting {
    system: System,
    pub stats: Stats,
    /// Bit per page id: the page has a valid copy in swap.
    in_swap: Vec<u64>,
    /// Swap slots are handed out in order, as Linux's swap allocator clusters
    /// them; a swap write continues the previous one when slots are adjacent.
    next_swap_slot: u64,
    file_read_cursor: Cursor,
    file_write_cursor: Cursor,
    swap_read_cursor: Cursor,
    swap_write_cursor: Cursor,
    /// Swap slot of each page id with a swap copy (only grown when used).
    swap_slot: Vec<u64>,
    /// After-cache trace, when recording.
    pub log: Option<Vec<DeviceRequest>>,
    /// App in the foreground (None: no app; `ALL_FOREGROUND` before any event).
    foreground: Option<u32>,
    /// Per tier with an endurance: writes per page id (empty for other tiers).
    wear: Vec<Vec<u32>>,
    /// Whether any tier has an endurance (else `wear_write` does nothing).
    wear_any: bool,
    /// Per tier, per op: (time ns, energy nJ) of one CPU access, copied out of
    /// the system once so the hit path reads a small array.
    access_cost: [[(f64, f64); 2]; MAX_TIERS],
    /// Per tier: (time ns, energy nJ) of filling one page.
    fill_cost: [(f64, f64); MAX_TIERS],
    /// Per (from, to) tier: (time ns, energy nJ) of migrating one page (a read in `from`, a
    /// write in `to`), computed once instead of per migration (the same values).
    migrate_cost: [[(f64, f64); MAX_TIERS]; MAX_TIERS],
    /// Hits per tier and per op/kind ([`PageRef::op_kind`]): a hit adds to one counter here, and
    /// [`Accounting::priced`] folds them into `stats.hits`, `hits_by_tier` and the tiers' CPU
    /// accesses at the end, instead of three counters per hit.
    hit_counts: [[u64; 4]; MAX_TIERS],
    /// Further systems every request is also priced under (see [`Accounting::with_variants`]).
    variants: Vec<Variant>,
}

/// `foreground` value meaning "no events seen: every app counts as foreground".
const ALL_FOREGROUND: u32 = u32::MAX;

impl Accounting {
    pub fn new(system: System) -> Self {
        let (access_cost, fill_cost, migrate_cost) = tier_costs(&system);
        let wear_any = system.tiers.iter().any(|d| d.endurance_writes.is_some());
        Accounting {
            wear_any,
            access_cost,
            fill_cost,
            migrate_cost,
            system,
            stats: Stats::default(),
            in_swap: Vec::new(),
            next_swap_slot: 0,
            file_read_cursor: Cursor::default(),
            file_write_cursor: Cursor::default(),
            swap_read_cursor: Cursor::default(),
            swap_write_cursor: Cursor::default(),
            swap_slot: Vec::new(),
            log: None,
            foreground: Some(ALL_FOREGROUND),
            wear: Vec::new(),
            hit_counts: [[0; 4]; MAX_TIERS],
            variants: Vec::new(),
        }
    }

    /// An accounting that also prices every request under each of `variants` (systems that
    /// differ from `system` in device costs only; a config error otherwise): what one replay
    /// would cost on each, without replaying it again ([`Accounting::variant_stats`]).
    pub fn with_variants(system: System, variants: &[System]) -> Result<Self> {
        let mut acct = Accounting::new(system);
        for (k, v) in variants.iter().enumerate() {
            check_variant(&acct.system, v, k + 1)?;
            let (access_cost, fill_cost, migrate_cost) = tier_costs(v);
            let swap = v
                .swap
                .as_ref()
                .map_or((IoCost::default(), IoCost::default()), |d| {
                    (d.read, d.write)
                });
            acct.variants.push(Variant {
                io: [v.file_store.read, v.file_store.write, swap.0, swap.1],
                access_cost,
                fill_cost,
                migrate_cost,
                fixed: [Component::default(); N_FIXED],
            });
        }
        Ok(acct)
    }

    pub fn system(&self) -> &System {
        &self.system
    }

    /// Whether `r`'s app is in the foreground now; reads the app only when it matters (before any
    /// event every app counts, and most traces have no events).
    #[inline(always)]
    pub fn is_foreground(&self, r: &PageRef) -> bool {
        matches!(self.foreground, Some(f) if f == ALL_FOREGROUND || f == r.app())
    }

    /// Makes room for page ids below `n`.
    pub fn grow(&mut self, n: usize) {
        let words = n.div_ceil(64);
        if self.in_swap.len() < words {
            self.in_swap.resize(words, 0);
        }
        if self.wear.len() < self.system.tiers.len() {
            self.wear = vec![Vec::new(); self.system.tiers.len()];
        }
        for (t, w) in self.wear.iter_mut().enumerate() {
            if self.system.tiers[t].endurance_writes.is_some() && w.len() < n {
                w.resize(n, 0);
            }
        }
    }

    /// Counts a page write into `tier` for wear (tiers with an endurance).
    #[inline]
    fn wear_write(&mut self, tier: u8, id: PageId) {
        if !self.wear_any {
            return;
        }
        let t = tier as usize;
        if let Some(c) = self.wear.get_mut(t).and_then(|w| w.get_mut(id as usize)) {
            *c += 1;
            let n = *c as u64;
            self.stats.wear_writes[t] += 1;
            if n == 1 {
                self.stats.wear_pages[t] += 1;
            }
            if n > self.stats.wear_max_page_writes[t] {
                self.stats.wear_max_page_writes[t] = n;
            }
        }
    }

    #[inline]
    fn swapped(&self, id: PageId) -> bool {
        let i = id as usize;
        self.in_swap
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    #[inline]
    fn set_swapped(&mut self, id: PageId) {
        let i = id as usize;
        if self.in_swap.len() <= i / 64 {
            self.in_swap.resize(i / 64 + 1, 0);
        }
        self.in_swap[i / 64] |= 1 << (i % 64);
    }

    /// Charges one request of `pages` pages with `cost` (the device's read or
    /// write cost, by `op`). Takes the cost by value: cloning the `Device`
    /// (two `String`s) here cost two allocations per miss.
    fn charge(&mut self, comp: Comp, cost: IoCost, op: Op, first: u64, pages: u64, seq: bool) {
        let t = cost.time_ns(pages, seq);
        let e = cost.energy_nj_per_page * pages as f64;
        self.stats.fixed[comp as usize].add(pages, t, e);
        if !self.variants.is_empty() {
            self.charge_variants(comp, pages, seq);
        }
        if let Some(log) = self.log.as_mut() {
            let store = if matches!(comp, Comp::FileRead | Comp::FileWrite) {
                Store::File
            } else {
                Store::Swap
            };
            log.push(DeviceRequest {
                store,
                op,
                first,
                pages: pages as u32,
            });
        }
    }

    /// [`Accounting::charge`] under each pricing variant. Out of line: most runs have none,
    /// and with the loop inlined `charge` itself stopped being inlined into the replay (10% more
    /// instructions per replay of lru on a block trace with writes, callgrind).
    #[cold]
    #[inline(never)]
    fn charge_variants(&mut self, comp: Comp, pages: u64, seq: bool) {
        for v in &mut self.variants {
            let c = v.io[comp as usize];
            v.fixed[comp as usize].add(
                pages,
                c.time_ns(pages, seq),
                c.energy_nj_per_page * pages as f64,
            );
        }
    }

    /// A CPU access to a memory tier. Only counted here: its price is the same every time, so
    /// [`Accounting::priced`] multiplies once at the end instead of adding floats per hit.
    #[inline]
    fn tier_access(&mut self, tier: u8, op: Op) {
        self.stats.tier[tier as usize][op as usize].ops += 1;
    }

    /// A page filled into a memory tier (priced at the end, as `tier_access`).
    #[inline]
    fn tier_fill(&mut self, tier: u8) {
        let c = &mut self.stats.tier[tier as usize][2];
        c.ops += 1;
        c.pages += 1;
    }

    /// The stats with the hits counted in and the memory tiers' time and energy priced from
    /// their counts (CPU accesses and fills cost the same every time). Until then `stats.hits`,
    /// `stats.hits_by_tier`, the hits' share of `stats.tier[..][..].ops` and every
    /// `stats.tier[..][..].time_ns`/`energy_nj` are not filled in; every other field is live.
    pub fn priced(&self) -> Stats {
        self.priced_with(&self.stats.fixed, &self.access_cost, &self.fill_cost)
    }

    /// The stats priced under each variant of [`Accounting::with_variants`], in order: the same
    /// counts as [`Accounting::priced`], with the variant's device times and energies.
    pub fn variant_stats(&self) -> Vec<Stats> {
        self.variants
            .iter()
            .map(|v| self.priced_with(&v.fixed, &v.access_cost, &v.fill_cost))
            .collect()
    }

    fn priced_with(
        &self,
        fixed: &[Component; N_FIXED],
        access_cost: &[[(f64, f64); 2]; MAX_TIERS],
        fill_cost: &[(f64, f64); MAX_TIERS],
    ) -> Stats {
        let mut s = self.stats.clone();
        s.fixed = *fixed;
        for (t, counts) in self.hit_counts.iter().enumerate() {
            for (op_kind, &n) in counts.iter().enumerate() {
                let (op, kind) = (op_kind & 1, op_kind >> 1);
                s.hits[kind][op] += n;
                s.hits_by_tier[t] += n;
                s.tier[t][op].ops += n;
            }
        }
        for (t, tier) in s.tier.iter_mut().enumerate() {
            for (c, &(ns, nj)) in tier.iter_mut().zip(&access_cost[t]) {
                c.time_ns = c.ops as f64 * ns;
                c.energy_nj = c.ops as f64 * nj;
            }
            let (ns, nj) = fill_cost[t];
            let c = &mut tier[2];
            c.time_ns = c.pages as f64 * ns;
            c.energy_nj = c.pages as f64 * nj;
        }
        s
    }

    /// Brings the page of `r` in from its backing store.
    #[inline]
    fn fetch(&mut self, r: &PageRef) {
        match r.kind() {
            Kind::File => {
                if r.op() == Op::Read || self.system.write_miss_fetch {
                    let seq = self.file_read_cursor.advance(r.page(), 1);
                    let cost = self.system.file_store.read;
                    self.charge(Comp::FileRead, cost, Op::Read, r.page(), 1, seq);
                    self.stats.file_pages_read += 1;
                }
            }
            Kind::Anon => {
                if self.swapped(r.id) {
                    let slot = self.swap_slot.get(r.id as usize).copied().unwrap_or(0);
                    let seq = self.swap_read_cursor.advance(slot, 1);
                    if let Some(cost) = self.system.swap.as_ref().map(|d| d.read) {
                        self.charge(Comp::SwapRead, cost, Op::Read, slot, 1, seq);
                    }
                    self.stats.swap_pages_read += 1;
                } else {
                    self.stats.zero_fills += 1;
                }
            }
        }
    }

    /// Writes back `pages` (consecutive, same kind) as one request.
    fn write_pages(&mut self, kind: Kind, pages: &[PageOut]) {
        let n = pages.len() as u64;
        if n == 0 {
            return;
        }
        match kind {
            Kind::File => {
                let first = pages[0].page;
                let seq = self.file_write_cursor.advance(first, n);
                let cost = self.system.file_store.write;
                self.charge(Comp::FileWrite, cost, Op::Write, first, n, seq);
                self.stats.file_pages_written += n;
                let bucket = (63 - n.leading_zeros() as usize).min(20);
                self.stats.file_write_sizes[bucket] += 1;
            }
            Kind::Anon => {
                let first_slot = self.next_swap_slot;
                self.next_swap_slot += n;
                for (k, p) in pages.iter().enumerate() {
                    self.set_swapped(p.id);
                    let i = p.id as usize;
                    if self.swap_slot.len() <= i {
                        self.swap_slot.resize(i + 1, 0);
                    }
                    self.swap_slot[i] = first_slot + k as u64;
                }
                let seq = self.swap_write_cursor.advance(first_slot, n);
                if let Some(cost) = self.system.swap.as_ref().map(|d| d.write) {
                    self.charge(Comp::SwapWrite, cost, Op::Write, first_slot, n, seq);
                }
                self.stats.swap_pages_written += n;
            }
        }
    }
}

impl Sink for Accounting {
    #[inline]
    fn hit(&mut self, r: &PageRef, tier: u8) {
        self.hit_counts[tier as usize][r.op_kind()] += 1;
        if self.is_foreground(r) {
            self.stats.fg_hits += 1;
        }
        if r.is_write() {
            self.wear_write(tier, r.id);
        }
    }

    #[inline]
    fn miss(&mut self, r: &PageRef, tier: u8) {
        self.stats.misses[r.kind() as usize][r.op() as usize] += 1;
        if self.is_foreground(r) {
            self.stats.fg_misses += 1;
        }
        self.fetch(r);
        self.tier_fill(tier);
        self.tier_access(tier, r.op());
        self.wear_write(tier, r.id);
        if r.op() == Op::Write {
            self.wear_write(tier, r.id);
        }
    }

    fn miss_bypass(&mut self, r: &PageRef) {
        self.stats.misses[r.kind() as usize][r.op() as usize] += 1;
        if self.is_foreground(r) {
            self.stats.fg_misses += 1;
        }
        self.stats.bypasses += 1;
        self.fetch(r);
    }

    #[inline]
    fn evict(&mut self, p: PageOut) {
        self.stats.evictions += 1;
        if p.dirty {
            self.stats.dirty_evictions += 1;
            self.write_pages(p.kind, &[p]);
        }
    }

    fn write_back(&mut self, pages: &[PageOut]) {
        self.stats.cleaned_in_place += pages.len() as u64;
        if let Some(first) = pages.first() {
            self.write_pages(first.kind, pages);
        }
    }

    fn migrate(&mut self, id: PageId, _page: u64, from: u8, to: u8) {
        self.wear_write(to, id);
        if to < from {
            self.stats.migrations_up += 1;
        } else {
            self.stats.migrations_down += 1;
        }
        let (t, e) = self.migrate_cost[from as usize][to as usize];
        self.stats.fixed[Comp::Migration as usize].add(1, t, e);
        for v in &mut self.variants {
            let (t, e) = v.migrate_cost[from as usize][to as usize];
            v.fixed[Comp::Migration as usize].add(1, t, e);
        }
    }

    /// Loads `id`'s wear counts (the one per-page array a hit or fill writes).
    #[inline(always)]
    fn prefetch(&self, id: PageId) {
        if self.wear_any {
            for w in &self.wear {
                crate::policy::list::prefetch(w, id as usize);
            }
        }
    }

    fn prefetches(&self) -> bool {
        self.wear_any
    }

    fn remap(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {
        self.stats.remaps += 1;
    }

    fn event(&mut self, e: &Event) {
        match e.kind {
            EventKind::Foreground | EventKind::AppLaunch => self.foreground = Some(e.app),
            EventKind::Background | EventKind::AppExit => {
                if self.foreground == Some(e.app) || self.foreground == Some(ALL_FOREGROUND) {
                    self.foreground = None;
                }
            }
        }
    }
}
