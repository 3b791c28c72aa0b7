//! lmkd, Android's user-space low-memory killer, in its PSI mode (issue 19),
//! next to the in-kernel LMK of [`super::lmk`].
//!
//! Sources: AOSP system/memory/lmkd (README.md and lmkd.cpp, read at the
//! yaap/system_memory_lmkd mirror, commit c62ac7e): `init_psi_monitors`,
//! `mp_event_psi`, `mp_event_common`, `find_and_kill_process`, and the
//! property defaults read in `update_props`.
//!
//! **Pressure events.** lmkd registers PSI triggers on /proc/pressure/memory
//! with a `PSI_WINDOW_SIZE_MS` = 1000 ms window. In the default ("new")
//! strategy (`use_minfree_levels` false): medium = *some* stall of
//! `ro.lmk.psi_partial_stall_ms` (default 70; 200 on low-RAM devices) within
//! the window, critical = *full* stall of `ro.lmk.psi_complete_stall_ms`
//! (default 700); the low level is not registered. A trigger fires at most
//! once per window (the kernel's rate limit). After an event lmkd polls every
//! `PSI_POLL_PERIOD_SHORT_MS` = 10 ms for one window, re-running its decision
//! without the event.
//!
//! **Decision** (`mp_event_psi`, in its order; "breached" is lmkd's `wmark <
//! WMARK_HIGH`, i.e. free memory under the *low* watermark, as
//! `get_lowest_watermark` returns WMARK_HIGH for free memory between the low
//! and high watermarks): after a kill, if free memory is still under the min
//! watermark (`wmark < WMARK_LOW`), kill down to
//! `pressure_after_kill_min_score` (0); a critical event: kill (min
//! oom_score_adj 0, "device is not responding"); swap low and thrashing above
//! `thrashing_limit`; swap low and the watermark breached; the watermark
//! breached and thrashing above the limit; direct reclaim and thrashing above
//! the limit (these four spare perceptible apps, min 201, unless thrashing
//! reaches `thrashing_limit_critical` = 3 x the limit, or for the swap
//! reasons free memory is under the min watermark); otherwise, the watermark
//! breached kills cached apps only (`PREVIOUS_APP_ADJ + 1` = 701). Swap is low when free swap is
//! under `swap_free_low_percentage` (10) percent of the swap area. Thrashing
//! is workingset file refaults as a percentage of the file LRU size since the
//! last reset, reset every `THRASHING_RESET_INTERVAL_MS` = 1000 ms and after
//! a kill, with the previous interval's value halved per interval passed.
//!
//! **Victim** (`find_and_kill_process`): from oom_score_adj 1000 down to the
//! minimum, the first level with a process; within a level the heaviest (by
//! RSS) when `kill_heaviest_task` is set or the level is perceptible or more
//! important (<= 200), else the level's tail (the process that has held that
//! level longest; here, the one least recently in the foreground).
//!
//! **The minfree fallback** (`use_minfree_levels` = true, the old strategy,
//! `mp_event_common`): triggers at the hard-coded thresholds (some 70 ms,
//! some 100 ms, full 70 ms per second) and, on an event, kills from the
//! minfree table like the in-kernel LMK: the first level whose minfree both
//! free and file memory are under gives the minimum oom_score_adj; none, no
//! kill.
//!
//! **PSI from the session.** The session has one foreground task and kswapd.
//! *some* stall is the time the foreground app waits on memory: the share of
//! reclaim it waits for (`reclaim.stall` x scanning, swap writes and kills),
//! its swap-in reads (and decompressions), and its reads of file pages that
//! reclaim had dropped (refaults; the kernel counts refaults of working-set
//! pages, here every refault counts). *full* stall is the part of it in which
//! kswapd is stalled too, i.e. the waited-for reclaim time: during a swap-in
//! or refault read nothing else of the phone is modelled as runnable, which
//! would make those full as well; counting them only as some is our choice,
//! erring on fewer critical events. Not modelled: `swap_util_max` (default
//! 100, off), the file-cache check after thrashing (`filecache_min_kb`
//! default 0, off), `stall_limit_critical` (avg10 of full stall over 100%,
//! never), watermark boosts, memcg v1 pressure levels, kill_timeout_ms (a
//! kill completes at once here).

