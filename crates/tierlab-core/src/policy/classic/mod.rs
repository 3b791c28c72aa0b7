//! Classic replacement policies (the baselines every paper compares against).

pub mod arc;
pub mod beladysize;
pub mod car;
pub mod clock;
pub mod clock2qplus;
pub mod clockpro;
pub mod fifo;
pub mod flashprob;
pub mod gdsf;
pub mod lfu;
pub mod lfuda;
pub mod lirs;
pub mod lru;
pub mod lruk;
pub mod lruprob;
pub mod mq;
pub mod opt;
pub mod optwb;
pub mod random;
pub mod s3fifo;
pub mod sieve;
pub mod size;
pub mod slru;
pub mod tinylfu_sketch;
pub mod twoq;
pub mod wtinylfu;
