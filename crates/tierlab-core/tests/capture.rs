//! Capture and the lackey conversion: collapsing runs keeps the misses of the
//! bit-based policies exactly; a real capture under valgrind (when installed)
//! yields File instruction pages and Anon data pages.

use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, RunOptions};
use tierlab_core::trace::capture::{capture, CaptureOptions};
use tierlab_core::trace::{open, read_all, Kind, Op, Record, TraceSpec};

mod cells;
mod common;
use cells::grid;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tierlab-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Random lackey text with runs of repeated references to the same page.
fn lackey_text(n: usize, seed: u64) -> String {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut s = String::new();
    let mut i = 0;
    while i < n {
        let page = next() % 200;
        let tag = match next() % 4 {
            0 => "I ",
            1 => " L",
            2 => " S",
            _ => " M",
        };
        let run = 1 + next() % 5;
        for k in 0..run {
            s.push_str(&format!("{tag} {:x},4\n", page * 4096 + 8 * k));
            i += 1;
        }
    }
    s
}

fn misses_and_writebacks(path: &std::path::Path, collapse: bool) -> Vec<(String, u64, u64, u64)> {
    let mut spec = TraceSpec::new(path).with_format("lackey");
    spec.options
        .insert("collapse".into(), toml::Value::Boolean(collapse));
    let mut r = open(&spec).unwrap();
    let sys = common::emram_phone();
    let policies = ["clock", "lru", "four-area", "linux-two-list"].map(PolicySpec::new);
    let inst = grid(policies, &[10, 40, 120]);
    let out = run(r.as_mut(), &inst, &sys, &RunOptions::default(), &mut |_| {
        Ok(())
    })
    .unwrap();
    out.results
        .iter()
        .map(|res| {
            (
                format!("{}@{}", res.label, res.capacity),
                res.stats.misses_total(),
                res.stats.dirty_evictions,
                res.stats.hits_total(),
            )
        })
        .collect()
}

#[test]
fn collapsing_runs_keeps_misses_and_write_backs_of_bit_policies() {
    let p = tmp("runs.lackey");
    std::fs::write(&p, lackey_text(40_000, 7)).unwrap();
    let full = misses_and_writebacks(&p, false);
    let collapsed = misses_and_writebacks(&p, true);
    let mut fewer_hits = false;
    for (a, b) in full.iter().zip(&collapsed) {
        assert_eq!(
            (&a.0, a.1, a.2),
            (&b.0, b.1, b.2),
            "misses/write-backs differ"
        );
        fewer_hits |= b.3 < a.3;
    }
    assert!(fewer_hits, "collapsing dropped no reference at all");
}

#[test]
fn capture_of_a_real_program_under_valgrind() {
    if std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "valgrind is not installed: the capture test needs it (apt-get install valgrind)"
        );
        return;
    }
    let out = tmp("true.tlt");
    let opts = CaptureOptions {
        limit: Some(200_000),
        ..Default::default()
    };
    let mut reports = 0;
    let s = capture(&["/bin/true".to_string()], &out, &opts, &mut |_p| {
        reports += 1;
        Ok(())
    })
    .unwrap();
    assert!(s.written > 10_000 && s.written <= 200_000, "{s:?}");
    assert!(reports >= 1);
    assert!(s.maps_samples >= 1, "/proc/PID/maps was never read");
    let mut r = open(&TraceSpec::new(&out)).unwrap();
    assert_eq!(r.format(), "native");
    let recs = read_all(r.as_mut()).unwrap();
    assert_eq!(recs.len() as u64, s.written);
    let (mut file_reads, mut anon_writes) = (0, 0);
    for rec in &recs {
        if let Record::Access(a) = rec {
            match (a.kind, a.op) {
                (Kind::File, Op::Read) => file_reads += 1,
                (Kind::Anon, Op::Write) => anon_writes += 1,
                _ => {}
            }
        }
    }
    assert!(
        file_reads > recs.len() / 3,
        "instruction fetches are File reads"
    );
    assert!(anon_writes > 0, "stack and heap stores are Anon writes");
    // Data loads of read-only file mappings (ld.so's own tables) are File.
    assert!(s.stats.data_file > 0, "{:?}", s.stats);

    // A command that does not exist is a clear error, not an empty trace.
    let e = capture(
        &["/nonexistent/program".to_string()],
        &tmp("none.tlp.zst"),
        &CaptureOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no memory references"), "{e}");
}
