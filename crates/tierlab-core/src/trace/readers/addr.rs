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

use super::common::{check_page_size, LineAt, LineFormat, LineReader, PageSizeOptions, Step};
use crate::error::Result;
use crate::trace::input::{field_op, parse_hex, parse_u64, show};
use crate::trace::{Access, Kind};
use std::path::Path;

pub type AddrOptions = PageSizeOptions;

/// The address-trace line format; [`AddrReader`] reads it.
pub struct AddrLines {
    page_size: u32,
}

pub type AddrReader = LineReader<AddrLines>;

impl AddrReader {
    pub fn open(path: &Path, opts: AddrOptions) -> Result<Self> {
        let page_size = check_page_size("addr", opts.page_size)?;
        LineReader::new(path, AddrLines { page_size })
    }
}

fn parse(line: &[u8], page_size: u32, seq: u64) -> Result<Step, String> {
    let mut fields = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let Some(kind) = fields.next() else {
        return Ok(Step::Skip);
    };
    let op = field_op(kind, b'l', b's', "expected 'l' (load) or 's' (store)")?;
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

impl LineFormat for AddrLines {
    const NAME: &'static str = "addr";
    const EXPECTED: &'static str = "lines 'l|s HEXADDR GAP'";
    fn parse(&mut self, line: &[u8], at: LineAt) -> Result<Step, String> {
        parse(line, self.page_size, at.record)
    }
    fn page_size(&self) -> u32 {
        self.page_size
    }
}
