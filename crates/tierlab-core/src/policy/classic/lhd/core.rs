//! LHD's resident objects: the table of stamps and cold entries, the key index, and an access
//! (a hit re-stamps, an insertion appends).

use super::layout::*;
use super::sampler::{ExplorerDraws, Samples};
use super::LhdConfig;
use crate::policy::list::{prefetch, NIL};

/// LHD's ranking over objects named by dense keys (page ids in page mode, slots in object-size
/// mode): shared by both modes.
pub struct LhdCore {
    pub(super) assoc: usize,
    /// Every size is 1 (page mode): a density is not divided by it (`x / 1.0 == x`).
    pub(super) unit_sizes: bool,
    /// The resident objects, in two arrays of the same index (a swap-remove moves both): what
    /// ranking reads, and the rest.
    pub(super) stamps: Vec<Stamp>,
    pub(super) cold: Vec<Cold>,
    /// Their sizes with object sizes; empty in page mode (every size is 1).
    pub(super) sizes: Vec<f32>,
    /// Key -> index in `stamps` and `cold`, NIL for a key never inserted, and possibly stale:
    /// an eviction does not clear its victim's entry (a store to a random place in an array of
    /// 4 bytes per distinct key, which a trace of mostly misses pays at almost every reference),
    /// so a key is resident exactly when its entry `p` is below `len()` and `cold[p].key` is the
    /// key ([`LhdCore::index`]): a resident index holds one resident key, and a resident key's
    /// entry is always its index.
    pub(super) pos: Vec<u32>,
    /// Per class and coarsened age, class-major (`class * MAX_AGE + age`): the EWMA'd hits and
    /// evictions, and the hit densities modelled from them.
    pub(super) hits: Box<[f32; TABLE]>,
    pub(super) evictions: Box<[f32; TABLE]>,
    /// The last age's column (`MAX_AGE - 1`, where every object ranks lowest) holds `f32::MIN`,
    /// never modelled, so that a page-mode rank needs no test of the age. The 16 rows after the
    /// classes' hold the same densities + 1 (computed as the rank adds it): an explorer's rank
    /// in page mode, so that it is one table load (`f32::MIN + 1.0` is `f32::MIN`: an explorer
    /// at the last age still ranks lowest). Rows are `STRIDE` apart (see it): a row's offset and
    /// a clamped age index it with no multiply and no bounds test.
    pub(super) densities: Box<[f32; DENSITIES]>,
    pub(super) timestamp: u64,
    pub(super) next_reconfiguration: u64,
    pub(super) reconfigurations: u32,
    /// `candidates_after(reconfigurations)` and `reconfigurations < WARMUP_RECONFIGURATIONS`,
    /// kept from one reconfiguration to the next (they change only there).
    pub(super) candidates: usize,
    pub(super) exploring: bool,
    pub(super) shift: u32,
    pub(super) ewma_objects: f32,
    pub(super) ewma_mass: f32,
    /// The ring of recent admissions' keys, and each one's index in `stamps` (NIL when it is not
    /// resident): kept in step with `pos`, so that an eviction finds their tags without first
    /// reading `pos`.
    pub(super) recent: Vec<u32>,
    pub(super) recent_at: Vec<u32>,
    /// Bit `k % 64` of word `k / 64` is set when `recent_at[k]` is not NIL: ranking and an
    /// eviction's update visit only those (on a trace that mostly misses, the recent admissions
    /// are mostly evicted already, and the ring is then mostly NIL).
    pub(super) recent_live: Vec<u64>,
    /// The ring's next place, below `recent.len()` (0 if it is empty).
    pub(super) recent_head: usize,
    /// Bit `key % 64` of every key in `recent`: an inserted key whose bit is clear is not in it.
    pub(super) recent_keys: u64,
    pub(super) ewma_victim: f32,
    pub(super) explorer_budget: i64,
    pub(super) samples: Samples,
    pub(super) explorers: ExplorerDraws,
}

