//! Android block traces (the mobile-block traces, e.g. `telegram_exec.csv.gz`):
//! csv lines `proces,device,rw_flag,sector,size,timestamp` after that header.
//!
//! - `proces` is the kernel's `comm-PID` of the thread that issued the I/O
//!   (`UnityMain-2757`, `f2fs_ckpt-254:4-599`, `Jit` when no PID was logged).
//!   The app is the name with a trailing `-DIGITS` removed, so every thread of
//!   that name shares one app id (ids in order of first appearance,
//!   `app_names()` lists them). `<...>-PID` is a thread whose name ftrace did
//!   not record: it gets the app of the last named thread seen with that PID,
//!   or the app `<unknown>` when none was seen yet (the reader streams, so a
//!   name logged later cannot be used). These are thread names: the trace does
//!   not say which Android app a thread belongs to.
//! - `device` (a dev_t number) must be an unsigned integer; one trace is one
//!   device (all shipped traces have a single device, 8388608 = 8:0 in the
//!   kernel's internal `major << 20 | minor` encoding).
//! - `rw_flag`: `R...` is a read, `W...` a write.
//! - `sector` and `size` are both in 512-byte sectors: every size in the three
//!   shipped traces is a multiple of 8 (8 = one 4 KiB page, 256 = 128 KiB,
//!   1024 = 512 KiB; the smallest is 8), which as bytes would be impossible
//!   block-I/O sizes. The request covers every page of `page_size` bytes
//!   (option, default 4096) it touches.
//! - `timestamp` is seconds (decimal, e.g. `653406.907265`), kept in ns.
//!
//! Kind: File (block trace). Exactly 6 fields per line.

use super::common::{
    byte_span, check_page_size, parse_seconds_ns, read_lines, split_fields, to_bytes, AppTable,
    LineState, Step, SECTOR,
};
use crate::error::Result;
use crate::trace::input::{field_u64, parse_u64, show, trim, Lines};
use crate::trace::{Access, Op, Record, TraceReader};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AndroidOptions {
    pub page_size: u32,
}

impl Default for AndroidOptions {
    fn default() -> Self {
        AndroidOptions { page_size: 4096 }
    }
}

struct Parser {
    page_size: u32,
    apps: AppTable,
    /// Last app seen for each PID, to resolve `<...>-PID`.
    pid_app: FxHashMap<u64, u32>,
    fields: Vec<(usize, usize)>,
}

pub struct AndroidReader {
    lines: Lines,
    parser: Parser,
    state: LineState,
}

/// Splits `comm-PID` into the name and the PID (if the suffix is all digits).
pub fn split_comm(s: &str) -> (&str, Option<u64>) {
    match s.rfind('-') {
        Some(i) if i > 0 => match parse_u64(&s.as_bytes()[i + 1..]) {
            Some(pid) => (&s[..i], Some(pid)),
            None => (s, None),
        },
        _ => (s, None),
    }
}

impl AndroidReader {
    pub fn open(path: &Path, opts: AndroidOptions) -> Result<Self> {
        Ok(AndroidReader {
            parser: Parser {
                page_size: check_page_size("android", opts.page_size)?,
                apps: AppTable::default(),
                pid_app: FxHashMap::default(),
                fields: Vec::with_capacity(8),
            },
            lines: Lines::open(path)?,
            state: LineState::default(),
        })
    }
}

impl Parser {
    fn line(&mut self, line: &[u8], line_no: u64) -> Result<Step, String> {
        if trim(line).is_empty() {
            return Ok(Step::Skip);
        }
        if line_no == 1 && line.starts_with(b"proces") {
            return Ok(Step::Skip);
        }
        split_fields(line, b',', &mut self.fields);
        if self.fields.len() != 6 {
            return Err(format!(
                "expected 6 fields 'proces,device,rw_flag,sector,size,timestamp', found {}",
                self.fields.len()
            ));
        }
        let fl = &self.fields;
        let f = |i: usize| &line[fl[i].0..fl[i].1];
        let proc_field = f(0);
        let Ok(comm) = std::str::from_utf8(proc_field) else {
            return Err(format!(
                "proces: expected a UTF-8 process name, found '{}'",
                show(proc_field)
            ));
        };
        if parse_u64(f(1)).is_none() {
            return Err(format!(
                "device: expected a device number (unsigned integer), found '{}'",
                show(f(1))
            ));
        }
        let op = match trim(f(2)).first() {
            Some(b'R') | Some(b'r') => Op::Read,
            Some(b'W') | Some(b'w') => Op::Write,
            _ => return Err(format!("rw_flag: expected R or W, found '{}'", show(f(2)))),
        };
        let sector = field_u64(f(3), "sector", "a sector number (unsigned integer)")?;
        let size = field_u64(f(4), "size", "a size in 512-byte sectors (integer > 0)")?;
        let time = parse_seconds_ns(f(5)).ok_or_else(|| {
            format!(
                "timestamp: expected seconds (non-negative decimal), found '{}'",
                show(f(5))
            )
        })?;
        if size == 0 {
            return Err("size: expected a size in sectors > 0, found 0".into());
        }
        let off = to_bytes(sector, SECTOR, "sector")?;
        let len = to_bytes(size, SECTOR, "size")?;
        let (page, npages) = byte_span(off, len, self.page_size)?;
        let (name, pid) = split_comm(trim_str(comm));
        let app = if name == "<...>" {
            match pid.and_then(|p| self.pid_app.get(&p)) {
                Some(&a) => a,
                None => self.apps.id("<unknown>"),
            }
        } else {
            let a = self.apps.id(name);
            if let Some(p) = pid {
                self.pid_app.insert(p, a);
            }
            a
        };
        Ok(Step::Push(Access::file(time, page, npages, op, app, 0)))
    }
}

fn trim_str(s: &str) -> &str {
    s.trim()
}

impl TraceReader for AndroidReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let parser = &mut self.parser;
        let mut line_no = self.lines.line_no();
        read_lines(
            &mut self.lines,
            &mut self.state,
            "Android block csv lines 'proces,device,rw_flag,sector,size,timestamp'",
            out,
            max,
            |line| {
                line_no += 1;
                parser.line(line, line_no)
            },
        )
    }

    fn page_size(&self) -> u32 {
        self.parser.page_size
    }

    fn app_names(&self) -> Vec<String> {
        self.parser.apps.names()
    }

    fn format(&self) -> &'static str {
        "android"
    }
}
