//! Android's process levels, the low-memory killer (LMK) and the Linux OOM
//! killer's badness score.
//!
//! Sources (read, not copied):
//! - `frameworks/base/services/.../am/ProcessList.java`: the adj levels, the
//!   six-slot `mOomAdj` table and `updateOomLevels`, which interpolates every
//!   minfree level between `mOomMinFreeLow` and `mOomMinFreeHigh` by
//!   `scale = max(scaleMem, scaleDisp)` clamped to [0, 1], with
//!   `scaleMem = (totalMemMb - memLo) / (memHi - memLo)` and
//!   `scaleDisp = (w*h - 480*800) / (1280*800 - 480*800)`, then
//!   `minfree[i] = (int)(low + (high - low) * scale)` in KB (Java `float`
//!   arithmetic, truncation toward zero), written to the kernel as pages.
//! - `drivers/staging/android/lowmemorykiller.c` (and `lmkd`'s
//!   `find_and_kill_process`): the first level `i` with
//!   `free < minfree[i] && file < minfree[i]` gives `min_score_adj = adj[i]`;
//!   the victim is the process with the highest `oom_score_adj >= min_score_adj`,
//!   ties broken by the largest RSS. `lowmem_oom_adj_to_oom_score_adj` converts
//!   the legacy oom_adj units: 15 -> 1000, else `adj * 1000 / 17`.
//! - `mm/oom_kill.c` `oom_badness`: `rss + swap entries + page-table pages +
//!   oom_score_adj * totalpages / 1000`, and `-1000` is never chosen.
//!
//! The paper (Section 4.1) describes the LMK as pairs `(adj, minfree)` such as
//! `(0, 1024), (8, 4096)` (pages): when free memory drops below a minfree, the
//! apps whose adj is at least the paired adj are killed.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Legacy `OOM_DISABLE` (oom_adj -17) and `OOM_ADJUST_MAX` (15).
pub const OOM_DISABLE: i32 = -17;
pub const OOM_ADJUST_MAX: i32 = 15;
/// `OOM_SCORE_ADJ_MIN` / `OOM_SCORE_ADJ_MAX`.
pub const OOM_SCORE_ADJ_MIN: i32 = -1000;
pub const OOM_SCORE_ADJ_MAX: i32 = 1000;

/// `lowmem_oom_adj_to_oom_score_adj`: legacy oom_adj (-17..15) to oom_score_adj.
pub fn oom_adj_to_score_adj(oom_adj: i32) -> i32 {
    if oom_adj == OOM_ADJUST_MAX {
        OOM_SCORE_ADJ_MAX
    } else {
        oom_adj * OOM_SCORE_ADJ_MAX / -OOM_DISABLE
    }
}

/// Which numbering of process levels the phone uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AdjScheme {
    /// KitKat-era ActivityManager: oom_adj units (foreground 0, visible 1,
    /// perceptible 2, backup 3, service 5, home 6, previous 7, service-B 8,
    /// cached 9..15, persistent -12, system -16), converted to oom_score_adj
    /// by the kernel. The LMK table's adj column is in oom_adj units.
    #[default]
    Kitkat,
    /// Modern oom_score_adj levels (REFERENCE.md): foreground 0, visible 100,
    /// perceptible 200, backup 300, service 500, home 600, previous 700,
    /// service-B 800, cached 900..999, persistent -800, system -900. The LMK
    /// table's adj column is in oom_score_adj units.
    Modern,
}

/// The importance of a process, as ActivityManager classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    System,
    Persistent,
    Foreground,
    Visible,
    Perceptible,
    Backup,
    Service,
    Home,
    Previous,
    ServiceB,
    /// A cached (background) process; the slot counts from the most recently
    /// used cached process (0) outwards.
    Cached(u32),
}

impl AdjScheme {
    /// The oom_adj (Kitkat) or oom_score_adj (Modern) a level gets.
    pub fn raw_adj(self, level: Level) -> i32 {
        match self {
            AdjScheme::Kitkat => match level {
                Level::System => -16,
                Level::Persistent => -12,
                Level::Foreground => 0,
                Level::Visible => 1,
                Level::Perceptible => 2,
                Level::Backup => 3,
                Level::Service => 5,
                Level::Home => 6,
                Level::Previous => 7,
                Level::ServiceB => 8,
                Level::Cached(slot) => kitkat_cached_adj(slot),
            },
            AdjScheme::Modern => match level {
                Level::System => -900,
                Level::Persistent => -800,
                Level::Foreground => 0,
                Level::Visible => 100,
                Level::Perceptible => 200,
                Level::Backup => 300,
                Level::Service => 500,
                Level::Home => 600,
                Level::Previous => 700,
                Level::ServiceB => 800,
                Level::Cached(slot) => (900 + 10 * slot as i32).min(999),
            },
        }
    }

