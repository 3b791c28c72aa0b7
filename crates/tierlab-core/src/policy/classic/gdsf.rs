//! GDSF, Greedy-Dual-Size-Frequency: Cherkasova, "Improving WWW proxies performance with
//! Greedy-Dual-Size-Frequency caching policy", HP Laboratories report HPL-98-69R1, 1998
//! (Section 3). Each resident object has a key `H = L + F * C / S`: `F` its reference count since
//! it entered the cache, `C` its cost, `S` its size and `L` the cache's inflation value; the
//! object with the smallest key is evicted and `L` becomes its key (Greedy-Dual-Size of Cao &
//! Irani 1997 with a frequency factor). A hit recomputes `H` with the current `L`. Ties go to the
//! object whose key was set first.
//!
//! `cost` is the paper's `C` (default 1: GDSF(1), which aims at the hit ratio). libCacheSim's
//! `GDSF` uses `C = 10^6`; with unit sizes every key is then an integer times 10^6 and the
//! decisions equal `C = 1` exactly while keys stay below 2^53 / 10^6 (about 9 * 10^9 references).
//!
//! `libcachesim = true` follows libCacheSim's `GDSF`, checked against pip `libcachesim` by
//! tests/libcachesim_conformance.rs: it inserts the missing object first and then evicts the
//! smallest key while over capacity. So the newcomer's key is `L + C/S` with the `L` from before
//! this eviction (the paper's uses the `L` the eviction sets), and the newcomer (set last) is
//! itself the victim when every resident key is strictly larger: it is then not admitted (a
//! bypass here) and `L` still becomes its key. The paper (default) evicts before it inserts, so
//! the missing object is always admitted.
//!
//! Object sizes: every entry keeps its `size`, which is 1 in page mode (capacity in pages);
//! adding object sizes later only has to fill it from the trace and count bytes.
//!
//! Per reference: O(log n). The order is `(key, when it was set)` (distinct: one key is set per
//! reference), kept by slot in a [`RunHeap`]: an indexed 4-ary min-heap plus a sorted run. A
//! newcomer's key `L + C` never falls below the one before it (`L` never falls), so it joins the
//! run's back in O(1) and most evictions take the run's front; a hit only raises a key (a sift
//! in the heap towards the leaves, where hot objects' large keys already are).
//!
//! Per resident object: a 32-byte entry (page, id, kind, dirty, count, size), a 24-byte run
//! entry, a 24-byte heap entry and a 4-byte heap position; per distinct page a 4-byte table
//! entry. A hit follows id -> slot -> position -> heap entry: the replay loop's three prefetch
//! stages load them one after the other (`far`: the table entry; `mid`: the entry, position and
//! run entry; `near`: the heap entry and its first children, or the run neighbours), and an
//! eviction from the run starts loading the next victims' table entry and entries. A hit in page
//! mode (unit sizes) skips the division by the size (`x / 1.0 == x`, so the key is the same).

