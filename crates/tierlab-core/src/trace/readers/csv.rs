//! libCacheSim csv traces: one request per line, with the columns named by a
//! column spec, as libCacheSim's `-t "obj-id-col=5,time-col=2,obj-size-col=4,
//! op-col=3,has-header=true,delimiter=,"` (1-based columns).
//!
//! Options (all optional):
//! - `id_col`, `time_col`, `size_col`, `op_col`: 1-based column numbers. When
//!   none of them is given and the file has a header, columns are found by
//!   header name (case-insensitive): id from `obj_id`, `id`, `key`, `lbn`,
//!   `lba`, `block`; time from `time`, `timestamp`, `ts`, `clock_time`; size
//!   from `obj_size`, `size`, `len`, `length`; op from `op`, `operation`,
//!   `type`, `rw`. So `cloudPhysicsIO.csv` (`version,time,op,size,lbn`) opens
//!   with no options, exactly as libCacheSim's spec above.
//! - `header`: whether line 1 is a header; by default it is one when its id
//!   field is not a number (or, with no column given, always).
//! - `delimiter` (`","`), `id_is_num` (`true`; `false` hashes string ids with a
//!   stable 64-bit FNV-1a, as libCacheSim hashes them).
//! - `addressing` (`"object"`, the default: each request is one page keyed by
//!   its object id, which is how libCacheSim counts with unit object size and
//!   is what the miss-for-miss agreement tests use; `"block"`: the id is a block
//!   number of `block_size` bytes (default 512, a sector, which is what the
//!   CloudPhysics `lbn` counts) and the size a byte length, split into pages of
//!   `page_size` bytes (default 4096)).
//! - `time_unit` of the time column: `"s"` (default, libCacheSim's clock unit),
//!   `"ms"`, `"us"`, `"ns"`; decimals are accepted and converted exactly to ns.
//!   Without a time column `time` is the request's ordinal.
//! - `skip_zero_size` (`false`): a zero size is an error unless this is set;
//!   libCacheSim skips zero-size requests by default (`ignore_size_zero_req`),
//!   so set it to match libCacheSim on traces that contain them.
//!
//! Ops: see [`super::common::parse_op`]; without an op column every request
//! is a read. Kind: File (block and object traces carry no kind). Every line
//! must have as many fields as line 1.

use super::common::{
    byte_span, check_page_size, hash_id, parse_decimal_scaled, parse_op, read_lines, split_fields,
    to_bytes, Addressing, LineState, Step, TimeUnit, OP_NAMES,
};
use crate::error::{Error, Result};
use crate::trace::input::{parse_hex, parse_u64, show, trim, Lines};
use crate::trace::{Access, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CsvOptions {
    pub id_col: Option<usize>,
    pub time_col: Option<usize>,
    pub size_col: Option<usize>,
    pub op_col: Option<usize>,
    pub header: Option<bool>,
    pub delimiter: char,
    pub id_is_num: bool,
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
    pub time_unit: TimeUnit,
    pub skip_zero_size: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            id_col: None,
            time_col: None,
            size_col: None,
            op_col: None,
            header: None,
            delimiter: ',',
            id_is_num: true,
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
            time_unit: TimeUnit::Seconds,
            skip_zero_size: false,
        }
    }
}

/// 0-based column indexes, resolved.
#[derive(Debug, Clone)]
struct Cols {
    id: usize,
    time: Option<usize>,
    size: Option<usize>,
    op: Option<usize>,
}

struct Parser {
    cols: Cols,
    opts: CsvOptions,
    delim: u8,
    nfields: Option<usize>,
    seq: u64,
    fields: Vec<(usize, usize)>,
}

pub struct CsvReader {
    lines: Lines,
    parser: Parser,
    pending: Option<Vec<u8>>,
    state: LineState,
}

const ID_NAMES: &[&str] = &[
    "obj_id", "obj-id", "objid", "id", "key", "lbn", "lba", "block",
];
const TIME_NAMES: &[&str] = &["time", "timestamp", "ts", "clock_time"];
const SIZE_NAMES: &[&str] = &["obj_size", "obj-size", "size", "len", "length"];
const OP_COL_NAMES: &[&str] = &["op", "operation", "type", "rw"];

