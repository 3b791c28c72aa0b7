//! tierlab-core: a trace-driven simulator for memory and buffer management on
//! heterogeneous memory and storage. Pure Rust; the Python bindings live in the
//! `tierlab-py` crate.

pub mod device;
pub mod error;
pub mod kernel;
pub mod mobile;
pub mod policy;
pub mod sim;
pub mod trace;

pub use error::{Error, Result};
