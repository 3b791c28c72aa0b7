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
//! Per reference: O(m) = O(1) amortized. The queues are lazy: each queue is a ring of entries
//! `(expireTime, slot, version)` in the order pages were linked at its MRU end, and a hit does not
//! unlink the page from the middle of its queue: it bumps the page's version and appends a new
//! entry to its new queue, leaving the old entry stale (its version no longer the page's). A
//! queue's LRU end is its first entry whose version is current; stale entries are dropped when
//! they reach the front, and all of them in one pass once they outnumber the resident pages (by
//! 1024), or every 2^31 references (so a stale version cannot come round again). This keeps the
//! paper's order exactly: a queue's live entries are its pages in the order they were linked,
//! and since entries are appended with non-decreasing expire times, a stale front that has not
//! expired means the live LRU page has not either, so `Adjust` still moves at most one page per
//! queue per reference, the LRU one, whenever it has expired (tested step by step against a
//! plain model of the paper's queues). A hit reads the page's id -> slot table entry and its
//! 8-byte tag (version and count; the node is only written for a write), and appends to a ring
//! end that stays in cache; a demotion reads its ring's next entries in order and the entry's
//! tag (the tags are dense, 8 bytes per page) and appends to the queue below, touching no page's
//! node or neighbours. Per resident page: a 16-byte node (page, id, kind, dirty), an 8-byte
//! tag, one 16-byte live entry and at most one stale one (plus 1024) in the rings, and 4
//! entries of `Qout` (16 bytes each); per distinct page a 4-byte table entry shared by resident
//! pages and `Qout` (a ghost's entry is its `Qout` slot with [`GHOST`] set). The replay loop's
//! three prefetch stages load a hit's chain one after the other (`far`: the table entry; `mid`:
//! the tag, or the `Qout` entry; `near`: the node).

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, Arena, List, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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

/// One link of a page at a queue's MRU end: when it expires and which version of the page it
/// is (stale when the page has since been hit, or evicted).
#[derive(Debug, Clone, Copy)]
struct Entry {
    expire: u64,
    slot: u32,
    ver: u32,
}

/// What a hit and a liveness test read: bumped at every hit and insertion of the slot.
#[derive(Debug, Clone, Copy)]
struct Tag {
    ver: u32,
    freq: u32,
}

/// The rest of a resident page: written on a write hit, read on its eviction.
#[derive(Debug, Clone, Copy)]
struct Node {
    page: u64,
    id: u32,
    kind: Kind,
    dirty: bool,
}

#[derive(Debug, Clone, Copy)]
struct Ghost {
    id: u32,
    freq: u32,
}

/// Marks a table entry that is a `Qout` slot (a remembered page), not a resident page's slot.
const GHOST: u32 = 1 << 31;

/// Stale entries allowed beyond the resident pages' count before a sweep drops them all.
const STALE_SLACK: usize = 1024;

/// Longest run of references without a sweep: a stale entry is then younger than 2^31 of its
/// slot's versions, so a 32-bit version never matches a stale entry again.
const SWEEP_EVERY: u64 = 1 << 31;

/// How many entries ahead of a queue's front the demotion and eviction paths load tags.
const AHEAD: usize = 8;

/// How many entries ahead of a queue's front the pops load the ring itself.
const RING_AHEAD: usize = 32;

/// Queues `Q0..Q(m-1)` as rings of [`Entry`] (front = LRU end), pages in slots `0..capacity`
/// (a victim's slot goes to the page that replaces it).
pub struct Mq {
    cap: usize,
    lifetime: u64,
    /// Number of queues (`m`).
    m: usize,
    /// Per queue: the expire time of its ring's front entry, live or stale (`u64::MAX` when
    /// the ring is empty); never later than its live LRU page's.
    tail_expire: Vec<u64>,
    rings: Vec<VecDeque<Entry>>,
    /// Entries in all rings (one live per resident page, the rest stale).
    entries: usize,
    tags: Vec<Tag>,
    nodes: Vec<Node>,
    /// Page id -> resident slot, or `GHOST | Qout slot`, or [`NIL`].
    table: SlotTable,
    qout_cap: usize,
    qout: List,
    ghosts: Arena<Ghost>,
    now: u64,
    /// [`STALE_SLACK`] and [`SWEEP_EVERY`] (fields so that tests can sweep often).
    stale_slack: usize,
    sweep_every: u64,
    next_sweep: u64,
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
            m: cfg.m,
            tail_expire: vec![u64::MAX; cfg.m],
            rings: vec![VecDeque::new(); cfg.m],
            entries: 0,
            tags: Vec::new(),
            nodes: Vec::new(),
            table: SlotTable::default(),
            qout_cap,
            qout: List::default(),
            ghosts: Arena::with_capacity(0),
            now: 0,
            stale_slack: STALE_SLACK,
            sweep_every: SWEEP_EVERY,
            next_sweep: SWEEP_EVERY,
        })
    }
}

