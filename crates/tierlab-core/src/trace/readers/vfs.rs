//! VFS-level buffer traces `r|w N` (e.g. `WebOfficeDesktop-3mins.txt.lzma`, the
//! "before-cache" traces of the BS-CLOCK paper, §IV: the reads and writes an
//! Android phone's buffer cache sees, as `(op, page number)` pairs). Lines
//! starting with `#` are comments (the shipped traces end with a `#` summary).
//!
//! Unit of `N`: option `block_size`, default 4096, so each line is one 4 KiB
//! block. The shipped trace shows why: 57,576 of its 90,941 consecutive
//! deltas are +1 and only 45 are +8, which is how a stream of 4 KiB page reads
//! looks in 4 KiB block numbers and not in 512-byte sectors (a sequential run
//! of pages would step by 8), and its numbers are not multiples of 8 (the
//! 4 KiB-aligned sectors of the mobile-block traces all are). For a trace
//! whose numbers are 512-byte sectors,
//! set `block_size = 512`. The request covers the page(s) of `page_size`
//! bytes (default 4096) holding that block.
//!
//! `N = -1` marks an access to a page without a disk block (24,507 lines of the
//! shipped trace: reads and writes of pages not backed by the traced device,
//! e.g. not yet allocated). A block-keyed cache cannot place them, so by
//! default they are skipped (`unmapped = "skip"`); `unmapped = "error"`
//! rejects them. Any other negative number is an error.
//!
//! Kind: File; `time` is the line's ordinal among requests.

use super::common::{byte_span, check_page_size, read_lines, to_bytes, LineState, Step};
use crate::error::{Error, Result};
use crate::trace::input::{field_op, parse_u64, show, trim, Lines};
use crate::trace::{Access, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unmapped {
    Skip,
    Error,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VfsOptions {
    pub block_size: u64,
    pub page_size: u32,
    pub unmapped: Unmapped,
}

impl Default for VfsOptions {
    fn default() -> Self {
        VfsOptions {
            block_size: 4096,
            page_size: 4096,
            unmapped: Unmapped::Skip,
        }
    }
}

pub struct VfsReader {
    lines: Lines,
    opts: VfsOptions,
    seq: u64,
    skipped: u64,
    state: LineState,
}

impl VfsReader {
    pub fn open(path: &Path, opts: VfsOptions) -> Result<Self> {
        check_page_size("vfs", opts.page_size)?;
        if opts.block_size == 0 || opts.block_size > 1 << 30 {
            return Err(Error::config(
                "options of trace format 'vfs': block_size must be between 1 and 1073741824 bytes",
            ));
        }
        Ok(VfsReader {
            lines: Lines::open(path)?,
            opts,
            seq: 0,
            skipped: 0,
            state: LineState::default(),
        })
    }

    /// Lines with `N = -1` skipped so far.
    pub fn unmapped_skipped(&self) -> u64 {
        self.skipped
    }
}

impl TraceReader for VfsReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let (opts, seq, skipped) = (&self.opts, &mut self.seq, &mut self.skipped);
        read_lines(
            &mut self.lines,
            &mut self.state,
            "lines 'r|w BLOCK'",
            out,
            max,
            |line| {
                let t = trim(line);
                if t.is_empty() || t[0] == b'#' {
                    return Ok(Step::Skip);
                }
                let mut fields = t
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty());
                let (Some(op), Some(n), None) = (fields.next(), fields.next(), fields.next())
                else {
                    return Err("expected 2 fields 'r|w BLOCK'".into());
                };
                let op = field_op(op, b'r', b'w', "expected 'r' or 'w'")?;
                if n == b"-1" {
                    if opts.unmapped == Unmapped::Skip {
                        *skipped += 1;
                        return Ok(Step::Skip);
                    }
                    return Err("block -1 (page without a disk block); set unmapped = \"skip\" to skip these lines".into());
                }
                let Some(block) = parse_u64(n) else {
                    return Err(format!(
                        "expected a block number (unsigned integer, or -1), found '{}'",
                        show(n)
                    ));
                };
                let off = to_bytes(block, opts.block_size, "block")?;
                let (page, npages) = byte_span(off, opts.block_size, opts.page_size)?;
                let a = Access::file(*seq, page, npages, op, 0, 0);
                *seq += 1;
                Ok(Step::Push(a))
            },
        )
    }

    fn page_size(&self) -> u32 {
        self.opts.page_size
    }

    fn format(&self) -> &'static str {
        "vfs"
    }
}
