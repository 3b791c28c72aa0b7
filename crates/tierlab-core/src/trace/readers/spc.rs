//! SPC/UMass block traces (the UMass Trace Repository's OLTP `Financial1/2`
//! and `WebSearch1-3`, in the Storage Performance Council's trace format):
//! csv lines `ASU,LBA,Size,Opcode,Timestamp[,optional fields]`. `ASU` is the
//! application storage unit (a volume), `LBA` a 512-byte sector number, `Size`
//! the length in bytes, `Opcode` `r` or `w` (any case) and `Timestamp` seconds
//! from the start of the trace (decimal). The SPC format allows optional
//! fields after the fifth; they are ignored. Fewer than five fields is an
//! error. A first line starting `ASU,` is skipped as a header.
//!
//! A request covers every page of `page_size` bytes (option, default 4096) its
//! bytes touch. ASUs are separate volumes whose LBAs overlap, so the ASU number
//! goes into the high bits of the page number: `page = asu << 44 | lba_page`
//! (ASU < 2^20, page < 2^44, i.e. 64 PiB per ASU at 4 KiB pages); for ASU 0,
//! which is every request of WebSearch, pages are plain `LBA * 512 /
//! page_size`. Kind: File (block trace); `time` in ns.
//!
//! There is no SPC file under ../shared/traces: the tests use small fixtures
//! written from this description.

use super::common::{
    byte_span, parse_seconds_ns, to_bytes, CsvBlockFormat, CsvBlockLines, LineReader,
    PageSizeOptions, Step, SECTOR,
};
use crate::error::Result;
use crate::trace::input::{field_op, field_u64, parse_u64, show, trim};
use crate::trace::Access;

/// Bits of the page number below the ASU.
pub const ASU_SHIFT: u32 = 44;

pub type SpcOptions = PageSizeOptions;

/// The SPC line rule; [`SpcReader`] reads it.
pub struct Spc;

pub type SpcReader = LineReader<CsvBlockLines<Spc>>;

impl CsvBlockFormat for Spc {
    const NAME: &'static str = "spc";
    const EXPECTED: &'static str = "SPC csv lines 'ASU,LBA,Size,Opcode,Timestamp'";
    const HEADER: &'static [u8] = b"ASU,";
    fn parse(line: &[u8], page_size: u32, fields: &[(usize, usize)]) -> Result<Step, String> {
        if fields.len() < 5 {
            return Err(format!(
                "expected 5 fields 'ASU,LBA,Size,Opcode,Timestamp', found {}",
                fields.len()
            ));
        }
        let f = |i: usize| &line[fields[i].0..fields[i].1];
        let asu = parse_u64(f(0))
            .filter(|&a| a < 1 << (64 - ASU_SHIFT))
            .ok_or_else(|| {
                format!(
                    "ASU: expected an unsigned integer below 2^{}, found '{}'",
                    64 - ASU_SHIFT,
                    show(f(0))
                )
            })?;
        let lba = field_u64(f(1), "LBA", "a sector number (unsigned integer)")?;
        let size = field_u64(f(2), "Size", "a size in bytes (integer > 0)")?;
        let op = field_op(trim(f(3)), b'r', b'w', "Opcode: expected 'r' or 'w'")?;
        let time = parse_seconds_ns(f(4)).ok_or_else(|| {
            format!(
                "Timestamp: expected seconds (non-negative decimal), found '{}'",
                show(f(4))
            )
        })?;
        let off = to_bytes(lba, SECTOR, "LBA")?;
        let (page, npages) = byte_span(off, size, page_size)?;
        if (page + npages as u64 - 1) >> ASU_SHIFT != 0 {
            return Err(format!(
                "LBA {lba}: page number beyond 2^{ASU_SHIFT}, the per-ASU page space"
            ));
        }
        Ok(Step::Push(Access::file(
            time,
            asu << ASU_SHIFT | page,
            npages,
            op,
            0,
            0,
        )))
    }
}
