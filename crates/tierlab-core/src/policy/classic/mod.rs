//! Classic replacement policies (the baselines every paper compares against).

pub mod arc;
pub mod clock;
pub mod fifo;
pub mod lfu;
pub mod lirs;
pub mod lru;
pub mod opt;
pub mod s3fifo;
pub mod sieve;
pub mod twoq;
