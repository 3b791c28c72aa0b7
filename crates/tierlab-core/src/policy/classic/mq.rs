//! MQ, Multi-Queue: Zhou, Philbin & Li, "The Multi-Queue Replacement Algorithm for Second Level
//! Buffer Caches", USENIX ATC 2001 (Section 4, Figure 6). `m` LRU queues `Q0..Q(m-1)`; a page
//! referenced `f` times lives in `Q(min(floor(log2 f), m-1))` and moves to its queue's MRU end
//! on a hit. Each page has an `expireTime = currentTime + lifeTime`, renewed when it is
//! referenced or moved; at every reference (hit or insertion) `currentTime` advances and the LRU
//! page of each queue `Qk` (k >= 1) whose `expireTime` has passed is demoted to the MRU end of
//! `Q(k-1)` (the paper's `Adjust`). The victim is the LRU page of the lowest non-empty queue; its
//! page number and count go to the history buffer `Qout` (FIFO), and a page that misses while
//! in `Qout` comes back with its remembered count plus one.
//!
//! Parameters as the paper names them, with libCacheSim's defaults (`MQ`: `n-queue=8,
//! lifetime=10000, Qout-size-ratio=4`): `m = 8` queues (the paper's choice), `lifetime = 10000`
//! references (the paper sets `lifeTime` from the workload's peak temporal distance; libCacheSim
//! fixes it, and so does this implementation), `qout_ratio = 4` (`Qout` holds 4x as many entries
//! as memory has pages). The defaults are checked against pip `libcachesim` by
//! tests/libcachesim_conformance.rs.
//!
//! Per reference: O(m) = O(1): `Adjust` compares the expire time of each upper queue's LRU end,
//! kept beside the queue (`tail_expire`, one hot cache line for all queues: pages are linked at
//! the MRU end with the newest expire time, so a queue's LRU end has its smallest and changes
//! only when that page leaves, by a hit, a demotion or an eviction, which already touch the
//! page before it), so only an expired page's node is read. One id -> slot table serves
//! resident pages and `Qout`'s entries (a ghost's entry is its `Qout` slot with [`GHOST`] set),
//! so a reference reads one table entry. Per resident page: a 40-byte node (page, id, kind,
//! dirty, count, queue, expire time, links) and 4 entries of `Qout` (16 bytes each); per
//! distinct page a 4-byte table entry.

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MqConfig {
    /// Number of LRU queues (the paper's `m`).
    pub m: usize,
    /// References a page may stay at a queue's LRU end before it is demoted (`lifeTime`).
    pub lifetime: u64,
    /// Entries of the history buffer `Qout`, as a multiple of memory's pages.
    pub qout_ratio: f64,
}

