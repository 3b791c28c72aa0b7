//! The memory budget of a replay whose policy needs the future (OPT, OPT-WB,
//! BeladySize): such a run materialises the whole trace with each
//! reference's next use, so the engine checks, as references arrive, that the
//! columns still fit in the memory the process can get (`MemAvailable` and
//! `RLIMIT_AS` on Linux), and otherwise refuses, naming a `--limit` prefix,
//! rather than swap. The replay loop is in `engine.rs`. Cost: one read of
//! /proc/meminfo (and /proc/self/status) per run and a multiplication per
//! batch.

use super::InstanceSpec;
use crate::error::{Error, Result};

/// Bytes a run with a policy that needs the future (OPT, OPT-WB, BeladySize) holds per page
/// reference: the whole trace is materialised (page id 4, flags 1, page 8, time 8, app 4) with
/// each reference's next use (8); object-size mode adds the object's size (4).
pub const FUTURE_BYTES_PER_REF: u64 = 33;

/// Memory this process can still get without swapping: the system's `MemAvailable`, or less
/// when an address-space limit (`ulimit -v`, RLIMIT_AS) leaves less room (Linux; None elsewhere).
pub fn available_memory() -> Option<u64> {
    let field = |file: &str, key: &str| -> Option<u64> {
        let text = std::fs::read_to_string(file).ok()?;
        let line = text.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    };
    let mut avail = field("/proc/meminfo", "MemAvailable:")?;
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid out-pointer for getrlimit.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            let used = field("/proc/self/status", "VmSize:").unwrap_or(0);
            #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
            let limit = lim.rlim_cur as u64;
            avail = avail.min(limit.saturating_sub(used));
        }
    }
    Some(avail)
}

/// Refuses, before it reads more, a replay whose materialised trace would not fit in `budget`
/// bytes (a trace's length is known only once read, so the check runs as references arrive,
/// counting a growing column's old and new buffers).
pub(super) fn check_future_room(
    instances: &[InstanceSpec],
    read: u64,
    budget: Option<u64>,
    per_ref: u64,
) -> Result<()> {
    let Some(avail) = budget else { return Ok(()) };
    let names: Vec<&str> = instances
        .iter()
        .filter(|s| {
            crate::policy::policy_info(&s.policy.name)
                .map(|i| i.needs_future)
                .unwrap_or(false)
        })
        .map(|s| s.policy.name.as_str())
        .collect();
    let who = names.first().copied().unwrap_or("opt");
    // Growing from `read` references to twice as many holds the old columns and the new at once.
    if read.saturating_mul(3).saturating_mul(per_ref) > avail {
        return Err(Error::resource(format!(
            "policy '{who}' needs the whole trace in memory: {per_ref} B per page reference, \
             over {} MiB after {read} references, but {} MiB are available; replay a prefix \
             with --limit {} (limit= in Python)",
            read.saturating_mul(3 * per_ref) >> 20,
            avail >> 20,
            read
        )));
    }
    Ok(())
}

/// Whether any of the policies needs the future (next_use).
pub fn needs_future(specs: &[InstanceSpec]) -> Result<bool> {
    let mut any = false;
    for s in specs {
        any |= crate::policy::policy_info(&s.policy.name)?.needs_future;
    }
    Ok(any)
}
