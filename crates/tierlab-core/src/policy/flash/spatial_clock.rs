//! Spatial Clock (Kim, Ryu & Ramachandran, SIGMETRICS 2012; described in
//! papers/bs-clock-flash-buffer.md, section II, last paragraph, and Figure 4).
//!
//! CLOCK whose circle is the resident pages sorted by logical sector number
//! (here: by `PageRef::page`, the original page number, which is the sector
//! number divided by the sectors per page): a hit sets the page's reference
//! bit; on a miss with a full buffer the hand sweeps in sector order, clears
//! set bits and evicts the first page whose bit is clear; the new page is
//! inserted at its sorted position. Victims therefore come out in ascending
//! sector order and the writes they cause are mostly sequential.
//!
//! Choices where the papers are silent (tested in tests/flash_policies.rs):
//! - A newly inserted page has its reference bit clear, as tierlab's `clock`
//!   (and libCacheSim's Clock) does; a later hit sets it.
//! - After an eviction the hand points at the victim's successor in sector
//!   order (wrapping from the highest sector to the lowest).
//!
//! Data structure ([`SpatialRing`]): the ring is a doubly linked circular list
//! of slots in sector order, so each hand step is O(1); a `BTreeMap` keyed by
//! page number is consulted only on a miss, to find the insertion point
//! (O(log n)); a dense `SlotTable` maps page ids to slots, so a hit costs one
//! array lookup.

use crate::error::Result;
use crate::policy::list::{SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One resident page in the sector-ordered ring.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RingNode {
    pub frame: Frame,
    pub referenced: bool,
    /// Written to flash ahead of its eviction by a BS-CLOCK bulk write.
    pub written_ahead: bool,
    prev: u32,
    next: u32,
}

impl RingNode {
    /// The slot after this one in sector order (wrapping).
    #[inline]
    pub fn next_slot(&self) -> u32 {
        self.next
    }
}

/// Resident pages in a circle sorted by page number, with a clock hand.
#[derive(Debug, Default)]
pub(crate) struct SpatialRing {
    nodes: Vec<RingNode>,
    free: Vec<u32>,
    index: BTreeMap<u64, u32>,
    pub table: SlotTable,
    hand: u32,
    len: usize,
}

impl SpatialRing {
    pub fn with_capacity(n: usize) -> Self {
        SpatialRing {
            nodes: Vec::with_capacity(n),
            hand: NIL,
            ..Default::default()
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn node(&self, slot: u32) -> &RingNode {
        &self.nodes[slot as usize]
    }

    #[inline]
    pub fn node_mut(&mut self, slot: u32) -> &mut RingNode {
        &mut self.nodes[slot as usize]
    }

    /// The slot after `slot` in sector order (wrapping).
    #[inline]
    pub fn next(&self, slot: u32) -> u32 {
        self.nodes[slot as usize].next
    }

    /// Inserts a page (not resident) at its sorted position, reference bit clear.
    pub fn insert(&mut self, frame: Frame) -> u32 {
        let node = RingNode {
            frame,
            referenced: false,
            written_ahead: false,
            prev: NIL,
            next: NIL,
        };
        let slot = if let Some(s) = self.free.pop() {
            self.nodes[s as usize] = node;
            s
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        if self.len == 0 {
            self.nodes[slot as usize].prev = slot;
            self.nodes[slot as usize].next = slot;
            self.hand = slot;
        } else {
            // Successor: the first page above this one, or (wrapping) the lowest.
            let succ = match self.index.range(frame.page..).next() {
                Some((_, &s)) => s,
                None => *self.index.values().next().expect("non-empty ring"),
            };
            let pred = self.nodes[succ as usize].prev;
            self.nodes[slot as usize].prev = pred;
            self.nodes[slot as usize].next = succ;
            self.nodes[pred as usize].next = slot;
            self.nodes[succ as usize].prev = slot;
        }
        self.index.insert(frame.page, slot);
        self.table.set(frame.id, slot);
        self.len += 1;
        slot
    }

    /// Removes a resident page; a hand on it moves to its successor.
    pub fn remove(&mut self, slot: u32) {
        let RingNode {
            prev, next, frame, ..
        } = self.nodes[slot as usize];
        if self.len == 1 {
            self.hand = NIL;
        } else {
            self.nodes[prev as usize].next = next;
            self.nodes[next as usize].prev = prev;
            if self.hand == slot {
                self.hand = next;
            }
        }
        self.index.remove(&frame.page);
        self.table.clear(frame.id);
        self.free.push(slot);
        self.len -= 1;
    }

    /// Sweeps from the hand, clearing reference bits, and returns the first
    /// slot whose bit is clear (the hand is left on it). The ring must not be
    /// empty.
    pub fn sweep(&mut self) -> u32 {
        debug_assert!(self.len > 0);
        loop {
            let n = &mut self.nodes[self.hand as usize];
            if n.referenced {
                n.referenced = false;
                self.hand = n.next;
            } else {
                return self.hand;
            }
        }
    }

    /// Resident page numbers in ring order starting at the hand (tests, debugging).
    pub fn order_from_hand(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len);
        let mut s = self.hand;
        for _ in 0..self.len {
            out.push(self.nodes[s as usize].frame.page);
            s = self.nodes[s as usize].next;
        }
        out
    }

    /// The node of resident page `page` (O(log n); tests and tools).
    pub fn find(&self, page: u64) -> Option<&RingNode> {
        self.index.get(&page).map(|&s| &self.nodes[s as usize])
    }

    /// Records a reference to a resident page.
    #[inline]
    pub fn touch(&mut self, slot: u32, write: bool) {
        let n = &mut self.nodes[slot as usize];
        n.referenced = true;
        n.frame.dirty |= write;
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpatialClockConfig {}

/// Spatial Clock: CLOCK over the resident pages in sector order.
pub struct SpatialClock {
    cap: usize,
    ring: SpatialRing,
}

impl PolicyDef for SpatialClock {
    const NAME: &'static str = "spatial-clock";
    const ALIASES: &'static [&'static str] = &["sclock", "s-clock", "spatialclock"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "Spatial Clock (Kim et al., SIGMETRICS'12): CLOCK over resident \
         pages kept in logical-sector order (bs-clock paper, section II, Fig. 4).";
    type Config = SpatialClockConfig;
    fn build(_cfg: &SpatialClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(SpatialClock {
            cap: ctx.capacity,
            ring: SpatialRing::with_capacity(ctx.capacity),
        })
    }
}

impl SpatialClock {
    /// Resident pages in sweep order from the hand (tests).
    pub fn order_from_hand(&self) -> Vec<u64> {
        self.ring.order_from_hand()
    }
}

impl Policy for SpatialClock {
    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.ring.table.get(r.id);
        if slot != NIL {
            self.ring.touch(slot, r.is_write());
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.ring.len() == self.cap {
            let v = self.ring.sweep();
            let victim = self.ring.node(v).frame;
            self.ring.remove(v);
            sink.evict(victim.out(0));
        }
        self.ring.insert(Frame::of(r));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.ring.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.ring.len()
    }
}