fn parse_id(field: &[u8], is_num: bool) -> Option<u64> {
    let f = trim(field);
    if !is_num {
        return (!f.is_empty()).then(|| hash_id(f));
    }
    if f.starts_with(b"0x") || f.starts_with(b"0X") {
        parse_hex(f)
    } else {
        parse_u64(f)
    }
}

impl CsvReader {
    pub fn open(path: &Path, opts: CsvOptions) -> Result<Self> {
        check_page_size("csv", opts.page_size)?;
        if !opts.delimiter.is_ascii() {
            return Err(Error::config(format!(
                "options of trace format 'csv': delimiter = {:?}: expected one ASCII character",
                opts.delimiter
            )));
        }
        if opts.block_size == 0 {
            return Err(Error::config(
                "options of trace format 'csv': block_size must be > 0",
            ));
        }
        for (name, c) in [
            ("id_col", opts.id_col),
            ("time_col", opts.time_col),
            ("size_col", opts.size_col),
            ("op_col", opts.op_col),
        ] {
            if c == Some(0) {
                return Err(Error::config(format!(
                    "options of trace format 'csv': {name} = 0: columns are numbered from 1"
                )));
            }
        }
        let delim = opts.delimiter as u8;
        let mut lines = Lines::open(path)?;
        let first = match lines.next_line()? {
            Some(l) => l.to_vec(),
            None => {
                return Err(Error::input(
                    lines.name(),
                    crate::error::Location::Whole,
                    "empty file: expected csv lines",
                ))
            }
        };
        let mut fields = Vec::new();
        split_fields(&first, delim, &mut fields);
        let named = opts.id_col.is_none()
            && opts.time_col.is_none()
            && opts.size_col.is_none()
            && opts.op_col.is_none();
        if !named && opts.id_col.is_none() {
            return Err(Error::config(
                "options of trace format 'csv': id_col is required when other columns are given",
            ));
        }
        let header = match opts.header {
            Some(h) => h,
            None if named => true,
            None => {
                let id = opts.id_col.unwrap_or(1) - 1;
                !matches!(fields.get(id), Some(&(a, b)) if parse_id(&first[a..b], opts.id_is_num).is_some())
            }
        };
        let cols = if named {
            if !header {
                return Err(Error::config(
                    "options of trace format 'csv': id_col is required when the file has no header (e.g. id_col = 2)",
                ));
            }
            let names: Vec<String> = fields
                .iter()
                .map(|&(a, b)| String::from_utf8_lossy(trim(&first[a..b])).to_lowercase())
                .collect();
            let find =
                |cands: &[&str]| cands.iter().find_map(|c| names.iter().position(|n| n == c));
            let Some(id) = find(ID_NAMES) else {
                return Err(lines.error(format!(
                    "no id column in the header (looked for {}); pass id_col",
                    ID_NAMES.join(", ")
                )));
            };
            Cols {
                id,
                time: find(TIME_NAMES),
                size: find(SIZE_NAMES),
                op: find(OP_COL_NAMES),
            }
        } else {
            let Some(id) = opts.id_col else {
                return Err(Error::config(
                    "options of trace format 'csv': id_col is required when other columns are given",
                ));
            };
            Cols {
                id: id - 1,
                time: opts.time_col.map(|c| c - 1),
                size: opts.size_col.map(|c| c - 1),
                op: opts.op_col.map(|c| c - 1),
            }
        };
        let max_col = [Some(cols.id), cols.time, cols.size, cols.op]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0);
        if max_col >= fields.len() {
            return Err(lines.error(format!(
                "line 1 has {} fields but the column spec uses column {}",
                fields.len(),
                max_col + 1
            )));
        }
        Ok(CsvReader {
            lines,
            parser: Parser {
                cols,
                delim,
                nfields: Some(fields.len()),
                seq: 0,
                fields,
                opts,
            },
            pending: (!header).then_some(first),
            state: LineState::default(),
        })
    }

    /// The resolved 1-based columns (id, time, size, op), for tests and `info`.
    pub fn columns(&self) -> (usize, Option<usize>, Option<usize>, Option<usize>) {
        let c = &self.parser.cols;
        (
            c.id + 1,
            c.time.map(|x| x + 1),
            c.size.map(|x| x + 1),
            c.op.map(|x| x + 1),
        )
    }
}

