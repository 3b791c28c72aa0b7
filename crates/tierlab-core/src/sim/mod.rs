//! The replay engine: page references, the accounting sink, and the one-pass
//! multi-instance replay loop.

pub mod accounting;
pub mod bench;
pub mod check;
pub mod decode;
pub mod engine;
pub mod mrc;
pub mod object;
pub mod page_ids;
pub mod results;

pub use accounting::{Accounting, Component, Stats};
pub use engine::{run, RunOptions, RunOutput};

use crate::trace::{Event, Kind, Op, RecordColumns};

/// Most memory tiers a system may have.
pub const MAX_TIERS: usize = 4;

/// Dense page id: pages are numbered 0, 1, 2, ... in order of first reference,
/// once per trace, so that policies index arrays instead of hashing.
pub type PageId = u32;

/// `next_use` of a reference whose page is never referenced again.
pub const NEVER: u64 = u64::MAX;

/// The page references of a batch, column by column. The replay loop reads two columns for
/// every reference, `ids` and the op/kind flags (5 bytes); a policy or sink reads the others
/// (page number, time, app, next use) through [`PageRef`]'s accessors only when it needs them.
/// With one 48-byte struct per reference the stream alone held a cheap policy to half the
/// machine's floor (benches/README.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefBatch {
    /// Dense page id of each reference.
    pub ids: Vec<PageId>,
    flags: Vec<u8>,
    pages: Vec<u64>,
    times: Vec<u64>,
    apps: Vec<u32>,
    /// Position of the next reference to the same page; empty unless filled by
    /// [`engine::fill_next_use`] (offline policies).
    next_use: Vec<u64>,
    /// Object size in bytes of each reference: filled only in object-size mode
    /// ([`RefBatch::push_sized`]); empty in page mode, which never touches it.
    sizes: Vec<u32>,
    /// Trace position (`seq`) of the first reference.
    pub first_seq: u64,
}

use crate::trace::columns::{FLAG_ANON, FLAG_REQ_START, FLAG_WRITE};

/// The fields of one page reference, owned (to build a [`RefBatch`] by hand, e.g. in tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefFields {
    pub time: u64,
    pub page: u64,
    pub id: PageId,
    pub app: u32,
    pub op: Op,
    pub kind: Kind,
    pub req_start: bool,
}

