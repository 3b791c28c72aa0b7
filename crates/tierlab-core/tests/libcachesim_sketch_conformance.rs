//! Object-size mode, issue 18's W-TinyLFU and FlashProb: object misses and byte misses equal
//! libCacheSim's, cell by cell, on cloudPhysicsIO (oracleGeneral form) at four byte sizes:
//! `wtinylfu(libcachesim=true)` against libCacheSim's `WTinyLFU`, and `flashprob(p=1.0)`
//! against `FlashProb(disk_admit_prob=1.0)` (no random draws). The reference is
//! tests/reference/libcachesim_sketch_counts.json, written by
//! tests/reference/libcachesim_sketch_counts.py with pip `libcachesim` (which says why these
//! sizes). Unit-size cells of both are in libcachesim_conformance.rs.

use serde_json::Value;
use tierlab_core::policy::PolicySpec;
use tierlab_core::trace::TraceSpec;

mod cells;
use cells::{grid, json_sizes, replay_cells};

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin"
);
const REFERENCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/reference/libcachesim_sketch_counts.json"
);

/// Cells where tierlab differs from libCacheSim: (policy, bytes) -> tierlab's (misses, byte
/// misses). None: both policies are exact (see libcachesim_conformance.rs's PINNED).
const PINNED: &[(&str, usize, [u64; 2])] = &[];

fn spec(name: &str) -> &'static str {
    match name {
        "wtinylfu" => "wtinylfu(libcachesim=true)",
        "flashprob" => "flashprob(p=1.0)",
        other => panic!("no tierlab spec for {other}"),
    }
}

#[test]
fn object_and_byte_misses_equal_libcachesim() {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(REFERENCE).unwrap()).unwrap();
    let sizes = json_sizes(&r["sizes"]);
    let misses = r["misses"].as_object().unwrap();
    let inst = grid(
        misses.keys().map(|p| PolicySpec::parse(spec(p)).unwrap()),
        &sizes,
    );
    let out = replay_cells(&TraceSpec::new(TRACE), &inst, true);
    assert_eq!(out.page_refs, r["requests"].as_u64().unwrap());
    assert_eq!(out.byte_accesses, r["bytes"].as_u64().unwrap());
    let mut cells = 0;
    let mut diffs = Vec::new();
    for (policy, row) in misses {
        for (i, want) in row.as_array().unwrap().iter().enumerate() {
            let want = [want[0].as_u64().unwrap(), want[1].as_u64().unwrap()];
            let res = out
                .results
                .iter()
                .find(|res| &res.policy == policy && res.capacity == sizes[i])
                .expect("a result per cell");
            let have = [res.stats.misses_total(), res.stats.byte_misses];
            cells += 1;
            let pin = PINNED
                .iter()
                .find(|(p, c, _)| p == policy && *c == sizes[i])
                .map(|c| c.2);
            if let Some(pin) = pin {
                assert_eq!(have, pin, "{policy} {} bytes: pinned", sizes[i]);
                continue;
            }
            if have != want {
                diffs.push(format!(
                    "{policy} {} bytes: tierlab {have:?}, libCacheSim {want:?}",
                    sizes[i]
                ));
            }
        }
    }
    eprintln!(
        "sketch/flash conformance: {} of {cells} cells exact, {} pinned",
        cells - diffs.len() - PINNED.len(),
        PINNED.len()
    );
    assert_eq!(cells, 8, "the reference lost cells");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
