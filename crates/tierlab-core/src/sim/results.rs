//! Flat result rows: one row per (trace, policy, parameters, size), with every
//! counter, ratio and cost component as a named column. Python turns the rows
//! into a pandas DataFrame; the CLI prints and stores them.

use super::accounting::{Stats, COMPONENT_NAMES};
use super::engine::{InstanceResult, RunOutput};
use crate::device::System;

/// A cell value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

pub type Row = Vec<(String, Value)>;

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

struct RowBuilder(Row);

impl RowBuilder {
    fn int(&mut self, k: &str, v: u64) {
        self.0
            .push((k.to_string(), Value::Int(v.min(i64::MAX as u64) as i64)));
    }
    fn float(&mut self, k: &str, v: f64) {
        self.0.push((k.to_string(), Value::Float(v)));
    }
    fn str(&mut self, k: &str, v: &str) {
        self.0.push((k.to_string(), Value::Str(v.to_string())));
    }
}

/// Column names of the hit/miss matrix entries.
const KIND_OP: [(&str, usize, usize); 4] = [
    ("file_read", 0, 0),
    ("file_write", 0, 1),
    ("anon_read", 1, 0),
    ("anon_write", 1, 1),
];

/// The row of one instance.
pub fn instance_row(res: &InstanceResult, run: &RunOutput, system: &System) -> Row {
    let s: &Stats = &res.stats;
    let mut b = RowBuilder(Vec::with_capacity(96));
    b.str("policy", &res.policy);
    b.str("label", &res.label);
    b.str("params", &res.params);
    // In object-size mode capacities are bytes; `size_pages` is then the whole pages they hold.
    let (size_pages, size_bytes) = if run.object_sizes {
        (
            res.capacity as u64 / run.page_size as u64,
            res.capacity as u64,
        )
    } else {
        (
            res.capacity as u64,
            // Saturates (at i64::MAX, as every int column does) for a size beyond 2^51 pages.
            (res.capacity as u64).saturating_mul(run.page_size as u64),
        )
    };
    b.int("size_pages", size_pages);
    b.int("size_bytes", size_bytes);
    b.int("page_size", run.page_size as u64);
    b.int("accesses", s.accesses);
    b.int("requests", s.requests);
    b.int("distinct_pages", run.distinct_pages);
    let (hits, misses) = (s.hits_total(), s.misses_total());
    b.int("hits", hits);
    b.int("misses", misses);
    b.float("hit_ratio", ratio(hits, s.accesses));
    b.float("miss_ratio", ratio(misses, s.accesses));
    // Bytes: object sizes in object-size mode, `page_size` per reference in page mode.
    let byte_misses = if run.object_sizes {
        s.byte_misses
    } else {
        misses * run.page_size as u64
    };
    b.int("object_sizes", run.object_sizes as u64);
    b.int("byte_accesses", s.byte_accesses);
    b.int("byte_misses", byte_misses);
    b.float("byte_miss_ratio", ratio(byte_misses, s.byte_accesses));
    b.int("too_large", s.too_large);
    for (name, k, o) in KIND_OP {
        b.int(&format!("hits_{name}"), s.hits[k][o]);
        b.int(&format!("misses_{name}"), s.misses[k][o]);
    }
    b.int("fg_hits", s.fg_hits);
    b.int("fg_misses", s.fg_misses);
    b.float("fg_hit_ratio", ratio(s.fg_hits, s.fg_hits + s.fg_misses));
    b.int("bypasses", s.bypasses);
    b.int("evictions", s.evictions);
    b.int("dirty_evictions", s.dirty_evictions);
    b.int("cleaned_in_place", s.cleaned_in_place);
    b.int("file_pages_read", s.file_pages_read);
    b.int("swap_pages_read", s.swap_pages_read);
    b.int("zero_fills", s.zero_fills);
    b.int("file_pages_written", s.file_pages_written);
    b.int("swap_pages_written", s.swap_pages_written);
    b.int("migrations_up", s.migrations_up);
    b.int("migrations_down", s.migrations_down);
    b.int("remaps", s.remaps);
    for (t, dev) in system.tiers.iter().enumerate() {
        b.int(&format!("hits_tier{t}"), s.hits_by_tier[t]);
        if dev.endurance_writes.is_some() {
            b.int(&format!("wear_writes_tier{t}"), s.wear_writes[t]);
            b.int(&format!("wear_pages_tier{t}"), s.wear_pages[t]);
            b.int(
                &format!("wear_max_page_writes_tier{t}"),
                s.wear_max_page_writes[t],
            );
        }
        for (j, what) in ["read", "write", "fill"].iter().enumerate() {
            let c = &s.tier[t][j];
            b.float(&format!("time_{}_{what}_ns", dev.name), c.time_ns);
            b.float(&format!("energy_{}_{what}_nj", dev.name), c.energy_nj);
        }
    }
    for (i, name) in COMPONENT_NAMES.iter().enumerate() {
        let c = &s.fixed[i];
        b.int(&format!("ops_{name}"), c.ops);
        b.int(&format!("pages_{name}"), c.pages);
        b.float(&format!("time_{name}_ns"), c.time_ns);
        b.float(&format!("energy_{name}_nj"), c.energy_nj);
    }
    let io: f64 = s.fixed[..4].iter().map(|c| c.time_ns).sum();
    b.float("io_time_ns", io);
    b.float("total_time_ns", s.total_time_ns());
    b.float("total_energy_nj", s.total_energy_nj());
    b.int("file_write_requests", s.file_write_sizes.iter().sum());
    for (k, v) in &res.counters {
        b.int(&format!("ctr_{k}"), *v);
    }
    b.int("resident_at_end", res.resident_at_end as u64);
    b.float("policy_seconds", res.policy_seconds);
    b.float(
        "accesses_per_second",
        if res.policy_seconds > 0.0 {
            s.accesses as f64 / res.policy_seconds
        } else {
            0.0
        },
    );
    b.0
}

/// Rows of every instance of a run.
pub fn rows(run: &RunOutput, system: &System) -> Vec<Row> {
    run.results
        .iter()
        .map(|r| instance_row(r, run, system))
        .collect()
}

/// Rows of every instance of a run priced under its `k`th pricing variant (`RunOptions::variants`,
/// `system` being that variant): the same counts, the variant's times and energies.
pub fn variant_rows(run: &RunOutput, k: usize, system: &System) -> Vec<Row> {
    run.results
        .iter()
        .map(|r| {
            let priced = InstanceResult {
                policy: r.policy.clone(),
                label: r.label.clone(),
                params: r.params.clone(),
                capacity: r.capacity,
                stats: r.variant_stats[k].clone(),
                counters: r.counters.clone(),
                resident_at_end: r.resident_at_end,
                policy_seconds: r.policy_seconds,
                device_log: None,
                variant_stats: Vec::new(),
            };
            instance_row(&priced, run, system)
        })
        .collect()
}
