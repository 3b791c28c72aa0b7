//! The four-area cost-aware CLOCK for swap on fast NVM (Bahn, "Memory
//! Allocation and Reclamation Policies for Fast Swap Support in Mobile
//! Systems", JIIBC 24(4), 2024; papers/emram-swap-four-area-clock.md).
//!
//! Section II, Figures 1-2: page references are split into file-read,
//! file-write, anon-read and anon-write, and memory is logically split into
//! four areas of those names. Each area is a CLOCK over a one-bit flag: the
//! reference bit in the read areas, the modified bit in the write areas (the
//! hand clears the flag of a page it passes and takes the first page whose flag
//! is clear; write areas thereby keep pages *written* recently, as in the
//! paper's reference [12]). A page's header can sit in a read area and a write
//! area at once; the page leaves memory only when its header is in neither.
//! Each area has a ghost ("shadow") list of the page ids it recently evicted,
//! without data, dropping its oldest entry when full; a reference to a page in
//! the ghost list of the area it would enter shows that the area would have
//! hit had it been larger, and grows that area.
//!
//! # What the paper leaves open, and the choices made here
//! * **Adaptation rule** (the paper gives no formula, only that growth weighs
//!   the ghost references together with the read/write cost of the backing
//!   device: flash for file pages, eMRAM for swap). Each area `a` has a target
//!   size `t_a` (the four sum to the capacity). A ghost hit in `a` that
//!   misses memory grows `t_a` by `step * w_a / w_min` pages and takes the
//!   same amount from the other three areas in proportion to what each holds
//!   above `min_area`. `w_a` is the device time the miss would have saved:
//!   file-read `file_read_ns`; anon-read `swap_read_ns`; anon-write
//!   `swap_write_ns + swap_read_ns` (the page was written back when it left
//!   memory and is read back now); file-write `file_write_ns` (default 0:
//!   Section III notes that file pages are written through by journaling, so
//!   keeping them saves no write). `w_min` is the smallest positive weight, so
//!   the cheapest area moves by `step` pages per ghost hit, as ARC's target
//!   moves by one page. Why: a ghost hit rate estimates the hits an area would
//!   gain per extra page; multiplied by the miss cost it is the I/O time saved
//!   per page, and moving space toward the area with the larger product is a
//!   gradient step on I/O time. A ghost hit on a page that is still resident
//!   through its other area saves nothing and does not adapt.
//! * **Which area gives up a page**: on a miss with memory full, the area
//!   holding the most headers above its target (`occupancy - target`, among
//!   non-empty areas) runs its CLOCK once; this repeats until a page has left
//!   memory (evicting a header of a page that is also in its other area frees
//!   nothing).
//! * **New headers** enter behind the hand with a clear flag, as tierlab's
//!   CLOCK baseline does; a read sets the reference bit, a write sets the
//!   modified bit. Dirtiness is kept apart from the modified bit (the kernel
//!   moves the PTE dirty bit to the page's dirty flag before clearing it), so
//!   a page is written back only when it leaves memory.
//! * **Initial targets**: a quarter of memory each; **ghost lists** hold up to
//!   `ghost_size` x capacity ids each, by default a quarter, so that the four
//!   remember as many evicted pages as memory holds (ARC's B1 + B2 <= c).
//!   On 25 M-reference captures of tierlab's traces a quarter did better than
//!   larger ghosts (mean saving over CLOCK 12.9% at 0.25, 11.3% at 0.5, 7.8%
//!   at 2).
//! * A page's kind is the kind of the reference that brought it in.
//!
//! Parameters (defaults): `step` 1, `ghost_size` 0.25, `min_area` 0.01, and the
//! device times of the `flash-ufs31` file store and `emram-swap` swap presets
//! (device/presets_swap.rs); set them to the system's devices when replaying
//! on others.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, Arena, List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::{Kind, Op};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FourAreaConfig {
    /// Pages a ghost hit of the cheapest area moves toward it.
    pub step: f64,
    /// Bound of each ghost list, as a fraction of the capacity.
    pub ghost_size: f64,
    /// Smallest target of an area, as a fraction of the capacity.
    pub min_area: f64,
    /// Device time of reading one file page (ns).
    pub file_read_ns: f64,
    /// Device time of writing one file page that replacement could save (ns).
    pub file_write_ns: f64,
    /// Device time of reading one page from swap (ns).
    pub swap_read_ns: f64,
    /// Device time of writing one page to swap (ns).
    pub swap_write_ns: f64,
}

