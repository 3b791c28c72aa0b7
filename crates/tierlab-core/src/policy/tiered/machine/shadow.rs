//! Shadow pages of the tiered machine: NOMAD's shadow copies (a promoted
//! page keeps its old slow frame, write-protected, until a write or a reclaim
//! ends it), their reclaim order (NOMAD module `reclaim_shadow_page`), and the
//! classification of each shadow by what SSP's `PG_fastdirty` would know when
//! it is made (papers/selective-shadow-paging-nomad.md, section 3.2). The
//! machine itself is in `machine.rs`. Cost: O(log s) per shadow made or freed
//! (s shadows, an ordered index) and one history byte per page.

use super::{flag, Machine, PageId};
use std::sync::OnceLock;

/// SplitMix64 finaliser: a fixed pseudo-random key.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A page's fast-tier history as SSP's `PG_fastdirty` sees it (papers/selective-shadow-paging-nomad.md,
/// section 3.2), kept for NOMAD and SSP alike so that every shadow is classified by what SSP would
/// know when it is made ([`ShadowClass`]), whichever policy runs. One byte per page; a few
/// instructions per promotion, per write to a promoted page and per shadow's end.
pub mod hist {
    /// First touched on the fast tier (in the page's current life): a stay SSP keeps no history of.
    pub const BORN_FAST: u8 = 1 << 0;
    /// Promoted at least once.
    pub const PROMOTED_BEFORE: u8 = 1 << 1;
    /// Written during its last promoted stay on the fast tier (what `PG_fastdirty` records).
    pub const LAST_DIRTY: u8 = 1 << 2;
    /// Swapped out since: its history is gone.
    pub const LOST: u8 = 1 << 3;
    /// The class of its current shadow, bits 4-6 ([`super::ShadowClass`]).
    pub const CLASS_SHIFT: u8 = 4;
    pub const CLASS_MASK: u8 = 0b111 << CLASS_SHIFT;
    /// Has taken a shadow fault.
    pub const FAULTED: u8 = 1 << 7;
}

/// What a page's history says when a shadow is made (at its promotion): whether SSP's
/// `PG_fastdirty` can tell that the page will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ShadowClass {
    /// The page's first promotion, first touched on the slow tier: no history exists.
    FirstSlow = 0,
    /// The page's first promotion after a first-touch stay on the fast tier: SSP records writes
    /// to promoted pages only, so a page's first promotion always keeps a shadow (section 3.2).
    FirstFast = 1,
    /// Its last promoted stay saw no write: SSP keeps the shadow.
    AfterClean = 2,
    /// Its last promoted stay saw a write: SSP makes no shadow (only NOMAD has these).
    AfterDirty = 3,
    /// Swapped out since its last promotion: the history is gone.
    Lost = 4,
}

impl ShadowClass {
    pub const ALL: [ShadowClass; 5] = [
        ShadowClass::FirstSlow,
        ShadowClass::FirstFast,
        ShadowClass::AfterClean,
        ShadowClass::AfterDirty,
        ShadowClass::Lost,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ShadowClass::FirstSlow => "first_slow",
            ShadowClass::FirstFast => "first_fast",
            ShadowClass::AfterClean => "after_clean",
            ShadowClass::AfterDirty => "after_dirty",
            ShadowClass::Lost => "lost",
        }
    }
    /// The class a promotion now would give the page with history `h`.
    pub fn of(h: u8) -> ShadowClass {
        if h & hist::PROMOTED_BEFORE == 0 {
            if h & hist::LOST != 0 {
                ShadowClass::Lost
            } else if h & hist::BORN_FAST != 0 {
                ShadowClass::FirstFast
            } else {
                ShadowClass::FirstSlow
            }
        } else if h & hist::LAST_DIRTY != 0 {
            ShadowClass::AfterDirty
        } else {
            ShadowClass::AfterClean
        }
    }
}

