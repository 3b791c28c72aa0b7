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
//! Per reference: O(log n) (keys are buckets in a `BTreeMap`, each a FIFO list).

use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LfudaConfig {
    /// libCacheSim's key and age rules (see the module doc).
    pub libcachesim: bool,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    key: u64,
    freq: u64,
}

pub struct Lfuda {
    cap: usize,
    lcs: bool,
    arena: Arena<Node>,
    /// Non-empty buckets by key, each in order of reaching the key (front first).
    buckets: BTreeMap<u64, List>,
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
            arena: Arena::with_capacity(ctx.capacity),
            buckets: BTreeMap::new(),
            age: 0,
            max_key: 0,
            table: SlotTable::default(),
        })
    }
}

impl Lfuda {
    fn push(&mut self, key: u64, slot: u32) {
        self.arena.get_mut(slot).key = key;
        self.buckets
            .entry(key)
            .or_default()
            .push_back(&mut self.arena, slot);
    }

    /// Unlinks `slot` from its bucket; true if the bucket is now empty (and gone).
    fn unlink(&mut self, slot: u32) -> bool {
        let key = self.arena.get(slot).key;
        let b = self
            .buckets
            .get_mut(&key)
            .expect("bucket of a resident page");
        b.unlink(&mut self.arena, slot);
        let empty = b.is_empty();
        if empty {
            self.buckets.remove(&key);
        }
        empty
    }

    /// libCacheSim's advance of the tracked minimum.
    fn advance_min(&mut self) {
        if self.age < self.max_key {
            if let Some((&k, _)) = self.buckets.range(self.age + 1..=self.max_key).next() {
                self.age = k;
            }
        }
    }

    fn victim(&self) -> u64 {
        if self.lcs {
            let k = self.age.max(1);
            if self.buckets.contains_key(&k) {
                return k;
            }
        }
        *self.buckets.keys().next().expect("a full cache has a page")
    }
}

impl Policy for Lfuda {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            n.freq += 1;
            let (old, freq) = (n.key, n.freq);
            // libCacheSim's keys grow by the age on every hit, so they can pass 2^64: they
            // saturate (libCacheSim's int64 keys would overflow).
            let new = if self.lcs {
                old.saturating_add(self.age)
            } else {
                freq.saturating_add(self.age)
            };
            let emptied = self.unlink(slot);
            if self.lcs {
                self.max_key = self.max_key.max(new);
                if emptied && self.age == old {
                    self.advance_min();
                }
            }
            self.push(new, slot);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.arena.live() == self.cap {
            let key = self.victim();
            let v = self.buckets[&key].front().expect("non-empty bucket");
            let emptied = self.unlink(v);
            self.age = key;
            if self.lcs && emptied {
                self.advance_min();
            }
            let f = self.arena.get(v).f;
            self.table.clear(f.id);
            self.arena.release(v);
            sink.evict(f.out(0));
        }
        let slot = self.arena.alloc(Node {
            f: Frame::of(r),
            key: 0,
            freq: 1,
        });
        self.push(self.age.saturating_add(1), slot);
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