use super::lmk::ProcInfo;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `PERCEPTIBLE_APP_ADJ` and `PREVIOUS_APP_ADJ` (lmkd.cpp).
pub const PERCEPTIBLE_APP_ADJ: i32 = 200;
pub const PREVIOUS_APP_ADJ: i32 = 700;

/// `[lmkd]`: the user-space killer's properties (`ro.lmk.*`), defaults as
/// in lmkd.cpp `update_props` for a device that is not low-RAM.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LmkdConfig {
    pub psi_partial_stall_ms: f64,
    pub psi_complete_stall_ms: f64,
    /// `PSI_WINDOW_SIZE_MS`.
    pub psi_window_ms: f64,
    /// `PSI_POLL_PERIOD_SHORT_MS`.
    pub poll_ms: f64,
    pub use_minfree_levels: bool,
    pub swap_free_low_percentage: u32,
    pub thrashing_limit: u32,
    /// Default 3 x `thrashing_limit`.
    pub thrashing_limit_critical: Option<u32>,
    pub kill_heaviest_task: bool,
    pub pressure_after_kill_min_score: i32,
}

impl Default for LmkdConfig {
    fn default() -> Self {
        LmkdConfig {
            psi_partial_stall_ms: 70.0,
            psi_complete_stall_ms: 700.0,
            psi_window_ms: 1000.0,
            poll_ms: 10.0,
            use_minfree_levels: false,
            swap_free_low_percentage: 10,
            thrashing_limit: 100,
            thrashing_limit_critical: None,
            kill_heaviest_task: false,
            pressure_after_kill_min_score: 0,
        }
    }
}

impl LmkdConfig {
    pub fn validate(&self) -> Result<()> {
        for (k, v) in [
            ("lmkd.psi_partial_stall_ms", self.psi_partial_stall_ms),
            ("lmkd.psi_complete_stall_ms", self.psi_complete_stall_ms),
            ("lmkd.poll_ms", self.poll_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(format!(
                    "{k} must be a finite number >= 0, got {v}"
                )));
            }
        }
        if !(self.psi_window_ms.is_finite() && self.psi_window_ms > 0.0) {
            return Err(Error::config(format!(
                "lmkd.psi_window_ms must be > 0, got {}",
                self.psi_window_ms
            )));
        }
        if self.psi_partial_stall_ms > self.psi_window_ms
            || self.psi_complete_stall_ms > self.psi_window_ms
        {
            return Err(Error::config(format!(
                "lmkd: stall thresholds ({} ms, {} ms) cannot exceed the window ({} ms)",
                self.psi_partial_stall_ms, self.psi_complete_stall_ms, self.psi_window_ms
            )));
        }
        if self.swap_free_low_percentage > 100 {
            return Err(Error::config(format!(
                "lmkd.swap_free_low_percentage must be 0..=100, got {}",
                self.swap_free_low_percentage
            )));
        }
        if !(-1000..=1000).contains(&self.pressure_after_kill_min_score) {
            return Err(Error::config(format!(
                "lmkd.pressure_after_kill_min_score must be -1000..=1000, got {}",
                self.pressure_after_kill_min_score
            )));
        }
        Ok(())
    }
}

/// A PSI trigger level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Low,
    Medium,
    Critical,
}

/// Why lmkd killed (`enum kill_reasons`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KillReason {
    PressureAfterKill,
    NotResponding,
    LowSwapAndThrashing,
    LowMemAndSwap,
    LowMemAndThrashing,
    DirectReclAndThrashing,
    LowMem,
    /// The old strategy: a minfree level.
    Minfree,
}

/// What the session tells lmkd at a wake-up.
#[derive(Debug, Clone, Copy)]
pub struct MemState {
    pub free: u64,
    pub file: u64,
    pub wmark_min: u64,
    pub wmark_low: u64,
    pub wmark_high: u64,
    pub swap_total: u64,
    pub swap_free: u64,
    /// File pages read back after reclaim dropped them, since boot.
    pub refaults: u64,
    pub direct_reclaim: bool,
}

/// The zone watermark free memory is under (`get_lowest_watermark`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wmark {
    Min,
    Low,
    High,
    None,
}

