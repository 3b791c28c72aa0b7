//! Helpers shared by the reader tests (`readers.rs`, `readers_fixtures.rs`,
//! `readers_malformed.rs`): trace specs, reading a whole trace, asserting an
//! error names its place, and temporary files.
#![allow(dead_code)] // each test binary uses its own subset

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use tierlab_core::trace::{open, read_all, Access, Record, TraceSpec};

pub fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(rel)
}

pub fn spec(path: impl Into<PathBuf>, format: Option<&str>, opts: &str) -> TraceSpec {
    let mut s = TraceSpec::new(path);
    s.format = format.map(str::to_string);
    s.options = toml::from_str(opts).unwrap();
    s
}

/// Reads the whole trace (its accesses; an event panics).
pub fn accesses(s: &TraceSpec) -> Vec<Access> {
    accesses_and_apps(s).0
}

/// Opens and reads the whole trace, returning the error text.
pub fn read_err(s: &TraceSpec) -> String {
    let res = open(s).and_then(|mut r| read_all(r.as_mut()).map(|_| ()));
    match res {
        Ok(()) => panic!("{}: expected an error", s.path.display()),
        Err(e) => e.to_string(),
    }
}

pub fn assert_input_err(s: &TraceSpec, loc: &str, what: &str) {
    let msg = read_err(s);
    let name = s.path.display().to_string();
    assert!(
        msg.starts_with(&format!("{name}{loc}")),
        "error should start with '{name}{loc}': {msg}"
    );
    assert!(msg.contains(what), "error should mention '{what}': {msg}");
}

pub struct Tmp(pub tempfile::TempDir);

impl Tmp {
    pub fn new() -> Self {
        Tmp(tempfile::tempdir().unwrap())
    }
    pub fn file(&self, name: &str, data: &[u8]) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, data).unwrap();
        p
    }
    pub fn gz(&self, name: &str, data: &[u8]) -> PathBuf {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        self.file(name, &e.finish().unwrap())
    }
}

pub fn distinct_pages(a: &[Access]) -> usize {
    a.iter()
        .flat_map(|x| x.page..x.page + x.npages as u64)
        .collect::<HashSet<_>>()
        .len()
}

pub fn total_pages(a: &[Access]) -> u64 {
    a.iter().map(|x| x.npages as u64).sum()
}

pub const CP: &str = "libcachesim/cloudPhysicsIO";
/// `tail -n +2 cloudPhysicsIO.csv | wc -l`; oracle 2732928 / 24; vscsi 3643904 / 32.
pub const CP_REQUESTS: usize = 113_872;
/// `cut -d, -f3 cloudPhysicsIO.csv | sort | uniq -c`: 66898 `2a` (WRITE 10).
pub const CP_WRITES: usize = 66_898;

/// Reads the whole trace and the app names its reader resolved.
pub fn accesses_and_apps(s: &TraceSpec) -> (Vec<Access>, Vec<String>) {
    let mut r = open(s).unwrap_or_else(|e| panic!("{}: {e}", s.path.display()));
    let a = read_all(r.as_mut())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|rec| match rec {
            Record::Access(a) => a,
            Record::Event(e) => panic!("unexpected event {e:?}"),
        })
        .collect();
    (a, r.app_names().to_vec())
}