impl RefBatch {
    /// A batch of `refs`, numbered from `seq` 0.
    pub fn from_fields(refs: &[RefFields]) -> RefBatch {
        let mut b = RefBatch::default();
        for r in refs {
            b.push(r);
        }
        b
    }
    /// One reference at trace position `seq` (to drive a policy by hand).
    pub fn single(seq: u64, r: RefFields) -> RefBatch {
        let mut b = RefBatch::from_fields(&[r]);
        b.first_seq = seq;
        b
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// The op/kind flags of each reference (with `ids`, what the replay loop reads for every
    /// reference; decoded by [`PageRef`]'s accessors).
    pub fn flags(&self) -> &[u8] {
        &self.flags
    }
    pub fn reserve(&mut self, n: usize) {
        self.ids.reserve(n);
        self.flags.reserve(n);
        self.pages.reserve(n);
        self.times.reserve(n);
        self.apps.reserve(n);
    }
    #[inline(always)]
    pub fn push(&mut self, r: &RefFields) {
        self.ids.push(r.id);
        let mut flags = 0;
        if r.op == Op::Write {
            flags |= FLAG_WRITE;
        }
        if r.kind == Kind::Anon {
            flags |= FLAG_ANON;
        }
        if r.req_start {
            flags |= FLAG_REQ_START;
        }
        self.flags.push(flags);
        self.pages.push(r.page);
        self.times.push(r.time);
        self.apps.push(r.app);
    }
    /// One reference from its columns' values (`flags` as [`crate::trace::columns`] defines).
    #[inline(always)]
    pub(crate) fn push_raw(&mut self, id: PageId, flags: u8, page: u64, time: u64, app: u32) {
        self.ids.push(id);
        self.flags.push(flags);
        self.pages.push(page);
        self.times.push(time);
        self.apps.push(app);
    }
    /// Appends the time, page, app and flag columns (and, if `sized`, the sizes) of `cols`'
    /// single-page accesses, whose ids are already in `ids` from position `base` on. Into an
    /// empty batch the columns change hands instead of being copied; `cols` is left empty.
    pub(crate) fn take_columns(&mut self, cols: &mut RecordColumns, base: usize, sized: bool) {
        debug_assert_eq!(self.ids.len(), base + cols.accesses());
        if base == 0 && self.times.is_empty() {
            std::mem::swap(&mut self.times, &mut cols.time);
            std::mem::swap(&mut self.pages, &mut cols.page);
            std::mem::swap(&mut self.apps, &mut cols.app);
            std::mem::swap(&mut self.flags, &mut cols.flags);
            if sized {
                std::mem::swap(&mut self.sizes, &mut cols.size);
            }
        } else {
            self.times.extend_from_slice(&cols.time);
            self.pages.extend_from_slice(&cols.page);
            self.apps.extend_from_slice(&cols.app);
            self.flags.extend_from_slice(&cols.flags);
            if sized {
                self.sizes.extend_from_slice(&cols.size);
            }
        }
        cols.clear();
    }
    /// One reference of object-size mode: an object of `size` bytes.
    #[inline]
    pub fn push_sized(&mut self, r: &RefFields, size: u32) {
        self.push(r);
        self.sizes.push(size);
    }
    /// Whether the batch holds object-size references (a size column).
    #[inline]
    pub fn is_sized(&self) -> bool {
        !self.sizes.is_empty()
    }
    /// Empties the batch; the next one starts at trace position `first_seq`.
    pub fn clear(&mut self, first_seq: u64) {
        self.truncate(0);
        self.first_seq = first_seq;
    }
    pub fn truncate(&mut self, n: usize) {
        self.ids.truncate(n);
        self.flags.truncate(n);
        self.pages.truncate(n);
        self.times.truncate(n);
        self.apps.truncate(n);
        self.next_use.truncate(n);
        self.sizes.truncate(n);
    }
    /// References `range` as a batch of their own (same `seq`s).
    pub fn slice(&self, range: std::ops::Range<usize>) -> RefBatch {
        RefBatch {
            ids: self.ids[range.clone()].to_vec(),
            flags: self.flags[range.clone()].to_vec(),
            pages: self.pages[range.clone()].to_vec(),
            times: self.times[range.clone()].to_vec(),
            apps: self.apps[range.clone()].to_vec(),
            next_use: self.next_use.get(range.clone()).unwrap_or(&[]).to_vec(),
            sizes: self.sizes.get(range.clone()).unwrap_or(&[]).to_vec(),
            first_seq: self.first_seq + range.start as u64,
        }
    }
    /// The references split into batches of `n` (the last may be shorter), as the engine
    /// decodes them.
    pub fn batches(&self, n: usize) -> Vec<RefBatch> {
        let n = n.max(1);
        (0..self.len())
            .step_by(n)
            .map(|start| self.slice(start..(start + n).min(self.len())))
            .collect()
    }
    /// Sets every reference's `next_use` (the batch must start at `seq` 0 and hold the whole
    /// trace, or the future it gives is cut short).
    pub fn set_next_use(&mut self, next_use: Vec<u64>) {
        assert_eq!(next_use.len(), self.len(), "one next use per reference");
        self.next_use = next_use;
    }
    /// Reference `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> PageRef<'_> {
        PageRef {
            id: self.ids[i],
            flags: self.flags[i],
            i,
            batch: self,
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = PageRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// One page reference as a policy sees it: its page id and op/kind flags, and the rest of its
/// fields read on demand from its batch.
#[derive(Clone, Copy)]
pub struct PageRef<'a> {
    /// Dense page id.
    pub id: PageId,
    flags: u8,
    i: usize,
    batch: &'a RefBatch,
}

impl PageRef<'_> {
    #[inline(always)]
    pub fn is_write(&self) -> bool {
        self.flags & FLAG_WRITE != 0
    }
    #[inline(always)]
    pub fn op(&self) -> Op {
        if self.is_write() {
            Op::Write
        } else {
            Op::Read
        }
    }
    #[inline(always)]
    pub fn kind(&self) -> Kind {
        if self.flags & FLAG_ANON != 0 {
            Kind::Anon
        } else {
            Kind::File
        }
    }
    /// `op as usize + 2 * kind as usize`: an index for counters per op and kind.
    #[inline(always)]
    pub fn op_kind(&self) -> usize {
        (self.flags & (FLAG_WRITE | FLAG_ANON)) as usize
    }
    /// True for the first page of its request.
    #[inline(always)]
    pub fn req_start(&self) -> bool {
        self.flags & FLAG_REQ_START != 0
    }
    /// Position of this reference in the trace (0-based, page references).
    #[inline(always)]
    pub fn seq(&self) -> u64 {
        self.batch.first_seq + self.i as u64
    }
    /// Time of the request it belongs to (see `trace::Access::time`).
    #[inline(always)]
    pub fn time(&self) -> u64 {
        self.batch.times[self.i]
    }
    /// Original page number (for policies that use address order).
    #[inline(always)]
    pub fn page(&self) -> u64 {
        self.batch.pages[self.i]
    }
    #[inline(always)]
    pub fn app(&self) -> u32 {
        self.batch.apps[self.i]
    }
    /// Position of the next reference to the same page, or [`NEVER`]: only known when a
    /// policy needs the future (Belady); otherwise [`NEVER`].
    #[inline(always)]
    pub fn next_use(&self) -> u64 {
        self.batch.next_use.get(self.i).copied().unwrap_or(NEVER)
    }
    /// Size of the referenced object in bytes in object-size mode; 1 (one page) in page mode,
    /// where capacities count pages, so capacity and size are always in the same unit.
    #[inline(always)]
    pub fn size(&self) -> u64 {
        self.batch.sizes.get(self.i).map_or(1, |&s| s as u64)
    }
    /// The owned fields.
    pub fn fields(&self) -> RefFields {
        RefFields {
            time: self.time(),
            page: self.page(),
            id: self.id,
            app: self.app(),
            op: self.op(),
            kind: self.kind(),
            req_start: self.req_start(),
        }
    }
}

impl std::fmt::Debug for PageRef<'_> {
    /// The reference's fields, not its whole batch.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageRef")
            .field("seq", &self.seq())
            .field("fields", &self.fields())
            .field("next_use", &self.next_use())
            .finish()
    }
}

