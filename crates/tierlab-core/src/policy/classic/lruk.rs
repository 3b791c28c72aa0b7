//! LRU-K (O'Neil, O'Neil & Weikum, "The LRU-K Page Replacement Algorithm For
//! Database Disk Buffering", SIGMOD 1993, Sections 2.1-2.2): evict the
//! resident page whose K-th most recent reference is oldest (largest
//! backward K-distance). Pages with fewer than K known references have an
//! infinite distance and go first; among them the one whose latest reference
//! is oldest (the paper's subsidiary LRU rule). K = 2 by default, the
//! paper's LRU-2.
//!
//! Choices where the paper leaves parameters open: the Correlated Reference
//! Period is 0 (every reference counts; Section 2.1.1 discusses non-zero
//! periods for correlated bursts), and the reference history HIST of a page
//! is retained after eviction for the whole run (the paper's Retained
//! Information Period, Section 2.1.2, set to infinity): a page that comes back
//! is ranked by its remembered references. Both are configurable: `crp`
//! (references) and `history` (false forgets a page's history on eviction).
//!
//! Per reference: O(log n). The victim order is the key `(K-th most recent reference, latest
//! reference, page)`. Pages with fewer than K references (K-th unknown, the infinite class) are
//! ordered by their latest reference alone, and every page enters that class with the newest
//! reference of the run, so the class is an LRU list (O(1): its front is the victim whenever it
//! is non-empty, since an unknown K-th reference sorts first). The other pages sit in an indexed
//! 4-ary min-heap ([`IndexedHeap`]): a hit gives a page a larger key (its previous (K-1)-th
//! reference becomes its K-th), a sift towards the leaves. Reference times are positions in
//! the trace, one per reference and each recorded in one page's history only, so two pages
//! never share a known K-th reference: the heap orders by the K-th reference alone (8 bytes,
//! 16 with the slot, where the full key took 32), which is the full key's order.
//!
//! Per resident page: a 24-byte frame with its links (the infinite class's list), a 16-byte
//! heap entry, a 4-byte heap position and a dirty bit kept apart ([`SlotBits`]: a hit of a
//! page with K known references reads its table entry, history, position and heap entries,
//! not its frame); per distinct page: a 4-byte table entry and its K reference times (8 bytes
//! each). The replay loop's three prefetch stages load a hit's chain one after the other
//! (`far`: table entry and history; `mid`: the position, or the frame in the infinite class;
//! `near`: the heap entry and its first children), and an eviction from the infinite class
//! starts loading the next victims' frames and table entry. A miss whose victim is the heap's
//! root and whose page has K known references puts the page in the victim's place (one sift
//! down, where a pop and a push took two sifts; the heap's keys are distinct, so the order of
//! its minima is the same).
//!
//! The ordering by the K-th reference alone needs reference times that strictly grow from one
//! reference to the next, as the infinite class's LRU order already does: `PageRef::seq`, the
//! reference's position in the trace.

