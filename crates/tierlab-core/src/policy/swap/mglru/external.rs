//! MGLRU driven by a simulator that owns its pages (the mobile session,
//! `mobile::session`): it places, touches and removes pages itself and asks
//! for one page to reclaim at a time, instead of replaying references.
//! The mechanisms are the policy's own (same placement, aging, eviction,
//! refault feedback); only the entry points differ:
//!
//! * no capacity: reclaim runs when the caller asks (`reclaim_one`), and
//!   when nothing can be freed it returns `None` instead of forcing an
//!   eviction (the caller then kills, as the kernel's OOM path would);
//! * `set_swap(false)` makes anon pages unevictable (`get_swappiness`
//!   returns 0 without swap space);
//! * `remove` takes a page out without a shadow (its process exited).

use super::{mapped_key, Mglru, MglruConfig, ANON, NIL};
use crate::error::Result;
use crate::policy::{PolicyCtx, PolicyDef};
use crate::sim::{PageOut, PageRef, Sink};
use crate::trace::Kind;

/// Collects the pages an eviction step frees.
#[derive(Default)]
struct Freed(Vec<(u32, bool)>);

impl Sink for Freed {
    fn hit(&mut self, _r: &PageRef, _tier: u8) {}
    fn miss(&mut self, _r: &PageRef, _tier: u8) {}
    fn miss_bypass(&mut self, _r: &PageRef) {}
    fn evict(&mut self, p: PageOut) {
        self.0.push((p.id, p.kind == Kind::Anon));
    }
    fn write_back(&mut self, _pages: &[PageOut]) {}
    fn migrate(&mut self, _id: u32, _page: u64, _from: u8, _to: u8) {}
}

impl Mglru {
    /// An MGLRU over page ids `0..pages` with `swappiness` (0..=200).
    pub fn for_simulator(pages: usize, swappiness: u32) -> Result<Self> {
        let cfg = MglruConfig {
            swappiness,
            ..Default::default()
        };
        let ctx = PolicyCtx {
            capacity: pages,
            tiers: 1,
            page_size: 4096,
        };
        let mut m = <Mglru as PolicyDef>::build(&cfg, &ctx)?;
        crate::policy::Policy::grow(&mut m, pages);
        Ok(m)
    }

    /// Whether anon pages may be evicted (swap space left).
    pub fn set_swap(&mut self, available: bool) {
        self.swap_off = !available;
    }

    /// Page `id` becomes resident: `active` for a page faulted through page
    /// tables (an anon page first touched), else the oldest generation (a
    /// page-cache or swap-cache page read in); `young` if it was accessed.
    pub fn insert(&mut self, id: u32, anon: bool, active: bool, young: bool) {
        debug_assert_eq!(self.pages[id as usize].node, NIL);
        self.fault_in_as(id, id as u64, anon, false, false, active, young);
    }

    /// An access through page tables to resident page `id`.
    pub fn touch(&mut self, id: u32) {
        if self.pages[id as usize].node != NIL {
            self.set_young(id);
        }
    }

    /// Resident page `id` leaves without a shadow (its process exited).
    pub fn remove(&mut self, id: u32) {
        let n = self.pages[id as usize].node;
        if n == NIL {
            return;
        }
        self.unlink(id);
        self.arena.release(n);
        let p = &mut self.pages[id as usize];
        let key = mapped_key(p.page, p.flags & ANON != 0);
        if self.v6_1 && self.mapped.get(&key) == Some(&id) {
            self.mapped.remove(&key);
        }
        let p = &mut self.pages[id as usize];
        p.node = NIL;
        p.flags = 0;
        p.refs = 0;
        self.resident -= 1;
    }

    /// Reclaims one page: `(id, anon)`, or `None` when nothing can be freed.
    pub fn reclaim_one(&mut self) -> Option<(u32, bool)> {
        if self.resident == 0 {
            return None;
        }
        let mut freed = Freed::default();
        self.reclaim_pages(1, false, &mut freed);
        freed.0.pop()
    }

    /// Pages examined by eviction so far (anon + file).
    pub fn scanned(&self) -> u64 {
        self.c_scanned[0] + self.c_scanned[1]
    }

    pub fn is_resident(&self, id: u32) -> bool {
        self.pages[id as usize].node != NIL
    }
}
