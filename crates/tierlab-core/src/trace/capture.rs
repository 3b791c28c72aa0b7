//! Capturing page-reference traces of real programs with valgrind (issue 6;
//! the eMRAM swap paper's Section III collected Android apps' memory references
//! with Valgrind and turned instruction reads into file reads, data reads into
//! anonymous reads and data writes into anonymous writes).
//!
//! Two parts share one converter, [`LackeyConverter`], which turns the lines of
//! valgrind lackey's `--trace-mem=yes` output into 4 KiB page references as
//! they are read:
//!
//! * the `lackey` trace reader (trace/readers/lackey.rs) reads a saved lackey
//!   log, and
//! * [`capture`] runs a program under valgrind, reads lackey's output from a
//!   pipe (the raw text is never stored), classifies data addresses by the
//!   process's mappings, and streams the page references to disk in the
//!   native format or the compact `tlpages` stream ([`CaptureFormat`]).
//!
//! # Conversion rules
//! * `I  ADDR,SIZE` (instruction fetch) -> File read: program text is a mapped
//!   file (REFERENCE.md: every fetch here fell in file-backed text).
//! * ` L ADDR,SIZE` (load) -> read, ` S ADDR,SIZE` (store) -> write, of an Anon
//!   page unless the address lies in a file mapping of the [`MapsTable`]
//!   (shared, or private and not writable), which makes it a File page.
//! * ` M ADDR,SIZE` (modify: a load and a store of the same bytes by one
//!   instruction, e.g. `inc [mem]`) -> one write by default ([`ModifyAs::Write`]):
//!   at page granularity the read half touches the same page at the same
//!   instant, so it adds no reuse information for a recency policy, and counting
//!   it twice would inflate hit ratios. [`ModifyAs::ReadWrite`] emits a read
//!   then a write, for policies that keep separate read and write histories
//!   (the four-area policy then puts the page in both its read and write area).
//!   Cachegrind, which the paper used, counts a modify as a single data read;
//!   that would lose the page's dirtiness, so it is not offered.
//! * An access that straddles a page boundary references every page it touches,
//!   in address order.
//! * Lines starting with `==` (valgrind's own messages) and blank lines are
//!   skipped; anything else is an error naming the line.
//!
//! # Optional reductions (all off by default)
//! * `collapse`: in a run of consecutive identical references (same page, op
//!   and kind) keep only the first two. The second is kept because it is the
//!   one that sets CLOCK's reference bit (or the modified bit of a write area)
//!   after the first faulted the page in with a clear bit; the third and later
//!   references only set a bit that is already set, and no eviction can happen
//!   between them, so miss, eviction and write-back counts of LRU, FIFO,
//!   1-bit CLOCK, the four-area policy and Linux's two-list reclaim (which only
//!   looks at the young bit) are unchanged. Hit counts drop, and counting
//!   policies (LFU, multi-bit CLOCK) do change. Collapsing over a window of
//!   interleaved pages (a filter cache, Smith 1977) would keep LRU's misses but
//!   starve CLOCK of the reference bits of its hottest pages, so it is not
//!   offered.
//! * `sample`: spatial sampling (SHARDS, Waldspurger et al., FAST'15): a page is
//!   kept when a hash of its number falls below `sample` x 2^24; reuse of the
//!   kept pages is exact, and a cache of C pages on the sample models one of
//!   C / `sample` pages on the full trace.
//! * `skip` / `limit`: drop the first `skip` page references (program start-up)
//!   and stop after `limit` written ones.

use crate::error::{Error, Result};
use crate::trace::input::{parse_hex, parse_u64, show, trim};
use crate::trace::native::{NativeWriter, WriterOptions};
use crate::trace::readers::tlpages::TlpagesWriter;
use crate::trace::{Access, Kind, Op, Record};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a lackey `M` (modify) reference is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ModifyAs {
    /// One write reference (default).
    #[default]
    Write,
    /// A read reference followed by a write reference.
    ReadWrite,
}

/// File-backed address ranges of a process, from `/proc/PID/maps`.
///
/// A mapping counts as File when it names a file (a path starting with `/`)
/// and is shared (`s`) or private and not writable (program text, read-only
/// data, mapped files read by the program). Private writable file mappings
/// (`rw-p`, e.g. a library's `.data`) are copy-on-write: a page written there
/// becomes swap-backed, so they count as Anon, like every unnamed mapping
/// (heap, stack, and under valgrind the client's brk segment). Limit: a page of
/// a private writable file mapping that is only ever read is really a File
/// page; the table cannot tell without per-page history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapsTable {
    /// Sorted, non-overlapping `[start, end)` byte ranges of File mappings.
    file: Vec<(u64, u64)>,
    last: usize,
}

