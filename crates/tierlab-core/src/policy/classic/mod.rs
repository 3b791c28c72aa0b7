//! Classic replacement policies (the baselines every paper compares against).

pub mod clock;
pub mod fifo;
pub mod lru;
pub mod opt;
