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

//!
//! Layout: this file holds the session's state, its construction and its
//! outputs; [`kernel`] the page placement, reclaim, swap slots and the killers;
//! [`launch`] the launch-cost model and the step loop.

mod kernel;
mod launch;
mod modern;

use super::compressed::{CompressedStore, StoreKind, Stored};
use super::lmk::{
    cached_slots, compute_minfree_kb, lmk_victim, oom_badness, oom_victim, pgtable_pages,
    AdjScheme, Level, LmkTable, OomLevelInputs, ProcInfo, OOM_SCORE_ADJ_MIN,
};
use super::lmkd::{lmkd_victim, KillReason, Lmkd, MemState};
use super::reclaim::{scan_weights, swap_tendency, Lists, Loc, PageMeta, AA, AF, IA, IF};
pub use super::records::{
    AppSummary, KillRecord, LaunchKind, LaunchRecord, MemSample, SessionResult, Totals,
};
use super::scenario::{
    background_level, AppKind, Killer, ReclaimPolicy, Scenario, Step, StepOp, SwappinessMode,
};
use crate::device::{Device, DeviceCatalog, DeviceClass};
use crate::error::{Error, Result};
use crate::policy::list::NIL;
use crate::policy::swap::mglru::Mglru;

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
    /// zram's pool, or zswap's, counted against RAM.
    store: CompressedStore,
    wmark_min: u64,
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
    /// lmkd when `lmk.killer = "lmkd"`.
    lmkd: Option<Lmkd>,
    /// MGLRU when `reclaim.policy = "mglru"` (else the two lists).
    mg: Option<Box<Mglru>>,
    /// Cumulative PSI stall (ns): some, full (see `super::lmkd`).
    psi_some_ns: f64,
    psi_full_ns: f64,
    /// In direct reclaim (an allocation found no free page).
    direct: bool,
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

/// The compressed part of swap a scenario asks for: zram when the swap
/// device is compressed, zswap (`swap.zswap.enabled`) in front of a block
/// device, else none.
fn compressed_store(
    sc: &Scenario,
    swap: Option<&Device>,
    nslots: usize,
    total: u64,
    catalog: &DeviceCatalog,
) -> Result<CompressedStore> {
    let z = &sc.swap.zswap;
    let zram = swap.is_some_and(|d| d.class == DeviceClass::Compressed);
    let (kind, compressor) = if z.enabled {
        let Some(dev) = swap else {
            return Err(Error::config(
                "swap.zswap: zswap needs a swap device behind it (swap.device)",
            ));
        };
        if zram {
            return Err(Error::config(format!(
                "swap.zswap: the swap device '{}' is compressed (zram); zswap goes in front \
                 of a block device",
                dev.name
            )));
        }
        let c = catalog.get(&z.compressor)?;
        if c.class != DeviceClass::Compressed {
            return Err(Error::config(format!(
                "swap.zswap.compressor: '{}' is a {:?} device; expected a compressed one \
                 (class = \"compressed\")",
                c.name, c.class
            )));
        }
        (StoreKind::Zswap, Some(c.clone()))
    } else if zram {
        (StoreKind::Zram, None)
    } else {
        (StoreKind::Device, None)
    };
    Ok(CompressedStore::new(
        kind,
        nslots,
        total,
        &sc.swap.compress,
        z,
        compressor,
    ))
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
                    shadow: false,
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
        let store = compressed_store(&sc, swap.as_ref(), nslots, total, catalog)?;
        let mg = match sc.reclaim.policy {
            ReclaimPolicy::TwoList => None,
            ReclaimPolicy::Mglru => {
                let sw = sc.reclaim.mglru_swappiness.unwrap_or(sc.swap.swappiness);
                Some(Box::new(Mglru::for_simulator(next as usize, sw)?))
            }
        };
        let lmkd = (sc.lmk.killer == Killer::Lmkd).then(|| Lmkd::new(sc.lmkd.clone()));
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
            store,
            wmark_min: wmin,
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
            lmkd,
            mg,
            psi_some_ns: 0.0,
            psi_full_ns: 0.0,
            direct: false,
            sc,
        };
        s.boot()?;
        Ok(s)
    }

    /// Free pages (`MemFree`).
    pub fn free_pages(&self) -> u64 {
        let used = self.system + self.res_anon + self.res_file + self.store.pool_pages();
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
            zram_pages: self.store.pool_pages(),
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
            self.lru_del(p, l as usize);
            self.swap_out_page(p, slot, &mut written);
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
        self.tot.zswap = self.store.stats;
        self.tot.psi_some_ms = self.psi_some_ns / 1e6;
        self.tot.psi_full_ms = self.psi_full_ns / 1e6;
        if let Some(l) = &self.lmkd {
            self.tot.psi_events_medium = l.events[1];
            self.tot.psi_events_critical = l.events[2];
        }
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
