//! Every registered policy's results pinned (issue 17): misses, evictions,
//! dirty evictions, pages written to the file store and to swap, migrations
//! and the policy's own counters, on two real block traces with writes (the
//! first references of mobile-block/telegram_exec and cod_exec), a Zipf trace
//! with writes and a read-only LIRS trace, at 1%, 10% and 30% of each trace's
//! footprint, plus CFLRU at several windows, both LIRS variants and the libCacheSim variants
//! of SLRU, LFUDA, GDSF and Cacheus.
//!
//! The counts in tests/reference/policy_counts.json were written by main's
//! code before the per-reference scans were replaced (CFLRU's clean-first
//! window, LIRS's stack pruning, ...), so a rework that changes any decision
//! fails here. Regenerate (only when a change of results is intended) with
//! `TIERLAB_PIN_WRITE=1 cargo test --release --test policy_counts`.
//! A newly registered policy fails here ("not pinned") until its counts are
//! written. The `footprint` stored with each trace is the distinct pages the
//! decoder saw (it may decode a batch past the limit), used only to choose
//! the sizes when writing; checks replay the stored sizes.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::{all_policies, PolicySpec};
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{open, TraceSpec};

mod cells;
use cells::{grid, json_sizes};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/");
const REFERENCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/reference/policy_counts.json"
);

/// (trace, format, reference limit).
const TRACES: &[(&str, Option<&str>, u64)] = &[
    ("mobile-block/telegram_exec.csv.gz", None, 300_000),
    ("mobile-block/cod_exec.csv.gz", None, 200_000),
    (
        "zipf:alpha=0.9,pages=40000,n=200000,write=0.3,seed=17",
        None,
        200_000,
    ),
    ("lirs/sprite.trace.gz", Some("lirs"), 200_000),
];

const FRACTIONS: [f64; 3] = [0.01, 0.1, 0.3];

/// Policy specs beyond every policy with its defaults.
const EXTRA: &[&str] = &[
    "cflru(window=0.02)",
    "cflru(window=0.25)",
    "cflru(window=0.5)",
    "cflru(window=0.9)",
    "lirs(libcachesim=true)",
    "slru(libcachesim=true, segments=4)",
    "lfuda(libcachesim=true)",
    "gdsf(libcachesim=true)",
    "cacheus(libcachesim=true)",
];

fn trace_spec(name: &str, format: Option<&str>) -> TraceSpec {
    let spec = if name.contains(':') {
        TraceSpec::new(name)
    } else {
        TraceSpec::new(format!("{SHARED}{name}"))
    };
    match format {
        Some(f) => spec.with_format(f),
        None => spec,
    }
}

/// The system a family needs: two memory tiers for hybrid (DRAM + PCM) and
/// tiered (local + remote DRAM) policies.
fn system_for(family: &str) -> SystemSpec {
    let mut s = SystemSpec::default();
    match family {
        "hybrid" => s.tiers = vec!["dram".into(), "pcm".into()],
        "tiered" => s.tiers = vec!["nomad-local-dram".into(), "nomad-remote-dram".into()],
        _ => {}
    }
    s
}

/// Specs grouped by the system they run on.
fn groups() -> BTreeMap<String, Vec<String>> {
    let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let infos = all_policies();
    for p in &infos {
        g.entry(p.family.to_string())
            .or_default()
            .push(p.name.to_string());
    }
    for e in EXTRA {
        let name = PolicySpec::parse(e).unwrap().name;
        let fam = infos.iter().find(|p| p.name == name).unwrap().family;
        g.entry(fam.to_string()).or_default().push(e.to_string());
    }
    g
}

fn limit_opts(limit: u64) -> RunOptions {
    RunOptions {
        threads: 2,
        limit: Some(limit),
        ..RunOptions::default()
    }
}

fn footprint(name: &str, format: Option<&str>, limit: u64) -> u64 {
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let mut r = open(&trace_spec(name, format)).unwrap();
    let inst = [InstanceSpec {
        policy: PolicySpec::new("fifo"),
        capacity: 1,
    }];
    run(r.as_mut(), &inst, &sys, &limit_opts(limit), &mut |_| Ok(()))
        .unwrap()
        .distinct_pages
}

/// One row of counts per (spec, size).
fn replay(name: &str, format: Option<&str>, limit: u64, sizes: &[usize]) -> Map<String, Value> {
    let mut out = Map::new();
    for (family, specs) in groups() {
        let sys = System::resolve(&system_for(&family), &DeviceCatalog::default()).unwrap();
        let inst = grid(specs.iter().map(|p| PolicySpec::parse(p).unwrap()), sizes);
        let mut r = open(&trace_spec(name, format)).unwrap();
        let res = run(r.as_mut(), &inst, &sys, &limit_opts(limit), &mut |_| Ok(()))
            .unwrap_or_else(|e| panic!("{name} {family}: {e}"));
        for (spec, res) in inst.iter().zip(&res.results) {
            let s = &res.stats;
            let mut row = json!({
                "misses": s.misses_total(),
                "evictions": s.evictions,
                "dirty_evictions": s.dirty_evictions,
                "file_pages_written": s.file_pages_written,
                "swap_pages_written": s.swap_pages_written,
                "migrations_up": s.migrations_up,
                "migrations_down": s.migrations_down,
            });
            for (k, v) in &res.counters {
                row[format!("ctr_{k}")] = json!(v);
            }
            let key = format!("{}@{}", spec_text(&spec.policy), spec.capacity);
            out.insert(key, row);
        }
    }
    out
}

fn spec_text(p: &PolicySpec) -> String {
    if p.params.is_empty() {
        p.name.clone()
    } else {
        let mut kv: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        kv.sort();
        format!("{}({})", p.name, kv.join(","))
    }
}

#[test]
fn policy_results_are_pinned() {
    let write = std::env::var("TIERLAB_PIN_WRITE").is_ok_and(|v| v == "1");
    if write {
        let mut traces = Map::new();
        for &(name, format, limit) in TRACES {
            let fp = footprint(name, format, limit);
            let sizes: Vec<usize> = FRACTIONS
                .iter()
                .map(|f| ((fp as f64 * f) as usize).max(1))
                .collect();
            let cells = replay(name, format, limit, &sizes);
            traces.insert(
                name.to_string(),
                json!({"limit": limit, "footprint": fp, "sizes": sizes, "cells": cells}),
            );
        }
        let doc = json!({
            "note": "written by crates/tierlab-core/tests/policy_counts.rs (TIERLAB_PIN_WRITE=1)",
            "traces": traces,
        });
        std::fs::write(
            REFERENCE,
            serde_json::to_string_pretty(&doc).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let text = std::fs::read_to_string(REFERENCE).expect("reference counts");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut bad = Vec::new();
    let mut n = 0;
    for &(name, format, limit) in TRACES {
        let entry = &doc["traces"][name];
        assert_eq!(entry["limit"].as_u64(), Some(limit), "{name}: limit");
        let sizes = json_sizes(&entry["sizes"]);
        let got = replay(name, format, limit, &sizes);
        let want = entry["cells"].as_object().unwrap();
        for (key, w) in want {
            n += 1;
            match got.get(key) {
                Some(g) if g == w => {}
                Some(g) => bad.push(format!("{name} {key}: got {g}, pinned {w}")),
                None => bad.push(format!("{name} {key}: not run")),
            }
        }
        for key in got.keys() {
            if !want.contains_key(key) {
                bad.push(format!("{name} {key}: not pinned"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {n} cells differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