use crate::error::{Error, Result};
use crate::policy::heap::IndexedHeap;
use crate::policy::list::{prefetch, Arena, List, SlotBits, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruKConfig {
    /// K: references remembered per page.
    pub k: usize,
    /// Correlated Reference Period, in references: a re-reference within it
    /// of the page's latest reference replaces that reference instead of
    /// adding one.
    pub crp: u64,
    /// Keep the history of evicted pages (Retained Information Period = run).
    pub history: bool,
}

impl Default for LruKConfig {
    fn default() -> Self {
        LruKConfig {
            k: 2,
            crp: 0,
            history: true,
        }
    }
}

pub struct LruK {
    cap: usize,
    k: usize,
    crp: u64,
    history: bool,
    /// Per page id: its last K reference times (+1), most recent first; 0 = none.
    hist: Vec<u64>,
    /// Resident pages by slot (their `dirty` is in `dirty` while they are resident).
    frames: Arena<Frame>,
    /// Dirty bit by slot.
    dirty: SlotBits,
    table: SlotTable,
    /// Pages whose K-th reference is unknown, by latest reference (front: oldest).
    infinite: List,
    /// The other pages, by their K-th reference + 1 (distinct among them).
    finite: IndexedHeap<u64>,
    now: u64,
}

impl PolicyDef for LruK {
    const NAME: &'static str = "lru-k";
    const ALIASES: &'static [&'static str] = &["lruk", "lru2"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "LRU-K (O'Neil et al., SIGMOD 1993): evict the oldest K-th most recent reference; K=2.";
    type Config = LruKConfig;
    fn build(cfg: &LruKConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(1..=16).contains(&cfg.k) {
            return Err(Error::config(format!(
                "policy 'lru-k': k must be in 1..=16, got {}",
                cfg.k
            )));
        }
        Ok(LruK {
            cap: ctx.capacity,
            k: cfg.k,
            crp: cfg.crp,
            history: cfg.history,
            hist: Vec::new(),
            frames: Arena::with_capacity(ctx.capacity),
            dirty: SlotBits::with_slots(ctx.capacity),
            table: SlotTable::default(),
            infinite: List::default(),
            finite: IndexedHeap::with_capacity(ctx.capacity),
            now: 0,
        })
    }
}

impl LruK {
    fn record(&mut self, id: u32) {
        let k = self.k;
        let t = self.now + 1;
        let h = &mut self.hist[id as usize * k..(id as usize + 1) * k];
        if h[0] != 0 && t - h[0] <= self.crp {
            h[0] = t;
        } else {
            // A loop, not `copy_within`: K is small (2 by default) and a call to `memmove`
            // would cost more than the copy.
            for i in (1..k).rev() {
                h[i] = h[i - 1];
            }
            h[0] = t;
        }
    }

    /// Page `id`'s K-th most recent reference + 1 (0: unknown).
    #[inline]
    fn kth(&self, id: u32) -> u64 {
        self.hist[id as usize * self.k + self.k - 1]
    }

    /// Files slot `s` (in neither class) under page `id`'s current key.
    #[inline]
    fn place(&mut self, s: u32, id: u32) {
        let kth = self.kth(id);
        if kth == 0 {
            // The newest latest reference of all: the back of the class.
            self.infinite.push_back(&mut self.frames, s);
        } else {
            self.finite.push(s, kth);
        }
    }
}

impl Policy for LruK {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.hist, far as usize * self.k);
        // `near`'s position (loaded by `prefetch_mid`) leads to its heap entry.
        self.table.prefetch_ahead(near, far, |s| {
            self.finite.prefetch_entry(s);
        });
    }

    const PREFETCH_MID: bool = true;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        // `mid`'s history is cached by now: a page in the heap needs its position, one in the
        // infinite class its frame's links.
        self.table.prefetch_through(mid, |s| {
            match self.hist.get(mid as usize * self.k + self.k - 1) {
                Some(0) => self.frames.prefetch(s),
                _ => self.finite.prefetch_pos(s),
            }
        });
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.now = r.seq();
        let slot = self.table.get(r.id);
        if slot != NIL {
            let infinite = self.kth(r.id) == 0;
            self.record(r.id);
            if infinite {
                self.infinite.unlink(&mut self.frames, slot);
                self.place(slot, r.id);
            } else {
                self.finite.update(slot, self.kth(r.id));
            }
            self.dirty.set_if(slot as usize, r.is_write());
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        // The victim's heap entry, left at the root for the newcomer (see below).
        let mut root = false;
        let s = if self.frames.live() < self.cap {
            let s = self.frames.alloc(Frame::of(r));
            self.dirty.grow(s as usize + 1);
            s
        } else {
            // An unknown K-th reference sorts before every known one.
            let s = match self.infinite.front() {
                Some(s) => {
                    self.infinite.unlink(&mut self.frames, s);
                    // A speed hint for a miss-heavy trace: the next victim's frame was loaded
                    // at the previous eviction, so its table entry (and its history, cleared
                    // without `history`) can be; the one after it gets its frame loaded.
                    if let Some(first) = self.infinite.front() {
                        let id = self.frames.get(first).id;
                        self.table.prefetch(id);
                        if !self.history {
                            prefetch(&self.hist, id as usize * self.k);
                        }
                        if let Some(second) = self.infinite.next_of(&self.frames, first) {
                            self.frames.prefetch(second);
                        }
                    }
                    s
                }
                None => {
                    root = true;
                    self.finite.peek().expect("full cache").1
                }
            };
            let mut victim = *self.frames.get(s);
            victim.dirty = self.dirty.get(s as usize);
            let vid = victim.id;
            self.table.clear(vid);
            if !self.history {
                let k = self.k;
                self.hist[vid as usize * k..(vid as usize + 1) * k].fill(0);
            }
            sink.evict(victim.out(0));
            *self.frames.get_mut(s) = Frame::of(r);
            s
        };
        self.dirty.assign(s as usize, r.is_write());
        self.record(r.id);
        let kth = self.kth(r.id);
        if root && kth != 0 {
            // The newcomer takes the victim's slot and its place at the root: one sift down
            // instead of a pop (a sift down from the root) and a push (a sift up). Keys in the
            // heap are distinct, so its minimum, the next victim, is the same either way.
            self.finite.update(s, kth);
        } else {
            if root {
                self.finite.pop();
            }
            self.place(s, r.id);
        }
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
        if self.hist.len() < n * self.k {
            self.hist.resize(n * self.k, 0);
        }
    }

    fn resident(&self) -> usize {
        self.frames.live()
    }
}