fn wmark_of(m: &MemState) -> Wmark {
    if m.free < m.wmark_min {
        Wmark::Min
    } else if m.free < m.wmark_low {
        Wmark::Low
    } else if m.free < m.wmark_high {
        Wmark::High
    } else {
        Wmark::None
    }
}

/// PSI over the session's clock: cumulative some/full stall samples.
#[derive(Debug, Clone, Default)]
pub struct Psi {
    /// (time ms, cumulative some ms, cumulative full ms), oldest first.
    samples: VecDeque<(f64, f64, f64)>,
}

impl Psi {
    /// Records the cumulative stall totals at `now`.
    pub fn record(&mut self, now: f64, some: f64, full: f64) {
        self.samples.push_back((now, some, full));
    }

    /// Stall growth over the window ending at the last sample: the totals
    /// now minus the totals at the last sample at or before `now - window`
    /// (zero stall before the first sample).
    pub fn growth(&mut self, window: f64) -> (f64, f64) {
        let Some(&(now, some, full)) = self.samples.back() else {
            return (0.0, 0.0);
        };
        let start = now - window;
        while self.samples.len() > 1 && self.samples[1].0 <= start {
            self.samples.pop_front();
        }
        let base = match self.samples.front() {
            Some(&(t, s, f)) if t <= start => (s, f),
            _ => (0.0, 0.0),
        };
        (some - base.0, full - base.1)
    }
}

/// A run's faults and reclaim work, as the session's PSI stall counts them
/// ([`psi_stall`]): what a replay outside a session (kernel-check's cells)
/// knows of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StallCounts {
    /// Pages read back from the swap device.
    pub swap_ins: u64,
    /// Pages loaded (decompressed) from zswap's pool.
    pub pool_loads: u64,
    /// File pages read again after reclaim dropped them.
    pub refaults: u64,
    /// Pages written to the swap device (for zram: compressed into it).
    pub swap_outs: u64,
    /// Pages compressed into zswap's pool.
    pub pool_stores: u64,
    /// Pages reclaim scanned.
    pub scanned: u64,
}

/// The session's PSI stall (ns: some, full) for `c`, priced with its device
/// times: each swap-in is a one-page read of `swap`, each pool load a
/// decompression (`pool.read`), each refault a one-page read of `file`, all
/// *some* stall; reclaim's work (swap writes, pool compressions, scanning at
/// `scan_ns_per_page`), scaled by the share `reclaim_stall` the faulting task
/// waits for, is *some* and *full* stall (the session's `swap_in`,
/// `flush_file_run`, `charge_reclaim`, `scan_cost`). Requests are single
/// pages, never sequential (no readahead). Kills are not counted. Cost: O(1).
pub fn psi_stall(
    c: &StallCounts,
    swap: &crate::device::Device,
    file: &crate::device::Device,
    pool: Option<&crate::device::Device>,
    scan_ns_per_page: f64,
    reclaim_stall: f64,
) -> (f64, f64) {
    let page = |n: u64, cost: &crate::device::IoCost| n as f64 * cost.time_ns(1, false);
    let (pool_in, pool_out) = match pool {
        Some(p) => (page(c.pool_loads, &p.read), page(c.pool_stores, &p.write)),
        None => (0.0, 0.0),
    };
    let reclaim = (page(c.swap_outs, &swap.write) + pool_out + c.scanned as f64 * scan_ns_per_page)
        * reclaim_stall;
    let faults = page(c.swap_ins, &swap.read) + pool_in + page(c.refaults, &file.read);
    (faults + reclaim, reclaim)
}

/// lmkd's state between wake-ups.
#[derive(Debug, Clone)]
pub struct Lmkd {
    pub cfg: LmkdConfig,
    pub psi: Psi,
    /// Last time each trigger fired (rate limit: once per window).
    fired: [f64; 3],
    /// Polling until this time after an event.
    poll_until: f64,
    next_poll: f64,
    killing: bool,
    // Thrashing state (mp_event_psi's statics).
    init_ws_refault: u64,
    base_file_lru: u64,
    thrashing_reset_t: f64,
    prev_thrash_growth: i64,
    pub events: [u64; 3],
    pub wakeups: u64,
}

