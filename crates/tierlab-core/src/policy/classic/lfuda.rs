//! LFUDA, LFU with dynamic aging: Arlitt, Cherkasova, Dilley, Friedrich & Jin, "Evaluating
//! content management techniques for Web proxy caches", ACM SIGMETRICS Performance Evaluation
//! Review 27(4), 2000 (Section 3, "LFU-DA"). Each resident page has a key `K = C * F + L`, with
//! `F` its reference count since it entered the cache, `C` its cost (1 here) and `L` the cache's
//! age; the page with the smallest key is evicted and `L` becomes its key. Ties go to the page that
//! reached the key first. No parameters.
//!
//! Two variants (`libcachesim = false | true`):
//!
//! * The paper (default): a hit sets `F += 1` and `K = F + L` with the current `L`; a new page gets
//!   `K = 1 + L`; `L` is the key of the last evicted page.
//! * libCacheSim's `LFUDA` (`lfuda(libcachesim=true)`), checked against pip `libcachesim` by
//!   tests/libcachesim_conformance.rs: a hit adds the age to the key (`K += L`, so a page's key
//!   grows by `L` per hit rather than by 1), a new page gets `K = L + 1`, and `L` is libCacheSim's
//!   tracked minimum key: set to the victim's key on eviction (to 1 while nothing has been
//!   evicted: before the first eviction hits add 0 and only move a page behind its equals), and
//!   advanced, when the bucket at `L` empties (eviction, or a hit moving its last page), to the
//!   smallest non-empty key in `(L, max]`, where `max` is the largest key a hit has produced (keys
//!   of new pages do not raise it, so the advance can skip them and `L` can stay on an empty key).
//!   When `L` names an empty key at eviction (libCacheSim would dereference an empty list there),
//!   this implementation evicts from the smallest non-empty key instead.
//!
//! In the libCacheSim variant keys grow by the age on every hit and can pass 2^64 on long
//! traces: they saturate at `u64::MAX` (libCacheSim's 64-bit signed keys would overflow), so
//! from there on the saturated pages tie and leave in the order they reached the maximum.
//!
//! Per reference: O(log n) amortized. The order is `(K, when the page reached K)`, the same
//! order as buckets by key, each a FIFO list. It is kept by slot in a [`RunHeap`]: an indexed
//! 4-ary min-heap plus a sorted run. A new page's key `L + 1` rarely falls below the one before
//! it, so it joins the run's back in O(1) and most evictions take the run's front; a hit (which
//! only raises a key) is a sift in the heap towards the leaves, where hot pages' large keys
//! already are. In libCacheSim's variant a page can end below `L` (a hit that empties
//! the bucket at `L` can give the page a key below the one `L` advances to). Such pages live in
//! a second heap, so every key in the main heap is at least `L`: the bucket at `L` exists exactly
//! when the main heap's smallest key is `L`, and the smallest key above `L` is that smallest key.
//! When an eviction takes the smallest of those below (the bucket at `L` being empty), `L` falls
//! to its key, which is then the smallest of all, and the rest of them rejoin the main heap: a
//! page goes below only by a hit, so the moves back cost O(log n) amortized per reference.
//!
//! Per resident page: a 32-byte node (page, id, kind, dirty, count, below), a 24-byte run entry,
//! a 24-byte heap entry and a 4-byte heap position; per distinct page a 4-byte table entry. A
//! hit follows id -> slot -> position -> heap entry: the replay loop's three prefetch stages load
//! them one after the other (`far`: the table entry; `mid`: the node, position and run entry;
//! `near`: the heap entry and its first children, or the run neighbours), and an eviction starts
//! loading the next victims' table entry and nodes from the run's front.

use crate::error::Result;
use crate::policy::heap::{IndexedHeap, RunHeap};
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LfudaConfig {
    /// libCacheSim's key and age rules (see the module doc).
    pub libcachesim: bool,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    freq: u64,
    /// In `below` (libCacheSim's variant: its key is under the age).
    below: bool,
}

/// (key `K`, when the page reached it).
type Key = (u64, u64);

pub struct Lfuda {
    cap: usize,
    lcs: bool,
    /// Resident pages by slot (a victim's slot goes to the page that replaces it).
    nodes: Vec<Node>,
    /// Pages whose key is at least the age (all of them in the paper's variant).
    main: RunHeap<Key>,
    /// libCacheSim's variant: pages whose key is below the age.
    below: IndexedHeap<Key>,
    /// Counts the times keys are set (the second half of [`Key`]).
    seq: u64,
    /// The age `L`.
    age: u64,
    /// libCacheSim's `max_freq`: the largest key a hit produced.
    max_key: u64,
    table: SlotTable,
}

impl PolicyDef for Lfuda {
    const NAME: &'static str = "lfuda";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "LFU with dynamic aging (Arlitt et al. 2000); libcachesim=true for libCacheSim's LFUDA.";
    type Config = LfudaConfig;
    fn build(cfg: &LfudaConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Lfuda {
            cap: ctx.capacity,
            lcs: cfg.libcachesim,
            nodes: Vec::with_capacity(ctx.capacity),
            main: RunHeap::with_capacity(ctx.capacity),
            below: IndexedHeap::default(),
            seq: 0,
            age: 0,
            max_key: 0,
            table: SlotTable::default(),
        })
    }
}

