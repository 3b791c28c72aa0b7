//! Flash-aware buffer caches (papers/bs-clock-flash-buffer.md, section II and
//! III): CFLRU, LRU-WSR, CCF-LRU and FAB, which trade hit ratio for fewer or
//! larger flash writes, and Spatial Clock and BS-CLOCK, which sweep the
//! resident pages in logical-sector order so that the writes they cause are
//! sequential (and, for BS-CLOCK, bulk).

pub mod bs_clock;
pub mod ccf_lru;
pub mod cflru;
pub mod fab;
pub mod lru_wsr;
pub(crate) mod sector_ring;
pub mod spatial_clock;