/// A kill decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub reason: KillReason,
    pub min_score_adj: i32,
}

impl Lmkd {
    pub fn new(cfg: LmkdConfig) -> Self {
        Lmkd {
            cfg,
            psi: Psi::default(),
            fired: [f64::NEG_INFINITY; 3],
            poll_until: f64::NEG_INFINITY,
            next_poll: f64::NEG_INFINITY,
            killing: false,
            init_ws_refault: 0,
            base_file_lru: 0,
            thrashing_reset_t: 0.0,
            prev_thrash_growth: 0,
            events: [0; 3],
            wakeups: 0,
        }
    }

    /// The triggers as registered: (level, stall type full?, threshold ms).
    fn triggers(&self) -> [(Level, bool, f64); 3] {
        if self.cfg.use_minfree_levels {
            // The hard-coded psi_thresholds of the old strategy.
            [
                (Level::Low, false, 70.0),
                (Level::Medium, false, 100.0),
                (Level::Critical, true, 70.0),
            ]
        } else {
            [
                (Level::Low, false, 0.0), // not registered
                (Level::Medium, false, self.cfg.psi_partial_stall_ms),
                (Level::Critical, true, self.cfg.psi_complete_stall_ms),
            ]
        }
    }

    /// Feeds the stall totals at `now` and returns the highest PSI event that
    /// fires, if any.
    pub fn psi_event(&mut self, now: f64, some_ms: f64, full_ms: f64) -> Option<Level> {
        self.psi.record(now, some_ms, full_ms);
        let (some, full) = self.psi.growth(self.cfg.psi_window_ms);
        let mut hit = None;
        for (i, (lvl, is_full, thr)) in self.triggers().into_iter().enumerate() {
            if thr <= 0.0 {
                continue;
            }
            let stall = if is_full { full } else { some };
            if stall >= thr && now - self.fired[i] >= self.cfg.psi_window_ms {
                self.fired[i] = now;
                self.events[i] += 1;
                hit = Some(lvl);
            }
        }
        hit
    }

    /// A wake-up at `now` (an event, or a poll while polling): returns the
    /// kill to make, if any. `minfree` gives the old strategy's level from
    /// (free, file).
    pub fn wake(
        &mut self,
        now: f64,
        event: Option<Level>,
        m: &MemState,
        minfree: impl Fn(u64, u64) -> Option<i32>,
    ) -> Option<Decision> {
        if event.is_some() {
            self.poll_until = now + self.cfg.psi_window_ms;
        } else if now > self.poll_until || now < self.next_poll {
            return None;
        }
        self.next_poll = now + self.cfg.poll_ms;
        self.wakeups += 1;
        if self.cfg.use_minfree_levels {
            event?;
            return minfree(m.free, m.file).map(|adj| Decision {
                reason: KillReason::Minfree,
                min_score_adj: adj,
            });
        }
        self.decide(now, event, m)
    }

