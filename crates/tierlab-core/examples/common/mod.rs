//! What the `memory` and `throughput` examples share: their leading `[TRACE] [CACHE_FRACTION]`
//! arguments and how a fraction becomes a cache size.

use std::error::Error;

/// The trace the examples replay when none is given.
pub const DEFAULT_TRACE: &str = "zipf:alpha=1.0,pages=1000000,n=10000000,seed=1";

/// `[TRACE] [CACHE_FRACTION] REST...` from the command line (fraction default 0.1).
pub struct Args {
    pub trace: String,
    pub fraction: f64,
    /// The arguments after the fraction.
    pub rest: Vec<String>,
}

pub fn args() -> Result<Args, Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let trace = args.next().unwrap_or_else(|| DEFAULT_TRACE.into());
    let fraction = args.next().map(|s| s.parse()).transpose()?.unwrap_or(0.1);
    Ok(Args {
        trace,
        fraction,
        rest: args.collect(),
    })
}

/// The policies named in `given`, or `default` if none is.
pub fn policies(given: &[String], default: &[&str]) -> Vec<String> {
    if given.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        given.to_vec()
    }
}

/// The cache size in pages: `fraction` of a generator's `pages=` parameter, else of the
/// trace's distinct pages.
pub fn capacity(trace: &str, fraction: f64, distinct: usize) -> usize {
    let pages = trace
        .split([',', ':'])
        .find_map(|kv| kv.strip_prefix("pages=")?.parse::<usize>().ok())
        .unwrap_or(distinct);
    (fraction * pages as f64) as usize
}
