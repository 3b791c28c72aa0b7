//! Trace readers, one file per format, and the table that maps format names to
//! them. Each reader parses its options into a typed struct that rejects
//! unknown keys.
//!
//! Format guessing (when no format is given): by file-name suffix (after the
//! compression suffix is removed) where the suffix is unambiguous: `.lis` arc,
//! `.lirs` lirs, `.oraclegeneral.bin`/`.oraclegeneral` oracle, `.vscsi` vscsi,
//! `.blkparse` blkparse, `.spc` spc. Suffixes several formats share are
//! settled by sniffing the first non-blank line of the (decompressed) file:
//! - `.csv`: a header starting `proces,` is android; a first line of 7 fields
//!   with `Read`/`Write` 4th is msr; of 5+ fields with `r`/`w` 4th is spc;
//!   anything else is libCacheSim csv (whose columns are then found by header
//!   name, see `csv`).
//! - `.trace`: `l|s HEXADDR GAP` is addr, anything else lirs.
//! - `.txt`: `r|w N` is vfs, anything else libCacheSim txt.
//!
//! An unreadable file gets the suffix's default (csv, lirs, txt), so that
//! opening it reports the real problem (missing file, bad first line).

mod addr;
mod android;
mod arc;
pub mod binary;
mod blkparse;
pub mod common;
mod csv;
mod lackey;
pub mod lcs;
mod lirs;
mod msr;
mod oracle;
mod spc;
pub mod tlpages;
mod txt;
mod vfs;
mod vscsi;

use crate::error::{Error, Result};
use crate::trace::input::{open_input, trim};
use crate::trace::TraceReader;
use serde::de::DeserializeOwned;
use std::path::Path;

pub use addr::{AddrOptions, AddrReader};
pub use android::{AndroidOptions, AndroidReader};
pub use arc::ArcReader;
pub use binary::{BinaryOptions, BinaryReader};
pub use blkparse::{BlkparseOptions, BlkparseReader};
pub use csv::{CsvOptions, CsvReader};
pub use lackey::LackeyReader;
pub use lcs::{LcsOptions, LcsReader};
pub use lirs::LirsReader;
pub use msr::{MsrOptions, MsrReader};
pub use oracle::{OracleOptions, OracleReader};
pub use spc::{SpcOptions, SpcReader};
pub use txt::{TxtOptions, TxtReader};
pub use vfs::{VfsOptions, VfsReader};
pub use vscsi::{VscsiOptions, VscsiReader};

/// Every format name `open_format` accepts.
pub const FORMAT_NAMES: &[&str] = &[
    "lirs",
    "arc",
    "csv",
    "txt",
    "oracle",
    "vscsi",
    "addr",
    "msr",
    "spc",
    "blkparse",
    "android",
    "vfs",
    "native",
    "synth",
    "lackey",
    "tlpages",
    "nomad_bench",
    "binary",
    "lcs",
];

/// One line per format: (name, what it reads, options with defaults), in
/// [`FORMAT_NAMES`] order, for `tierlab formats` and error messages. Each
/// reader's module documentation has the details.
pub const FORMAT_SUMMARIES: &[(&str, &str, &str)] = &[
    ("lirs", "LIRS traces: one block number per line; File reads", ""),
    ("arc", "ARC .lis traces: START COUNT IGNORED REQNO; File reads", ""),
    (
        "csv",
        "libCacheSim csv with a column spec (1-based); File; without options columns are found by header name",
        "id_col, time_col, size_col, op_col, header, delimiter=',', id_is_num=true, addressing='object'|'block', block_size=512, page_size=4096, time_unit='s', skip_zero_size=false",
    ),
    (
        "txt",
        "libCacheSim plain text: one object id per line; File reads",
        "id_is_num=true, addressing='object'|'block', block_size=512, page_size=4096",
    ),
    (
        "oracle",
        "libCacheSim oracleGeneral binary: 24-byte <u32 time, u64 id, u32 size, i64 next>; File reads",
        "addressing='object'|'block', block_size=512, page_size=4096, skip_zero_size=false",
    ),
    (
        "vscsi",
        "VMware vscsi binary (CloudPhysics), record versions 1 and 2; File",
        "addressing='object'|'block', block_size=512, page_size=4096, skip_zero_size=false",
    ),
    (
        "addr",
        "address traces 'l|s HEXADDR GAP': loads Anon reads, stores Anon writes",
        "page_size=4096",
    ),
    (
        "msr",
        "MSR Cambridge csv Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (bytes, filetime); File",
        "page_size=4096",
    ),
    (
        "spc",
        "SPC/UMass csv ASU,LBA,Size,Opcode,Timestamp (512-byte LBAs, byte sizes); File",
        "page_size=4096",
    ),
    (
        "blkparse",
        "blkparse default text output, one event kind per request (Q by default); File; app = process",
        "event='Q'|'D'|'C', page_size=4096",
    ),
    (
        "android",
        "Android block csv proces,device,rw_flag,sector,size,timestamp (sectors); File; app = thread name",
        "page_size=4096",
    ),
    (
        "vfs",
        "VFS buffer traces 'r|w N' (N in 4 KiB blocks by default, -1 = no block); File",
        "block_size=4096, page_size=4096, unmapped='skip'|'error'",
    ),
    (
        "native",
        "tierlab's native compact format (.tlt): columnar zstd blocks, each checksummed",
        "",
    ),
    (
        "synth",
        "generated traces: zipf, scan, loop, mix, phases (e.g. zipf:alpha=1.0,pages=1e6,n=1e7,seed=1)",
        "a spec NAME:KEY=VALUE,... or an options table; see docs/formats.md",
    ),
    (
        "lackey",
        "valgrind lackey --trace-mem output: I -> File read, L -> Anon read, S/M -> Anon write (File inside file mappings with maps=)",
        "page_size=4096, modify='write'|'read-write', collapse=false, sample=1.0, maps=PATH",
    ),
    (
        "tlpages",
        "compact page-reference stream written by `tierlab capture --format tlpages` (.tlp.zst)",
        "",
    ),
    (
        "nomad_bench",
        "generated NOMAD microbenchmark (YCSB zipfian pages, warm-up then timed rounds); the path is ignored",
        "working_set, resident_set, rounds=4, ops_per_round, mode='read'|'write'|'mixed', layout='hottest'|'first_touch', theta=0.99, items=0, seed=42, page_size=4096",
    ),
    (
        "binary",
        "fixed-size binary records of any layout in Python struct notation (e.g. '<I', '>I', '<IQIq'); File",
        "layout (required), id=1, size, op, time, next (field numbers from 1; 0 = none), ops='libcachesim'|'rw', time_unit='s', offset=0, addressing='object'|'block', block_size=512, page_size=4096, skip_zero_size=false",
    ),
    (
        "lcs",
        "libCacheSim .lcs traces, versions 1-8 (8 KiB header, then time, id, size, op, ...); File",
        "addressing='object'|'block', block_size=512, page_size=4096, skip_zero_size=false",
    ),
];

