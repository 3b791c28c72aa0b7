//! Swap-backed memory on fast NVM (papers/emram-swap-four-area-clock.md): the
//! four-area cost-aware CLOCK and Linux's two-list reclaim as the baseline
//! users know.

pub mod four_area;
pub mod linux_two_list;
pub mod mglru;