impl Mq {
    /// `min(floor(log2 freq), m - 1)` (counts start at 1).
    #[inline]
    fn queue_of(&self, freq: u32) -> usize {
        (freq.max(1).ilog2() as usize).min(self.m - 1)
    }

    #[inline(always)]
    fn live(&self, e: &Entry) -> bool {
        self.tags[e.slot as usize].ver == e.ver
    }

    /// Links version `ver` of `slot` at `queue`'s MRU end with a new expire time.
    #[inline(always)]
    fn push(&mut self, slot: u32, ver: u32, queue: usize) {
        let expire = self.now + self.lifetime;
        let ring = &mut self.rings[queue];
        if ring.is_empty() {
            self.tail_expire[queue] = expire;
        }
        ring.push_back(Entry { expire, slot, ver });
        self.entries += 1;
    }

    /// Drops `queue`'s front entry and returns it; its `tail_expire` follows the new front.
    #[inline(always)]
    fn pop(&mut self, queue: usize) -> Entry {
        let ring = &mut self.rings[queue];
        let e = ring.pop_front().expect("pop from a non-empty queue");
        self.tail_expire[queue] = ring.front().map_or(u64::MAX, |f| f.expire);
        if let Some(a) = ring.get(AHEAD) {
            prefetch(&self.tags, a.slot as usize);
        }
        // The ring's line that `AHEAD` reaches a few pops later (its lines were written
        // `lifetime` references ago, out of cache by now).
        if let Some(a) = ring.get(RING_AHEAD) {
            prefetch(std::slice::from_ref(a), 0);
        }
        self.entries -= 1;
        e
    }

    /// The paper's `Adjust`: time advances and expired LRU pages go one queue down.
    #[inline(always)]
    fn adjust(&mut self) {
        self.now += 1;
        for k in 1..self.m {
            if self.tail_expire[k] < self.now {
                self.demote(k);
            }
        }
        if self.entries > 2 * self.nodes.len() + self.stale_slack || self.now >= self.next_sweep {
            self.sweep();
        }
    }

    /// Queue `k`'s front has expired: drops stale entries until the live LRU page, which goes
    /// to `Q(k-1)`'s MRU end if it has expired too.
    #[inline]
    fn demote(&mut self, k: usize) {
        loop {
            let e = self.pop(k);
            if self.live(&e) {
                self.push(e.slot, e.ver, k - 1);
                return;
            }
            if self.tail_expire[k] >= self.now {
                return;
            }
        }
    }

    /// Drops every stale entry.
    #[cold]
    fn sweep(&mut self) {
        let tags = &self.tags;
        for (ring, tail) in self.rings.iter_mut().zip(self.tail_expire.iter_mut()) {
            ring.retain(|e| tags[e.slot as usize].ver == e.ver);
            *tail = ring.front().map_or(u64::MAX, |f| f.expire);
        }
        self.entries = self.nodes.len();
        self.next_sweep = self.now + self.sweep_every;
    }

    /// The LRU page of the lowest non-empty queue, unlinked (stale fronts on the way dropped).
    #[inline]
    fn take_victim(&mut self) -> u32 {
        for q in 0..self.m {
            while let Some(e) = self.rings[q].front() {
                let e = *e;
                self.pop(q);
                if self.live(&e) {
                    if let Some(a) = self.rings[q].get(AHEAD) {
                        prefetch(&self.nodes, a.slot as usize);
                    }
                    return e.slot;
                }
            }
        }
        unreachable!("a full cache has a page")
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
            self.qout
                .prefetch_back(&self.ghosts, |n| self.table.prefetch(n.id));
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
        // A write hit sets the node's dirty bit.
        let s = self.table.lookup(near);
        if s < GHOST {
            prefetch(&self.nodes, s as usize);
        }
    }

    const PREFETCH_MID: bool = true;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        let s = self.table.lookup(mid);
        if s < GHOST {
            prefetch(&self.tags, s as usize);
        } else if s != NIL {
            self.ghosts.prefetch(s & !GHOST);
        }
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot < GHOST {
            let t = &mut self.tags[slot as usize];
            t.ver = t.ver.wrapping_add(1);
            t.freq = t.freq.saturating_add(1);
            let (ver, freq) = (t.ver, t.freq);
            if r.is_write() {
                self.nodes[slot as usize].dirty = true;
            }
            self.push(slot, ver, self.queue_of(freq));
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
        let node = Node {
            page: r.page(),
            id: r.id,
            kind: r.kind(),
            dirty: r.is_write(),
        };
        let (slot, ver) = if self.nodes.len() < self.cap {
            self.nodes.push(node);
            self.tags.push(Tag { ver: 0, freq });
            ((self.nodes.len() - 1) as u32, 0)
        } else {
            let v = self.take_victim();
            let n = self.nodes[v as usize];
            let t = self.tags[v as usize];
            self.table.clear(n.id);
            self.remember(n.id, t.freq);
            sink.evict(PageOut {
                id: n.id,
                page: n.page,
                kind: n.kind,
                dirty: n.dirty,
                tier: 0,
            });
            self.nodes[v as usize] = node;
            // A new version: the victim's stale entries stay stale.
            let ver = t.ver.wrapping_add(1);
            self.tags[v as usize] = Tag { ver, freq };
            (v, ver)
        };
        self.push(slot, ver, self.queue_of(freq));
        self.adjust();
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Mq, MqConfig};
    use crate::sim::check::{build, replay_ids, replay_spec_ids, skewed_pages, steps, Step};
    use std::collections::VecDeque;

