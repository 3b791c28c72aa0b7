//! Object-size mode: object misses AND byte misses equal libCacheSim's, cell by cell, on
//! cloudPhysicsIO in its three size-carrying forms (csv, oracleGeneral, vscsi) at five byte
//! sizes, for every policy with an object-size variant that libCacheSim shares (FIFO, LRU,
//! CLOCK, SIEVE, LFU, S3-FIFO; Belady on the oracleGeneral form, the only one with the
//! next-access times libCacheSim's Belady needs); and admission (bloom, size threshold) in front
//! of FIFO, LRU, CLOCK, SIEVE, LFU and S3-FIFO, in object-size and page (unit-size) mode. The reference is tests/reference/libcachesim_object_counts.json,
//! written by tests/reference/libcachesim_object_counts.py with pip `libcachesim`.

use serde_json::Value;
use std::collections::BTreeMap;
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::RunOutput;
use tierlab_core::trace::TraceSpec;

mod cells;
use cells::{grid, json_keys, json_sizes, replay_cells};

const SHARED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/traces/libcachesim/cloudPhysicsIO."
);
const REFERENCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/reference/libcachesim_object_counts.json"
);

/// Cells where tierlab deliberately differs from libCacheSim: (form, policy, size) ->
/// tierlab's (misses, byte misses). Empty: every cell matches.
const PINNED: &[(&str, &str, u64, [u64; 2])] = &[];

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(REFERENCE).unwrap()).unwrap()
}

/// Replays `form` once through every `policy x size` cell.
fn replay(form: &str, policies: &[String], sizes: &[usize], object_sizes: bool) -> RunOutput {
    let inst = grid(
        policies.iter().map(|p| PolicySpec::parse(p).unwrap()),
        sizes,
    );
    replay_cells(
        &TraceSpec::new(format!("{SHARED}{form}")),
        &inst,
        object_sizes,
    )
}

fn pinned(form: &str, policy: &str, size: u64) -> Option<[u64; 2]> {
    PINNED
        .iter()
        .find(|(f, p, s, _)| *f == form && *p == policy && *s == size)
        .map(|c| c.3)
}

#[test]
fn object_and_byte_misses_equal_libcachesim() {
    let r = reference();
    let sizes = json_sizes(&r["sizes"]);
    let mut cells = 0;
    let mut exact = 0;
    let mut diffs = Vec::new();
    for (form, entry) in r["forms"].as_object().unwrap() {
        let policies = json_keys(entry);
        let out = replay(form, &policies, &sizes, true);
        let totals = &r["totals"][form];
        assert_eq!(
            out.page_refs,
            totals[0].as_u64().unwrap(),
            "{form}: requests"
        );
        assert_eq!(
            out.byte_accesses,
            totals[1].as_u64().unwrap(),
            "{form}: bytes"
        );
        let got: BTreeMap<(String, usize), [u64; 2]> = out
            .results
            .iter()
            .map(|res| {
                (
                    (res.policy.clone(), res.capacity),
                    [res.stats.misses_total(), res.stats.byte_misses],
                )
            })
            .collect();
        for (policy, row) in entry.as_object().unwrap() {
            for (i, want) in row.as_array().unwrap().iter().enumerate() {
                let want = [want[0].as_u64().unwrap(), want[1].as_u64().unwrap()];
                let have = got[&(policy.clone(), sizes[i])];
                cells += 1;
                if have == want {
                    exact += 1;
                    assert!(
                        pinned(form, policy, sizes[i] as u64).is_none(),
                        "{form} {policy} {}: pinned but now matches",
                        sizes[i]
                    );
                } else if pinned(form, policy, sizes[i] as u64) != Some(have) {
                    diffs.push(format!(
                        "{form} {policy} {} bytes: tierlab {have:?}, libCacheSim {want:?}",
                        sizes[i]
                    ));
                }
            }
        }
    }
    eprintln!("object-size conformance: {exact} of {cells} cells exact");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    assert!(cells >= 80, "the reference lost cells: {cells}");
}

#[test]
fn too_large_objects_are_counted_not_admitted() {
    // 64 KiB cache: the trace has objects of 68 KiB (and 64 KiB, which fit exactly).
    let out = replay(
        "oracleGeneral.bin",
        &["lru".to_string()],
        &[64 * 1024],
        true,
    );
    let s = &out.results[0].stats;
    assert!(s.too_large > 0);
    assert_eq!(s.too_large, s.bypasses);
}

#[test]
fn admission_equals_libcachesim() {
    let r = reference();
    let adm = &r["admission"];
    let mut diffs = Vec::new();
    let mut cells = 0;
    for (mode, object_sizes, sizes_key) in
        [("object", true, "sizes"), ("unit", false, "unit_sizes")]
    {
        let sizes = json_sizes(&adm[sizes_key]);
        for (admission, per_policy) in adm[mode].as_object().unwrap() {
            let policies: Vec<String> = per_policy
                .as_object()
                .unwrap()
                .keys()
                .map(|p| format!("{p}+{admission}"))
                .collect();
            let out = replay("oracleGeneral.bin", &policies, &sizes, object_sizes);
            for res in &out.results {
                let i = sizes.iter().position(|&c| c == res.capacity).unwrap();
                let want = &per_policy[&res.policy][i];
                let have = if object_sizes {
                    serde_json::json!([res.stats.misses_total(), res.stats.byte_misses])
                } else {
                    serde_json::json!(res.stats.misses_total())
                };
                cells += 1;
                if &have != want {
                    diffs.push(format!(
                        "{mode} {} {}: tierlab {have}, libCacheSim {want}",
                        res.label, res.capacity
                    ));
                }
            }
        }
    }
    eprintln!(
        "admission conformance: {} of {cells} cells exact",
        cells - diffs.len()
    );
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
