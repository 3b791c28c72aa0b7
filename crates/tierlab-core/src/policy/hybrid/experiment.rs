//! The paper's experiment (papers/hybrid-dram-pcm-app-aware.md, Section 4):
//! memory sizes from 10% to 100% of the trace's footprint, DRAM fixed at 5% of
//! memory, the app-aware policy against LRU and 2Q (and CLOCK-DWF), reporting
//! what Figures 4-7 plot: overall and foreground hit ratio, foreground
//! execution time (time ratios of Section 4) and memory energy (Table 1), plus
//! PCM writes, migrations and PCM wear.

use super::{Meter, PaperCost, M, PCM};
use crate::device::{DeviceCatalog, System, SystemSpec};
use crate::error::Result;
use crate::policy::PolicySpec;
use crate::sim::engine::{run, InstanceSpec, RunOptions};
use crate::trace::{info::summarize, open, TraceSpec};

/// The system of the paper's cost model: DRAM and PCM at the Section 4 time
/// ratios and Table 1 energies, storage at 1000.
pub fn ratio_system() -> Result<System> {
    let spec = SystemSpec {
        tiers: vec!["dram-ratio".into(), "pcm-ratio".into()],
        file_store: "storage-ratio".into(),
        swap: Some("storage-ratio".into()),
        write_miss_fetch: false,
    };
    System::resolve(&spec, &DeviceCatalog::default())
}

/// The policies the paper compares, plus CLOCK-DWF.
pub const POLICIES: [&str; 4] = ["app-aware", "hybrid-lru", "hybrid-2q", "clock-dwf"];

/// One (policy, size) cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub policy: String,
    /// Memory size in percent of the footprint.
    pub size_pct: u32,
    pub capacity: usize,
    pub hit_ratio: f64,
    pub fg_hit_ratio: f64,
    /// Foreground execution time in the paper's units (Section 4).
    pub fg_time: f64,
    /// Memory energy in nJ (Table 1).
    pub energy_nj: f64,
    pub pcm_writes: u64,
    pub migrations_up: u64,
    pub migrations_down: u64,
    pub storage_evictions: u64,
    pub fg_storage_evictions: u64,
    /// PCM wear: most writes to one page, and the mean over PCM frames.
    pub wear_max: u64,
    pub wear_mean_per_frame: f64,
    /// Trace replays before the most-written PCM page reaches the endurance
    /// (no wear levelling), and with ideal wear levelling over PCM's frames.
    pub lifetime_replays: f64,
    pub lifetime_replays_levelled: f64,
}

/// Runs the sweep; `pcts` are memory sizes in percent of the footprint;
/// `policies` are policy specs (`name` or `name(key=value,...)`), each cell
/// labelled with its spec as given.
pub fn sweep(
    spec: &TraceSpec,
    policies: &[&str],
    pcts: &[u32],
    dram_ratio: f64,
) -> Result<(Vec<Cell>, u64)> {
    let footprint = summarize(open(spec)?.as_mut(), None)?.distinct_pages;
    let sys = ratio_system()?;
    let endurance = sys.tiers[PCM as usize]
        .endurance_writes
        .unwrap_or(f64::INFINITY);
    let mut inst = Vec::new();
    let mut labels = Vec::new();
    for p in policies {
        for &pct in pcts {
            let mut ps = PolicySpec::parse(p)?;
            labels.push(*p);
            ps.params
                .insert("dram_ratio".into(), toml::Value::Float(dram_ratio));
            inst.push(InstanceSpec {
                policy: ps,
                capacity: ((footprint as f64 * pct as f64 / 100.0).round() as usize).max(1),
            });
        }
    }
    let opts = RunOptions {
        threads: 2,
        ..RunOptions::default()
    };
    let out = run(open(spec)?.as_mut(), &inst, &sys, &opts, &mut |_| Ok(()))?;
    let cost = PaperCost::default();
    let cells = out
        .results
        .iter()
        .zip(inst.iter())
        .zip(labels)
        .map(|((r, i), label)| {
            let s = &r.stats;
            let m = Meter::from_counters(r.counters.iter().map(|(k, v)| (k.as_str(), *v)));
            let pct = (r.capacity as f64 * 100.0 / footprint as f64).round() as u32;
            let dram = ((i.capacity as f64) * dram_ratio).round() as usize;
            let pcm_frames = (i.capacity - dram.min(i.capacity)).max(1) as f64;
            let wear_max = s.wear_max_page_writes[PCM as usize];
            let wear_total = s.wear_writes[PCM as usize];
            let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            Cell {
                policy: label.to_string(),
                size_pct: pct,
                capacity: r.capacity,
                hit_ratio: ratio(s.hits_total(), s.accesses),
                fg_hit_ratio: ratio(s.fg_hits, s.fg_hits + s.fg_misses),
                fg_time: cost.fg_time(&m),
                energy_nj: cost.energy_nj(&m, out.page_size),
                pcm_writes: m.get(M::PcmWrites),
                migrations_up: s.migrations_up,
                migrations_down: s.migrations_down,
                storage_evictions: m.get(M::StorageEvictions),
                fg_storage_evictions: m.get(M::FgStorageEvictions),
                wear_max,
                wear_mean_per_frame: wear_total as f64 / pcm_frames,
                lifetime_replays: if wear_max == 0 {
                    f64::INFINITY
                } else {
                    endurance / wear_max as f64
                },
                lifetime_replays_levelled: if wear_total == 0 {
                    f64::INFINITY
                } else {
                    endurance * pcm_frames / wear_total as f64
                },
            }
        })
        .collect();
    Ok((cells, footprint))
}

/// Mean over sizes of `policy`'s value relative to `base`'s at the same size
/// (e.g. 0.42 = 58% less), as the paper averages its normalised curves.
pub fn mean_ratio(cells: &[Cell], policy: &str, base: &str, f: impl Fn(&Cell) -> f64) -> f64 {
    let mut sum = 0.0;
    let mut n = 0;
    for c in cells.iter().filter(|c| c.policy == policy) {
        if let Some(b) = cells
            .iter()
            .find(|b| b.policy == base && b.capacity == c.capacity)
        {
            if f(b) > 0.0 {
                sum += f(c) / f(b);
                n += 1;
            }
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}