impl Lfuda {
    /// The next "when".
    #[inline]
    fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Files `slot` (in neither heap) under `key`, reached now: a new page's key (`L + 1`) may
    /// join the main heap's sorted run, a hit's goes to its heap part.
    #[inline]
    fn place(&mut self, slot: u32, key: u64, new: bool) {
        let k = (key, self.tick());
        let below = key < self.age;
        self.nodes[slot as usize].below = below;
        if below {
            self.below.push(slot, k);
        } else if new {
            self.main.push(slot, k);
        } else {
            self.main.push_heap(slot, k);
        }
    }

    /// libCacheSim's advance of the tracked minimum once the bucket at the age is empty: to the
    /// smallest key in `(L, max]`, which is the main heap's smallest (all its keys are at least
    /// `L`, none equal to it now; those below are smaller than `L`).
    #[inline]
    fn advance_min(&mut self) {
        if self.age < self.max_key {
            if let Some(((k, _), _)) = self.main.peek() {
                if k <= self.max_key {
                    self.age = k;
                }
            }
        }
    }

    /// Removes and returns the victim and its key.
    #[inline]
    fn pop_victim(&mut self) -> (u32, u64) {
        if self.lcs {
            // The front of the bucket at the age (at 1 before any eviction) if there is one,
            // else of the smallest key: below the age if any page is.
            let at = self.age.max(1);
            let main_min = self.main.peek().map(|((k, _), _)| k);
            if main_min != Some(at) && !self.below.is_empty() {
                let ((k, _), v) = self.below.pop().expect("non-empty");
                // The age falls to the smallest key of all: the rest below rejoin the main heap.
                while let Some((key, s)) = self.below.pop() {
                    self.nodes[s as usize].below = false;
                    self.main.push_heap(s, key);
                }
                return (v, k);
            }
        }
        let ((k, _), v) = self.main.pop().expect("a full cache has a page");
        (v, k)
    }
}

