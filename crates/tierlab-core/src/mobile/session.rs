//! The session loop: apps launched, used and sent to the background on a
//! phone with a fixed amount of memory, with page-level reclaim (a compact
//! Linux two-list reclaim, see [`super::reclaim`]), the low-memory killer, the
//! OOM killer, optional swap, and a launch-time model.
//!
//! Memory model. `MemTotal` pages are split into the unmodeled system part
//! (`phone.system_mb`, never reclaimed), the pages of the modeled processes
//! (anonymous pages on the anon LRU lists, file pages on the file LRU lists:
//! one pseudo-process "system" holds the framework's shared file pages, touched
//! at every launch), compressed swap (zram keeps `1/ratio` of a page per
//! swapped page) and free pages. An allocation below the low watermark runs
//! reclaim up to the high watermark (kswapd), calling the LMK shrinker once
//! per priority round; when reclaim cannot free a page, the OOM killer kills
//! the process with the highest badness.

use super::lmk::{
    cached_slots, compute_minfree_kb, lmk_victim, oom_badness, oom_victim, pgtable_pages,
    AdjScheme, Level, LmkTable, OomLevelInputs, ProcInfo, OOM_SCORE_ADJ_MIN,
};
use super::reclaim::{scan_weights, swap_tendency, Lists, Loc, PageMeta, AA, AF, IA, IF};
use super::scenario::{background_level, AppKind, Scenario, Step, StepOp, SwappinessMode};
use crate::device::{Device, DeviceCatalog, DeviceClass};
use crate::error::{Error, Result};
use crate::policy::list::NIL;
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

#[derive(Debug, Clone, Default)]
struct AppRt {
    anon0: u32,
    n_anon: u32,
    file0: u32,
    n_file: u32,
    alive: bool,
    launched_once: bool,
    /// Anon pages materialised (a prefix of the anon range).
    allocated: u32,
    anon_res: u32,
    swapped: u32,
    file_res: u32,
    last_fg: u64,
    level: Option<Level>,
    kind: AppKind,
    killed_by: Option<&'static str>,
    exited: bool,
    sum: AppSummary,
}

/// Where launch time goes while a launch runs.
#[derive(Debug, Clone, Default)]
struct Meter {
    file_ns: f64,
    swap_ns: f64,
    init_ns: f64,
    reclaim_ns: f64,
    file_pages: u64,
    swap_pages: u64,
    anon_pages: u64,
    swapped_any: bool,
}

/// The simulator.
pub struct Session {
    sc: Scenario,
    ps: u64,
    lists: Lists,
    apps: Vec<AppRt>,
    names: Vec<String>,
    sys: usize,
    total: u64,
    system: u64,
    wmark_low: u64,
    wmark_high: u64,
    res_anon: u64,
    res_file: u64,
    zram_milli: u64,
    zram_per_page_milli: u64,
    swap: Option<Device>,
    file_store: Device,
    slots: Vec<u32>,
    slot_cursor: usize,
    slots_used: usize,
    last_swap_read_end: u32,
    last_swap_write_end: u32,
    last_file_read_end: u32,
    recent_scanned: [u64; 2],
    recent_rotated: [u64; 2],
    scheme: AdjScheme,
    table: LmkTable,
    minfree_kb: Vec<i64>,
    fg: Option<usize>,
    previous: Option<usize>,
    fg_seq: u64,
    t_ms: f64,
    step: usize,
    meter: Meter,
    out_launches: Vec<LaunchRecord>,
    out_kills: Vec<KillRecord>,
    out_mem: Vec<MemSample>,
    tot: Totals,
}

fn pages_of(mb: f64, ps: u64) -> u64 {
    (mb * 1024.0 * 1024.0 / ps as f64).round().max(0.0) as u64
}

/// The minfree levels (KB) and the LMK table a scenario's phone uses.
pub fn lmk_table_for(sc: &Scenario) -> Result<(Vec<i64>, LmkTable)> {
    let l = &sc.lmk;
    let minfree: Vec<i64> = match &l.minfree_kb {
        Some(v) => v.clone(),
        None => compute_minfree_kb(
            l.table,
            &OomLevelInputs {
                total_mem_mb: sc.phone.memory_mb as i64,
                display_w: sc.phone.display[0],
                display_h: sc.phone.display[1],
                mem_lo_mb: l.mem_lo_mb,
                mem_hi_mb: l.mem_hi_mb,
                minfree_abs_kb: l.minfree_abs_kb,
                minfree_adj_kb: l.minfree_adj_kb,
            },
        )
        .to_vec(),
    };
    let adj: Vec<i32> = match &l.adj {
        Some(v) => v.clone(),
        None => match l.scheme {
            AdjScheme::Kitkat => vec![0, 1, 2, 3, 9, 15],
            AdjScheme::Modern => vec![0, 100, 200, 300, 900, 999],
        },
    };
    let table = LmkTable::new(&minfree, &adj, l.scheme, sc.phone.page_size)?;
    Ok((minfree, table))
}