    /// `mp_event_psi`'s decision.
    fn decide(&mut self, now: f64, event: Option<Level>, m: &MemState) -> Option<Decision> {
        let c = &self.cfg;
        let mut cycle_after_kill = false;
        if self.killing {
            self.killing = false;
            cycle_after_kill = true;
            self.base_file_lru = m.file;
            self.init_ws_refault = m.refaults;
            self.thrashing_reset_t = now;
            self.prev_thrash_growth = 0;
        }
        let swap_is_low = c.swap_free_low_percentage > 0
            && m.swap_free < m.swap_total * c.swap_free_low_percentage as u64 / 100;
        let mut thrashing: i64 = 0;
        let since = now - self.thrashing_reset_t;
        let growth =
            (m.refaults - self.init_ws_refault) as i64 * 100 / (self.base_file_lru as i64 + 1);
        if since > 1000.0 {
            self.prev_thrash_growth = growth;
            let windows = (since / 1000.0) as u32;
            if windows > 1 || self.prev_thrash_growth < c.thrashing_limit as i64 {
                self.prev_thrash_growth >>= windows.min(63);
            }
            self.base_file_lru = m.file;
            self.init_ws_refault = m.refaults;
            self.thrashing_reset_t = now;
        } else {
            thrashing = growth;
        }
        thrashing += self.prev_thrash_growth;
        let limit = c.thrashing_limit as i64;
        let critical = c.thrashing_limit_critical.unwrap_or(c.thrashing_limit * 3) as i64;
        let w = wmark_of(m);
        let spare = PERCEPTIBLE_APP_ADJ + 1;
        let (reason, min) = if cycle_after_kill && w < Wmark::Low {
            (
                KillReason::PressureAfterKill,
                c.pressure_after_kill_min_score,
            )
        } else if event == Some(Level::Critical) {
            (KillReason::NotResponding, 0)
        } else if swap_is_low && thrashing > limit {
            let min = if w > Wmark::Min && thrashing < critical {
                spare
            } else {
                0
            };
            (KillReason::LowSwapAndThrashing, min)
        } else if swap_is_low && w < Wmark::High {
            let min = if w > Wmark::Min && thrashing < critical {
                spare
            } else {
                0
            };
            (KillReason::LowMemAndSwap, min)
        } else if w < Wmark::High && thrashing > limit {
            let min = if thrashing < critical { spare } else { 0 };
            (KillReason::LowMemAndThrashing, min)
        } else if m.direct_reclaim && thrashing > limit {
            let min = if thrashing < critical { spare } else { 0 };
            (KillReason::DirectReclAndThrashing, min)
        } else if w < Wmark::High {
            (KillReason::LowMem, PREVIOUS_APP_ADJ + 1)
        } else {
            return None;
        };
        Some(Decision {
            reason,
            min_score_adj: min,
        })
    }

    /// A kill was made (mp_event_psi's `killing = true`).
    pub fn killed(&mut self) {
        self.killing = true;
    }
}