#[cfg(test)]
mod tests {
    use super::{LruK, LruKConfig};
    use crate::sim::check::{build, replay_ids, skewed_pages, steps, Step};

    /// The module doc's rule, literally: every page's last K references (+1, 0 = none), and
    /// the resident page with the smallest (K-th, latest, id) found by a scan.
    fn model(cfg: &LruKConfig, cap: usize, pages: &[u64]) -> Vec<Step> {
        let k = cfg.k;
        let mut ids = std::collections::HashMap::new();
        let mut hist: Vec<Vec<u64>> = Vec::new();
        let mut res: Vec<u32> = Vec::new();
        let mut out = Vec::new();
        for (t, &p) in pages.iter().enumerate() {
            let n = ids.len() as u32;
            let id = *ids.entry(p).or_insert(n);
            if id as usize == hist.len() {
                hist.push(vec![0; k]);
            }
            let t = t as u64 + 1;
            let record = |h: &mut Vec<u64>| {
                if h[0] != 0 && t - h[0] <= cfg.crp {
                    h[0] = t;
                } else {
                    h.rotate_right(1);
                    h[0] = t;
                }
            };
            if res.contains(&id) {
                record(&mut hist[id as usize]);
                out.push(Step::Hit(id));
                continue;
            }
            if res.len() == cap {
                let (i, _) = res
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, &v)| (hist[v as usize][k - 1], hist[v as usize][0], v))
                    .expect("full");
                let v = res.remove(i);
                if !cfg.history {
                    hist[v as usize].fill(0);
                }
                out.push(Step::Evict(v));
            }
            record(&mut hist[id as usize]);
            res.push(id);
            out.push(Step::Miss(id));
        }
        out
    }

    /// K = 1..4, with and without a correlated period and history, against [`model`] on skewed
    /// random traces, step by step.
    #[test]
    fn agrees_with_the_scan_model() {
        for round in 0..2000u64 {
            let cap = 1 + round as usize % 6;
            let pages = skewed_pages(round, 30 + round as usize % 150, 6, 30, 3);
            let cfg = LruKConfig {
                k: 1 + (round as usize / 6) % 4,
                crp: [0, 0, 2, 5][(round as usize / 24) % 4],
                history: round % 5 != 0,
            };
            let got = steps(&mut build::<LruK>(&cfg, cap), &pages, |_| {});
            assert_eq!(got, model(&cfg, cap, &pages), "{cfg:?} memory {cap}");
        }
    }

    #[test]
    fn lru2_keeps_the_page_seen_twice() {
        // Memory 2. a a b c: at c, a has two references (K-distance finite),
        // b only one (infinite): b goes. Then a hits, b misses.
        assert_eq!(replay_ids("lru-k", 2, &[1, 1, 2, 3, 1, 2]), (2, 4));
        // LRU would evict a at c (a is least recent): a misses too.
        assert_eq!(replay_ids("lru", 2, &[1, 1, 2, 3, 1, 2]), (1, 5));
    }

    #[test]
    fn history_survives_eviction() {
        // Memory 1: 1 1 2 1 2. With history, at the second 2 (a miss), page 1
        // (two references) ... memory 1 always evicts the only page: all
        // misses after the first hit, whatever the history.
        assert_eq!(replay_ids("lru-k", 1, &[1, 1, 2, 1, 2]), (1, 4));
        // Memory 2: 1 1 2 2 3 1: at 3 both 1 and 2 have finite K-distances;
        // 1's second-latest reference (t=0) is older than 2's (t=2): 1 goes.
        assert_eq!(replay_ids("lru-k", 2, &[1, 1, 2, 2, 3, 1]), (2, 4));
    }
}