impl Parser {
    fn line(&mut self, line: &[u8]) -> Result<Step, String> {
        if trim(line).is_empty() {
            return Ok(Step::Skip);
        }
        split_fields(line, self.delim, &mut self.fields);
        let n = self.fields.len();
        if let Some(want) = self.nfields {
            if n != want {
                return Err(format!(
                    "expected {want} fields separated by '{}' (as on line 1), found {n}",
                    self.delim as char
                ));
            }
        }
        let f = |i: usize| &line[self.fields[i].0..self.fields[i].1];
        let id_field = f(self.cols.id);
        let Some(id) = parse_id(id_field, self.opts.id_is_num) else {
            return Err(format!(
                "column {}: expected an object id ({}), found '{}'",
                self.cols.id + 1,
                if self.opts.id_is_num {
                    "unsigned integer, decimal or 0x hex; set id_is_num = false for string ids"
                } else {
                    "non-empty string"
                },
                show(id_field)
            ));
        };
        let time = match self.cols.time {
            Some(c) => {
                parse_decimal_scaled(f(c), self.opts.time_unit.scale()).ok_or_else(|| {
                    format!(
                        "column {}: expected a timestamp (non-negative decimal), found '{}'",
                        c + 1,
                        show(f(c))
                    )
                })?
            }
            None => self.seq,
        };
        let size = match self.cols.size {
            Some(c) => {
                let s = parse_u64(f(c)).ok_or_else(|| {
                    format!(
                        "column {}: expected a size in bytes (integer > 0), found '{}'",
                        c + 1,
                        show(f(c))
                    )
                })?;
                if s == 0 {
                    if self.opts.skip_zero_size {
                        return Ok(Step::Skip);
                    }
                    return Err(format!(
                        "column {}: expected a size > 0, found 0 (set skip_zero_size = true to skip such requests as libCacheSim does)",
                        c + 1
                    ));
                }
                if s > u32::MAX as u64 {
                    return Err(format!(
                        "column {}: size {s} is over 4 GiB - 1, the largest object size tierlab (like oracleGeneral) holds",
                        c + 1
                    ));
                }
                Some(s)
            }
            None => None,
        };
        let op = match self.cols.op {
            Some(c) => parse_op(f(c)).ok_or_else(|| {
                format!(
                    "column {}: expected an op ({OP_NAMES}), found '{}'",
                    c + 1,
                    show(f(c))
                )
            })?,
            None => Op::Read,
        };
        let (page, npages) = match self.opts.addressing {
            Addressing::Object => (id, 1),
            Addressing::Block => {
                let off = to_bytes(id, self.opts.block_size, "block")?;
                byte_span(
                    off,
                    size.unwrap_or(self.opts.block_size),
                    self.opts.page_size,
                )?
            }
        };
        self.seq += 1;
        Ok(Step::Push(Access::file(
            time,
            page,
            npages,
            op,
            0,
            size.unwrap_or(0) as u32,
        )))
    }
}

impl TraceReader for CsvReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        if let Some(first) = self.pending.take() {
            match self.parser.line(&first) {
                Ok(Step::Push(a)) => {
                    out.push(Record::Access(a));
                    self.state.records += 1;
                }
                Ok(_) => {}
                Err(m) => {
                    return Err(Error::input(
                        self.lines.name(),
                        crate::error::Location::Line(1),
                        m,
                    ))
                }
            }
        }
        let parser = &mut self.parser;
        read_lines(
            &mut self.lines,
            &mut self.state,
            "csv lines",
            out,
            max,
            |l| parser.line(l),
        )
    }

    fn page_size(&self) -> u32 {
        self.parser.opts.page_size
    }

    fn format(&self) -> &'static str {
        "csv"
    }
}
