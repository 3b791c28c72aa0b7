//! Address traces `l|s HEXADDR GAP` (e.g. the SPEC `gcc.trace` and
//! `swim.trace` of the CS:APP / Hennessy-Patterson cache labs): one data
//! reference per line; `l` is a load, `s` a store, `HEXADDR` the virtual
//! address (with or without `0x`) and `GAP` the number of instructions executed
//! since the previous reference.
//!
//! Loads are Anon reads and stores Anon writes (data references of a process
//! are anonymous memory; these traces carry no file mappings);
//! `page = addr / page_size` (option `page_size`, default 4096), one page per
//! reference (the access width is not recorded; a word never straddles pages in
//! these traces' aligned accesses). `GAP` is checked to be an unsigned integer
//! but not used: `time` is the reference's ordinal, as for every format without
//! timestamps.

use super::common::{check_page_size, read_lines, LineState, Step};
use crate::error::Result;
use crate::trace::input::{parse_hex, parse_u64, show, Lines};
use crate::trace::{Access, Kind, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AddrOptions {
    pub page_size: u32,
}

impl Default for AddrOptions {
    fn default() -> Self {
        AddrOptions { page_size: 4096 }
    }
}

pub struct AddrReader {
    lines: Lines,
    page_size: u32,
    seq: u64,
    state: LineState,
}

impl AddrReader {
    pub fn open(path: &Path, opts: AddrOptions) -> Result<Self> {
        Ok(AddrReader {
            page_size: check_page_size("addr", opts.page_size)?,
            lines: Lines::open(path)?,
            seq: 0,
            state: LineState::default(),
        })
    }
}

fn parse(line: &[u8], page_size: u32, seq: u64) -> Result<Step, String> {
    let mut fields = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let Some(kind) = fields.next() else {
        return Ok(Step::Skip);
    };
    let op = match kind {
        b"l" | b"L" => Op::Read,
        b"s" | b"S" => Op::Write,
        other => {
            return Err(format!(
                "expected 'l' (load) or 's' (store), found '{}'",
                show(other)
            ))
        }
    };
    let (Some(addr), Some(gap), None) = (fields.next(), fields.next(), fields.next()) else {
        return Err("expected 3 fields 'l|s HEXADDR GAP'".into());
    };
    let Some(addr) = parse_hex(addr) else {
        return Err(format!(
            "expected a hexadecimal address, found '{}'",
            show(addr)
        ));
    };
    if parse_u64(gap).is_none() {
        return Err(format!(
            "expected the instruction gap (unsigned integer), found '{}'",
            show(gap)
        ));
    }
    Ok(Step::Push(Access::page(
        seq,
        addr / page_size as u64,
        op,
        Kind::Anon,
    )))
}

impl TraceReader for AddrReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let (ps, seq) = (self.page_size, &mut self.seq);
        read_lines(
            &mut self.lines,
            &mut self.state,
            "lines 'l|s HEXADDR GAP'",
            out,
            max,
            |line| {
                let step = parse(line, ps, *seq)?;
                if matches!(step, Step::Push(_)) {
                    *seq += 1;
                }
                Ok(step)
            },
        )
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn format(&self) -> &'static str {
        "addr"
    }
}