    /// The kernel's oom_score_adj for a raw value of this scheme.
    pub fn to_score_adj(self, raw: i32) -> i32 {
        match self {
            AdjScheme::Kitkat => oom_adj_to_score_adj(raw),
            AdjScheme::Modern => raw,
        }
    }

    pub fn score_adj(self, level: Level) -> i32 {
        self.to_score_adj(self.raw_adj(level))
    }
}

/// KitKat's `updateOomAdjLocked` spreads cached processes over 9..15: the
/// current level starts at 9, the next at 10, and after every `cachedFactor`
/// processes the current level becomes the next and the next grows by 2
/// (clamped to 15), giving 9, 10, 12, 14, 15, 15, ... Here `slot` already
/// counts groups of `cachedFactor` processes (see [`cached_slots`]).
fn kitkat_cached_adj(slot: u32) -> i32 {
    match slot {
        0 => 9,
        1 => 10,
        2 => 12,
        3 => 14,
        _ => 15,
    }
}

/// Slots of `n` cached processes, most recently used first: KitKat's
/// `cachedFactor = max(1, n / numSlots)` processes share a slot, with
/// `numSlots = (15 - 9 + 1) / 2 = 3`.
pub fn cached_slots(n: usize) -> Vec<u32> {
    let factor = (n / 3).max(1);
    (0..n).map(|i| (i / factor) as u32).collect()
}

/// A named minfree/adj table source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MinfreeTable {
    /// `mOomMinFreeLow = {12288, 18432, 24576, 36864, 43008, 49152}` KB and
    /// `mOomMinFreeHigh = {73728, 92160, 110592, 129024, 147456, 184320}` KB
    /// (KitKat-era and later ProcessList; 72/90/108/126/144/180 MB on a 1 GB
    /// device, REFERENCE.md).
    #[default]
    Kitkat,
    /// The older 32-bit tables (Jelly Bean; kept in later vendor trees as
    /// `mOomMinFreeLow32Bit/High32Bit`): low `{8192, 12288, 16384, 24576,
    /// 28672, 32768}`, high `{49152, 61440, 73728, 86016, 98304, 122880}` KB.
    Jellybean,
}

impl MinfreeTable {
    pub fn low_kb(self) -> [i64; 6] {
        match self {
            MinfreeTable::Kitkat => [12288, 18432, 24576, 36864, 43008, 49152],
            MinfreeTable::Jellybean => [8192, 12288, 16384, 24576, 28672, 32768],
        }
    }
    pub fn high_kb(self) -> [i64; 6] {
        match self {
            MinfreeTable::Kitkat => [73728, 92160, 110592, 129024, 147456, 184320],
            MinfreeTable::Jellybean => [49152, 61440, 73728, 86016, 98304, 122880],
        }
    }
}

/// Inputs of `ProcessList.updateOomLevels`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OomLevelInputs {
    /// `MemTotal` in MB (as `Process.getTotalMemory() / 1 MiB`).
    pub total_mem_mb: i64,
    pub display_w: i64,
    pub display_h: i64,
    /// Memory at which the low table applies (350 MB in KitKat-era and later
    /// code; 300 MB in older releases).
    pub mem_lo_mb: i64,
    /// Memory at which the high table applies (700 MB).
    pub mem_hi_mb: i64,
    /// `config_lowMemoryKillerMinFreeKbytesAbsolute` (-1 = unset).
    pub minfree_abs_kb: i64,
    /// `config_lowMemoryKillerMinFreeKbytesAdjust` (0 = unset).
    pub minfree_adj_kb: i64,
}

/// `updateOomLevels`: the six minfree levels in KB, with Java's `float`
/// arithmetic and `(int)` truncation.
pub fn compute_minfree_kb(table: MinfreeTable, inp: &OomLevelInputs) -> [i64; 6] {
    let scale_mem =
        (inp.total_mem_mb - inp.mem_lo_mb) as f32 / (inp.mem_hi_mb - inp.mem_lo_mb) as f32;
    let min_size = (480 * 800) as f32;
    let max_size = (1280 * 800) as f32;
    let scale_disp = ((inp.display_w * inp.display_h) as f32 - min_size) / (max_size - min_size);
    let scale = scale_mem.max(scale_disp).clamp(0.0, 1.0);
    let (low, high) = (table.low_kb(), table.high_kb());
    let mut out = [0i64; 6];
    for i in 0..6 {
        out[i] = (low[i] as f32 + (high[i] - low[i]) as f32 * scale) as i64;
    }
    if inp.minfree_abs_kb >= 0 {
        let last = out[5];
        for v in out.iter_mut() {
            *v = (inp.minfree_abs_kb as f32 * *v as f32 / last as f32) as i64;
        }
    }
    if inp.minfree_adj_kb != 0 {
        let last = out[5];
        for v in out.iter_mut() {
            *v += (inp.minfree_adj_kb as f32 * *v as f32 / last as f32) as i64;
            if *v < 0 {
                *v = 0;
            }
        }
    }
    out
}