impl Policy for Lfuda {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        // Three stages: `far`'s table entry, `mid`'s node and place (below), `near`'s heap
        // entry or run neighbours, found through its place.
        self.table
            .prefetch_ahead(near, far, |s| self.main.prefetch_place(s));
    }

    const PREFETCH_MID: bool = true;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        self.table.prefetch_through(mid, |s| {
            prefetch(&self.nodes, s as usize);
            self.main.prefetch(s);
        });
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = &mut self.nodes[slot as usize];
            n.f.dirty |= r.is_write();
            n.freq += 1;
            let (freq, below) = (n.freq, n.below);
            if !self.lcs {
                let new = (freq.saturating_add(self.age), self.tick());
                self.main.update(slot, new);
                sink.hit(r, 0);
                return;
            }
            // libCacheSim's keys grow by the age on every hit, so they can pass 2^64: they
            // saturate (libCacheSim's int64 keys would overflow).
            let old = if below {
                self.below.key(slot).0
            } else {
                self.main.key(slot).0
            };
            let new = old.saturating_add(self.age);
            self.max_key = self.max_key.max(new);
            if below && new < self.age {
                let k = (new, self.tick());
                self.below.update(slot, k);
            } else if !below && old != self.age {
                // Stays at or above the age, and the bucket at the age keeps its pages.
                let k = (new, self.tick());
                self.main.update(slot, k);
            } else {
                if below {
                    self.below.remove(slot);
                } else {
                    self.main.remove(slot);
                    // The bucket at the age empties if this page was its last.
                    if self.main.peek().map(|((k, _), _)| k) != Some(old) {
                        self.advance_min();
                    }
                }
                self.place(slot, new, false);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let s = if self.nodes.len() < self.cap {
            self.nodes.push(Node {
                f: Frame::of(r),
                freq: 1,
                below: false,
            });
            (self.nodes.len() - 1) as u32
        } else {
            let (v, key) = self.pop_victim();
            self.age = key;
            if self.lcs && self.main.peek().map(|((k, _), _)| k) != Some(key) {
                self.advance_min();
            }
            let f = self.nodes[v as usize].f;
            self.table.clear(f.id);
            sink.evict(f.out(0));
            // A speed hint for a miss-heavy trace, where most victims are the run's front: the
            // next one's node was loaded at the previous eviction, so its table entry (which its
            // eviction clears) can be; the one after it gets its node and run entry loaded.
            let (first, second) = self.main.run_front();
            if first != NIL {
                self.table.prefetch(self.nodes[first as usize].f.id);
            }
            if second != NIL {
                prefetch(&self.nodes, second as usize);
                self.main.prefetch(second);
            }
            self.nodes[v as usize] = Node {
                f: Frame::of(r),
                freq: 1,
                below: false,
            };
            v
        };
        self.place(s, self.age.saturating_add(1), true);
        self.table.set(r.id, s);
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
    use super::{Lfuda, LfudaConfig};
    use crate::sim::check::{build, replay_ids, replay_spec_ids, skewed_pages, steps, Step};

    /// The module doc's rules, literally: every resident page's (id, key, when it reached the key,
    /// count) in a vector, buckets and the victim found by scanning it. Ids are dense in
    /// first-seen order, as `steps` numbers them.
    fn model(lcs: bool, cap: usize, pages: &[u64]) -> Vec<Step> {
        let mut ids = std::collections::HashMap::new();
        let mut res: Vec<(u32, u64, u64, u64)> = Vec::new();
        let (mut age, mut max_key) = (0u64, 0u64);
        let mut out = Vec::new();
        // The smallest key in (age, max_key], if any.
        let advance = |res: &[(u32, u64, u64, u64)], age: u64, max_key: u64| {
            let next = res.iter().map(|e| e.1).filter(|&k| k > age && k <= max_key);
            next.min().filter(|_| age < max_key).unwrap_or(age)
        };
        for (when, &p) in pages.iter().enumerate() {
            let n = ids.len() as u32;
            let id = *ids.entry(p).or_insert(n);
            if let Some(i) = res.iter().position(|e| e.0 == id) {
                let (_, old, _, freq) = res.remove(i);
                let new = if lcs {
                    old.saturating_add(age)
                } else {
                    (freq + 1).saturating_add(age)
                };
                if lcs {
                    max_key = max_key.max(new);
                    if age == old && !res.iter().any(|e| e.1 == old) {
                        age = advance(&res, age, max_key);
                    }
                }
                res.push((id, new, when as u64, freq + 1));
                out.push(Step::Hit(id));
                continue;
            }
            if cap == 0 {
                out.push(Step::Bypass(id));
                continue;
            }
            if res.len() == cap {
                let at = age.max(1);
                let k = if lcs && res.iter().any(|e| e.1 == at) {
                    at
                } else {
                    res.iter().map(|e| e.1).min().expect("full")
                };
                let i = (0..res.len())
                    .filter(|&i| res[i].1 == k)
                    .min_by_key(|&i| res[i].2)
                    .expect("bucket");
                let v = res.remove(i);
                age = k;
                if lcs && !res.iter().any(|e| e.1 == k) {
                    age = advance(&res, age, max_key);
                }
                out.push(Step::Evict(v.0));
            }
            res.push((id, age.saturating_add(1), when as u64, 1));
            out.push(Step::Miss(id));
        }
        out
    }

    /// Both variants against [`model`] on skewed random traces, step by step; the libCacheSim
    /// variant must put pages below the age on some of them (the second heap's case).
    #[test]
    fn agrees_with_the_bucket_model() {
        let mut below_seen = 0;
        for round in 0..3000u64 {
            let cap = 1 + round as usize % 7;
            let pages = skewed_pages(round, 40 + round as usize % 200, 2 + round % 6, 40, 4);
            for libcachesim in [false, true] {
                let mut p = build::<Lfuda>(&LfudaConfig { libcachesim }, cap);
                let got = steps(&mut p, &pages, |p| {
                    below_seen += usize::from(!p.below.is_empty());
                });
                let want = model(libcachesim, cap, &pages);
                assert_eq!(
                    got, want,
                    "libcachesim={libcachesim} memory {cap} on {pages:?}"
                );
            }
        }
        assert!(below_seen > 0, "no trace put a page below the age");
    }

    #[test]
    fn hand_worked_paper() {
        // Memory 2. 1 (K=1), 1 hits (F=2, K=2), 2 (K=1); 3 evicts 2 (K=1, L=1), K(3)=2;
        // 4: keys 1:2, 3:2, tie to the first to reach 2 (page 1): evict 1, L=2, K(4)=3;
        // 3 hits (F=2, K=4); 5 evicts 4 (K=3), L=3, K(5)=4; 1 evicts 3 (K=4, reached before 5).
        assert_eq!(replay_ids("lfuda", 2, &[1, 1, 2, 3, 4, 3, 5, 1]), (2, 6));
    }

    #[test]
    fn hand_worked_libcachesim() {
        // Memory 2. Before the first eviction L=0: 1 (K=1), 2 (K=1), 1 hits (K=1+0, moves behind
        // 2). 3 evicts 2 (bucket 1's front), L=1; K(3)=2. 1 hits: K=1+1=2, bucket 1 empties and
        // L=1 is its key: advance over (1, max=2]: bucket 2 holds 3, L=2. 1 is now behind 3 in
        // bucket 2. 4 evicts 3 (front of bucket L=2), L stays 2; K(4)=3. 1 hits: K=2+2=4,
        // bucket 2 empties, advance over (2, 4]: 4 at 3, L=3. 2 evicts 4.
        assert_eq!(
            replay_spec_ids("lfuda(libcachesim=true)", 2, &[1, 2, 1, 3, 1, 4, 1, 2]),
            (3, 5)
        );
    }
}
