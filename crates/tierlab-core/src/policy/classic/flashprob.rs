//! FlashProb: a DRAM cache in front of a flash cache, with probabilistic admission to flash,
//! libCacheSim's `flashProb` (cache/eviction/other/flashProb.c: "LRU cache in DRAM and use
//! probability to admit objects to flash", used to measure flash write amplification; its
//! callers are libCacheSim's SOSP'23 flash experiments: Yang et al., "FIFO queues are all you
//! need for cache eviction", SOSP 2023, Section 5.4, where probabilistic admission is the
//! baseline flash admission policy). Probabilistic (random) admission to a flash cache is the
//! baseline of Eisenman et al., "Flashield: a Hybrid Key-value Cache that Controls Flash Write
//! Amplification", NSDI 2019 (Section 2), and CacheLib's `RandomAP` (Berg et al., "The CacheLib
//! Caching Engine", OSDI 2020, Section 4.3). The source cites none of them.
//!
//! It is a whole two-level cache, not an admission filter in front of another policy (the
//! decision is taken when the DRAM cache evicts, not on a miss), so it is a policy here rather
//! than one of `policy::admission`'s filters. As libCacheSim defines it, with its defaults:
//! - the capacity `C` is split: flash gets `C - floor(ram * C)` (`ram = 0.05`,
//!   libCacheSim's `ram-size-ratio`), DRAM the rest; the DRAM cache is LRU and the flash cache
//!   FIFO (libCacheSim's defaults `ram-cache=LRU`, `disk-cache=FIFO`, the only ones here);
//! - a miss inserts the object into DRAM. While the whole cache (DRAM + flash) would overflow,
//!   DRAM's LRU object leaves DRAM and is written to flash with probability `1/floor(1/p)`
//!   (`p = 0.2`, libCacheSim's `disk-admit-prob`; libCacheSim draws `next_rand() % inv_prob`),
//!   else it is evicted; flash makes room for it by FIFO eviction; only when DRAM is empty
//!   does flash's FIFO victim go. So DRAM's share is not bounded by its nominal size: it holds
//!   whatever flash does not (all of the cache until objects reach flash);
//! - a DRAM hit moves the object to DRAM's MRU end; a flash hit changes nothing (FIFO), and
//!   the object stays in flash.
//!
//! Counters: `flash_writes` and `flash_write_bytes` (objects and bytes admitted to flash, what
//! libCacheSim's `n_obj_admit_to_disk`/`n_byte_admit_to_disk` count), and `dram_admits`.
//!
//! Randomness: `seed` (default 1) seeds a `Pcg64Mcg` generator; libCacheSim uses its own
//! generator, so the two agree in distribution (tests/test_beladysize_flashprob_libcachesim.py,
//! mean of 5 seeds on cloudPhysicsIO, unit and object sizes, 4 sizes each), not miss for miss.
//! `p = 1` (every DRAM victim goes to flash) draws nothing and is deterministic.
//!
//! Page mode: sizes are 1 and the capacity counts pages; object-size mode: bytes. Per
//! reference: O(1).

use crate::error::{Error, Result};
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef, PolicyVisitor};
use crate::sim::{PageRef, Sink};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlashProbConfig {
    /// DRAM's nominal share of the capacity (libCacheSim's `ram-size-ratio`).
    pub ram: f64,
    /// Probability that a DRAM victim is written to flash (libCacheSim's `disk-admit-prob`).
    pub p: f64,
    /// Seed of the admission draws.
    pub seed: u64,
}

impl Default for FlashProbConfig {
    fn default() -> Self {
        FlashProbConfig {
            ram: 0.05,
            p: 0.2,
            seed: 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    size: u64,
    flash: bool,
}

pub struct FlashProb {
    cap: u64,
    flash_cap: u64,
    inv_prob: u64,
    used_ram: u64,
    used_flash: u64,
    ram: List,
    flash: List,
    arena: Arena<Node>,
    table: SlotTable,
    rng: Pcg64Mcg,
    flash_writes: u64,
    flash_write_bytes: u64,
    dram_admits: u64,
}

impl PolicyDef for FlashProb {
    const NAME: &'static str = "flashprob";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "DRAM LRU in front of flash FIFO, DRAM victims written to flash with probability p \
         (libCacheSim's flashProb; seeded).";
    type Config = FlashProbConfig;
    fn build(cfg: &FlashProbConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(cfg.ram.is_finite() && (0.0..1.0).contains(&cfg.ram)) {
            return Err(Error::config(format!(
                "policy 'flashprob': ram must be in [0, 1), got {}",
                cfg.ram
            )));
        }
        if !(cfg.p.is_finite() && cfg.p > 0.0 && cfg.p <= 1.0) {
            return Err(Error::config(format!(
                "policy 'flashprob': p must be in (0, 1], got {}",
                cfg.p
            )));
        }
        let cap = ctx.capacity as u64;
        let ram_cap = (cap as f64 * cfg.ram) as u64;
        Ok(FlashProb {
            cap,
            flash_cap: cap - ram_cap,
            inv_prob: (1.0 / cfg.p) as u64,
            used_ram: 0,
            used_flash: 0,
            ram: List::default(),
            flash: List::default(),
            arena: Arena::with_capacity(ctx.capacity.min(1 << 20)),
            table: SlotTable::default(),
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            flash_writes: 0,
            flash_write_bytes: 0,
            dram_admits: 0,
        })
    }
    fn visit_object_mode<V: PolicyVisitor>(v: V) -> Option<V::Out> {
        Some(v.visit::<Self>())
    }
}

impl FlashProb {
    fn drop_slot<S: Sink>(&mut self, s: u32, sink: &mut S) {
        let f = self.arena.get(s).f;
        self.table.clear(f.id);
        self.arena.release(s);
        sink.evict(f.out(0));
    }