impl MapsTable {
    /// Parses the text of a `/proc/PID/maps` file. Errors name the 1-based line.
    pub fn parse(text: &str) -> std::result::Result<MapsTable, (u64, String)> {
        let mut file = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i as u64 + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let mut f = line.split_ascii_whitespace();
            let range = f.next().unwrap_or_default();
            let perms = f.next().ok_or_else(|| {
                (
                    line_no,
                    "expected 'START-END PERMS OFFSET DEV INODE [PATH]'".to_string(),
                )
            })?;
            let (Some(start), Some(end)) = range
                .split_once('-')
                .map(|(a, b)| (parse_hex(a.as_bytes()), parse_hex(b.as_bytes())))
                .unwrap_or((None, None))
            else {
                return Err((
                    line_no,
                    format!("expected an address range START-END in hex, found '{range}'"),
                ));
            };
            if end < start || perms.len() != 4 {
                return Err((
                    line_no,
                    format!(
                        "expected START <= END and 4 permission letters, found '{range} {perms}'"
                    ),
                ));
            }
            let _offset = f.next();
            let _dev = f.next();
            let _inode = f.next();
            let path: Vec<&str> = f.collect();
            let named_file = path.first().is_some_and(|p| p.starts_with('/'));
            let p = perms.as_bytes();
            let shared = p[3] == b's';
            let writable = p[1] == b'w';
            if named_file && (shared || !writable) {
                file.push((start, end));
            }
        }
        file.sort_unstable();
        // Merge adjacent or overlapping ranges.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(file.len());
        for (s, e) in file {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Ok(MapsTable {
            file: merged,
            last: 0,
        })
    }

    /// Number of File ranges.
    pub fn len(&self) -> usize {
        self.file.len()
    }

    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }

    /// Whether byte address `addr` lies in a File mapping.
    #[inline]
    pub fn is_file(&mut self, addr: u64) -> bool {
        if let Some(&(s, e)) = self.file.get(self.last) {
            if s <= addr && addr < e {
                return true;
            }
        }
        let i = self.file.partition_point(|&(s, _)| s <= addr);
        if i > 0 && addr < self.file[i - 1].1 {
            self.last = i - 1;
            true
        } else {
            false
        }
    }
}

/// Options of the lackey-to-page-references conversion.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LackeyOptions {
    /// Page size in bytes (power of two).
    pub page_size: u32,
    /// How `M` references count.
    pub modify: ModifyAs,
    /// Keep only the first two of a run of identical references.
    pub collapse: bool,
    /// Spatial sampling rate in (0, 1]; 1 keeps every page.
    pub sample: f64,
}

impl Default for LackeyOptions {
    fn default() -> Self {
        LackeyOptions {
            page_size: crate::trace::DEFAULT_PAGE_SIZE,
            modify: ModifyAs::Write,
            collapse: false,
            sample: 1.0,
        }
    }
}

impl LackeyOptions {
    pub fn validate(&self) -> Result<()> {
        if !self.page_size.is_power_of_two() || self.page_size < 512 {
            return Err(Error::config(format!(
                "page_size must be a power of two >= 512, got {}",
                self.page_size
            )));
        }
        if !(self.sample > 0.0 && self.sample <= 1.0) {
            return Err(Error::config(format!(
                "sample must be in (0, 1], got {}",
                self.sample
            )));
        }
        Ok(())
    }
}

/// One page reference produced by the converter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAccess {
    pub page: u64,
    pub op: Op,
    pub kind: Kind,
}

/// Counters of a conversion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConvertStats {
    /// Lackey references parsed (I, L, S, M lines).
    pub references: u64,
    pub instr: u64,
    pub loads: u64,
    pub stores: u64,
    pub modifies: u64,
    /// Accesses that touched two or more pages.
    pub straddles: u64,
    /// Page references dropped by `collapse`.
    pub collapsed: u64,
    /// Page references dropped by `sample`.
    pub sampled_out: u64,
    /// Data references classified File by the maps table.
    pub data_file: u64,
    /// Page references emitted.
    pub emitted: u64,
}