impl Default for FourAreaConfig {
    fn default() -> Self {
        let (fr, sr, sw) = crate::device::presets_swap::paper_costs_ns();
        FourAreaConfig {
            step: 1.0,
            ghost_size: 0.25,
            min_area: 0.01,
            file_read_ns: fr,
            file_write_ns: 0.0,
            swap_read_ns: sr,
            swap_write_ns: sw,
        }
    }
}

/// Area index: kind * 2 + op (0 file-read, 1 file-write, 2 anon-read, 3 anon-write).
#[inline]
fn area(kind: Kind, op: Op) -> usize {
    kind as usize * 2 + op as usize
}

pub const AREA_NAMES: [&str; 4] = ["file_read", "file_write", "anon_read", "anon_write"];

/// Flag bit of area `a` in `PageState::flags`: REF for read areas, MOD for write areas.
const REF: u8 = 1;
const MOD: u8 = 2;
const DIRTY: u8 = 4;
const ANON: u8 = 8;

#[inline]
fn flag_of(a: usize) -> u8 {
    if a & 1 == 0 {
        REF
    } else {
        MOD
    }
}

#[derive(Debug, Clone, Copy)]
struct PageState {
    /// Node in the read area / write area of the page's kind (or NIL).
    node: [u32; 2],
    /// Node in the read / write ghost list of the page's kind (or NIL).
    ghost: [u32; 2],
    flags: u8,
    page: u64,
}

impl Default for PageState {
    fn default() -> Self {
        PageState {
            node: [NIL; 2],
            ghost: [NIL; 2],
            flags: 0,
            page: 0,
        }
    }
}

impl PageState {
    #[inline]
    fn resident(&self) -> bool {
        self.node[0] != NIL || self.node[1] != NIL
    }
    #[inline]
    fn kind(&self) -> Kind {
        if self.flags & ANON != 0 {
            Kind::Anon
        } else {
            Kind::File
        }
    }
}

pub struct FourArea {
    cap: usize,
    pages: Vec<PageState>,
    /// Nodes hold page ids.
    arena: Arena<u32>,
    areas: [List; 4],
    ghosts: [List; 4],
    ghost_cap: usize,
    targets: [f64; 4],
    min_target: f64,
    /// Ghost-hit growth of each area, in pages.
    delta: [f64; 4],
    resident: usize,
    ghost_hits: [u64; 4],
    header_evictions: [u64; 4],
    evictions: u64,
}

impl PolicyDef for FourArea {
    const NAME: &'static str = "four-area";
    const ALIASES: &'static [&'static str] = &["four-area-clock", "emram-swap"];
    const FAMILY: &'static str = "swap";
    const SUMMARY: &'static str =
        "Four-area cost-aware CLOCK for swap on eMRAM (Bahn, JIIBC 2024, \
         Section II): file/anon x read/write areas, ghost hits weighted by device cost grow areas.";
    type Config = FourAreaConfig;

    fn build(cfg: &FourAreaConfig, ctx: &PolicyCtx) -> Result<Self> {
        let bad = |k: &str, v: f64, what: &str| {
            Err(Error::config(format!(
                "policy 'four-area': {k} must be {what}, got {v}"
            )))
        };
        if !(cfg.step.is_finite() && cfg.step > 0.0) {
            return bad("step", cfg.step, "> 0");
        }
        if !(cfg.ghost_size.is_finite() && cfg.ghost_size >= 0.0) {
            return bad("ghost_size", cfg.ghost_size, ">= 0");
        }
        if !(cfg.min_area.is_finite() && (0.0..0.25).contains(&cfg.min_area)) {
            return bad("min_area", cfg.min_area, "in [0, 0.25)");
        }
        for (k, v) in [
            ("file_read_ns", cfg.file_read_ns),
            ("file_write_ns", cfg.file_write_ns),
            ("swap_read_ns", cfg.swap_read_ns),
            ("swap_write_ns", cfg.swap_write_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(k, v, "a finite number >= 0");
            }
        }
        let w = [
            cfg.file_read_ns,
            cfg.file_write_ns,
            cfg.swap_read_ns,
            cfg.swap_write_ns + cfg.swap_read_ns,
        ];
        let w_min = w
            .iter()
            .copied()
            .filter(|&x| x > 0.0)
            .fold(f64::INFINITY, f64::min);
        let delta = if w_min.is_finite() {
            w.map(|x| cfg.step * x / w_min)
        } else {
            [cfg.step; 4]
        };
        let c = ctx.capacity as f64;
        Ok(FourArea {
            cap: ctx.capacity,
            pages: Vec::new(),
            arena: Arena::with_capacity(2 * ctx.capacity),
            areas: [List::default(); 4],
            ghosts: [List::default(); 4],
            ghost_cap: (cfg.ghost_size * c).round() as usize,
            targets: [c / 4.0; 4],
            min_target: cfg.min_area * c,
            delta,
            resident: 0,
            ghost_hits: [0; 4],
            header_evictions: [0; 4],
            evictions: 0,
        })
    }
}

