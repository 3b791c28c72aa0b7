//! Swap-backed memory on fast NVM (papers/emram-swap-four-area-clock.md): the
//! four-area cost-aware CLOCK and Linux's two-list reclaim as the baseline
//! users know.

/// The `grow` and `resident` of a swap model that keeps its per-page state in `pages: Vec<_>`
/// (indexed by page id, default state for a page not seen yet) and counts its resident pages in
/// `resident`, for its `impl Policy` block. A macro because the methods read the model's own
/// fields.
macro_rules! page_state_glue {
    () => {
        fn grow(&mut self, n: usize) {
            if self.pages.len() < n {
                self.pages.resize(n, Default::default());
            }
        }

        fn resident(&self) -> usize {
            self.resident
        }
    };
}
pub(crate) use page_state_glue;

pub mod four_area;
pub mod linux_two_list;
pub mod mglru;