/// Streaming lackey-to-page-references converter (constant memory).
pub struct LackeyConverter {
    opts: LackeyOptions,
    shift: u32,
    pub maps: Option<MapsTable>,
    last: Option<PageAccess>,
    run: u32,
    sample_cut: u64,
    pub stats: ConvertStats,
}

/// Largest access size accepted (bytes); lackey reports at most a few hundred.
const MAX_ACCESS_BYTES: u64 = 1 << 16;

impl LackeyConverter {
    pub fn new(opts: LackeyOptions, maps: Option<MapsTable>) -> Result<Self> {
        opts.validate()?;
        Ok(LackeyConverter {
            shift: opts.page_size.trailing_zeros(),
            sample_cut: (opts.sample * (1u64 << 24) as f64).round() as u64,
            opts,
            maps,
            last: None,
            run: 0,
            stats: ConvertStats::default(),
        })
    }

    #[inline]
    fn keep_page(&self, page: u64) -> bool {
        if self.sample_cut >= 1 << 24 {
            return true;
        }
        // splitmix64 finaliser: a well-mixed hash of the page number.
        let mut z = page.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z & ((1 << 24) - 1)) < self.sample_cut
    }

    #[inline]
    fn emit(&mut self, a: PageAccess, out: &mut Vec<PageAccess>) {
        if !self.keep_page(a.page) {
            self.stats.sampled_out += 1;
            return;
        }
        if self.opts.collapse {
            if self.last == Some(a) {
                self.run += 1;
                if self.run > 2 {
                    self.stats.collapsed += 1;
                    return;
                }
            } else {
                self.last = Some(a);
                self.run = 1;
            }
        }
        self.stats.emitted += 1;
        out.push(a);
    }

    /// Converts one line of lackey output, appending its page references to
    /// `out`. Returns a description of what was expected on a malformed line.
    pub fn line(
        &mut self,
        line: &[u8],
        out: &mut Vec<PageAccess>,
    ) -> std::result::Result<(), String> {
        if line.starts_with(b"==") || trim(line).is_empty() {
            return Ok(());
        }
        let (tag, rest) = match line {
            [b'I', b' ', rest @ ..] => (b'I', rest),
            [b' ', t @ (b'L' | b'S' | b'M'), b' ', rest @ ..] => (*t, rest),
            _ => {
                return Err(format!(
                    "expected a lackey --trace-mem line ('I  ADDR,SIZE' or ' L|S|M ADDR,SIZE'), found '{}'",
                    show(line)
                ))
            }
        };
        let Some(comma) = rest.iter().position(|&b| b == b',') else {
            return Err(format!("expected 'ADDR,SIZE', found '{}'", show(rest)));
        };
        let Some(addr) = parse_hex(&rest[..comma]) else {
            return Err(format!(
                "expected a hexadecimal address, found '{}'",
                show(&rest[..comma])
            ));
        };
        let size = match parse_u64(&rest[comma + 1..]) {
            Some(s) if (1..=MAX_ACCESS_BYTES).contains(&s) => s,
            _ => {
                return Err(format!(
                    "expected an access size in bytes (1..={MAX_ACCESS_BYTES}), found '{}'",
                    show(&rest[comma + 1..])
                ))
            }
        };
        let Some(last_byte) = addr.checked_add(size - 1) else {
            return Err(format!("address {addr:#x} + size {size} overflows 64 bits"));
        };
        self.stats.references += 1;
        let (first, last) = (addr >> self.shift, last_byte >> self.shift);
        if last > first {
            self.stats.straddles += 1;
        }
        let kind = if tag == b'I' {
            self.stats.instr += 1;
            Kind::File
        } else {
            match tag {
                b'L' => self.stats.loads += 1,
                b'S' => self.stats.stores += 1,
                _ => self.stats.modifies += 1,
            }
            if self.maps.as_mut().is_some_and(|m| m.is_file(addr)) {
                self.stats.data_file += 1;
                Kind::File
            } else {
                Kind::Anon
            }
        };
        for page in first..=last {
            match tag {
                b'I' | b'L' => self.emit(
                    PageAccess {
                        page,
                        op: Op::Read,
                        kind,
                    },
                    out,
                ),
                b'S' => self.emit(
                    PageAccess {
                        page,
                        op: Op::Write,
                        kind,
                    },
                    out,
                ),
                _ => {
                    if self.opts.modify == ModifyAs::ReadWrite {
                        self.emit(
                            PageAccess {
                                page,
                                op: Op::Read,
                                kind,
                            },
                            out,
                        );
                    }
                    self.emit(
                        PageAccess {
                            page,
                            op: Op::Write,
                            kind,
                        },
                        out,
                    );
                }
            }
        }
        Ok(())
    }
}