/// Opens `path` as `format`.
pub fn open_format(
    format: &str,
    path: &Path,
    options: &toml::Table,
) -> Result<Box<dyn TraceReader>> {
    Ok(match format {
        "lirs" => Box::new(LirsReader::open(path, parse_options(format, options)?)?),
        "arc" => Box::new(ArcReader::open(path, parse_options(format, options)?)?),
        "native" => Box::new(crate::trace::native::NativeReader::open(
            path,
            parse_options(format, options)?,
        )?),
        "synth" => crate::trace::synth::open(path, options)?,
        "csv" => Box::new(CsvReader::open(path, parse_options(format, options)?)?),
        "txt" => Box::new(TxtReader::open(path, parse_options(format, options)?)?),
        "oracle" => Box::new(OracleReader::open(path, parse_options(format, options)?)?),
        "vscsi" => Box::new(VscsiReader::open(path, parse_options(format, options)?)?),
        "addr" => Box::new(AddrReader::open(path, parse_options(format, options)?)?),
        "msr" => Box::new(MsrReader::open(path, parse_options(format, options)?)?),
        "spc" => Box::new(SpcReader::open(path, parse_options(format, options)?)?),
        "blkparse" => Box::new(BlkparseReader::open(path, parse_options(format, options)?)?),
        "android" => Box::new(AndroidReader::open(path, parse_options(format, options)?)?),
        "vfs" => Box::new(VfsReader::open(path, parse_options(format, options)?)?),
        "lackey" => Box::new(LackeyReader::open(path, parse_options(format, options)?)?),
        "binary" => Box::new(BinaryReader::open(path, parse_options(format, options)?)?),
        "lcs" => Box::new(LcsReader::open(path, parse_options(format, options)?)?),
        "tlpages" => Box::new(tlpages::TlpagesReader::open(
            path,
            parse_options(format, options)?,
        )?),
        // A generator: the path is ignored, the options are its parameters.
        "nomad_bench" => Box::new(crate::trace::synth_nomad::NomadBenchReader::new(
            parse_options(format, options)?,
        )?),
        other => {
            return Err(Error::config(format!(
                "unknown trace format '{other}'; expected one of: {}",
                FORMAT_NAMES.join(", ")
            )))
        }
    })
}

/// Guesses a format from a file name with compression suffixes removed, for
/// the suffixes only one format uses.
pub fn guess_from_name(stem: &str) -> Option<&'static str> {
    const SUFFIXES: &[(&str, &str)] = &[
        (crate::trace::native::SUFFIX, "native"),
        (".lis", "arc"),
        (".lirs", "lirs"),
        (".oraclegeneral.bin", "oracle"),
        (".oraclegeneral", "oracle"),
        (".vscsi", "vscsi"),
        (".blkparse", "blkparse"),
        (".spc", "spc"),
        (".lackey", "lackey"),
        (".tlp", "tlpages"),
        (".lcs", "lcs"),
    ];
    SUFFIXES
        .iter()
        .find(|(s, _)| stem.ends_with(s))
        .map(|&(_, f)| f)
}

