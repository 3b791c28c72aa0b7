//! libCacheSim plain-text traces (`-t txt`, e.g. `cloudPhysicsIO.txt`): one
//! object id per line, nothing else. Like LIRS traces, but under libCacheSim's
//! rules: every non-blank line is a request (no `*` end marker), ids may be
//! `0x` hex, and `id_is_num = false` reads string ids (hashed with a stable
//! 64-bit FNV-1a).
//!
//! Options: `addressing` (`"object"`, the default: one page per request keyed
//! by the id, libCacheSim's unit-object-size counting; `"block"`: the id is a
//! block number of `block_size` bytes, default 512, and the request covers the
//! page(s) of `page_size` bytes, default 4096, holding that block).
//! Every request is a File read (the format has no op); `time` is the ordinal.

use super::common::{
    byte_span, check_page_size, hash_id, read_lines, to_bytes, Addressing, LineState, Step,
};
use crate::error::{Error, Result};
use crate::trace::input::{parse_hex, parse_u64, show, trim, Lines};
use crate::trace::{Access, Kind, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TxtOptions {
    pub id_is_num: bool,
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
}

impl Default for TxtOptions {
    fn default() -> Self {
        TxtOptions {
            id_is_num: true,
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
        }
    }
}

pub struct TxtReader {
    lines: Lines,
    opts: TxtOptions,
    seq: u64,
    state: LineState,
}

impl TxtReader {
    pub fn open(path: &Path, opts: TxtOptions) -> Result<Self> {
        check_page_size("txt", opts.page_size)?;
        if opts.block_size == 0 {
            return Err(Error::config(
                "options of trace format 'txt': block_size must be > 0",
            ));
        }
        Ok(TxtReader {
            lines: Lines::open(path)?,
            opts,
            seq: 0,
            state: LineState::default(),
        })
    }
}

impl TraceReader for TxtReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let (opts, seq) = (&self.opts, &mut self.seq);
        read_lines(
            &mut self.lines,
            &mut self.state,
            "one object id per line",
            out,
            max,
            |line| {
                let f = trim(line);
                if f.is_empty() {
                    return Ok(Step::Skip);
                }
                let id = if !opts.id_is_num {
                    Some(hash_id(f))
                } else if f.starts_with(b"0x") || f.starts_with(b"0X") {
                    parse_hex(f)
                } else {
                    parse_u64(f)
                };
                let Some(id) = id else {
                    return Err(format!(
                    "expected an object id (unsigned integer; set id_is_num = false for string ids), found '{}'",
                    show(f)
                ));
                };
                let (page, npages) = match opts.addressing {
                    Addressing::Object => (id, 1),
                    Addressing::Block => byte_span(
                        to_bytes(id, opts.block_size, "block")?,
                        opts.block_size,
                        opts.page_size,
                    )?,
                };
                let a = Access {
                    npages,
                    size: 0,
                    ..Access::page(*seq, page, Op::Read, Kind::File)
                };
                *seq += 1;
                Ok(Step::Push(a))
            },
        )
    }

    fn page_size(&self) -> u32 {
        self.opts.page_size
    }

    fn format(&self) -> &'static str {
        "txt"
    }
}