/// Runs a scenario.
pub fn run_session(sc: &Scenario, catalog: &DeviceCatalog) -> Result<SessionResult> {
    let steps = sc.steps()?;
    let mut s = Session::new(sc.clone(), catalog)?;
    for (i, st) in steps.iter().enumerate() {
        s.step = i;
        s.apply(st)?;
    }
    Ok(s.finish())
}

impl Session {
    pub fn new(sc: Scenario, catalog: &DeviceCatalog) -> Result<Self> {
        sc.validate()?;
        let ps = sc.phone.page_size;
        let total = pages_of(sc.phone.memory_mb, ps);
        let system = pages_of(sc.phone.system_mb, ps);
        let min_free_kb = if sc.phone.min_free_kbytes > 0 {
            sc.phone.min_free_kbytes
        } else {
            // init_per_zone_wmark_min: sqrt(lowmem_kbytes * 16), 128..65536.
            (((total * ps / 1024 * 16) as f64).sqrt() as u64).clamp(128, 65536)
        };
        let wmin = min_free_kb * 1024 / ps;
        let extra = sc.phone.extra_free_kbytes * 1024 / ps;
        let wmark_low = wmin + wmin / 4 + extra;
        let wmark_high = wmin + wmin / 2 + extra;
        let file_store = catalog.get(&sc.phone.file_store)?.clone();
        let swap = match &sc.swap.device {
            None => None,
            Some(n) if n.is_empty() || n == "none" => None,
            Some(n) => Some(catalog.get(n)?.clone()),
        };
        let (minfree_kb, table) = lmk_table_for(&sc)?;

        // Lay out the pages: the system pseudo-process first, then each app.
        let mut apps = Vec::new();
        let mut names = Vec::new();
        let mut next: u64 = 0;
        let mut add = |n_anon: u64, n_file: u64, kind: AppKind| {
            let a = AppRt {
                anon0: next as u32,
                n_anon: n_anon as u32,
                file0: (next + n_anon) as u32,
                n_file: n_file as u32,
                kind,
                ..Default::default()
            };
            next += n_anon + n_file;
            a
        };
        for a in &sc.apps {
            apps.push(add(
                pages_of(a.anon_mb, ps),
                pages_of(a.file_mb, ps),
                a.kind,
            ));
            names.push(a.name.clone());
        }
        let sys = apps.len();
        apps.push(add(
            0,
            pages_of(sc.phone.system_file_mb, ps),
            AppKind::Persistent,
        ));
        names.push("system".into());
        if next > u32::MAX as u64 / 2 {
            return Err(Error::config(
                "scenario: too many pages (apps' footprints exceed 2^31 pages)",
            ));
        }
        let mut lists = Lists::with_capacity(next as usize);
        for (i, a) in apps.iter().enumerate() {
            for k in 0..(a.n_anon + a.n_file) {
                let id = lists.arena.alloc(PageMeta {
                    app: i as u32,
                    anon: k < a.n_anon,
                    loc: Loc::Absent,
                    young: false,
                    pgref: false,
                });
                debug_assert_eq!(id, a.anon0 + k);
            }
        }
        for (i, a) in apps.iter_mut().enumerate() {
            a.sum.app = names[i].clone();
            a.sum.anon_pages = a.n_anon as u64;
            a.sum.file_pages = a.n_file as u64;
        }
        let nslots = if swap.is_some() {
            pages_of(sc.swap.size_mb, ps) as usize
        } else {
            0
        };
        let zram = swap
            .as_ref()
            .is_some_and(|d| d.class == DeviceClass::Compressed);
        // Rounded up: swapping N pages at ratio r may free at most
        // N (1 - 1/r) pages of RAM, never more (issue 19).
        let zram_per_page_milli = if zram {
            (1000.0 / sc.swap.zram_ratio).ceil() as u64
        } else {
            0
        };
        let scheme = sc.lmk.scheme;
        let tot = Totals {
            page_size: ps,
            total_pages: total,
            system_pages: system,
            wmark_min: wmin,
            wmark_low,
            wmark_high,
            ..Default::default()
        };
        let mut s = Session {
            ps,
            lists,
            apps,
            names,
            sys,
            total,
            system,
            wmark_low,
            wmark_high,
            res_anon: 0,
            res_file: 0,
            zram_milli: 0,
            zram_per_page_milli,
            swap,
            file_store,
            slots: vec![NIL; nslots],
            slot_cursor: 0,
            slots_used: 0,
            last_swap_read_end: NIL,
            last_swap_write_end: NIL,
            last_file_read_end: NIL,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            scheme,
            table,
            minfree_kb,
            fg: None,
            previous: None,
            fg_seq: 0,
            t_ms: 0.0,
            step: 0,
            meter: Meter::default(),
            out_launches: Vec::new(),
            out_kills: Vec::new(),
            out_mem: Vec::new(),
            tot,
            sc,
        };
        s.boot()?;
        Ok(s)
    }

    /// Free pages (`MemFree`).
    pub fn free_pages(&self) -> u64 {
        let used = self.system + self.res_anon + self.res_file + self.zram_milli.div_ceil(1000);
        self.total.saturating_sub(used)
    }