/// How a shadow's life is counted by class: made, or ended by a shadow fault, a reclaim or a remap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShadowEvent {
    Copy = 0,
    Fault = 1,
    Reclaim = 2,
    Remap = 3,
}

const SHADOW_EVENTS: [&str; 4] = ["copies", "faults", "reclaims", "remaps"];

fn class_names() -> &'static [[&'static str; 5]; 4] {
    static NAMES: OnceLock<[[&'static str; 5]; 4]> = OnceLock::new();
    NAMES.get_or_init(|| {
        SHADOW_EVENTS.map(|e| {
            ShadowClass::ALL
                .map(|c| &*Box::leak(format!("shadow_{e}_{}", c.name()).into_boxed_str()))
        })
    })
}

impl Machine {
    /// Frees up to `n` shadow pages. NOMAD module `reclaim_shadow_page` walks
    /// its shadow index (an xarray keyed by the master's `struct page`
    /// address) from the start and frees the first unused shadows it meets:
    /// the order is the masters' frame addresses, unrelated to age. We key each
    /// shadow by a hash of (page, shadow number), a stand-in for the frame
    /// address, or by creation order with `reclaim_oldest`. The master keeps
    /// its write protection.
    pub fn reclaim_shadows(&mut self, n: usize) -> usize {
        let mut done = 0;
        while done < n {
            let Some(&(_, id)) = self.shadow_index.first() else {
                break;
            };
            self.note_shadow(id, ShadowEvent::Reclaim);
            self.drop_shadow(id);
            self.c.shadow_reclaims += 1;
            done += 1;
        }
        done
    }

    /// Records that `id` (now a fast-tier master) keeps its old slow frame as a shadow.
    pub fn add_shadow(&mut self, id: PageId) {
        self.set(id, flag::SHADOW | flag::WP);
        let n = self.c.shadow_copies;
        let key = if self.reclaim_oldest {
            n
        } else {
            splitmix64(n ^ (id as u64) << 40)
        };
        self.shadow_key[id as usize] = key;
        self.shadow_index.insert((key, id));
        self.shadows += 1;
        self.c.shadow_copies += 1;
    }

    /// Counts a shadow event of `id` under the class of its shadow (made at its last promotion).
    pub fn note_shadow(&mut self, id: PageId, e: ShadowEvent) {
        let h = &mut self.hist[id as usize];
        let class = (*h & hist::CLASS_MASK) >> hist::CLASS_SHIFT;
        self.by_class[e as usize][class as usize] += 1;
        if e == ShadowEvent::Fault && *h & hist::FAULTED == 0 {
            *h |= hist::FAULTED;
            self.fault_pages += 1;
        }
    }

    /// Marks a write to `id` on the fast tier in its history (a promoted stay only, as SSP's
    /// `PG_fastdirty`).
    #[inline]
    pub fn note_fast_write(&mut self, id: PageId) {
        if self.has(id, flag::PROMOTED) {
            self.hist[id as usize] |= hist::LAST_DIRTY;
        }
    }

    /// The shadow counters by class (`shadow_<event>_<class>`, [`ShadowClass`]) and the pages
    /// that took a shadow fault (`shadow_fault_pages`): NOMAD's and SSP's extra counters.
    pub fn shadow_class_counters(&self) -> Vec<(&'static str, u64)> {
        let names = class_names();
        let mut v = Vec::with_capacity(21);
        for (e, row) in self.by_class.iter().enumerate() {
            for (c, &n) in row.iter().enumerate() {
                v.push((names[e][c], n));
            }
        }
        v.push(("shadow_fault_pages", self.fault_pages));
        v
    }

    /// Frees the shadow of `id` (its slow frame).
    pub fn drop_shadow(&mut self, id: PageId) {
        let removed = self
            .shadow_index
            .remove(&(self.shadow_key[id as usize], id));
        debug_assert!(removed);
        self.clear(id, flag::SHADOW);
        self.shadows -= 1;
        self.used[1] -= 1;
    }
}
