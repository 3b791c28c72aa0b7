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
//! link before it), so only an expired page's link is read. The queues' links and expire
//! times are 16 bytes per page in one array, apart from the rest of the page (a 24-byte node:
//! page, id, kind, dirty, count), so the links a hit and a demotion rewrite are dense like
//! LRU's; a demotion touches no node. One id -> slot table serves resident pages and `Qout`'s
//! entries (a ghost's entry is its `Qout` slot with [`GHOST`] set), so a reference reads one
//! table entry. Per resident page: 40 bytes, and 4 entries of `Qout` (16 bytes each); per
//! distinct page a 4-byte table entry. The replay loop's three prefetch stages load a hit's
//! chain one after the other (`far`: the table entry; `mid`: the node and link, or the `Qout`
//! entry; `near`: the neighbours' links, which the move to the MRU end rewrites, or the
//! neighbours of a returning page's `Qout` entry, which its unlink rewrites).

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, Arena, List, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
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

/// A resident page's place in its queue and its `expireTime`: the part of a page that `Adjust`
/// and the queues' links read and write, 16 bytes, apart from the rest ([`Node`]).
#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
    expire: u64,
}

/// The rest of a resident page: read on a hit (its count, its dirty bit) and on its eviction.
#[derive(Debug, Clone, Copy)]
struct Node {
    page: u64,
    id: u32,
    freq: u32,
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

/// The queues are doubly linked lists through `links`, each with a sentinel: slot `k < m` is
/// `Qk`'s (its `next` the MRU end, its `prev` the LRU end; a queue is empty when they are the
/// sentinel itself), so no link is ever missing, and a page's slot after a link to a sentinel
/// is its queue's LRU end. Pages' slots are `m..m + capacity` (a victim's slot goes to the page
/// that replaces it).
pub struct Mq {
    cap: usize,
    lifetime: u64,
    /// Number of queues (`m`).
    m: usize,
    /// Per queue: the expire time of its LRU end (`u64::MAX` when empty).
    tail_expire: Vec<u64>,
    links: Vec<Link>,
    nodes: Vec<Node>,
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
        if ctx.capacity + cfg.m >= GHOST as usize || qout_cap >= GHOST as usize {
            return Err(Error::config(format!(
                "policy 'mq': memory ({} pages) and Qout ({qout_cap} entries) must each be \
                 below 2^31",
                ctx.capacity
            )));
        }
        let m = cfg.m;
        let mut links = Vec::with_capacity(m + ctx.capacity);
        links.extend((0..m as u32).map(|q| Link {
            prev: q,
            next: q,
            expire: 0,
        }));
        let mut nodes = Vec::with_capacity(m + ctx.capacity);
        // The sentinels' slots hold no page.
        nodes.resize(
            m,
            Node {
                page: 0,
                id: NIL,
                freq: 0,
                kind: Kind::File,
                dirty: false,
            },
        );
        Ok(Mq {
            cap: ctx.capacity,
            lifetime: cfg.lifetime,
            m,
            tail_expire: vec![u64::MAX; m],
            links,
            nodes,
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
        (freq.max(1).ilog2() as usize).min(self.m - 1)
    }

    /// Links `slot` at `queue`'s MRU end with a new expire time.
    #[inline(always)]
    fn link(&mut self, slot: u32, queue: usize) {
        let expire = self.now + self.lifetime;
        let q = queue as u32;
        let first = self.links[queue].next;
        if first == q {
            self.tail_expire[queue] = expire;
        }
        self.links[slot as usize] = Link {
            prev: q,
            next: first,
            expire,
        };
        self.links[first as usize].prev = slot;
        self.links[queue].next = slot;
    }

    /// Unlinks `slot`, keeping its queue's `tail_expire` when it was the LRU end (the new LRU end
    /// is the slot before it, whose link the unlink has just written).
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let Link { prev, next, .. } = self.links[slot as usize];
        self.links[prev as usize].next = next;
        self.links[next as usize].prev = prev;
        if (next as usize) < self.m {
            // `slot` was the LRU end of queue `next`.
            self.tail_expire[next as usize] = if prev == next {
                u64::MAX
            } else {
                // `prev` leaves next from this queue (demoted or evicted), which rewrites the
                // link before it: start loading that (and, in `Q0`, where the victims come
                // from, the page's node, read by its eviction).
                let p = self.links[prev as usize];
                prefetch(&self.links, p.prev as usize);
                if next == 0 {
                    prefetch(&self.nodes, prev as usize);
                }
                p.expire
            };
        }
    }

    /// `queue`'s LRU end, if any.
    #[inline]
    fn back(&self, queue: usize) -> Option<u32> {
        let b = self.links[queue].prev;
        (b as usize != queue).then_some(b)
    }

    /// The paper's `Adjust`: time advances and expired LRU pages go one queue down.
    #[inline]
    fn adjust(&mut self) {
        self.now += 1;
        for k in 1..self.m {
            if self.tail_expire[k] < self.now {
                let v = self
                    .back(k)
                    .expect("a queue with an expire time has a back");
                self.unlink(v);
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
        // `near`'s link (loaded by `prefetch_mid`) names the neighbours a hit rewrites.
        let s = self.table.lookup(near);
        if s < GHOST {
            if let Some(l) = self.links.get(s as usize) {
                prefetch(&self.links, l.prev as usize);
                prefetch(&self.links, l.next as usize);
            }
        } else if s != NIL {
            // A return from `Qout` unlinks its entry there.
            self.ghosts.prefetch_neighbours(s & !GHOST);
        }
    }

    const PREFETCH_MID: bool = true;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        let s = self.table.lookup(mid);
        if s < GHOST {
            prefetch(&self.nodes, s as usize);
            prefetch(&self.links, s as usize);
        } else if s != NIL {
            self.ghosts.prefetch(s & !GHOST);
        }
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot < GHOST {
            let n = &mut self.nodes[slot as usize];
            n.dirty |= r.is_write();
            n.freq = n.freq.saturating_add(1);
            let freq = n.freq;
            self.unlink(slot);
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
        let node = Node {
            page: r.page(),
            id: r.id,
            freq,
            kind: r.kind(),
            dirty: r.is_write(),
        };
        let slot = if self.nodes.len() - self.m < self.cap {
            self.links.push(Link {
                prev: NIL,
                next: NIL,
                expire: 0,
            });
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let q = (0..self.m)
                .find(|&i| self.back(i).is_some())
                .expect("a full cache has a page");
            let v = self.back(q).expect("non-empty");
            self.unlink(v);
            let n = self.nodes[v as usize];
            self.table.clear(n.id);
            self.remember(n.id, n.freq);
            sink.evict(PageOut {
                id: n.id,
                page: n.page,
                kind: n.kind,
                dirty: n.dirty,
                tier: 0,
            });
            self.nodes[v as usize] = node;
            v
        };
        self.link(slot, self.queue_of(freq));
        self.adjust();
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.nodes.len() - self.m
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
            let got = steps(&mut p, &pages, |_| {});
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