    pub fn file_pages(&self) -> u64 {
        self.res_file
    }

    fn boot(&mut self) -> Result<()> {
        if self.system + self.wmark_high >= self.total {
            return Err(Error::config("phone: system_mb leaves no memory for apps"));
        }
        // The framework's shared files are mapped by the system processes.
        let sys = self.sys;
        self.apps[sys].alive = true;
        self.apps[sys].level = Some(Level::System);
        let (f0, nf) = (self.apps[sys].file0, self.apps[sys].n_file);
        for p in f0..f0 + nf {
            self.alloc_page()?;
            self.make_resident(p, AF);
        }
        if self.sc.launch.file_cache_warm {
            for i in 0..self.sc.apps.len() {
                let (f0, n) = (self.apps[i].file0, self.launch_file_pages(i));
                for p in f0..f0 + n {
                    if self.free_pages() <= self.wmark_high {
                        break;
                    }
                    self.alloc_page()?;
                    self.make_resident(p, IF);
                }
            }
        }
        for i in 0..self.sc.apps.len() {
            if self.sc.apps[i].start_running {
                self.cold_start(i)?;
                self.apps[i].last_fg = 0;
            }
        }
        self.update_levels();
        self.meter = Meter::default();
        self.sample("boot");
        Ok(())
    }

    fn launch_file_pages(&self, i: usize) -> u32 {
        (self.apps[i].n_file as f64 * self.sc.apps[i].launch_file).round() as u32
    }

    // ---- page placement -------------------------------------------------

    fn make_resident(&mut self, p: u32, list: usize) {
        let (app, anon) = {
            let m = self.lists.arena.get(p);
            (m.app as usize, m.anon)
        };
        debug_assert!(!matches!(self.lists.arena.get(p).loc, Loc::Lru(_)));
        {
            let m = self.lists.arena.get_mut(p);
            m.loc = Loc::Lru(list as u8);
            m.young = true;
            m.pgref = false;
        }
        self.lists.lists[list].push_front(&mut self.lists.arena, p);
        let a = &mut self.apps[app];
        if anon {
            self.res_anon += 1;
            a.anon_res += 1;
        } else {
            self.res_file += 1;
            a.file_res += 1;
        }
        let held = (a.anon_res + a.file_res + a.swapped) as u64;
        a.sum.peak_pages = a.sum.peak_pages.max(held);
    }

    /// Marks a resident page accessed: the PTE young bit; a file page read
    /// through the page cache also goes through `mark_page_accessed`
    /// (inactive+referenced -> active, else referenced).
    fn touch(&mut self, p: u32) {
        let m = *self.lists.arena.get(p);
        let Loc::Lru(l) = m.loc else { return };
        let mm = self.lists.arena.get_mut(p);
        mm.young = true;
        if !m.anon && l as usize == IF {
            if m.pgref {
                mm.pgref = false;
                self.lists.move_between(p, IF, AF);
            } else {
                mm.pgref = true;
            }
        }
    }

    // ---- allocation and reclaim ----------------------------------------

    /// Makes sure one page is free, reclaiming and killing as the kernel would.
    fn alloc_page(&mut self) -> Result<()> {
        if self.free_pages() < self.wmark_low {
            self.reclaim(self.wmark_high);
        }
        while self.free_pages() == 0 {
            self.reclaim(1);
            if self.free_pages() > 0 {
                break;
            }
            if !self.oom_kill() {
                return Err(Error::config(format!(
                    "step {}: out of memory with nothing left to kill (the apps' footprints exceed \
                     the phone's memory and swap)",
                    self.step
                )));
            }
        }
        Ok(())
    }

