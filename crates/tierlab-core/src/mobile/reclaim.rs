//! The page lists of the session's compact Linux reclaim: four LRU lists
//! (inactive/active x anon/file) over one arena whose slot `i` is page `i`.
//!
//! The scanning itself (`shrink_zone`, `shrink_active_list`,
//! `shrink_inactive_list`, the swappiness modes) lives in the session
//! (`session.rs`), because it kills, swaps and charges time there. It follows
//! REFERENCE.md "Linux and Android reclaim": a first access sets Referenced, a
//! second while inactive activates; the inactive scan activates referenced
//! anon pages and file pages referenced twice, rotates file pages referenced
//! once, reclaims the rest; the active scan deactivates from the tail (2.6
//! keeps mapped pages active unless `reclaim_mapped`). Simplifications: one
//! zone, no executable-page protection, no dirty file pages (an app's file
//! pages are read-only code and resources), swap cache not kept (a page
//! swapped in gives its slot back). The `swap` branch's trace-replay policy
//! (`policy/swap/`) is the per-reference version of the same lists; sharing
//! one implementation is future work.

use crate::policy::list::{Arena, List};

/// List indices.
pub const IA: usize = 0;
pub const AA: usize = 1;
pub const IF: usize = 2;
pub const AF: usize = 3;

/// Where a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loc {
    /// Not in memory (never allocated, dropped, or its process is gone).
    Absent,
    /// Resident on LRU list `n`.
    Lru(u8),
    /// In swap slot `n`.
    Swapped(u32),
}

/// Per-page state.
#[derive(Debug, Clone, Copy)]
pub struct PageMeta {
    pub app: u32,
    pub anon: bool,
    pub loc: Loc,
    /// The PTE young bit (accessed since the last scan).
    pub young: bool,
    /// PG_referenced.
    pub pgref: bool,
    /// Dropped by reclaim (a file page's shadow entry): its next read is a
    /// refault.
    pub shadow: bool,
}

/// The four lists.
pub struct Lists {
    pub arena: Arena<PageMeta>,
    pub lists: [List; 4],
}

impl Lists {
    pub fn with_capacity(n: usize) -> Self {
        Lists {
            arena: Arena::with_capacity(n),
            lists: [List::default(); 4],
        }
    }

    /// Moves resident page `p` from list `from` to the head of list `to`.
    pub fn move_between(&mut self, p: u32, from: usize, to: usize) {
        self.lists[from].unlink(&mut self.arena, p);
        self.lists[to].push_front(&mut self.arena, p);
        self.arena.get_mut(p).loc = Loc::Lru(to as u8);
    }

    /// `inactive_file_is_low` (active > inactive) and `inactive_anon_is_low`
    /// (inactive * ratio < active, ratio = int_sqrt(10 * memory in GB), at
    /// least 1): the target inactive:active balance ~ 1:sqrt(10 x GB).
    pub fn inactive_is_low(&self, file: bool, total_pages: u64, page_size: u64) -> bool {
        if file {
            self.lists[AF].len() > self.lists[IF].len()
        } else {
            let gb = (total_pages * page_size) >> 30;
            let ratio = if gb == 0 {
                1
            } else {
                ((10 * gb) as f64).sqrt() as u64
            };
            (self.lists[IA].len() as u64) * ratio.max(1) < self.lists[AA].len() as u64
        }
    }
}

/// Linux 2.6 `refill_inactive_zone`'s swap tendency (the paper's Section 3.2):
/// `mapped_ratio / 2 + distress + swappiness`, `distress = 100 >> priority`
/// (priority 12 = no distress, 0 = full distress). Mapped pages (and with
/// them anonymous pages) are deactivated, hence reclaimable, when it is
/// `>= 100`.
pub fn swap_tendency(mapped_ratio: u64, priority: u32, swappiness: u32) -> u64 {
    mapped_ratio / 2 + (100u64 >> priority.min(12)) + swappiness as u64
}

/// Linux 3.x `get_scan_count`: the anon and file scan weights `(ap, fp)`
/// from swappiness and the recent scanned/rotated counts of each type
/// (`recent[0]` anon, `recent[1]` file). A type whose scanned pages keep
/// getting rotated (re-referenced) is scanned less.
pub fn scan_weights(swappiness: u32, scanned: [u64; 2], rotated: [u64; 2]) -> (u64, u64) {
    let sw = swappiness as u64;
    let ap = (sw + 1) * (scanned[0] + 1) / (rotated[0] + 1);
    let fp = (201 - sw) * (scanned[1] + 1) / (rotated[1] + 1);
    (ap, fp)
}