    fn evict_flash<S: Sink>(&mut self, sink: &mut S) {
        let v = self
            .flash
            .pop_back(&mut self.arena)
            .expect("flash has objects");
        self.used_flash -= self.arena.get(v).size;
        self.drop_slot(v, sink);
    }

    /// libCacheSim's `flashProb_evict`: one DRAM victim to flash or out, or, with DRAM empty,
    /// flash's FIFO victim out.
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let Some(v) = self.ram.pop_back(&mut self.arena) else {
            self.evict_flash(sink);
            return;
        };
        let size = self.arena.get(v).size;
        self.used_ram -= size;
        let admit = self.inv_prob <= 1 || self.rng.random_range(0..self.inv_prob) == 0;
        if !admit {
            self.drop_slot(v, sink);
            return;
        }
        self.flash_writes += 1;
        self.flash_write_bytes += size;
        if size > self.flash_cap {
            self.drop_slot(v, sink);
            return;
        }
        while self.used_flash + size > self.flash_cap {
            self.evict_flash(sink);
        }
        self.arena.get_mut(v).flash = true;
        self.flash.push_front(&mut self.arena, v);
        self.used_flash += size;
    }
}

impl Policy for FlashProb {
    table_glue!(arena);

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            if !n.flash {
                self.ram.move_to_front(&mut self.arena, slot);
            }
            sink.hit(r, 0);
            return;
        }
        let size = r.size();
        if size > self.cap {
            sink.miss_bypass(r);
            return;
        }
        while self.used_ram + self.used_flash + size > self.cap {
            self.evict(sink);
        }
        let s = self.arena.alloc(Node {
            f: Frame::of(r),
            size,
            flash: false,
        });
        self.ram.push_front(&mut self.arena, s);
        self.used_ram += size;
        self.table.set(r.id, s);
        self.dram_admits += 1;
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.arena.live()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("flash_writes", self.flash_writes),
            ("flash_write_bytes", self.flash_write_bytes),
            ("dram_admits", self.dram_admits),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;
    use crate::sim::check::replay_spec_ids;

    #[test]
    fn hand_worked_every_victim_to_flash() {
        // p = 1, capacity 4, ram 0.5: flash 2. 1 2 3 4 fill DRAM (all of the cache). 5: DRAM's
        // LRU 1 goes to flash (no room freed), then 2, then 3, for which flash's FIFO evicts 1:
        // flash [3 2], DRAM [5 4]. 2 and 3 hit in flash, 4 in DRAM (now MRU). 6: DRAM victim
        // 5 to flash, which evicts 2: flash [5 3]. 3 hits in flash; 2 misses (DRAM victim 4
        // to flash, which evicts 3).
        let spec = "flashprob(p=1.0, ram=0.5)";
        let t = [1, 2, 3, 4, 5, 2, 3, 4, 6, 3, 2];
        assert_eq!(replay_spec_ids(spec, 4, &t), (4, 7));
    }

    #[test]
    fn small_p_keeps_flash_nearly_empty() {
        // With p tiny (inv_prob huge), DRAM victims are evicted: the cache is an LRU.
        let t: Vec<u64> = (0..300u64).map(|i| (i * 7 + i / 5) % 13).collect();
        assert_eq!(
            replay_spec_ids("flashprob(p=1e-12)", 8, &t),
            crate::sim::check::replay_ids("lru", 8, &t)
        );
    }

    #[test]
    fn object_sizes() {
        // p = 1, 10 bytes, ram 0.5: flash 5. a(4) b(4) in DRAM; c(4): DRAM victim a to flash
        // [a], still no room: victim b to flash, which evicts a; c enters DRAM. b hits in
        // flash; an 11-byte object is too large; c hits in DRAM.
        let t = [(1, 4), (2, 4), (3, 4), (2, 4), (4, 11), (3, 4)];
        assert_eq!(
            replay_objects("flashprob(p=1.0, ram=0.5)", 10, &t),
            (2, 4, 4 + 4 + 4 + 11, 1)
        );
    }
}