impl FourArea {
    /// Target sizes of the four areas (file-read, file-write, anon-read, anon-write).
    pub fn targets(&self) -> [f64; 4] {
        self.targets
    }

    /// Headers in each area.
    pub fn occupancy(&self) -> [usize; 4] {
        [0, 1, 2, 3].map(|a| self.areas[a].len())
    }

    /// Whether page id `id` has its header in its read / write area.
    pub fn in_areas(&self, id: u32) -> (bool, bool) {
        let p = &self.pages[id as usize];
        (p.node[0] != NIL, p.node[1] != NIL)
    }

    /// Whether page id `id` is in the ghost list of its read / write area.
    pub fn in_ghosts(&self, id: u32) -> (bool, bool) {
        let p = &self.pages[id as usize];
        (p.ghost[0] != NIL, p.ghost[1] != NIL)
    }

    fn grow_area(&mut self, a: usize) {
        let spare: f64 = (0..4)
            .filter(|&b| b != a)
            .map(|b| (self.targets[b] - self.min_target).max(0.0))
            .sum();
        let d = self.delta[a].min(spare);
        if d <= 0.0 {
            return;
        }
        for b in 0..4 {
            if b != a {
                let share = (self.targets[b] - self.min_target).max(0.0) / spare;
                self.targets[b] -= d * share;
            }
        }
        self.targets[a] += d;
    }

    fn unghost(&mut self, id: u32, a: usize) {
        let g = self.pages[id as usize].ghost[a & 1];
        if g != NIL {
            self.ghosts[a].unlink(&mut self.arena, g);
            self.arena.release(g);
            self.pages[id as usize].ghost[a & 1] = NIL;
        }
    }

    fn enter(&mut self, id: u32, a: usize) {
        self.unghost(id, a);
        let n = self.arena.alloc(id);
        self.areas[a].push_front(&mut self.arena, n);
        let p = &mut self.pages[id as usize];
        p.node[a & 1] = n;
        p.flags &= !flag_of(a);
    }

    /// Runs area `a`'s CLOCK until one header leaves it; returns the page id.
    fn clock_out(&mut self, a: usize) -> u32 {
        let bit = flag_of(a);
        loop {
            let n = self.areas[a].back().expect("victim area is not empty");
            let id = *self.arena.get(n);
            let p = &mut self.pages[id as usize];
            if p.flags & bit != 0 {
                p.flags &= !bit;
                self.areas[a].move_to_front(&mut self.arena, n);
                continue;
            }
            p.node[a & 1] = NIL;
            self.areas[a].unlink(&mut self.arena, n);
            // The page this area's hand looks at next (a speed hint).
            self.areas[a].prefetch_back(&self.arena, |&id| prefetch(&self.pages, id as usize));
            self.header_evictions[a] += 1;
            if self.ghost_cap > 0 {
                // Reuse the node for the ghost entry.
                self.ghosts[a].push_front(&mut self.arena, n);
                self.pages[id as usize].ghost[a & 1] = n;
                if self.ghosts[a].len() > self.ghost_cap {
                    let old = self.ghosts[a].pop_back(&mut self.arena).expect("non-empty");
                    let oid = *self.arena.get(old);
                    self.pages[oid as usize].ghost[a & 1] = NIL;
                    self.arena.release(old);
                    self.ghosts[a]
                        .prefetch_back(&self.arena, |&id| prefetch(&self.pages, id as usize));
                }
            } else {
                self.arena.release(n);
            }
            return id;
        }
    }