impl LhdCore {
    /// `capacity` in the unit of the sizes (pages, or bytes); `unit_sizes`: every size passed to
    /// [`LhdCore::update`] is 1.0 (page mode).
    pub fn new(cfg: &LhdConfig, capacity: usize, unit_sizes: bool) -> LhdCore {
        let mut densities = zeroed::<DENSITIES>();
        for (c, row) in densities
            .chunks_mut(STRIDE)
            .take(HIT_AGE_CLASSES)
            .enumerate()
        {
            for (a, d) in row[..MAX_AGE].iter_mut().enumerate() {
                *d = match a {
                    LAST_AGE => f32::MIN,
                    a => (CLASS_ROW + c + 1) as f32 / (a + 1) as f32,
                };
            }
        }
        explorer_rows(&mut densities);
        // Page mode: room for every resident page up front, as the list policies' arenas have
        // (no copy of the arrays mid-replay). Object sizes: `capacity` is bytes.
        let room = if unit_sizes { capacity } else { 0 };
        LhdCore {
            assoc: cfg.associativity,
            unit_sizes,
            stamps: Vec::with_capacity(room),
            cold: Vec::with_capacity(room),
            sizes: Vec::new(),
            pos: Vec::new(),
            hits: zeroed(),
            evictions: zeroed(),
            densities,
            timestamp: 0,
            next_reconfiguration: ACCS_PER_RECONFIGURATION,
            reconfigurations: 0,
            candidates: candidates_after(cfg.associativity, 0),
            exploring: 0 < WARMUP_RECONFIGURATIONS,
            shift: 10,
            ewma_objects: 0.0,
            ewma_mass: 0.0,
            recent: vec![NIL; cfg.admissions],
            recent_at: vec![NIL; cfg.admissions],
            recent_live: vec![0; cfg.admissions.div_ceil(64)],
            recent_head: 0,
            recent_keys: 0,
            ewma_victim: 0.0,
            explorer_budget: (capacity as f64 * EXPLORER_BUDGET_FRACTION) as i64,
            // Page mode: every sampled eviction draws from `0..capacity` (see `Samples`).
            samples: Samples::new(
                cfg.seed,
                if unit_sizes && capacity <= u32::MAX as usize {
                    capacity
                } else {
                    0
                },
            ),
            explorers: ExplorerDraws::new(cfg.seed),
        }
    }

    /// The replay loop's hint (see [`Policy::prefetch`]): `far`'s index entry now, `near`'s
    /// stamp and the rest of it (its index entry arrived since it was `far`; a hit reads both).
    #[inline(always)]
    pub fn prefetch(&self, near: u32, far: u32) {
        prefetch(&self.pos, far as usize);
        if let Some(&p) = self.pos.get(near as usize) {
            prefetch(&self.stamps, p as usize);
            prefetch(&self.cold, p as usize);
        }
    }

