//! Mobile memory: a session simulator for a phone's apps, the low-memory
//! killer versus swap (papers/android-swap-vs-lmk.md: Kim, Kwon, Shin, a
//! measurement study on a Galaxy S2 with 1 GB RAM and a class-6 microSD swap).
//!
//! This is an app-level simulator with its own loop, not a per-reference
//! trace policy: a step of its script is "launch this app", "use it for 30 s",
//! "go home", and the memory pressure comes from the apps' footprints, so it
//! does not fit the engine's `Policy` trait (which sees page references and
//! cannot kill a process or charge a launch). No `policy/mobile/` policy is
//! registered for that reason.
//!
//! - [`lmk`]: process levels, oom_adj/oom_score_adj, ProcessList's minfree
//!   interpolation, the LMK table and victim choice, the OOM badness.
//! - [`scenario`]: the scenario file (phone, apps, LMK, swap, launch model,
//!   script from TOML steps, CSV, or a seeded model).
//! - [`compressed`]: zram's pool and zswap in front of a swap device.
//! - [`lmkd`]: the user-space killer's PSI mode and minfree fallback.
//! - [`reclaim`]: the page lists of the compact two-list reclaim.
//! - [`session`]: the loop (`session/kernel.rs`: reclaim, swap, killers;
//!   `session/launch.rs`: launches and steps); [`records`]: its outputs.

pub mod compressed;
pub mod lmk;
pub mod lmkd;
pub mod reclaim;
pub mod records;
pub mod scenario;
pub mod session;

pub use scenario::Scenario;
pub use session::{run_session, LaunchKind, Session, SessionResult};
