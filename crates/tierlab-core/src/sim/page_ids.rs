//! Page number -> dense page id, assigned in first-seen order (0, 1, 2, ...).
//!
//! Done once per reference while a trace is decoded, so it is the hottest map of a replay. Many
//! traces number their pages densely from 0 (generated traces, LIRS and ARC traces, remapped
//! block traces): for those a plain array indexed by page number is the map, one array read per
//! reference and prefetchable a few records ahead. Page numbers spread wide (raw block
//! addresses of a large device) would make that array mostly empty, so the map moves, once, to a
//! hash table when a page number falls outside what the array may grow to. Ids are the same either
//! way: the mode changes only where the ids are kept, never which id a page gets.

use crate::policy::list::{prefetch, NIL};
use rustc_hash::FxHashMap;

/// The array may always grow to this many entries (4 MiB of u32).
const DIRECT_MIN: u64 = 1 << 20;
/// ... and beyond that to this many entries per distinct page seen (so at most about 32 bytes
/// per distinct page, about what a hash table entry costs)...
const DIRECT_PER_DISTINCT: u64 = 8;
/// ... but never beyond this (1 GiB).
const DIRECT_MAX: u64 = 1 << 28;

#[derive(Debug, Clone)]
pub struct PageIds {
    /// page -> id (or NIL) for pages below `direct.len()`, while in direct mode.
    direct: Vec<u32>,
    /// Every page's id once out of direct mode (empty before).
    hashed: FxHashMap<u64, u32>,
    in_direct_mode: bool,
    distinct: u32,
}

impl Default for PageIds {
    fn default() -> Self {
        PageIds {
            direct: Vec::new(),
            hashed: FxHashMap::default(),
            in_direct_mode: true,
            distinct: 0,
        }
    }
}

impl PageIds {
    /// Distinct pages seen so far (= the next id).
    #[inline]
    pub fn len(&self) -> usize {
        self.distinct as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }

    /// Whether pages are still kept in the array (for tests and the benchmarks' notes).
    pub fn is_direct(&self) -> bool {
        self.in_direct_mode
    }

    /// Starts loading the entry of `page` (a hint; see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, page: u64) {
        if self.in_direct_mode {
            prefetch(&self.direct, page as usize);
        }
    }

    /// The id of `page`, assigning the next one on first sight; `None` when 2^32 - 1 ids are
    /// taken (ids are u32 and NIL is reserved).
    #[inline]
    pub fn id(&mut self, page: u64) -> Option<u32> {
        if self.in_direct_mode {
            if let Some(e) = self.direct.get_mut(page as usize) {
                if *e == NIL {
                    if self.distinct == NIL {
                        return None;
                    }
                    *e = self.distinct;
                    self.distinct += 1;
                }
                return Some(*e);
            }
            self.grow_or_leave_direct_mode(page);
            if self.in_direct_mode {
                return self.id(page);
            }
        }
        let next = self.distinct;
        let id = *self.hashed.entry(page).or_insert(next);
        if id == next {
            if next == NIL {
                self.hashed.remove(&page);
                return None;
            }
            self.distinct += 1;
        }
        Some(id)
    }

    #[cold]
    fn grow_or_leave_direct_mode(&mut self, page: u64) {
        let want = page
            .saturating_add(1)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX);
        let allowed = DIRECT_MIN
            .max(DIRECT_PER_DISTINCT * (self.distinct as u64 + 1))
            .min(DIRECT_MAX);
        if want <= allowed {
            self.direct.resize(want as usize, NIL);
            return;
        }
        self.hashed.reserve(self.distinct as usize);
        for (p, &id) in self.direct.iter().enumerate() {
            if id != NIL {
                self.hashed.insert(p as u64, id);
            }
        }
        self.direct = Vec::new();
        self.in_direct_mode = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are first-seen order in both modes, and survive the switch.
    #[test]
    fn ids_are_first_seen_order_across_the_switch_to_hashing() {
        let mut m = PageIds::default();
        let pages = [5u64, 7, 5, 0, 1 << 40, 7, 3, 1 << 40, 0];
        let ids: Vec<u32> = pages.iter().map(|&p| m.id(p).unwrap()).collect();
        assert_eq!(ids, vec![0, 1, 0, 2, 3, 1, 4, 3, 2]);
        assert!(!m.is_direct());
        assert_eq!(m.len(), 5);
    }

    #[test]
    fn dense_pages_stay_in_the_array_and_it_grows_with_them() {
        let mut m = PageIds::default();
        for p in 0..3_000_000u64 {
            assert_eq!(m.id(p), Some(p as u32));
        }
        assert!(m.is_direct());
        assert_eq!(m.id(2_999_999), Some(2_999_999));
        // A page far beyond 8 entries per distinct page moves the map to hashing.
        assert_eq!(m.id(1 << 33), Some(3_000_000));
        assert!(!m.is_direct());
        assert_eq!(m.id(17), Some(17));
    }

    #[test]
    fn a_sparse_trace_hashes_from_the_first_wide_page() {
        let mut m = PageIds::default();
        assert_eq!(m.id(u64::MAX), Some(0));
        assert!(!m.is_direct());
        assert_eq!(m.id(0), Some(1));
        assert_eq!(m.id(u64::MAX), Some(0));
    }
}
