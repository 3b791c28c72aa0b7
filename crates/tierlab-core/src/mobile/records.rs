//! What a session yields: launches, kills, memory samples, per-app summaries
//! and totals (split from `session.rs`).

use super::compressed::ZswapStats;
use super::lmk::LmkTable;
use super::lmkd::KillReason;
use serde::Serialize;

/// How a launch found its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchKind {
    /// The first launch of the app in the session (a cold start).
    First,
    /// The process was running and everything it touched was in memory (file
    /// pages dropped from the page cache may have been re-read).
    Hot,
    /// The process was running but some touched pages came back from swap.
    Swap,
    /// The process had been killed (by the LMK or the OOM killer): cold start.
    Cold,
    /// The process had exited (user closed it): cold start.
    Restart,
}

/// One launch.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchRecord {
    pub step: usize,
    pub t_ms: f64,
    pub app: String,
    pub kind: LaunchKind,
    pub time_ms: f64,
    /// Fixed part (process start or activity resume).
    pub start_ms: f64,
    pub file_read_ms: f64,
    pub swap_read_ms: f64,
    pub anon_init_ms: f64,
    /// Reclaim the launch waited for (scanning, swap writes, kills).
    pub reclaim_ms: f64,
    pub file_pages_read: u64,
    /// Pages read from swap (faulted and read ahead).
    pub swap_pages_in: u64,
    pub anon_pages_built: u64,
    /// Which killer ended the previous process, for `cold` launches.
    pub killed_by: Option<String>,
}

/// One kill.
#[derive(Debug, Clone, Serialize)]
pub struct KillRecord {
    pub step: usize,
    pub t_ms: f64,
    pub app: String,
    /// "lmk" or "oom".
    pub killer: String,
    pub score_adj: i32,
    pub rss_pages: u64,
    pub swap_pages: u64,
    pub free_pages_before: u64,
    pub file_pages_before: u64,
    pub free_pages_after: u64,
    /// The LMK level's min_score_adj, or the OOM badness.
    pub threshold: i64,
    /// lmkd's kill reason (`kill_reasons`), for kills by lmkd.
    pub reason: Option<KillReason>,
}

/// Memory state after a step or a kill (the paper's Figure 1).
#[derive(Debug, Clone, Serialize)]
pub struct MemSample {
    pub step: usize,
    pub t_ms: f64,
    pub event: String,
    pub free_pages: u64,
    pub file_pages: u64,
    pub anon_pages: u64,
    pub swap_pages: u64,
    pub zram_pages: u64,
    pub running_apps: u32,
}

/// Per-app summary (the paper's Figure 3: pages allocated per app).
#[derive(Debug, Clone, Serialize, Default)]
pub struct AppSummary {
    pub app: String,
    pub anon_pages: u64,
    pub file_pages: u64,
    /// Most pages (resident anon + file + swapped) the process held at once.
    pub peak_pages: u64,
    pub launches: u64,
    pub lmk_kills: u64,
    pub oom_kills: u64,
    pub swapped_out: u64,
    pub swapped_in: u64,
}

/// Session totals.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Totals {
    pub page_size: u64,
    pub total_pages: u64,
    pub system_pages: u64,
    pub wmark_min: u64,
    pub wmark_low: u64,
    pub wmark_high: u64,
    pub lmk_kills: u64,
    pub oom_kills: u64,
    pub swap_pages_out: u64,
    pub swap_pages_in: u64,
    pub swap_readahead_pages: u64,
    pub swap_write_requests: u64,
    pub swap_read_requests: u64,
    pub swap_bytes_written: u64,
    pub swap_read_ms: f64,
    pub swap_write_ms: f64,
    /// Erase blocks' worth of swap writes (bytes written / erase block size).
    pub erase_blocks_written: f64,
    /// Program/erase cycles per block of the swap area, with ideal wear
    /// leveling over the area (the paper's lifetime concern: ~10,000 cycles).
    pub wear_cycles_per_block: f64,
    pub file_pages_read: u64,
    pub file_pages_dropped: u64,
    pub pages_scanned: u64,
    pub reclaim_rounds: u64,
    /// Time the session took (launches + use + idle), ms.
    pub session_ms: f64,
    /// Most pages the compressed pool (zram or zswap) held at once.
    pub compressed_pool_peak_pages: u64,
    /// zswap's counters (zero without zswap).
    pub zswap: ZswapStats,
    /// File pages read again after reclaim had dropped them.
    pub file_refaults: u64,
    /// PSI stall totals (ms) as the session models them (`mobile::lmkd`).
    pub psi_some_ms: f64,
    pub psi_full_ms: f64,
    /// lmkd's medium and critical PSI events.
    pub psi_events_medium: u64,
    pub psi_events_critical: u64,
}

/// Everything a session yields.
#[derive(Debug, Clone, Serialize)]
pub struct SessionResult {
    pub launches: Vec<LaunchRecord>,
    pub kills: Vec<KillRecord>,
    pub memory: Vec<MemSample>,
    pub apps: Vec<AppSummary>,
    pub totals: Totals,
    pub lmk: LmkTable,
    pub minfree_kb: Vec<i64>,
    pub swap_device: Option<String>,
    pub file_store: String,
}
