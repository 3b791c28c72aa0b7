//! The record model and trace input.
//!
//! One access is `{ time, page, op, kind, app, npages }` (DESIGN.md, "Record
//! model"); app life-cycle events travel in the same stream. A reader yields
//! records in batches so the replay loop decodes each trace once and feeds every
//! policy instance from the same batch.
//!
//! `page` is the first page of a request in units of the trace's page size and
//! `npages` is the request length in pages: byte- and sector-addressed formats
//! keep the request whole here and the replay engine splits it into page
//! references (marking the first page of each request), so that policies and
//! device models that care about request boundaries (sequential-write batching)
//! can see them.
//!
//! `time` is in nanoseconds when the format carries timestamps and is the
//! record's ordinal otherwise; no policy in tierlab depends on its unit.

pub mod capture;
pub mod columns;
pub mod info;
pub mod input;
pub mod native;
pub mod readers;
pub mod schedule;
pub mod session_gen;
pub mod synth;
pub mod synth_nomad;

use crate::error::Result;
pub use columns::RecordColumns;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Op {
    Read = 0,
    Write = 1,
}

/// Page kind: file-backed pages live in the file store, anonymous pages in swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Kind {
    File = 0,
    Anon = 1,
}

/// One request of `npages` pages starting at `page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub time: u64,
    pub page: u64,
    pub op: Op,
    pub kind: Kind,
    pub app: u32,
    pub npages: u32,
    /// Object size in bytes, as the trace states it, for formats that carry one (oracleGeneral,
    /// csv with a size column, vscsi); 0 otherwise. Page mode ignores it; object-size mode
    /// (`RunOptions::object_sizes`) replays each record as one object of this size.
    pub size: u32,
}

impl Access {
    /// A single-page access, the common case for page-granular traces.
    pub fn page(time: u64, page: u64, op: Op, kind: Kind) -> Self {
        Access {
            time,
            page,
            op,
            kind,
            app: 0,
            npages: 1,
            size: 0,
        }
    }

    /// A file-backed request from a block or file trace: `npages` pages from `page`, object size
    /// `size` bytes (0 when the format states none).
    pub fn file(time: u64, page: u64, npages: u32, op: Op, app: u32, size: u32) -> Self {
        Access {
            time,
            page,
            op,
            kind: Kind::File,
            app,
            npages,
            size,
        }
    }
}

/// App life-cycle events (Android's vocabulary: an app is launched, moves to the
/// foreground, moves to the background, or exits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum EventKind {
    AppLaunch = 0,
    Foreground = 1,
    Background = 2,
    AppExit = 3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: u64,
    pub app: u32,
    pub kind: EventKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Access(Access),
    Event(Event),
}

/// Largest request a reader accepts, in pages (4 GiB at 4 KiB pages). Larger
/// values are almost always a corrupt field, and splitting them would stall a run.
pub const MAX_REQUEST_PAGES: u64 = 1 << 20;

/// Default page size (DESIGN.md: 4 KiB).
pub const DEFAULT_PAGE_SIZE: u32 = 4096;

/// A streaming trace reader. Readers hold constant memory (plus the app-name
/// table) whatever the trace length.
pub trait TraceReader: Send {
    /// Appends up to `max` records to `out`. Returns `Ok(false)` once the trace
    /// is exhausted (possibly after appending the last records).
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool>;
    /// [`TraceReader::read_batch`] into columns: appends up to `max` records to `out`. Readers
    /// that decode columns directly override it; the default reads records into `scratch`.
    fn read_columns(
        &mut self,
        out: &mut RecordColumns,
        max: usize,
        scratch: &mut Vec<Record>,
    ) -> Result<bool> {
        columns::read_columns_via_records(self, out, max, scratch)
    }
    /// Page size in bytes that `Access::page` counts in.
    fn page_size(&self) -> u32;
    /// Names of the apps seen so far, indexed by `Access::app`. Formats without
    /// process identity report a single app named "all".
    fn app_names(&self) -> Vec<String> {
        vec!["all".to_string()]
    }
    /// Short format name (as accepted by `--format`).
    fn format(&self) -> &'static str;
}

/// What to open: a file and its format (guessed from the name when absent),
/// with format-specific options (e.g. the csv column spec, the page size).
#[derive(Debug, Clone, Default)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: Option<String>,
    pub options: toml::Table,
}

impl TraceSpec {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TraceSpec {
            path: path.into(),
            format: None,
            options: toml::Table::new(),
        }
    }
    pub fn with_format(mut self, format: &str) -> Self {
        self.format = Some(format.to_string());
        self
    }
}

/// Opens a trace for streaming.
pub fn open(spec: &TraceSpec) -> Result<Box<dyn TraceReader>> {
    if spec.options.contains_key("schedule") {
        return schedule::open_scheduled(spec);
    }
    if let Some(gen) = session_gen::from_spec(&spec.path.to_string_lossy())? {
        return Ok(Box::new(gen));
    }
    let format = match &spec.format {
        Some(f) => f.clone(),
        None if synth::looks_like_spec(&spec.path) => "synth".to_string(),
        None if sniff_native(&spec.path) => "native".to_string(),
        None => guess_format(&spec.path)?.to_string(),
    };
    readers::open_format(&format, &spec.path, &spec.options)
}

/// Whether `path` is a file starting with the native format's magic bytes.
fn sniff_native(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && native::is_native(&head)
}

/// Guesses the format from the file name (compression suffixes are ignored) and its first
/// bytes (see `readers::guess`).
pub fn guess_format(path: &Path) -> Result<&'static str> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".gz", ".zst", ".zstd", ".xz", ".lzma"] {
        if let Some(s) = stem.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    readers::guess(path, stem)
}

/// Reads a whole trace into memory (tests and small tools).
pub fn read_all(reader: &mut dyn TraceReader) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    while reader.read_batch(&mut out, 1 << 16)? {}
    Ok(out)
}