    /// Frees one page of memory.
    fn make_room<S: Sink>(&mut self, sink: &mut S) {
        loop {
            let mut best = usize::MAX;
            let mut best_excess = f64::NEG_INFINITY;
            for a in 0..4 {
                if self.areas[a].is_empty() {
                    continue;
                }
                let excess = self.areas[a].len() as f64 - self.targets[a];
                if excess > best_excess {
                    best_excess = excess;
                    best = a;
                }
            }
            let id = self.clock_out(best);
            let p = &mut self.pages[id as usize];
            if !p.resident() {
                let out = PageOut {
                    id,
                    page: p.page,
                    kind: p.kind(),
                    dirty: p.flags & DIRTY != 0,
                    tier: 0,
                };
                p.flags &= !DIRTY;
                self.resident -= 1;
                self.evictions += 1;
                sink.evict(out);
                return;
            }
        }
    }
}

impl Policy for FourArea {
    /// A hit reads and writes only the page's state: load `far`'s.
    #[inline(always)]
    fn prefetch(&self, _near: PageId, far: PageId) {
        prefetch(&self.pages, far as usize);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let id = r.id;
        let st = self.pages[id as usize];
        let w = r.op() as usize;
        if st.resident() {
            let a = area(st.kind(), r.op());
            if st.node[w] != NIL {
                self.pages[id as usize].flags |= flag_of(a);
            } else {
                // Resident through its other area: the header joins this one
                // (no memory is needed, so nothing is evicted).
                self.enter(id, a);
            }
            if r.op() == Op::Write {
                self.pages[id as usize].flags |= DIRTY;
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let a = area(r.kind(), r.op());
        if st.ghost[w] != NIL && (st.flags & ANON != 0) == (r.kind() == Kind::Anon) {
            self.ghost_hits[a] += 1;
            self.grow_area(a);
        }
        if self.resident >= self.cap {
            self.make_room(sink);
        }
        {
            let p = &mut self.pages[id as usize];
            p.page = r.page();
            p.flags = 0;
            if r.kind() == Kind::Anon {
                p.flags |= ANON;
            }
            if r.op() == Op::Write {
                p.flags |= DIRTY;
            }
        }
        // A page that changed kind since it was last resident keeps no
        // ghost entries of its old kind.
        let kind_changed = (st.flags & ANON != 0) != (r.kind() == Kind::Anon);
        if kind_changed {
            for x in 0..2 {
                let old_area = area(st.kind(), if x == 0 { Op::Read } else { Op::Write });
                self.unghost(id, old_area);
            }
        }
        self.enter(id, a);
        self.resident += 1;
        sink.miss(r, 0);
    }

    crate::policy::swap::page_state_glue!();

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("ghost_hits_file_read", self.ghost_hits[0]),
            ("ghost_hits_file_write", self.ghost_hits[1]),
            ("ghost_hits_anon_read", self.ghost_hits[2]),
            ("ghost_hits_anon_write", self.ghost_hits[3]),
            ("header_evictions_file_read", self.header_evictions[0]),
            ("header_evictions_file_write", self.header_evictions[1]),
            ("header_evictions_anon_read", self.header_evictions[2]),
            ("header_evictions_anon_write", self.header_evictions[3]),
            ("page_evictions", self.evictions),
            ("target_file_read", self.targets[0].round() as u64),
            ("target_file_write", self.targets[1].round() as u64),
            ("target_anon_read", self.targets[2].round() as u64),
            ("target_anon_write", self.targets[3].round() as u64),
        ]
    }
}