/// Output format of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureFormat {
    /// tierlab's native format (trace/native.rs), in large blocks at zstd
    /// level 19.
    #[default]
    Native,
    /// The compact `tlpages` stream (readers/tlpages.rs): one zstd stream with
    /// long-distance matching over one-byte records. Memory traces repeat
    /// over long distances, which per-block compression cannot see: on
    /// tierlab's captures it is 3-17x smaller than native (80 M references of
    /// sqlite3: 0.27 MB vs 4.6 MB; of CPython: 3.0 MB vs 9.2 MB), so the
    /// shipped traces use it. It keeps no timestamps (time = ordinal).
    Tlpages,
}

/// Where a capture writes its page references. This is the one place that
/// knows the output formats.
pub struct CaptureWriter {
    w: Out,
    /// Page references written.
    pub written: u64,
}

enum Out {
    Native(NativeWriter<std::io::BufWriter<std::fs::File>>),
    Tlpages(TlpagesWriter),
}

/// Records per native block of a capture (bounded reader memory, ~10 MB).
pub const CAPTURE_BLOCK_RECORDS: u32 = 1 << 18;
/// zstd level of native captures.
pub const CAPTURE_ZSTD_LEVEL: i32 = 19;

pub fn create_writer(path: &Path, page_size: u32, format: CaptureFormat) -> Result<CaptureWriter> {
    let w = match format {
        CaptureFormat::Native => {
            let opts = WriterOptions {
                records_per_block: CAPTURE_BLOCK_RECORDS,
                level: CAPTURE_ZSTD_LEVEL,
            };
            Out::Native(NativeWriter::create_with(path, page_size, opts)?)
        }
        CaptureFormat::Tlpages => Out::Tlpages(TlpagesWriter::create(path, page_size)?),
    };
    Ok(CaptureWriter { w, written: 0 })
}

impl CaptureWriter {
    /// Appends one single-page reference; `time` is the lackey reference index
    /// (native only).
    #[inline]
    pub fn push(&mut self, time: u64, page: u64, op: Op, kind: Kind) -> Result<()> {
        self.written += 1;
        match &mut self.w {
            Out::Native(w) => w.push(&Record::Access(Access::page(time, page, op, kind))),
            Out::Tlpages(w) => w.push(page, op, kind),
        }
    }

    /// Flushes and closes the file.
    pub fn finish(self) -> Result<()> {
        match self.w {
            Out::Native(w) => w.finish(&["all".to_string()]).map(|_| ()),
            Out::Tlpages(w) => w.finish(),
        }
    }
}

/// Options of [`capture`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureOptions {
    pub lackey: LackeyOptions,
    /// Output format.
    pub format: CaptureFormat,
    /// Page references to drop at the start (after sampling and collapsing).
    pub skip: u64,
    /// Stop after writing this many page references (None: run to the end).
    pub limit: Option<u64>,
    /// Stop after this many seconds of wall time (None: no budget).
    pub time_budget_s: Option<f64>,
    /// Classify data addresses by sampling /proc/PID/maps.
    pub use_maps: bool,
    /// How often to re-read /proc/PID/maps (seconds).
    pub maps_interval_s: f64,
    /// The valgrind executable.
    pub valgrind: String,
    /// Follow child processes (needed when the command is a shell or shim).
    pub trace_children: bool,
    /// Where the traced program's stdout goes (None: discarded).
    pub program_stdout: Option<PathBuf>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            lackey: LackeyOptions::default(),
            format: CaptureFormat::Native,
            skip: 0,
            limit: None,
            time_budget_s: None,
            use_maps: true,
            maps_interval_s: 0.2,
            valgrind: "valgrind".into(),
            trace_children: false,
            program_stdout: None,
        }
    }
}

/// Progress of a running capture, reported about once per `report` interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CaptureProgress {
    pub elapsed_s: f64,
    pub written: u64,
    pub stats: ConvertStats,
    /// Distinct pages among those written.
    pub distinct_pages: u64,
    pub maps_samples: u64,
    pub file_ranges: u64,
}