use crate::error::{Error, Result};
use crate::policy::heap::RunHeap;
use crate::policy::list::{SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GdsfConfig {
    /// The paper's `C`: cost of fetching an object (the same for all).
    pub cost: f64,
    /// libCacheSim's order of insertion and eviction (see the module doc).
    pub libcachesim: bool,
}

impl Default for GdsfConfig {
    fn default() -> Self {
        GdsfConfig {
            cost: 1.0,
            libcachesim: false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    f: Frame,
    freq: u64,
    size: u64,
}

pub struct Gdsf {
    cap: usize,
    cost: f64,
    lcs: bool,
    /// Resident objects by slot (a victim's slot goes to the object that replaces it).
    entries: Vec<Entry>,
    /// Slot by (key bits, when it was set): its place in the order.
    order: RunHeap<(u64, u64)>,
    inflation: f64,
    clock: u64,
    table: SlotTable,
}

impl PolicyDef for Gdsf {
    const NAME: &'static str = "gdsf";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Greedy-Dual-Size-Frequency (Cherkasova 1998): evict the smallest L + F*C/S.";
    type Config = GdsfConfig;
    fn build(cfg: &GdsfConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(cfg.cost.is_finite() && cfg.cost > 0.0) {
            return Err(Error::config(format!(
                "policy 'gdsf': cost must be a positive number, got {}",
                cfg.cost
            )));
        }
        Ok(Gdsf {
            cap: ctx.capacity,
            cost: cfg.cost,
            lcs: cfg.libcachesim,
            entries: Vec::with_capacity(ctx.capacity),
            order: RunHeap::with_capacity(ctx.capacity),
            inflation: 0.0,
            clock: 0,
            table: SlotTable::default(),
        })
    }
}

impl Gdsf {
    /// A speed hint after an eviction from a miss-heavy trace, where most victims are the run's
    /// front: the next one's entry was loaded by the previous call, so its table entry (which
    /// its eviction clears) can be; the one after it gets its entry and run entry loaded.
    #[inline(always)]
    fn prefetch_victims(&self) {
        let (first, second) = self.order.run_front();
        if first != NIL {
            self.table.prefetch(self.entries[first as usize].f.id);
        }
        if second != NIL {
            crate::policy::list::prefetch(&self.entries, second as usize);
            self.order.prefetch(second);
        }
    }

    /// Slot `s`'s key from its count and size (keys are positive, so their bits order like the
    /// numbers), set now.
    fn rank(&self, s: u32, inflation: f64) -> (u64, u64) {
        let e = &self.entries[s as usize];
        let value = e.freq as f64 * self.cost;
        // `x / 1.0 == x` exactly: page mode (every size 1) skips the division.
        let key = inflation
            + if e.size == 1 {
                value
            } else {
                value / e.size as f64
            };
        (key.to_bits(), self.clock)
    }
}

impl Policy for Gdsf {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        // Three stages: `far`'s table entry, `mid`'s entry and place (below), `near`'s heap
        // entry or run neighbours, found through its place.
        self.table
            .prefetch_ahead(near, far, |s| self.order.prefetch_place(s));
    }

    const PREFETCH_MID: bool = true;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        self.table.prefetch_through(mid, |s| {
            crate::policy::list::prefetch(&self.entries, s as usize);
            self.order.prefetch(s);
        });
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.clock += 1;
        let slot = self.table.get(r.id);
        if slot != NIL {
            let e = &mut self.entries[slot as usize];
            e.f.dirty |= r.is_write();
            e.freq += 1;
            self.order.update(slot, self.rank(slot, self.inflation));
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        // libCacheSim keys the newcomer before the eviction raises L.
        let before = self.inflation;
        let e = Entry {
            f: Frame::of(r),
            freq: 1,
            size: 1,
        };
        let s = if self.entries.len() < self.cap {
            self.entries.push(e);
            (self.entries.len() - 1) as u32
        } else {
            if self.lcs {
                // The newcomer's key, set last: evicted first if strictly the smallest.
                let key = self.inflation + self.cost;
                let min = self.order.peek().expect("a full cache has a page").0 .0;
                if key.to_bits() < min {
                    self.inflation = key;
                    sink.miss_bypass(r);
                    return;
                }
            }
            let ((k, _), v) = self.order.pop().expect("a full cache has a page");
            self.inflation = f64::from_bits(k);
            let f = self.entries[v as usize].f;
            self.table.clear(f.id);
            sink.evict(f.out(0));
            self.prefetch_victims();
            self.entries[v as usize] = e;
            v
        };
        let rank = self.rank(s, if self.lcs { before } else { self.inflation });
        self.order.push(s, rank);
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Gdsf, GdsfConfig};
    use crate::sim::check::{build, replay_ids, skewed_pages, steps, Step};

    /// The module doc's rules, literally: every resident object's (id, key, when it was set,
    /// count), the victim found by a scan.
    fn model(cfg: &GdsfConfig, cap: usize, pages: &[u64]) -> Vec<Step> {
        let key = |l: f64, f: u64| l + f as f64 * cfg.cost / 1.0;
        let mut ids = std::collections::HashMap::new();
        let mut res: Vec<(u32, f64, usize, u64)> = Vec::new();
        let mut l = 0.0;
        let mut out = Vec::new();
        for (t, &p) in pages.iter().enumerate() {
            let n = ids.len() as u32;
            let id = *ids.entry(p).or_insert(n);
            if let Some(e) = res.iter_mut().find(|e| e.0 == id) {
                e.3 += 1;
                (e.1, e.2) = (key(l, e.3), t);
                out.push(Step::Hit(id));
                continue;
            }
            let before = l;
            if res.len() == cap {
                let min = |e: &&(u32, f64, usize, u64)| (e.1.to_bits(), e.2);
                let m = *res.iter().min_by_key(min).expect("full");
                if cfg.libcachesim && key(l, 1) < m.1 {
                    l = key(l, 1);
                    out.push(Step::Bypass(id));
                    continue;
                }
                res.retain(|e| e.0 != m.0);
                l = m.1;
                out.push(Step::Evict(m.0));
            }
            let k = key(if cfg.libcachesim { before } else { l }, 1);
            res.push((id, k, t, 1));
            out.push(Step::Miss(id));
        }
        out
    }

    /// Both orders, three costs, against [`model`] on skewed random traces, step by step.
    #[test]
    fn agrees_with_the_scan_model() {
        for round in 0..2000u64 {
            let pages = skewed_pages(round, 30 + round as usize % 150, 6, 30, 3);
            let cap = 1 + round as usize % 6;
            let cfg = GdsfConfig {
                cost: [1.0, 0.3, 1e6][(round as usize / 6) % 3],
                libcachesim: round % 2 == 0,
            };
            let got = steps(&mut build::<Gdsf>(&cfg, cap), &pages, |_| {});
            assert_eq!(got, model(&cfg, cap, &pages), "{cfg:?} memory {cap}");
        }
    }

    #[test]
    fn hand_worked() {
        // Memory 2, unit sizes, C=1. 1 (H=1), 1 hits (H=2), 2 (H=1); 3 evicts 2, L=1, H(3)=2;
        // 4: 1 and 3 both at 2, 1's key was set first: evict 1, L=2, H(4)=3; 3 hits (F=2:
        // H=2+2=4); 1 evicts 4 (H=3), L=3, H(1)=4; 4 evicts 3 (H=4, set before 1's).
        assert_eq!(replay_ids("gdsf", 2, &[1, 1, 2, 3, 4, 3, 1, 4]), (2, 6));
    }

    #[test]
    fn hand_worked_libcachesim() {
        // Memory 2. 1 1 (H=2), 2 2 (H=2): both keys 2 > a newcomer's 0+1, so 3 is not admitted
        // and L=1; 4: newcomer key 1+1=2 is not below 1's (2, set earlier): evict 1, L=2,
        // H(4)=2 (the L before the eviction); 1: newcomer key 3 is not below 2's 2 (set
        // before 4's): evict 2, H(1)=3; 2: newcomer key 3 is not below 4's 2: evict 4.
        let spec = "gdsf(libcachesim=true)";
        assert_eq!(
            crate::sim::check::replay_spec_ids(spec, 2, &[1, 1, 2, 2, 3, 4, 1, 2]),
            (2, 6)
        );
        // The paper admits 3 (evicting 1, the first to reach key 2).
        assert_eq!(replay_ids("gdsf", 2, &[1, 1, 2, 2, 3, 1]), (2, 4));
    }
}