    pub fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, NIL);
        }
    }

    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.index(key).is_some()
    }

    /// The index of `key` in the stamps if it is resident (see `pos`: an entry is checked
    /// against the key held at its index).
    #[inline(always)]
    pub(super) fn index(&self, key: u32) -> Option<usize> {
        let p = *self.pos.get(key as usize)? as usize;
        (p < self.cold.len() && self.cold[p].key == key).then_some(p)
    }

    pub fn len(&self) -> usize {
        self.stamps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stamps.is_empty()
    }

    /// `now - timestamp`, coarsened by the shift, at most `LAST_AGE`, from the stamp's word:
    /// with `now` in the same form and every flag bit set, the difference of the words is
    /// `(now - timestamp) << FLAG_BITS` plus the flags' complement (below `2^FLAG_BITS`), which
    /// the shift by `FLAG_BITS` more drops.
    #[inline(always)]
    pub(super) fn age(&self, s: Stamp) -> usize {
        age_of(self.now(), self.shift, s)
    }

    /// `now` in a stamp's form with every flag bit set (see [`LhdCore::age`]).
    #[inline(always)]
    pub(super) fn now(&self) -> u64 {
        self.timestamp << FLAG_BITS | ((1 << FLAG_BITS) - 1)
    }

    /// An access to `key` (size `size`): a hit if it is resident, else its insertion. Returns
    /// its index in the stamps.
    pub fn update(&mut self, key: u32, size: f32) -> usize {
        self.grow(key as usize + 1);
        match self.index(key) {
            None => self.insert(key, size, 0, 0),
            Some(i) => {
                self.hit(i, size);
                i
            }
        }
    }

    /// A hit on the object at `i`.
    #[inline]
    pub(super) fn hit(&mut self, i: usize, size: f32) {
        self.hit_stamp(i, self.stamps[i], size);
    }

    /// A hit on the object at `i` whose stamp is `s` (the page-mode access passes the stamp
    /// with the reference's dirty bit or'ed in: it is kept in the new stamp). Inlined into the
    /// page-mode access: there the call's register saves were a fifth of a hit.
    #[inline(always)]
    pub(super) fn hit_stamp(&mut self, i: usize, s: Stamp, size: f32) {
        debug_assert!(!self.unit_sizes || size == 1.0);
        let age = self.age(s);
        self.hits[s.class() * MAX_AGE + age] += 1.0;
        if s.explorer() {
            let was = if self.unit_sizes { 1.0 } else { self.sizes[i] };
            self.explorer_budget += was as i64;
        }
        let explore = self.explorers.explore();
        let explorer = explore && self.exploring && self.explorer_budget > 0;
        let c = &mut self.cold[i];
        c.last_last_hit_age = c.last_hit_age;
        c.last_hit_age = age as u16;
        let class = hit_age_class(c.last_hit_age as u64 + c.last_last_hit_age as u64);
        self.stamps[i] = Stamp::new(self.timestamp, class, explorer, s.0);
        if !self.unit_sizes {
            self.sizes[i] = size;
        }
        if explorer {
            self.explorer_budget -= size as i64;
        }
        self.tick();
    }

    /// The insertion of `key` (not resident), with its frame's page and bits (page mode; 0
    /// with object sizes); returns its index in the stamps. Inlined into the access (no call's
    /// saving and restoring of registers per miss).
    #[inline(always)]
    pub(super) fn insert(&mut self, key: u32, size: f32, page: u64, frame: u64) -> usize {
        debug_assert!(!self.unit_sizes || size == 1.0);
        let i = self.stamps.len();
        self.pos[key as usize] = i as u32;
        // A recent admission evicted and now back is a candidate again (its key is).
        if self.recent_keys >> (key % 64) & 1 != 0 {
            for k in 0..self.recent.len() {
                if self.recent[k] == key {
                    self.set_recent(k, i as u32);
                }
            }
        }
        let explore = self.explorers.explore();
        let explorer = explore && self.exploring && self.explorer_budget > 0;
        if explorer {
            self.explorer_budget -= size as i64;
        }
        // A new object's last two hit ages are 0 and `MAX_AGE` (class 0).
        let class = hit_age_class(MAX_AGE as u64);
        let stamp = Stamp::new(self.timestamp, class, explorer, frame);
        self.stamps.push(stamp);
        self.cold.push(Cold {
            page,
            key,
            last_hit_age: 0,
            last_last_hit_age: MAX_AGE as u16,
        });
        if !self.unit_sizes {
            self.sizes.push(size);
        }
        if !explore && !self.recent.is_empty() && self.new_rank(size) < self.ewma_victim {
            debug_assert_eq!(self.new_rank(size), self.density(stamp, i));
            let k = self.recent_head;
            self.recent[k] = key;
            self.set_recent(k, i as u32);
            self.recent_head = if k + 1 == self.recent.len() { 0 } else { k + 1 };
            self.recent_keys = self
                .recent
                .iter()
                .filter(|&&k| k != NIL)
                .fold(0, |m, &k| m | 1 << (k % 64));
        }
        self.tick();
        i
    }

    /// The clock, and the reconfiguration every `ACCS_PER_RECONFIGURATION` accesses.
    #[inline(always)]
    pub(super) fn tick(&mut self) {
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCS_PER_RECONFIGURATION;
            self.reconfigurations += 1;
            self.candidates = candidates_after(self.assoc, self.reconfigurations);
            self.exploring = self.reconfigurations < WARMUP_RECONFIGURATIONS;
        }
    }
}