/// A page leaving memory (or being cleaned) as the policy reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageOut {
    pub id: PageId,
    pub page: u64,
    pub kind: Kind,
    pub dirty: bool,
    /// Tier the page was in.
    pub tier: u8,
}

/// Writes back dirty pages that stay resident as the flusher does: in page
/// order, one request per run of consecutive pages ([`Sink::write_back`]'s
/// contract). Sorts `pages`. Cost: O(n log n).
pub fn write_back_runs<S: Sink>(sink: &mut S, pages: &mut [PageOut]) {
    pages.sort_unstable_by_key(|p| p.page);
    for run in pages.chunk_by(|a, b| b.page == a.page + 1) {
        sink.write_back(run);
    }
}

/// What a policy tells the engine. The engine charges every operation through
/// the system's device models and keeps the counters; policies keep only their
/// own state. The replay loop is generic over the sink, so the conformance
/// harness can interpose a checking sink at no cost to normal runs.
pub trait Sink {
    /// `r` hit a page resident in `tier`.
    fn hit(&mut self, r: &PageRef, tier: u8);
    /// `r` missed; the page is fetched from its backing store (or zero-filled)
    /// and becomes resident in `tier`.
    fn miss(&mut self, r: &PageRef, tier: u8);
    /// `r` missed and the policy did not keep the page (bypass).
    fn miss_bypass(&mut self, r: &PageRef);
    /// A page leaves memory; if dirty it is written back to its store.
    fn evict(&mut self, p: PageOut);
    /// Dirty pages written to their store in one request (a bulk write; pages
    /// must be consecutive in `page` order) and kept resident, now clean.
    fn write_back(&mut self, pages: &[PageOut]);
    /// A resident page moves between memory tiers.
    fn migrate(&mut self, id: PageId, page: u64, from: u8, to: u8);
    /// An app life-cycle event was delivered (for per-app accounting).
    fn event(&mut self, _e: &Event) {}
    /// A resident page changes tier without a copy: its data already has a
    /// valid copy in `to` (a NOMAD shadow page), so only the mapping moves.
    /// Sinks that don't tell remaps from migrations treat it as one.
    fn remap(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.migrate(id, page, from, to)
    }
    /// A speed hint: page `id` will soon be charged (a reference a few ahead, which the replay
    /// loop knows, or the page a policy will evict or migrate next), so the sink may start
    /// loading what it keeps per page (e.g. wear counts). Must not change any state. Default:
    /// nothing.
    #[inline(always)]
    fn prefetch(&self, _id: PageId) {}
    /// Whether [`Sink::prefetch`] does anything; the replay loop asks once per batch, so sinks
    /// with nothing to load cost the loop nothing. Default: false.
    fn prefetches(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(k: u64) -> RefFields {
        RefFields {
            time: 1000 + k,
            page: 7 * k,
            id: k as PageId,
            app: (k % 3) as u32,
            op: if k.is_multiple_of(2) {
                Op::Write
            } else {
                Op::Read
            },
            kind: if k % 4 < 2 { Kind::Anon } else { Kind::File },
            req_start: k.is_multiple_of(5),
        }
    }

    #[test]
    fn every_field_reads_back_from_the_columns() {
        let all: Vec<RefFields> = (0..20).map(fields).collect();
        let b = RefBatch::from_fields(&all);
        assert_eq!(b.len(), 20);
        for (i, r) in b.iter().enumerate() {
            assert_eq!(r.fields(), all[i]);
            assert_eq!(r.seq(), i as u64);
            assert_eq!(r.next_use(), NEVER);
            assert_eq!(r.is_write(), all[i].op == Op::Write);
            assert_eq!(r.op_kind(), all[i].op as usize + 2 * all[i].kind as usize);
        }
    }

    #[test]
    fn batches_keep_positions_and_next_use() {
        let mut b = RefBatch::from_fields(&(0..10).map(fields).collect::<Vec<_>>());
        b.set_next_use((0..10).map(|k| 100 + k).collect());
        let parts = b.batches(4);
        assert_eq!(
            parts.iter().map(RefBatch::len).collect::<Vec<_>>(),
            [4, 4, 2]
        );
        let rejoined: Vec<(u64, u64, RefFields)> = parts
            .iter()
            .flat_map(|p| p.iter().map(|r| (r.seq(), r.next_use(), r.fields())))
            .collect();
        let whole: Vec<(u64, u64, RefFields)> = b
            .iter()
            .map(|r| (r.seq(), r.next_use(), r.fields()))
            .collect();
        assert_eq!(rejoined, whole);
        let mut c = parts[1].clone();
        c.truncate(1);
        assert_eq!(c.get(0).seq(), 4);
        c.clear(50);
        assert!(c.is_empty());
        c.push(&fields(3));
        assert_eq!((c.get(0).seq(), c.get(0).next_use()), (50, NEVER));
    }
}
