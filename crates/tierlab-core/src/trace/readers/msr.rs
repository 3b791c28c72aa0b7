//! MSR Cambridge block traces (Narayanan et al., FAST 2008; SNIA IOTTA):
//! csv lines `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//! `Timestamp` is a Windows filetime (100 ns ticks since 1601-01-01), `Type`
//! is `Read` or `Write`, `Offset` and `Size` are in bytes. A request covers
//! every page of `page_size` bytes (option, default 4096) that its bytes touch
//! (`page` = first, `npages` = count). `time` is the filetime in ns
//! (ticks x 100). Kind: File (block trace). Hostname, disk number and response
//! time are checked for presence but not used: one file is one volume (the
//! published traces are split per volume, e.g. `hm_0.csv`), and requests of
//! different disks in one file would share a page space. No header; a first
//! line starting with `Timestamp` is skipped as one.
//!
//! There is no MSR file under ../shared/traces: the tests use small fixtures
//! written from this description.

use super::common::{byte_span, CsvBlockFormat, CsvBlockLines, LineReader, PageSizeOptions, Step};
use crate::error::Result;
use crate::trace::input::{field_u64, show, trim};
use crate::trace::{Access, Op};

pub type MsrOptions = PageSizeOptions;

/// The MSR line rule; [`MsrReader`] reads it.
pub struct Msr;

pub type MsrReader = LineReader<CsvBlockLines<Msr>>;

impl CsvBlockFormat for Msr {
    const NAME: &'static str = "msr";
    const EXPECTED: &'static str =
        "MSR csv lines 'Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime'";
    const HEADER: &'static [u8] = b"Timestamp";
    fn parse(line: &[u8], page_size: u32, fields: &[(usize, usize)]) -> Result<Step, String> {
        if fields.len() != 7 {
            return Err(format!(
                "expected 7 fields 'Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime', found {}",
                fields.len()
            ));
        }
        let f = |i: usize| &line[fields[i].0..fields[i].1];
        let ticks = field_u64(
            f(0),
            "Timestamp",
            "Windows filetime ticks (unsigned integer)",
        )?;
        let time = ticks
            .checked_mul(100)
            .ok_or_else(|| format!("Timestamp {ticks} x 100 ns overflows 64 bits"))?;
        let ty = trim(f(3));
        let op = if ty.eq_ignore_ascii_case(b"read") {
            Op::Read
        } else if ty.eq_ignore_ascii_case(b"write") {
            Op::Write
        } else {
            return Err(format!(
                "Type: expected 'Read' or 'Write', found '{}'",
                show(f(3))
            ));
        };
        let offset = field_u64(f(4), "Offset", "a byte offset (unsigned integer)")?;
        let size = field_u64(f(5), "Size", "a size in bytes (integer > 0)")?;
        let (page, npages) = byte_span(offset, size, page_size)?;
        Ok(Step::Push(Access::file(time, page, npages, op, 0, 0)))
    }
}
