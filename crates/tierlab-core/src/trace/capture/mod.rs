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

mod lackey;
mod writer;

pub use lackey::{ConvertStats, LackeyConverter, LackeyOptions, MapsTable, ModifyAs, PageAccess};
pub use writer::{
    create_writer, CaptureFormat, CaptureWriter, CAPTURE_BLOCK_RECORDS, CAPTURE_ZSTD_LEVEL,
};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
