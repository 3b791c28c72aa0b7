//! The replay engine: page references, the accounting sink, and the one-pass
//! multi-instance replay loop.

pub mod accounting;
pub mod bench;
pub mod check;
pub mod engine;
pub mod mrc;
pub mod page_ids;
pub mod results;

pub use accounting::{Accounting, Component, Stats};
pub use engine::{run, RunOptions, RunOutput};

use crate::trace::{Event, Kind, Op};

/// Most memory tiers a system may have.
pub const MAX_TIERS: usize = 4;

/// Dense page id: pages are numbered 0, 1, 2, ... in order of first reference,
/// once per trace, so that policies index arrays instead of hashing.
pub type PageId = u32;

/// `next_use` of a reference whose page is never referenced again.
pub const NEVER: u64 = u64::MAX;

/// One page reference as a policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRef {
    /// Position of this reference in the trace (0-based, page references).
    pub seq: u64,
    /// Time of the request it belongs to (see `trace::Access::time`).
    pub time: u64,
    /// Original page number (for policies that use address order).
    pub page: u64,
    /// Position of the next reference to the same page, or [`NEVER`]. Only
    /// filled when a policy needs the future (Belady); otherwise [`NEVER`].
    pub next_use: u64,
    /// Dense page id.
    pub id: PageId,
    pub app: u32,
    pub op: Op,
    pub kind: Kind,
    /// True for the first page of its request.
    pub req_start: bool,
}

impl PageRef {
    #[inline]
    pub fn is_write(&self) -> bool {
        self.op == Op::Write
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
}