/// `find_and_kill_process`: the victim for `min_score_adj`. `recency` gives a
/// process's last time in the foreground (smaller = longer at its level).
pub fn lmkd_victim(
    procs: &[ProcInfo],
    min_score_adj: i32,
    kill_heaviest_task: bool,
    recency: impl Fn(usize) -> u64,
) -> Option<usize> {
    let mut levels: Vec<i32> = procs
        .iter()
        .map(|p| p.score_adj)
        .filter(|&a| a >= min_score_adj)
        .collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    let adj = *levels.first()?;
    let at = procs.iter().filter(|p| p.score_adj == adj);
    if kill_heaviest_task || adj <= PERCEPTIBLE_APP_ADJ {
        at.max_by(|a, b| a.rss.cmp(&b.rss).then(b.id.cmp(&a.id)))
            .map(|p| p.id)
    } else {
        at.min_by_key(|p| (recency(p.id), p.id)).map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose one-page read costs `r` ns and write `w` ns (setup
    /// 10 ns of each, the rest per page).
    fn dev(r: f64, w: f64) -> crate::device::Device {
        let mut d = crate::device::DeviceCatalog::default()
            .get("dram")
            .unwrap()
            .clone();
        let cost = |t: f64| crate::device::IoCost {
            random_setup_ns: 10.0,
            seq_setup_ns: 0.0,
            per_page_ns: t - 10.0,
            energy_nj_per_page: 0.0,
        };
        (d.read, d.write) = (cost(r), cost(w));
        d
    }

    #[test]
    fn psi_stall_prices_faults_as_some_and_the_waited_for_reclaim_as_both() {
        // A cell: 100 swap-ins at 2 us, 30 refaults at 50 us, 200 swap-outs
        // at 3 us, 1000 pages scanned at 1 us, half of reclaim waited for.
        // some = 200 + 1500 + (600 + 1000) / 2 = 2500 us, full = 800 us.
        let c = StallCounts {
            swap_ins: 100,
            refaults: 30,
            swap_outs: 200,
            scanned: 1000,
            ..Default::default()
        };
        let (swap, file) = (dev(2000.0, 3000.0), dev(50_000.0, 0.0));
        let (some, full) = psi_stall(&c, &swap, &file, None, 1000.0, 0.5);
        assert_eq!((some, full), (2_500_000.0, 800_000.0));
        // zswap in front: 40 loads at 1 us and 150 stores at 4 us add 40 us of
        // faults and 300 us of reclaim; without a pool they cost nothing.
        let c = StallCounts {
            pool_loads: 40,
            pool_stores: 150,
            ..c
        };
        let pool = dev(1000.0, 4000.0);
        let (some, full) = psi_stall(&c, &swap, &file, Some(&pool), 1000.0, 0.5);
        assert_eq!((some, full), (2_840_000.0, 1_100_000.0));
        assert_eq!(
            psi_stall(&c, &swap, &file, None, 1000.0, 0.5),
            (2_500_000.0, 800_000.0)
        );
        // Nothing waited for: reclaim adds no stall, faults stay.
        assert_eq!(
            psi_stall(&c, &swap, &file, Some(&pool), 1000.0, 0.0),
            (1_740_000.0, 0.0)
        );
    }

    fn mem(free: u64) -> MemState {
        MemState {
            free,
            file: 1000,
            wmark_min: 100,
            wmark_low: 125,
            wmark_high: 150,
            swap_total: 1000,
            swap_free: 1000,
            refaults: 0,
            direct_reclaim: false,
        }
    }

    #[test]
    fn partial_stall_fires_medium_once_per_window() {
        let mut l = Lmkd::new(LmkdConfig::default());
        // 69 ms of some stall within the first second: no event.
        assert_eq!(l.psi_event(0.0, 0.0, 0.0), None);
        assert_eq!(l.psi_event(500.0, 69.0, 0.0), None);
        // 70 ms: medium.
        assert_eq!(l.psi_event(600.0, 70.0, 0.0), Some(Level::Medium));
        // More stall in the same window: rate-limited.
        assert_eq!(l.psi_event(900.0, 200.0, 0.0), None);
        // At 1600 the window (600, 1600] grew by 200 - 70... measured from
        // the sample at or before 600: 250 - 70 = 180 >= 70: fires again.
        assert_eq!(l.psi_event(1600.0, 250.0, 0.0), Some(Level::Medium));
        // 700 ms of full stall within a window: critical.
        assert_eq!(l.psi_event(1700.0, 1000.0, 700.0), Some(Level::Critical));
        assert_eq!(l.events, [0, 2, 1]);
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut p = Psi::default();
        p.record(0.0, 0.0, 0.0);
        p.record(100.0, 60.0, 0.0);
        p.record(1200.0, 100.0, 0.0);
        // Window (200, 1200]: base = the sample at 100 (60): growth 40.
        assert_eq!(p.growth(1000.0), (40.0, 0.0));
    }

    #[test]
    fn decisions_follow_mp_event_psi_order() {
        let mut l = Lmkd::new(LmkdConfig::default());
        let none = |_: u64, _: u64| None;
        // Above the high watermark, no swap trouble: nothing.
        assert_eq!(l.wake(0.0, Some(Level::Medium), &mem(200), none), None);
        // Between the low and high watermarks (WMARK_HIGH): not breached.
        assert_eq!(l.wake(10.0, None, &mem(140), none), None);
        // Under the low watermark: cached apps only (701).
        let d = l.wake(20.0, None, &mem(120), none).unwrap();
        assert_eq!((d.reason, d.min_score_adj), (KillReason::LowMem, 701));
        // Polls are 10 ms apart: a wake-up 5 ms later does nothing.
        assert_eq!(l.wake(25.0, None, &mem(120), none), None);
        // After a kill, still under the min watermark: down to 0.
        l.killed();
        let d = l.wake(40.0, None, &mem(90), none).unwrap();
        assert_eq!(
            (d.reason, d.min_score_adj),
            (KillReason::PressureAfterKill, 0)
        );
        // A critical event kills down to 0 whatever the memory.
        let d = l
            .wake(60.0, Some(Level::Critical), &mem(500), none)
            .unwrap();
        assert_eq!((d.reason, d.min_score_adj), (KillReason::NotResponding, 0));
        // Swap low (50 free of 1000 < 10%) and under the low watermark,
        // above min: perceptible apps spared.
        let mut m = mem(120);
        m.swap_free = 50;
        let d = l.wake(80.0, None, &m, none).unwrap();
        assert_eq!(
            (d.reason, d.min_score_adj),
            (KillReason::LowMemAndSwap, 201)
        );
        m.free = 90;
        let d = l.wake(100.0, None, &m, none).unwrap();
        assert_eq!((d.reason, d.min_score_adj), (KillReason::LowMemAndSwap, 0));
        // Past the polling window (event at 60 + 1000): no wake-up.
        assert_eq!(l.wake(1100.0, None, &mem(120), none), None);
    }

    #[test]
    fn thrashing_is_refaults_over_the_file_lru() {
        let mut l = Lmkd::new(LmkdConfig::default());
        let none = |_: u64, _: u64| None;
        // A kill resets the base: file LRU 1000 pages, 0 refaults.
        l.killed();
        assert!(l.wake(0.0, Some(Level::Medium), &mem(500), none).is_none());
        // 1001 refaults on 1000 + 1 pages: 100% (not above the limit).
        let mut m = mem(120);
        m.refaults = 1001;
        let d = l.wake(10.0, None, &m, none).unwrap();
        assert_eq!(d.reason, KillReason::LowMem);
        // 1100 refaults: 109% > 100: thrashing, perceptible apps spared.
        m.refaults = 1100;
        let d = l.wake(20.0, None, &m, none).unwrap();
        assert_eq!(
            (d.reason, d.min_score_adj),
            (KillReason::LowMemAndThrashing, 201)
        );
        // 3100 refaults: 309% >= 300 (the critical limit): down to 0.
        m.refaults = 3100;
        let d = l.wake(30.0, None, &m, none).unwrap();
        assert_eq!(
            (d.reason, d.min_score_adj),
            (KillReason::LowMemAndThrashing, 0)
        );
        // Direct reclaim with free memory above the high watermark.
        let mut m = mem(500);
        m.refaults = 1100;
        m.direct_reclaim = true;
        let d = l.wake(40.0, None, &m, none).unwrap();
        assert_eq!(d.reason, KillReason::DirectReclAndThrashing);
    }

    #[test]
    fn minfree_fallback_kills_only_on_events_and_by_the_table() {
        let cfg = LmkdConfig {
            use_minfree_levels: true,
            ..Default::default()
        };
        let mut l = Lmkd::new(cfg);
        // Old strategy thresholds: some 70 ms -> low.
        assert_eq!(l.psi_event(0.0, 0.0, 0.0), None);
        assert_eq!(l.psi_event(100.0, 70.0, 0.0), Some(Level::Low));
        let table = |free: u64, file: u64| (free < 300 && file < 300).then_some(900);
        let mut m = mem(200);
        m.file = 200;
        let d = l.wake(100.0, Some(Level::Low), &m, table).unwrap();
        assert_eq!((d.reason, d.min_score_adj), (KillReason::Minfree, 900));
        // A poll (no event) does not kill in the old strategy.
        assert_eq!(l.wake(120.0, None, &m, table), None);
        // File memory above the level: no kill.
        m.file = 400;
        assert_eq!(l.wake(130.0, Some(Level::Low), &m, table), None);
    }

    #[test]
    fn victim_by_score_then_tail_or_size() {
        let p = ProcInfo::resident;
        let procs = [
            p(0, 900, 10),
            p(1, 900, 50),
            p(2, 950, 5),
            p(3, 200, 80),
            p(4, 200, 90),
        ];
        let recency = |id: usize| [5, 3, 9, 1, 2][id];
        // The highest score first, whatever its size.
        assert_eq!(lmkd_victim(&procs, 0, false, recency), Some(2));
        // Among equals above 200: the tail (least recent), 1; heaviest, 1.
        let at900 = &procs[..2];
        assert_eq!(lmkd_victim(at900, 0, false, recency), Some(1));
        let procs2 = [p(0, 900, 60), p(1, 900, 50)];
        assert_eq!(lmkd_victim(&procs2, 0, false, recency), Some(1));
        assert_eq!(lmkd_victim(&procs2, 0, true, recency), Some(0));
        // At 200 and below: always the heaviest.
        assert_eq!(lmkd_victim(&procs[3..], 0, false, recency), Some(4));
        // Nothing at or above the minimum.
        assert_eq!(lmkd_victim(&procs, 951, false, recency), None);
    }
}