    /// The paper's MQ written plainly (Figure 6): `m` queues of `(page, count, expireTime)`
    /// with the LRU end at the front, a page found by a scan and moved by a removal from the
    /// middle, `Adjust` demoting the LRU page of each upper queue whose expire time has passed
    /// to the MRU end of the queue below (queues 1..m in turn), `Qout` a FIFO of `(page,
    /// count)`.
    /// Also counts demotions, and those that leave an expired page at the queue's LRU end (the
    /// one-page-per-queue-per-reference backlog a lazy scheme must keep).
    fn model(cfg: &MqConfig, cap: usize, pages: &[u64]) -> (Vec<Step>, usize, usize) {
        let qout_cap = (cap as f64 * cfg.qout_ratio) as usize;
        let queue_of = |f: u32| (f.max(1).ilog2() as usize).min(cfg.m - 1);
        let mut queues: Vec<VecDeque<(u32, u32, u64)>> = vec![VecDeque::new(); cfg.m];
        let mut qout: VecDeque<(u32, u32)> = VecDeque::new();
        let mut ids = std::collections::HashMap::new();
        let mut now = 0u64;
        let mut out = Vec::new();
        let (mut demoted, mut behind) = (0, 0);
        for &page in pages {
            let n = ids.len() as u32;
            let id = *ids.entry(page).or_insert(n);
            let found = queues
                .iter()
                .enumerate()
                .find_map(|(q, l)| l.iter().position(|e| e.0 == id).map(|i| (q, i)));
            let freq = if let Some((q, i)) = found {
                let (_, f, _) = queues[q].remove(i).expect("found");
                out.push(Step::Hit(id));
                f + 1
            } else if cap == 0 {
                out.push(Step::Bypass(id));
                continue;
            } else {
                let mut f = 1;
                if let Some(i) = qout.iter().position(|g| g.0 == id) {
                    f = qout.remove(i).expect("found").1 + 1;
                }
                if queues.iter().map(VecDeque::len).sum::<usize>() == cap {
                    let q = queues.iter().position(|l| !l.is_empty()).expect("full");
                    let (v, vf, _) = queues[q].pop_front().expect("non-empty");
                    if qout_cap > 0 {
                        if qout.len() == qout_cap {
                            qout.pop_front();
                        }
                        qout.push_back((v, vf));
                    }
                    out.push(Step::Evict(v));
                }
                out.push(Step::Miss(id));
                f
            };
            queues[queue_of(freq)].push_back((id, freq, now + cfg.lifetime));
            now += 1;
            for k in 1..cfg.m {
                if queues[k].front().is_some_and(|e| e.2 < now) {
                    let (p, f, _) = queues[k].pop_front().expect("front");
                    queues[k - 1].push_back((p, f, now + cfg.lifetime));
                    demoted += 1;
                    behind += usize::from(queues[k].front().is_some_and(|e| e.2 < now));
                }
            }
        }
        (out, demoted, behind)
    }

    /// [`Mq`] against [`model`] step by step (every hit, miss and eviction) on skewed random
    /// traces, with lifetimes short enough that pages are demoted, several at once and behind
    /// each other, and with and without `Qout`.
    #[test]
    fn agrees_with_the_plain_model() {
        let (mut demotions, mut backlogs) = (0, 0);
        for round in 0..3000u64 {
            let cap = round as usize % 9;
            let cfg = MqConfig {
                m: 1 + round as usize % 8,
                lifetime: [0, 1, 2, 3, 5, 8, 20, 10_000][(round / 8) as usize % 8],
                qout_ratio: [4.0, 0.0, 1.5][(round / 64) as usize % 3],
            };
            let len = 40 + round as usize % 400;
            let pages = skewed_pages(round, len, 2 + round % 11, 60, 4);
            let mut p = build::<Mq>(&cfg, cap);
            if round % 2 == 1 {
                // Sweep the stale entries often: on every reference in some rounds.
                p.stale_slack = round as usize % 3;
                p.sweep_every = 1 + round % 50;
                p.next_sweep = p.sweep_every;
            }
            let got = steps(&mut p, &pages, |p| {
                assert!(p.entries <= 2 * p.nodes.len() + p.stale_slack + 1);
                assert_eq!(p.entries, p.rings.iter().map(VecDeque::len).sum::<usize>());
            });
            let (want, demoted, behind) = model(&cfg, cap, &pages);
            assert_eq!(got, want, "{cfg:?} memory {cap} on {pages:?}");
            demotions += demoted;
            backlogs += behind;
        }
        assert!(
            demotions > 10_000 && backlogs > 1_000,
            "{demotions} {backlogs}"
        );
    }

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