/// What a capture did.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureSummary {
    pub output: PathBuf,
    pub command: Vec<String>,
    pub written: u64,
    pub distinct_pages: u64,
    pub stats: ConvertStats,
    pub maps_samples: u64,
    /// Why the capture ended: "exit", "limit", "time" or "interrupted".
    pub stopped_by: String,
    /// The program's exit status (None when tierlab stopped it).
    pub exit_code: Option<i32>,
    pub elapsed_s: f64,
    /// Valgrind's own messages (the `==PID==` lines), for diagnosis.
    pub valgrind_log: Vec<String>,
}

fn read_maps(pid: u32) -> Option<MapsTable> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    MapsTable::parse(&text).ok()
}

/// Runs `command` under valgrind lackey and writes its page references to
/// `output`, with memory bounded by the distinct-page set (one bit per page
/// is not needed: a hash set of the pages written, for the footprint count).
///
/// Valgrind's log goes to a pipe (fd 9 of a `sh` wrapper that then `exec`s
/// valgrind, so the traced process keeps the wrapper's pid); the program's
/// stdout goes to `program_stdout` or nowhere, its stderr to ours.
///
/// Mappings: /proc/PID/maps is re-read every `maps_interval_s` while the pipe
/// is read and the latest table classifies data addresses. Limits: a mapping
/// created and removed between two samples is missed (its data references
/// count as Anon); the pipe lags the program by at most one pipe buffer
/// (~64 KiB, ~5,000 references); with `trace_children` only the first
/// process's maps are read.
///
/// `progress` is called about every 0.5 s; returning an error (e.g.
/// [`Error::Interrupted`] on Ctrl-C) stops valgrind and keeps what was written.
pub fn capture(
    command: &[String],
    output: &Path,
    opts: &CaptureOptions,
    progress: &mut dyn FnMut(&CaptureProgress) -> Result<()>,
) -> Result<CaptureSummary> {
    opts.lackey.validate()?;
    if command.is_empty() {
        return Err(Error::config("capture: no command given"));
    }
    let mut vg_args: Vec<String> = vec![
        "--tool=lackey".into(),
        "--trace-mem=yes".into(),
        "--log-fd=9".into(),
    ];
    if opts.trace_children {
        vg_args.push("--trace-children=yes".into());
    }
    // fd 9 of the wrapper = our pipe; the program's stdout = the file given
    // (or /dev/null). `exec` keeps the pid: sh -> valgrind -> the tool.
    let script = "exec 9>&1 1>\"$TIERLAB_CAPTURE_STDOUT\"; exec \"$@\"";
    let stdout_path = opts
        .program_stdout
        .as_ref()
        .map_or_else(|| "/dev/null".into(), |p| p.display().to_string());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("tierlab-capture")
        .arg(&opts.valgrind)
        .args(&vg_args)
        .arg("--")
        .args(command)
        .env("TIERLAB_CAPTURE_STDOUT", stdout_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::config(format!("capture: cannot start sh/valgrind: {e}")))?;
    let pid = child.id();
    let pipe = child.stdout.take().expect("piped stdout");
    let start = Instant::now();
    let Drive {
        stopped: stopped_by,
        written,
        distinct,
        stats,
        maps_samples,
        log,
        failure: err,
    } = drive(pipe, pid, output, opts, progress);
    let exit_code = if stopped_by == "exit" {
        child.wait().ok().and_then(|s| s.code())
    } else {
        let _ = child.kill();
        let _ = child.wait();
        None
    };
    if let Some(e) = err {
        if !matches!(e, Error::Interrupted) {
            return Err(e);
        }
    }
    if written == 0 && stopped_by == "exit" {
        let tail = log
            .iter()
            .rev()
            .take(5)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(Error::config(format!(
            "capture: valgrind produced no memory references (exit code {exit_code:?}); is '{}' \
             installed and the command valid? valgrind said:\n{tail}",
            opts.valgrind
        )));
    }
    Ok(CaptureSummary {
        output: output.to_path_buf(),
        command: command.to_vec(),
        written,
        distinct_pages: distinct,
        stats,
        maps_samples,
        stopped_by: stopped_by.to_string(),
        exit_code,
        elapsed_s: start.elapsed().as_secs_f64(),
        valgrind_log: log,
    })
}

/// How the pipe-reading loop ended.
struct Drive {
    stopped: &'static str,
    written: u64,
    distinct: u64,
    stats: ConvertStats,
    maps_samples: u64,
    log: Vec<String>,
    failure: Option<Error>,
}