/// One LMK level: below `minfree_pages` of free *and* file memory, processes
/// with oom_score_adj >= `min_score_adj` may be killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LmkLevel {
    pub minfree_pages: u64,
    pub min_score_adj: i32,
}

/// The kernel's minfree/adj arrays, in increasing minfree order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LmkTable {
    pub levels: Vec<LmkLevel>,
}

impl LmkTable {
    /// Builds the table from minfree values in KB and adj values in the
    /// scheme's units (what ActivityManager writes: `minfree*1024/PAGE_SIZE`).
    pub fn new(minfree_kb: &[i64], adj: &[i32], scheme: AdjScheme, page_size: u64) -> Result<Self> {
        if minfree_kb.len() != adj.len() || adj.is_empty() {
            return Err(Error::config(format!(
                "lmk: minfree and adj must be non-empty and of equal length, got {} and {}",
                minfree_kb.len(),
                adj.len()
            )));
        }
        let mut levels = Vec::with_capacity(adj.len());
        for (i, (&m, &a)) in minfree_kb.iter().zip(adj).enumerate() {
            if m < 0 {
                return Err(Error::config(format!(
                    "lmk.minfree[{i}] must be >= 0, got {m}"
                )));
            }
            levels.push(LmkLevel {
                minfree_pages: (m as u64 * 1024) / page_size,
                min_score_adj: scheme.to_score_adj(a),
            });
        }
        Ok(LmkTable { levels })
    }

    /// `min_score_adj` of the first level whose minfree exceeds both the free
    /// and the file pages (the kernel walks the arrays in order), or `None`
    /// when no level applies (the LMK does nothing).
    pub fn min_score_adj(&self, free_pages: u64, file_pages: u64) -> Option<i32> {
        self.levels
            .iter()
            .find(|l| free_pages < l.minfree_pages && file_pages < l.minfree_pages)
            .map(|l| l.min_score_adj)
    }
}

/// What the killers need to know about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    pub id: usize,
    pub score_adj: i32,
    /// Resident pages (anon + file mapped), `get_mm_rss`.
    pub rss: u64,
    /// Swap entries (`MM_SWAPENTS`).
    pub swap: u64,
    /// Page-table pages.
    pub pgtables: u64,
}

impl ProcInfo {
    /// A process holding `rss` resident pages, with no swap entries or page tables.
    pub fn resident(id: usize, score_adj: i32, rss: u64) -> Self {
        ProcInfo {
            id,
            score_adj,
            rss,
            swap: 0,
            pgtables: 0,
        }
    }
}

/// lowmemorykiller / lmkd victim: the highest oom_score_adj `>= min_score_adj`,
/// ties to the largest RSS (then the lowest id, for determinism). Processes
/// with no RSS are skipped, as the kernel does (`tasksize <= 0`).
pub fn lmk_victim(procs: &[ProcInfo], min_score_adj: i32) -> Option<usize> {
    let mut best: Option<&ProcInfo> = None;
    for p in procs {
        if p.score_adj < min_score_adj || p.rss == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some(b) => p.score_adj > b.score_adj || (p.score_adj == b.score_adj && p.rss > b.rss),
        };
        if better {
            best = Some(p);
        }
    }
    best.map(|p| p.id)
}

/// `oom_badness`: 0 for oom_score_adj -1000 (never killed), else
/// `max(1, rss + swap + pgtables + oom_score_adj * (totalpages / 1000))`,
/// where `totalpages` = RAM + swap pages.
pub fn oom_badness(p: &ProcInfo, total_pages: u64) -> u64 {
    if p.score_adj <= OOM_SCORE_ADJ_MIN {
        return 0;
    }
    let points =
        (p.rss + p.swap + p.pgtables) as i64 + p.score_adj as i64 * (total_pages / 1000) as i64;
    points.max(1) as u64
}

/// The OOM killer's victim: the highest badness (first in order on ties, as
/// `select_bad_process` keeps the first maximum); `None` if every process is
/// unkillable.
pub fn oom_victim(procs: &[ProcInfo], total_pages: u64) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for p in procs {
        let b = oom_badness(p, total_pages);
        if b == 0 {
            continue;
        }
        if best.is_none_or(|(bb, _)| b > bb) {
            best = Some((b, p.id));
        }
    }
    best.map(|(_, id)| id)
}

/// Page-table pages for `mapped` pages: one 4 KiB PTE page maps 512 pages
/// (the upper levels are ignored).
pub fn pgtable_pages(mapped: u64) -> u64 {
    mapped.div_ceil(512)
}