impl Default for MqConfig {
    fn default() -> Self {
        MqConfig {
            m: 8,
            lifetime: 10_000,
            qout_ratio: 4.0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    freq: u32,
    queue: u8,
    expire: u64,
}

#[derive(Debug, Clone, Copy)]
struct Ghost {
    id: u32,
    freq: u32,
}

/// Marks a table entry that is a `Qout` slot (a remembered page), not a resident page's slot.
const GHOST: u32 = 1 << 31;

pub struct Mq {
    cap: usize,
    lifetime: u64,
    queues: Vec<List>,
    /// Per queue: the expire time of its LRU end (`u64::MAX` when empty).
    tail_expire: Vec<u64>,
    arena: Arena<Node>,
    /// Page id -> resident slot, or `GHOST | Qout slot`, or [`NIL`].
    table: SlotTable,
    qout_cap: usize,
    qout: List,
    ghosts: Arena<Ghost>,
    now: u64,
}

impl PolicyDef for Mq {
    const NAME: &'static str = "mq";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Multi-Queue (Zhou et al. 2001): m LRU queues by log2 frequency, lifetime demotion, Qout.";
    type Config = MqConfig;
    fn build(cfg: &MqConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(1..=64).contains(&cfg.m) {
            return Err(Error::config(format!(
                "policy 'mq': m must be in 1..=64, got {}",
                cfg.m
            )));
        }
        if !(cfg.qout_ratio.is_finite() && cfg.qout_ratio >= 0.0) {
            return Err(Error::config(format!(
                "policy 'mq': qout_ratio must be >= 0, got {}",
                cfg.qout_ratio
            )));
        }
        let qout_cap = (ctx.capacity as f64 * cfg.qout_ratio) as usize;
        if ctx.capacity >= GHOST as usize || qout_cap >= GHOST as usize {
            return Err(Error::config(format!(
                "policy 'mq': memory ({} pages) and Qout ({qout_cap} entries) must each be \
                 below 2^31",
                ctx.capacity
            )));
        }
        Ok(Mq {
            cap: ctx.capacity,
            lifetime: cfg.lifetime,
            queues: vec![List::default(); cfg.m],
            tail_expire: vec![u64::MAX; cfg.m],
            arena: Arena::with_capacity(ctx.capacity),
            table: SlotTable::default(),
            qout_cap,
            qout: List::default(),
            ghosts: Arena::with_capacity(0),
            now: 0,
        })
    }
}

impl Mq {
    /// `min(floor(log2 freq), m - 1)` (counts start at 1).
    #[inline]
    fn queue_of(&self, freq: u32) -> usize {
        (freq.max(1).ilog2() as usize).min(self.queues.len() - 1)
    }

    #[inline]
    fn link(&mut self, slot: u32, queue: usize) {
        let expire = self.now + self.lifetime;
        if self.queues[queue].is_empty() {
            self.tail_expire[queue] = expire;
        }
        self.queues[queue].push_front(&mut self.arena, slot);
        let n = self.arena.get_mut(slot);
        n.queue = queue as u8;
        n.expire = expire;
    }

    /// Unlinks `slot` from `queue`, keeping the queue's `tail_expire` (the new LRU end is the
    /// node before `slot`, which the unlink has just written).
    #[inline]
    fn unlink(&mut self, slot: u32, queue: usize) {
        let was_tail = self.queues[queue].back() == Some(slot);
        self.queues[queue].unlink(&mut self.arena, slot);
        if was_tail {
            self.tail_expire[queue] = match self.queues[queue].back() {
                Some(t) => {
                    // The new LRU end leaves next from this queue (demoted or evicted), which
                    // rewrites the node before it: start loading that node (and, in `Q0`,
                    // where the victims come from, the table entry the eviction clears).
                    let q = self.queues[queue];
                    if let Some(p) = q.prev_of(&self.arena, t) {
                        self.arena.prefetch(p);
                    }
                    let n = self.arena.get(t);
                    if queue == 0 {
                        self.table.prefetch(n.f.id);
                    }
                    n.expire
                }
                None => u64::MAX,
            };
        }
    }

    /// The paper's `Adjust`: time advances and expired LRU pages go one queue down.
    #[inline]
    fn adjust(&mut self) {
        self.now += 1;
        for k in 1..self.queues.len() {
            if self.tail_expire[k] < self.now {
                let v = self.queues[k].back().expect("a queue with an expire time has a back");
                self.unlink(v, k);
                self.link(v, k - 1);
            }
        }
    }

    fn remember(&mut self, id: u32, freq: u32) {
        if self.qout_cap == 0 {
            return;
        }
        if self.qout.len() == self.qout_cap {
            let g = self.qout.pop_back(&mut self.ghosts).expect("full Qout");
            self.table.clear(self.ghosts.get(g).id);
            self.ghosts.release(g);
            // The next to go: its table entry and the node before it.
            self.qout.prefetch_back(&self.ghosts, |n| self.table.prefetch(n.id));
        }
        let g = self.ghosts.alloc(Ghost { id, freq });
        self.qout.push_front(&mut self.ghosts, g);
        self.table.set(id, GHOST | g);
    }
}

impl Policy for Mq {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table.prefetch(far);
        let s = self.table.lookup(near);
        if s < GHOST {
            self.arena.prefetch(s);
        } else if s != NIL {
            self.ghosts.prefetch(s & !GHOST);
        }
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot < GHOST {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            n.freq = n.freq.saturating_add(1);
            let (q, freq) = (n.queue as usize, n.freq);
            self.unlink(slot, q);
            self.link(slot, self.queue_of(freq));
            self.adjust();
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let mut freq = 1;
        if slot != NIL {
            let g = slot & !GHOST;
            freq = self.ghosts.get(g).freq.saturating_add(1);
            self.qout.unlink(&mut self.ghosts, g);
            self.ghosts.release(g);
            self.table.clear(r.id);
        }
        if self.arena.live() == self.cap {
            let q = (0..self.queues.len())
                .find(|&i| !self.queues[i].is_empty())
                .expect("a full cache has a page");
            let v = self.queues[q].back().expect("non-empty");
            self.unlink(v, q);
            let n = *self.arena.get(v);
            self.table.clear(n.f.id);
            self.arena.release(v);
            self.remember(n.f.id, n.freq);
            sink.evict(n.f.out(0));
        }
        let slot = self.arena.alloc(Node {
            f: Frame::of(r),
            freq,
            queue: 0,
            expire: 0,
        });
        self.link(slot, self.queue_of(freq));
        self.adjust();
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.arena.live()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::{replay_ids, replay_spec_ids};

    #[test]
    fn hand_worked() {
        // Memory 2, default lifetime (no demotion here). 1 1: page 1 has f=2, queue 1. 2 (Q0),
        // 3 evicts 2 (LRU of Q0; Qout remembers f=1), 2 evicts 3 and comes back with f=2 (Q1),
        // so 4 must evict from Q1: its LRU is 1. 2 hits.
        assert_eq!(replay_ids("mq", 2, &[1, 1, 2, 3, 2, 4, 2]), (2, 5));
    }

    #[test]
    fn expired_pages_are_demoted() {
        // Memory 2, lifetime 1. 1 1: page 1 in Q1, expiring at time 1+1=2. 2 (time 2 -> 3):
        // Adjust sees 1 expired (2 < 3) and demotes it to Q0's MRU end (Q0: 1 2), so 3 evicts
        // 2 and 4 evicts 1 (Q0's LRU); with the default lifetime 1 stays in Q1, 3 evicts 2, 4
        // evicts 3, and 1 hits.
        assert_eq!(
            replay_spec_ids("mq(lifetime=1)", 2, &[1, 1, 2, 3, 4, 1]),
            (1, 5)
        );
        assert_eq!(replay_ids("mq", 2, &[1, 1, 2, 3, 4, 1]), (2, 4));
    }
}