impl Drive {
    fn failed(e: Error) -> Drive {
        Drive {
            stopped: "exit",
            written: 0,
            distinct: 0,
            stats: ConvertStats::default(),
            maps_samples: 0,
            log: Vec::new(),
            failure: Some(e),
        }
    }
}

fn drive(
    pipe: impl Read,
    pid: u32,
    output: &Path,
    opts: &CaptureOptions,
    progress: &mut dyn FnMut(&CaptureProgress) -> Result<()>,
) -> Drive {
    let start = Instant::now();
    let mut conv = match LackeyConverter::new(opts.lackey.clone(), None) {
        Ok(c) => c,
        Err(e) => return Drive::failed(e),
    };
    let mut writer = match create_writer(output, opts.lackey.page_size, opts.format) {
        Ok(w) => w,
        Err(e) => return Drive::failed(e),
    };
    let mut reader = BufReader::with_capacity(1 << 20, pipe);
    let mut line = Vec::with_capacity(128);
    let mut buf = Vec::with_capacity(8);
    let mut distinct = rustc_hash::FxHashSet::default();
    let mut log = Vec::new();
    let mut skipped = 0u64;
    let mut maps_samples = 0u64;
    let limit = opts.limit.unwrap_or(u64::MAX);
    let budget = opts.time_budget_s.map(Duration::from_secs_f64);
    let maps_every = Duration::from_secs_f64(opts.maps_interval_s.max(0.01));
    let mut next_maps = start;
    let mut next_report = start + Duration::from_millis(500);
    let mut line_no = 0u64;
    let mut stopped = "exit";
    let mut failure: Option<Error> = None;
    loop {
        if line_no.is_multiple_of(4096) {
            let now = Instant::now();
            if opts.use_maps && now >= next_maps {
                if let Some(m) = read_maps(pid) {
                    conv.maps = Some(m);
                    maps_samples += 1;
                }
                next_maps = now + maps_every;
            }
            if budget.is_some_and(|b| now - start >= b) {
                stopped = "time";
                break;
            }
            if now >= next_report {
                next_report = now + Duration::from_millis(500);
                let p = CaptureProgress {
                    elapsed_s: (now - start).as_secs_f64(),
                    written: writer.written,
                    stats: conv.stats,
                    distinct_pages: distinct.len() as u64,
                    maps_samples,
                    file_ranges: conv.maps.as_ref().map_or(0, |m| m.len() as u64),
                };
                if let Err(e) = progress(&p) {
                    stopped = "interrupted";
                    failure = Some(e);
                    break;
                }
            }
        }
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                failure = Some(Error::config(format!(
                    "capture: reading valgrind's pipe: {e}"
                )));
                stopped = "interrupted";
                break;
            }
        }
        line_no += 1;
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        if line.starts_with(b"==") || line.starts_with(b"--") {
            if log.len() < 200 {
                log.push(String::from_utf8_lossy(&line).into_owned());
            }
            continue;
        }
        buf.clear();
        if let Err(msg) = conv.line(&line, &mut buf) {
            // Anything valgrind writes that is not a reference (warnings) is
            // kept for the log rather than failing a long capture.
            if log.len() < 200 {
                log.push(format!("(line {line_no}: {msg})"));
            }
            continue;
        }
        let mut full = false;
        for a in &buf {
            if skipped < opts.skip {
                skipped += 1;
                continue;
            }
            let time = conv.stats.references.saturating_sub(1);
            if let Err(e) = writer.push(time, a.page, a.op, a.kind) {
                failure = Some(e);
                break;
            }
            distinct.insert(a.page);
            if writer.written >= limit {
                full = true;
                break;
            }
        }
        if failure.is_some() {
            stopped = "interrupted";
            break;
        }
        if full {
            stopped = "limit";
            break;
        }
    }
    let written = writer.written;
    if let Err(e) = writer.finish() {
        failure.get_or_insert(e);
    }
    let _ = progress(&CaptureProgress {
        elapsed_s: start.elapsed().as_secs_f64(),
        written,
        stats: conv.stats,
        distinct_pages: distinct.len() as u64,
        maps_samples,
        file_ranges: conv.maps.as_ref().map_or(0, |m| m.len() as u64),
    });
    Drive {
        stopped,
        written,
        distinct: distinct.len() as u64,
        stats: conv.stats,
        maps_samples,
        log,
        failure,
    }
}