/// Guesses a format from the file name and, for shared suffixes (`.csv`,
/// `.trace`, `.txt`), from the first non-blank line of the file. A file that
/// starts with libCacheSim's lcs magic is `lcs` whatever its name; a file whose
/// name says text (or nothing) but whose first bytes are binary is an error
/// listing the binary layouts (`binary::LAYOUT_HELP`), never a text guess.
pub fn guess(path: &Path, stem: &str) -> Result<&'static str> {
    let head = head_bytes(path);
    if lcs::is_lcs(&head) {
        return Ok("lcs");
    }
    let named = guess_from_name(stem);
    let binary_by_name = matches!(
        named,
        Some("oracle" | "vscsi" | "native" | "tlpages" | "lcs")
    );
    if !binary_by_name {
        if let Some(at) = binary_at(&head) {
            return Err(Error::input(
                path.display().to_string(),
                crate::error::Location::Offset(at as u64),
                format!(
                    "binary data ({}), not a text trace{}; give its record layout with -f binary, {}",
                    if head[at] == 0 { "a NUL byte".to_string() } else { format!("byte {:#04x}", head[at]) },
                    named.map(|f| format!(" of format '{f}' as the name suggests")).unwrap_or_default(),
                    binary::LAYOUT_HELP
                ),
            ));
        }
    }
    if let Some(f) = named {
        return Ok(f);
    }
    let no_name = || {
        Error::config(format!(
            "{}: cannot tell the trace format from the file name; pass a format, one of: {}",
            path.display(),
            FORMAT_NAMES.join(", ")
        ))
    };
    let ext = [".csv", ".trace", ".txt"]
        .into_iter()
        .find(|e| stem.ends_with(e))
        .ok_or_else(no_name)?;
    let line = first_line(path).unwrap_or_default();
    let fields: Vec<&[u8]> = line.split(|&b| b == b',').map(trim).collect();
    let words: Vec<&[u8]> = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let is_int = |f: &[u8]| crate::trace::input::parse_u64(f).is_some();
    Ok(match ext {
        ".csv" => {
            if line.starts_with(b"proces,") {
                "android"
            } else if line.starts_with(b"Timestamp,Hostname,") {
                "msr"
            } else if line.starts_with(b"ASU,LBA,") {
                "spc"
            } else if fields.len() == 7
                && (fields[3].eq_ignore_ascii_case(b"read")
                    || fields[3].eq_ignore_ascii_case(b"write"))
            {
                "msr"
            } else if fields.len() >= 5 && matches!(fields[3], b"r" | b"R" | b"w" | b"W") {
                "spc"
            } else {
                "csv"
            }
        }
        ".trace" => match words.as_slice() {
            [op, _, gap] if matches!(*op, b"l" | b"s") && is_int(gap) => "addr",
            _ => "lirs",
        },
        _ => match words.as_slice() {
            [op, _] if matches!(*op, b"r" | b"w") => "vfs",
            _ => "txt",
        },
    })
}

/// Up to the first 4 KiB of a (possibly compressed) file; empty if unreadable.
fn head_bytes(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Ok(input) = open_input(path) {
        let _ = input.reader.take(4096).read_to_end(&mut out);
    }
    out
}

/// Where `head` first shows it is not text: a NUL byte, or a control byte other than tab,
/// newline, carriage return and form feed. `None` for text (or an empty head).
fn binary_at(head: &[u8]) -> Option<usize> {
    head.iter().position(|&b| {
        b == 0 || (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)) || b == 0x7f
    })
}

/// The first non-blank, non-comment line of a (possibly compressed) file.
fn first_line(path: &Path) -> Option<Vec<u8>> {
    let mut input = open_input(path).ok()?;
    let mut buf = Vec::new();
    for _ in 0..64 {
        buf.clear();
        if crate::trace::input::read_bounded_line(&mut input.reader, &mut buf).ok()? == 0 {
            return None;
        }
        let t = trim(&buf);
        if !t.is_empty() && t[0] != b'#' {
            return Some(t.to_vec());
        }
    }
    None
}

/// Deserialises a reader's options, naming the format on error.
pub(crate) fn parse_options<T: DeserializeOwned>(format: &str, options: &toml::Table) -> Result<T> {
    T::deserialize(toml::Value::Table(options.clone()))
        .map_err(|e| Error::config(format!("options of trace format '{format}': {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_summary_and_opens() {
        let names: Vec<&str> = FORMAT_SUMMARIES.iter().map(|s| s.0).collect();
        assert_eq!(names, FORMAT_NAMES);
        // Unknown options are rejected by every reader, naming the key.
        let mut opts = toml::Table::new();
        opts.insert("no_such_option".into(), toml::Value::Integer(1));
        for f in FORMAT_NAMES {
            // A generator takes its options instead of a path.
            let (path, mut opts) = (
                if *f == "synth" { "" } else { "/nonexistent" },
                opts.clone(),
            );
            if *f == "synth" {
                opts.insert("generator".into(), toml::Value::String("zipf".into()));
            }
            let err = match open_format(f, Path::new(path), &opts) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{f}: accepted an unknown option"),
            };
            assert!(
                err.contains("no_such_option") && err.contains(f),
                "{f}: {err}"
            );
        }
    }
}
