//! blkparse text in its default output format (`blkparse -i TRACE`), e.g.
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
//! ```
//!
//! `DEV CPU SEQ SECONDS.NANOS PID ACTION RWBS SECTOR + NSECTORS [PROCESS]`.
//! Every block I/O shows up as several events (Q queued, G get request,
//! I inserted, D issued to the driver, C completed, plus merges M/F, splits X,
//! remaps A, plugs P/U). tierlab takes ONE event per request, by default `Q`
//! (option `event = "Q" | "D" | "C"`): Q is the request as the file system or
//! application issued it, once per bio, before the I/O scheduler merges
//! adjacent bios (after which D and C would show fewer, larger requests) and
//! before it is reordered, so it is the reference stream a buffer cache above
//! the block layer sees. `D` gives the device's view (merged requests in
//! dispatch order), `C` the completion order.
//!
//! RWBS: `R` is a read, `W` a write; events with `D` (discard) or no data
//! (`N`, flush-only `F` without sectors) are skipped. `SECTOR` and `NSECTORS`
//! are 512-byte sectors; the request covers every page of `page_size` bytes
//! (option, default 4096) it touches. The app is the process name in brackets
//! for Q and D events (interned in order of appearance; `app_names()` lists
//! them; blkparse's `(null)`, a PID it saw no name for, is `<unknown>`); C events carry an error code there, so with `event = "C"` every
//! request belongs to the single app "all". Kind: File. `time` in ns.
//!
//! Lines whose first field is not `MAJOR,MINOR` end the trace when they start
//! the per-CPU/total summary that blkparse prints last (`CPU0 (8,0):`,
//! `Total (8,0):`) and are errors otherwise. One device per trace: requests
//! to different devices would share a page space (filter with `blkparse -d`).
//!
//! There is no blkparse file under ../shared/traces: the tests use a fixture
//! written from this description and the output of the real `blkparse`
//! (blktrace 1.2.0) on a small synthetic binary trace
//! (tests/reference/blkparse_fixture.py).

use super::common::{
    byte_span, check_page_size, parse_seconds_ns, read_lines, to_bytes, AppTable, LineState, Step,
    SECTOR,
};
use crate::error::{Error, Result};
use crate::trace::input::{parse_u64, show, trim, Lines};
use crate::trace::{Access, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlkparseOptions {
    pub event: String,
    pub page_size: u32,
}

impl Default for BlkparseOptions {
    fn default() -> Self {
        BlkparseOptions {
            event: "Q".into(),
            page_size: 4096,
        }
    }
}

pub struct BlkparseReader {
    lines: Lines,
    page_size: u32,
    event: u8,
    apps: AppTable,
    state: LineState,
}

impl BlkparseReader {
    pub fn open(path: &Path, opts: BlkparseOptions) -> Result<Self> {
        let event = match opts.event.as_str() {
            "Q" => b'Q',
            "D" => b'D',
            "C" => b'C',
            other => {
                return Err(Error::config(format!(
                    "options of trace format 'blkparse': event = '{other}': expected one of Q, D, C"
                )))
            }
        };
        Ok(BlkparseReader {
            page_size: check_page_size("blkparse", opts.page_size)?,
            lines: Lines::open(path)?,
            event,
            apps: AppTable::default(),
            state: LineState::default(),
        })
    }
}

fn is_device(f: &[u8]) -> bool {
    match f.iter().position(|&b| b == b',') {
        Some(i) => parse_u64(&f[..i]).is_some() && parse_u64(&f[i + 1..]).is_some(),
        None => false,
    }
}

fn parse(line: &[u8], page_size: u32, event: u8, apps: &mut AppTable) -> Result<Step, String> {
    let t = trim(line);
    if t.is_empty() {
        return Ok(Step::Skip);
    }
    let mut fields = t
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let dev = fields.next().unwrap_or_default();
    if !is_device(dev) {
        if t.starts_with(b"CPU") || t.starts_with(b"Total") {
            return Ok(Step::End);
        }
        return Err(format!(
            "expected a blkparse event line 'MAJ,MIN CPU SEQ TIME PID ACTION RWBS SECTOR + N [PROC]', found '{}'",
            show(t)
        ));
    }
    let [cpu, seq, time, pid, action] = std::array::from_fn(|_| fields.next().unwrap_or_default());
    if action.is_empty() {
        return Err("expected at least 6 fields 'MAJ,MIN CPU SEQ TIME PID ACTION'".into());
    }
    if action != [event] {
        return Ok(Step::Skip);
    }
    for (name, f) in [("CPU", cpu), ("sequence number", seq), ("PID", pid)] {
        if parse_u64(f).is_none() {
            return Err(format!(
                "{name}: expected an unsigned integer, found '{}'",
                show(f)
            ));
        }
    }
    let time = parse_seconds_ns(time)
        .ok_or_else(|| format!("time: expected SECONDS.NANOSECONDS, found '{}'", show(time)))?;
    let rwbs = fields.next().unwrap_or_default();
    if rwbs.is_empty() || !rwbs.iter().all(|b| b"RWDBNFSMAE".contains(b)) {
        return Err(format!(
            "RWBS: expected flags from R W D N F S M A E B, found '{}'",
            show(rwbs)
        ));
    }
    let op = if rwbs.contains(&b'D') {
        return Ok(Step::Skip);
    } else if rwbs.contains(&b'W') {
        Op::Write
    } else if rwbs.contains(&b'R') {
        Op::Read
    } else {
        return Ok(Step::Skip);
    };
    let (Some(sector), Some(plus), Some(n)) = (fields.next(), fields.next(), fields.next()) else {
        // A data request without sectors (e.g. a flush with a write flag).
        return Ok(Step::Skip);
    };
    if plus != b"+" {
        return Ok(Step::Skip);
    }
    let sector = parse_u64(sector)
        .ok_or_else(|| format!("expected a sector number, found '{}'", show(sector)))?;
    let n = parse_u64(n)
        .ok_or_else(|| format!("expected a sector count after '+', found '{}'", show(n)))?;
    let off = to_bytes(sector, SECTOR, "sector")?;
    let len = to_bytes(n, SECTOR, "sector count")?;
    let (page, npages) = byte_span(off, len, page_size)?;
    let app = if event == b'C' {
        0
    } else {
        let name = match memchr::memchr(b'[', t) {
            Some(i) => t[i + 1..].strip_suffix(b"]").unwrap_or(&t[i + 1..]),
            None => &t[..0],
        };
        let name = std::str::from_utf8(name)
            .map_err(|_| format!("process name is not UTF-8: '{}'", show(name)))?;
        apps.id(if name.is_empty() || name == "(null)" {
            "<unknown>"
        } else {
            name
        })
    };
    Ok(Step::Push(Access::file(time, page, npages, op, app, 0)))
}

impl TraceReader for BlkparseReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let (ps, ev, apps) = (self.page_size, self.event, &mut self.apps);
        read_lines(
            &mut self.lines,
            &mut self.state,
            "blkparse event lines",
            out,
            max,
            |line| parse(line, ps, ev, apps),
        )
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn app_names(&self) -> Vec<String> {
        self.apps.names()
    }

    fn format(&self) -> &'static str {
        "blkparse"
    }
}