    fn procs(&self) -> Vec<ProcInfo> {
        self.apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.alive)
            .map(|(i, a)| {
                let score_adj = if i == self.sys {
                    OOM_SCORE_ADJ_MIN
                } else {
                    self.scheme.score_adj(a.level.unwrap_or(Level::Foreground))
                };
                let rss = (a.anon_res + a.file_res) as u64;
                ProcInfo {
                    id: i,
                    score_adj,
                    rss,
                    swap: a.swapped as u64,
                    pgtables: pgtable_pages(rss + a.swapped as u64),
                }
            })
            .collect()
    }

    /// kswapd/direct reclaim up to `target` free pages: priority rounds 12..0,
    /// each calling the LMK shrinker then scanning the LRU lists.
    fn reclaim(&mut self, target: u64) {
        let mut priority: u32 = 12;
        loop {
            if self.free_pages() >= target {
                return;
            }
            self.tot.reclaim_rounds += 1;
            if self.sc.lmk.enabled {
                if let Some(min_adj) = self.table.min_score_adj(self.free_pages(), self.res_file) {
                    let procs = self.procs();
                    if let Some(v) = lmk_victim(&procs, min_adj) {
                        self.kill(v, "lmk", min_adj as i64);
                        continue;
                    }
                }
            }
            let freed = self.shrink(priority, target);
            if priority == 0 {
                if freed == 0 {
                    return;
                }
            } else {
                priority -= 1;
            }
        }
    }

    fn swap_ok(&self) -> bool {
        self.swap.is_some() && self.slots_used < self.slots.len()
    }

    /// One pass of `shrink_zone` at `priority`; returns pages freed.
    fn shrink(&mut self, priority: u32, target: u64) -> u64 {
        let before = self.free_pages();
        let swap_ok = self.swap_ok();
        let mut nr = [0u64; 4];
        let mut reclaim_mapped = true;
        let size = |s: &Self, l: usize| s.lists.lists[l].len() as u64;
        match self.sc.swap.mode {
            SwappinessMode::ScanCount => {
                let anon = size(self, IA) + size(self, AA);
                let file = size(self, IF) + size(self, AF);
                let (fa, ff) = if !swap_ok {
                    (0u64, 1u64)
                } else if file + self.free_pages() <= self.wmark_high {
                    (1, 0)
                } else {
                    scan_weights(
                        self.sc.swap.swappiness,
                        self.recent_scanned,
                        self.recent_rotated,
                    )
                };
                let _ = anon;
                let denom = fa + ff + 1;
                for l in [IA, AA, IF, AF] {
                    let frac = if l == IA || l == AA { fa } else { ff };
                    let mut scan = size(self, l) >> priority;
                    if priority > 0 || !swap_ok {
                        scan = scan * frac / denom;
                    }
                    if scan == 0 && frac > 0 && size(self, l) > 0 && priority <= 2 {
                        scan = size(self, l).min(32);
                    }
                    nr[l] = scan;
                }
            }
            SwappinessMode::SwapTendency => {
                // 2.6 refill_inactive_zone: mapped pages are pages of live
                // processes: the unmodeled system part (its processes' memory
                // is mapped), anon pages, and the file pages they map.
                let mapped = self.system
                    + self.res_anon
                    + self
                        .apps
                        .iter()
                        .filter(|a| a.alive)
                        .map(|a| a.file_res as u64)
                        .sum::<u64>();
                let mapped_ratio = mapped * 100 / self.total;
                reclaim_mapped =
                    swap_tendency(mapped_ratio, priority, self.sc.swap.swappiness) >= 100;
                for l in [IA, AA, IF, AF] {
                    let mut scan = size(self, l) >> priority;
                    if scan == 0 && size(self, l) > 0 && priority <= 2 {
                        scan = size(self, l).min(32);
                    }
                    nr[l] = scan;
                }
                if !swap_ok {
                    nr[IA] = 0;
                    nr[AA] = 0;
                }
            }
        }
        let old = self.sc.swap.mode == SwappinessMode::SwapTendency;
        while nr.iter().any(|&n| n > 0) {
            for l in [IA, AA, IF, AF] {
                if nr[l] == 0 {
                    continue;
                }
                let n = nr[l].min(32);
                nr[l] -= n;
                let file = l == IF || l == AF;
                if l == AA || l == AF {
                    // 3.x shrinks an active list only when its inactive list
                    // is low; 2.6 refilled the inactive list every round.
                    if old || self.lists.inactive_is_low(file, self.total, self.ps) {
                        self.shrink_active(l, n, reclaim_mapped, old);
                    }
                } else {
                    self.shrink_inactive(l, n);
                }
            }
            if self.free_pages() >= target {
                break;
            }
        }
        if !old && swap_ok && self.lists.inactive_is_low(false, self.total, self.ps) {
            self.shrink_active(AA, 32, true, false);
        }
        self.free_pages().saturating_sub(before)
    }

    fn is_mapped(&self, p: u32) -> bool {
        let m = self.lists.arena.get(p);
        self.apps[m.app as usize].alive
    }

    /// `shrink_active_list`: deactivate up to `n` pages from the active tail.
    fn shrink_active(&mut self, l: usize, n: u64, reclaim_mapped: bool, old: bool) {
        let file = l == AF;
        let inactive = if file { IF } else { IA };
        for _ in 0..n {
            let Some(p) = self.lists.lists[l].back() else {
                break;
            };
            self.scan_cost(1);
            self.recent_scanned[file as usize] += 1;
            let m = *self.lists.arena.get(p);
            if old {
                // 2.6: a mapped page stays active unless reclaim_mapped, and
                // a referenced page is rotated.
                if (self.is_mapped(p) && !reclaim_mapped) || m.young {
                    self.lists.arena.get_mut(p).young = false;
                    self.lists.lists[l].move_to_front(&mut self.lists.arena, p);
                    self.recent_rotated[file as usize] += 1;
                    continue;
                }
            } else if m.young {
                self.recent_rotated[file as usize] += 1;
            }
            let mm = self.lists.arena.get_mut(p);
            mm.young = false;
            self.lists.move_between(p, l, inactive);
        }
    }

    /// `shrink_inactive_list` + `page_check_references`: up to `n` pages from
    /// the inactive tail are activated (referenced anon, or file referenced
    /// twice), rotated (file referenced once) or reclaimed.
    fn shrink_inactive(&mut self, l: usize, n: u64) {
        let file = l == IF;
        let mut written: Vec<u32> = Vec::new();
        for _ in 0..n {
            let Some(p) = self.lists.lists[l].back() else {
                break;
            };
            self.scan_cost(1);
            self.recent_scanned[file as usize] += 1;
            let m = *self.lists.arena.get(p);
            if m.young {
                let mm = self.lists.arena.get_mut(p);
                mm.young = false;
                if m.anon || m.pgref {
                    mm.pgref = false;
                    self.lists.move_between(p, l, if file { AF } else { AA });
                    self.recent_rotated[file as usize] += 1;
                } else {
                    mm.pgref = true;
                    self.lists.lists[l].move_to_front(&mut self.lists.arena, p);
                }
                continue;
            }
            if file {
                self.lists.lists[l].unlink(&mut self.lists.arena, p);
                self.lists.arena.get_mut(p).loc = Loc::Absent;
                self.res_file -= 1;
                self.apps[m.app as usize].file_res -= 1;
                self.tot.file_pages_dropped += 1;
            } else if let Some(slot) = self.alloc_slot() {
                self.lists.lists[l].unlink(&mut self.lists.arena, p);
                self.lists.arena.get_mut(p).loc = Loc::Swapped(slot);
                self.slots[slot as usize] = p;
                self.res_anon -= 1;
                self.zram_milli += self.zram_per_page_milli;
                let a = &mut self.apps[m.app as usize];
                a.anon_res -= 1;
                a.swapped += 1;
                a.sum.swapped_out += 1;
                written.push(slot);
            } else {
                self.lists.move_between(p, l, AA);
            }
        }
        self.write_swap(&mut written);
    }

    fn scan_cost(&mut self, pages: u64) {
        self.tot.pages_scanned += pages;
        self.meter.reclaim_ns +=
            pages as f64 * self.sc.reclaim.scan_ns_per_page * self.sc.reclaim.stall;
    }

    /// Next-fit swap slot allocation (the kernel's cluster allocator hands out
    /// consecutive slots while it can).
    fn alloc_slot(&mut self) -> Option<u32> {
        if !self.swap_ok() {
            return None;
        }
        let n = self.slots.len();
        for k in 0..n {
            let s = (self.slot_cursor + k) % n;
            if self.slots[s] == NIL {
                self.slot_cursor = (s + 1) % n;
                self.slots_used += 1;
                return Some(s as u32);
            }
        }
        None
    }

    fn free_slot(&mut self, s: u32) {
        debug_assert_ne!(self.slots[s as usize], NIL);
        self.slots[s as usize] = NIL;
        self.slots_used -= 1;
        self.zram_milli = self.zram_milli.saturating_sub(self.zram_per_page_milli);
    }

    /// Charges the swap writes of one reclaim batch: one request per run of
    /// consecutive slots, sequential when it continues the previous write.
    fn write_swap(&mut self, slots: &mut Vec<u32>) {
        if slots.is_empty() {
            return;
        }
        let dev = self.swap.clone().expect("swap writes need a swap device");
        slots.sort_unstable();
        let mut i = 0;
        while i < slots.len() {
            let mut j = i + 1;
            while j < slots.len() && slots[j] == slots[j - 1] + 1 {
                j += 1;
            }
            let n = (j - i) as u64;
            let seq = slots[i] == self.last_swap_write_end;
            let t = dev.write.time_ns(n, seq);
            self.last_swap_write_end = slots[j - 1] + 1;
            self.tot.swap_write_requests += 1;
            self.tot.swap_pages_out += n;
            self.tot.swap_write_ms += t / 1e6;
            self.meter.reclaim_ns += t * self.sc.reclaim.stall;
            i = j;
        }
        slots.clear();
    }

    // ---- killing ----------------------------------------------------------

    fn kill(&mut self, v: usize, killer: &'static str, threshold: i64) {
        let free_before = self.free_pages();
        let file_before = self.res_file;
        let a = &self.apps[v];
        let score_adj = self.scheme.score_adj(a.level.unwrap_or(Level::Foreground));
        let rss = (a.anon_res + a.file_res) as u64;
        let swap = a.swapped as u64;
        self.exit_process(v);
        let a = &mut self.apps[v];
        a.killed_by = Some(killer);
        if killer == "lmk" {
            a.sum.lmk_kills += 1;
            self.tot.lmk_kills += 1;
        } else {
            a.sum.oom_kills += 1;
            self.tot.oom_kills += 1;
        }
        self.meter.reclaim_ns += self.sc.reclaim.kill_ms * 1e6 * self.sc.reclaim.stall;
        self.out_kills.push(KillRecord {
            step: self.step,
            t_ms: self.t_ms,
            app: self.names[v].clone(),
            killer: killer.into(),
            score_adj,
            rss_pages: rss,
            swap_pages: swap,
            free_pages_before: free_before,
            file_pages_before: file_before,
            free_pages_after: self.free_pages(),
            threshold,
        });
        self.sample(&format!("{killer} kill {}", self.names[v]));
        self.update_levels();
    }

    fn oom_kill(&mut self) -> bool {
        let total = self.total + self.slots.len() as u64;
        let procs = self.procs();
        match oom_victim(&procs, total) {
            Some(v) => {
                let p = procs
                    .iter()
                    .find(|p| p.id == v)
                    .expect("victim is a process");
                let badness = oom_badness(p, total) as i64;
                self.kill(v, "oom", badness);
                true
            }
            None => false,
        }
    }

    /// The process ends: its anon pages and swap slots are freed; its file
    /// pages stay in the page cache (unmapped).
    fn exit_process(&mut self, v: usize) {
        let (a0, n) = (self.apps[v].anon0, self.apps[v].allocated);
        for p in a0..a0 + n {
            match self.lists.arena.get(p).loc {
                Loc::Lru(l) => {
                    self.lists.lists[l as usize].unlink(&mut self.lists.arena, p);
                    self.res_anon -= 1;
                }
                Loc::Swapped(s) => self.free_slot(s),
                Loc::Absent => {}
            }
            self.lists.arena.get_mut(p).loc = Loc::Absent;
        }
        let a = &mut self.apps[v];
        a.alive = false;
        a.allocated = 0;
        a.anon_res = 0;
        a.swapped = 0;
        a.level = None;
        if self.fg == Some(v) {
            self.fg = None;
        }
        if self.previous == Some(v) {
            self.previous = None;
        }
    }

    /// ActivityManager's levels: foreground, the app's own kind, previous,
    /// then cached slots by recency.
    fn update_levels(&mut self) {
        let mut cached: Vec<usize> = Vec::new();
        for i in 0..self.sc.apps.len() {
            if !self.apps[i].alive {
                continue;
            }
            let lvl = if Some(i) == self.fg {
                Some(Level::Foreground)
            } else if let Some(l) = background_level(self.apps[i].kind) {
                Some(l)
            } else if Some(i) == self.previous {
                Some(Level::Previous)
            } else {
                cached.push(i);
                None
            };
            self.apps[i].level = lvl;
        }
        cached.sort_by(|&a, &b| self.apps[b].last_fg.cmp(&self.apps[a].last_fg));
        for (i, slot) in cached.iter().zip(cached_slots(cached.len())) {
            self.apps[*i].level = Some(Level::Cached(slot));
        }
    }

    // ---- launches -------------------------------------------------------------

    fn set_foreground(&mut self, app: usize) {
        if self.fg != Some(app) {
            if let Some(f) = self.fg {
                self.previous = Some(f);
            }
        }
        self.fg = Some(app);
        self.fg_seq += 1;
        self.apps[app].last_fg = self.fg_seq;
        self.update_levels();
    }

    /// Brings `n` pages starting at `p0` of `app` in: resident pages are
    /// touched, absent file pages are read (runs of up to the readahead window),
    /// swapped anon pages are read back (with page-cluster readahead).
    fn touch_range(&mut self, p0: u32, n: u32) -> Result<()> {
        let mut run_start = NIL;
        let mut run_len = 0u32;
        let ra = self.sc.launch.file_readahead_pages.max(1);
        for p in p0..p0 + n {
            let m = *self.lists.arena.get(p);
            let app = m.app as usize;
            if !self.apps[app].alive {
                return Ok(());
            }
            match m.loc {
                Loc::Lru(_) => self.touch(p),
                Loc::Absent if !m.anon => {
                    self.alloc_page()?;
                    self.make_resident(p, IF);
                    self.tot.file_pages_read += 1;
                    self.meter.file_pages += 1;
                    if run_len > 0 && run_start + run_len == p && run_len < ra {
                        run_len += 1;
                    } else {
                        self.flush_file_run(run_start, run_len);
                        run_start = p;
                        run_len = 1;
                    }
                }
                Loc::Absent => {}
                Loc::Swapped(s) => self.swap_in(s, p)?,
            }
        }
        self.flush_file_run(run_start, run_len);
        Ok(())
    }

    fn flush_file_run(&mut self, start: u32, len: u32) {
        if len == 0 {
            return;
        }
        let seq = start == self.last_file_read_end;
        let t = self.file_store.read.time_ns(len as u64, seq);
        self.last_file_read_end = start + len;
        self.meter.file_ns += t;
    }

    /// Swap-in of the page in slot `s` (page `p`), reading the aligned window
    /// of `2^page_cluster` slots in one request.
    fn swap_in(&mut self, s: u32, p: u32) -> Result<()> {
        let dev = self.swap.clone().expect("swapped pages need a swap device");
        let w = 1u32 << self.sc.swap.page_cluster;
        let start = s & !(w - 1);
        let end = (start + w).min(self.slots.len() as u32);
        let mut batch: Vec<(u32, u32)> = Vec::new();
        for q in start..end {
            let page = self.slots[q as usize];
            if page != NIL {
                batch.push((q, page));
            }
        }
        let t = dev
            .read
            .time_ns(batch.len() as u64, start == self.last_swap_read_end);
        self.meter.swap_pages += batch.len() as u64;
        self.last_swap_read_end = end;
        self.tot.swap_read_requests += 1;
        self.tot.swap_read_ms += t / 1e6;
        self.meter.swap_ns += t;
        self.meter.swapped_any = true;
        for (q, page) in batch {
            self.alloc_page()?;
            // Reclaim may have killed the owner meanwhile.
            if self.slots[q as usize] != page {
                continue;
            }
            self.free_slot(q);
            let app = self.lists.arena.get(page).app as usize;
            {
                let a = &mut self.apps[app];
                a.swapped -= 1;
                a.sum.swapped_in += 1;
            }
            self.lists.arena.get_mut(page).loc = Loc::Absent;
            if page == p {
                self.make_resident(page, AA);
                self.tot.swap_pages_in += 1;
            } else {
                self.make_resident(page, IA);
                self.lists.arena.get_mut(page).young = false;
                self.tot.swap_readahead_pages += 1;
            }
        }
        Ok(())
    }

    /// Grows the app's anon memory to `upto` pages, building each page.
    fn grow_anon(&mut self, app: usize, upto: u32, charge: bool) -> Result<()> {
        while self.apps[app].alive && self.apps[app].allocated < upto {
            self.alloc_page()?;
            if !self.apps[app].alive {
                break;
            }
            let p = self.apps[app].anon0 + self.apps[app].allocated;
            self.apps[app].allocated += 1;
            self.make_resident(p, AA);
            if charge {
                self.meter.anon_pages += 1;
                self.meter.init_ns += self.sc.launch.anon_init_us_per_page * 1e3;
            }
        }
        Ok(())
    }

    fn touch_system(&mut self) -> Result<()> {
        let (f0, nf) = (self.apps[self.sys].file0, self.apps[self.sys].n_file);
        let n = (nf as f64 * self.sc.phone.system_file_touch).round() as u32;
        self.touch_range(f0, n)
    }

    fn cold_start(&mut self, app: usize) -> Result<()> {
        self.apps[app].alive = true;
        self.apps[app].exited = false;
        self.set_foreground(app);
        self.touch_system()?;
        let (f0, nf) = (self.apps[app].file0, self.launch_file_pages(app));
        self.touch_range(f0, nf)?;
        let upto = (self.apps[app].n_anon as f64 * self.sc.apps[app].launch_anon).round() as u32;
        self.grow_anon(app, upto, true)
    }

    fn launch(&mut self, app: usize) -> Result<()> {
        self.meter = Meter::default();
        let lm = self.sc.launch.clone();
        let a = &self.apps[app];
        let (kind, start_ms, killed_by) = if a.alive {
            (LaunchKind::Hot, lm.hot_start_ms, None)
        } else if !a.launched_once {
            (LaunchKind::First, lm.process_start_ms, None)
        } else if let Some(k) = a.killed_by {
            (LaunchKind::Cold, lm.process_start_ms, Some(k.to_string()))
        } else {
            (LaunchKind::Restart, lm.process_start_ms, None)
        };
        if kind == LaunchKind::Hot {
            self.set_foreground(app);
            self.touch_system()?;
            let spec = &self.sc.apps[app];
            let a = &self.apps[app];
            let na = (a.allocated as f64 * spec.relaunch_anon).round() as u32;
            let nf = (a.n_file as f64 * spec.relaunch_file).round() as u32;
            let (a0, f0) = (a.anon0, a.file0);
            self.touch_range(a0, na)?;
            self.touch_range(f0, nf)?;
        } else {
            self.apps[app].killed_by = None;
            self.cold_start(app)?;
        }
        self.apps[app].launched_once = true;
        self.apps[app].sum.launches += 1;
        let kind = if kind == LaunchKind::Hot && self.meter.swapped_any {
            LaunchKind::Swap
        } else {
            kind
        };
        let m = &self.meter;
        let time_ms = start_ms + (m.file_ns + m.swap_ns + m.init_ns + m.reclaim_ns) / 1e6;
        let rec = LaunchRecord {
            step: self.step,
            t_ms: self.t_ms,
            app: self.names[app].clone(),
            kind,
            time_ms,
            start_ms,
            file_read_ms: m.file_ns / 1e6,
            swap_read_ms: m.swap_ns / 1e6,
            anon_init_ms: m.init_ns / 1e6,
            reclaim_ms: m.reclaim_ns / 1e6,
            file_pages_read: m.file_pages,
            swap_pages_in: m.swap_pages,
            anon_pages_built: m.anon_pages,
            killed_by,
        };
        self.t_ms += time_ms;
        self.out_launches.push(rec);
        Ok(())
    }

    /// Applies one script step.
    pub fn apply(&mut self, st: &Step) -> Result<()> {
        match st.op {
            StepOp::Launch => {
                let app = st.app.expect("launch steps name an app");
                self.launch(app)?;
                self.sample(&format!("launch {}", self.names[app]));
            }
            StepOp::Use => {
                if let Some(app) = self.fg {
                    self.meter = Meter::default();
                    let full = self.apps[app].n_anon;
                    self.grow_anon(app, full, false)?;
                    if self.apps[app].alive {
                        let a = &self.apps[app];
                        let (a0, na) = (a.anon0, a.allocated);
                        let nf = (a.n_file as f64 * self.sc.apps[app].relaunch_file).round() as u32;
                        let f0 = a.file0;
                        self.touch_range(a0, na)?;
                        self.touch_range(f0, nf)?;
                    }
                }
                self.t_ms += st.seconds * 1e3;
                self.sample("use");
            }
            StepOp::Background => {
                let home = (0..self.sc.apps.len()).find(|&i| self.apps[i].kind == AppKind::Home);
                match home {
                    Some(h) if Some(h) != self.fg => {
                        self.launch(h)?;
                    }
                    _ => {
                        if let Some(f) = self.fg.take() {
                            self.previous = Some(f);
                            self.update_levels();
                        }
                    }
                }
                self.t_ms += st.seconds * 1e3;
                self.sample("background");
            }
            StepOp::Idle => {
                self.t_ms += st.seconds * 1e3;
                self.sample("idle");
            }
            StepOp::Exit => {
                let app = st.app.expect("exit steps name an app");
                if self.apps[app].alive {
                    self.exit_process(app);
                    self.apps[app].exited = true;
                    self.apps[app].killed_by = None;
                    self.update_levels();
                }
                self.sample(&format!("exit {}", self.names[app]));
            }
        }
        Ok(())
    }

    fn sample(&mut self, event: &str) {
        let running = self.apps[..self.sc.apps.len()]
            .iter()
            .filter(|a| a.alive)
            .count() as u32;
        self.out_mem.push(MemSample {
            step: self.step,
            t_ms: self.t_ms,
            event: event.to_string(),
            free_pages: self.free_pages(),
            file_pages: self.res_file,
            anon_pages: self.res_anon,
            swap_pages: self.slots_used as u64,
            zram_pages: self.zram_milli.div_ceil(1000),
            running_apps: running,
        });
    }

    /// Resident/swapped state of a page, for tests: `Some(true)` resident,
    /// `Some(false)` swapped, `None` absent.
    pub fn page_state(&self, app: &str, anon: bool, index: u32) -> Option<bool> {
        let i = self.names.iter().position(|n| n == app)?;
        let a = &self.apps[i];
        let p = if anon {
            a.anon0 + index
        } else {
            a.file0 + index
        };
        match self.lists.arena.get(p).loc {
            Loc::Lru(_) => Some(true),
            Loc::Swapped(_) => Some(false),
            Loc::Absent => None,
        }
    }

    /// Swaps out every resident anon page of `app` (as if reclaim had chosen
    /// them), for tests and "what if" scenarios.
    pub fn force_swap_out(&mut self, app: &str) -> Result<u64> {
        let i = self
            .names
            .iter()
            .position(|n| n == app)
            .ok_or_else(|| Error::config(format!("unknown app '{app}'")))?;
        let (a0, n) = (self.apps[i].anon0, self.apps[i].allocated);
        let mut written = Vec::new();
        let mut k = 0;
        for p in a0..a0 + n {
            let Loc::Lru(l) = self.lists.arena.get(p).loc else {
                continue;
            };
            let Some(slot) = self.alloc_slot() else { break };
            self.lists.lists[l as usize].unlink(&mut self.lists.arena, p);
            self.lists.arena.get_mut(p).loc = Loc::Swapped(slot);
            self.slots[slot as usize] = p;
            self.res_anon -= 1;
            self.zram_milli += self.zram_per_page_milli;
            let a = &mut self.apps[i];
            a.anon_res -= 1;
            a.swapped += 1;
            a.sum.swapped_out += 1;
            written.push(slot);
            k += 1;
        }
        self.write_swap(&mut written);
        Ok(k)
    }

    /// The records so far.
    pub fn launches(&self) -> &[LaunchRecord] {
        &self.out_launches
    }

    pub fn kills(&self) -> &[KillRecord] {
        &self.out_kills
    }

    pub fn finish(mut self) -> SessionResult {
        self.tot.session_ms = self.t_ms;
        self.tot.swap_bytes_written = self.tot.swap_pages_out * self.ps;
        // Wear only for flash with erase blocks (not zram).
        if let Some(ebp) = self.swap.as_ref().and_then(|d| d.erase_block_pages) {
            let ebp = ebp.max(1) as f64;
            self.tot.erase_blocks_written = self.tot.swap_pages_out as f64 / ebp;
            let area_blocks = (self.slots.len() as f64 / ebp).max(1.0);
            self.tot.wear_cycles_per_block = self.tot.erase_blocks_written / area_blocks;
        }
        let n = self.sc.apps.len();
        SessionResult {
            launches: self.out_launches,
            kills: self.out_kills,
            memory: self.out_mem,
            apps: self.apps[..n].iter().map(|a| a.sum.clone()).collect(),
            totals: self.tot,
            lmk: self.table,
            minfree_kb: self.minfree_kb,
            swap_device: self.swap.map(|d| d.name),
            file_store: self.file_store.name,
        }
    }
}
