//! libCacheSim oracleGeneral binary traces: 24-byte little-endian records
//! `<u32 time, u64 obj_id, u32 obj_size, i64 next_access_vtime>` with `time`
//! in seconds. `next_access_vtime` (the index of the object's next request,
//! -1 if none) is not used: tierlab computes future knowledge itself.
//!
//! Options: `addressing` (`"object"`, the default: one page per request keyed
//! by obj_id, libCacheSim's unit-object-size counting, which the agreement
//! tests check miss for miss; `"block"`: obj_id is a block number of
//! `block_size` bytes, default 512, and obj_size a byte length, split into
//! pages of `page_size`, default 4096), `skip_zero_size` (`false`: a zero
//! obj_size is an error; `true` skips such requests as libCacheSim does by
//! default). Every request is a File read (the format has no op).

use super::common::{byte_span, check_page_size, empty_binary, to_bytes, Addressing};
use crate::error::{Error, Result};
use crate::trace::input::Bytes;
use crate::trace::{Access, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

/// Bytes per oracleGeneral record.
pub const RECORD: usize = 24;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OracleOptions {
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
    pub skip_zero_size: bool,
}

impl Default for OracleOptions {
    fn default() -> Self {
        OracleOptions {
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
            skip_zero_size: false,
        }
    }
}

pub struct OracleReader {
    bytes: Bytes,
    opts: OracleOptions,
    records: u64,
}

impl OracleReader {
    pub fn open(path: &Path, opts: OracleOptions) -> Result<Self> {
        check_page_size("oracle", opts.page_size)?;
        if opts.block_size == 0 {
            return Err(Error::config(
                "options of trace format 'oracle': block_size must be > 0",
            ));
        }
        Ok(OracleReader {
            bytes: Bytes::open(path)?,
            opts,
            records: 0,
        })
    }
}

impl TraceReader for OracleReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut buf = [0u8; RECORD];
        let mut n = 0;
        while n < max {
            let at = self.bytes.offset();
            if !self
                .bytes
                .read_record(&mut buf, "oracleGeneral record (24 bytes)")?
            {
                if self.records == 0 {
                    return Err(empty_binary(&self.bytes, "24-byte oracleGeneral records"));
                }
                return Ok(false);
            }
            self.records += 1;
            let time = u32::from_le_bytes(buf[0..4].try_into().unwrap());
            let id = u64::from_le_bytes(buf[4..12].try_into().unwrap());
            let size = u32::from_le_bytes(buf[12..16].try_into().unwrap());
            if size == 0 {
                if self.opts.skip_zero_size {
                    continue;
                }
                return Err(self.bytes.error_at(
                    at,
                    "expected obj_size > 0, found 0 (set skip_zero_size = true to skip such requests as libCacheSim does)",
                ));
            }
            let (page, npages) = match self.opts.addressing {
                Addressing::Object => (id, 1),
                Addressing::Block => to_bytes(id, self.opts.block_size, "obj_id")
                    .and_then(|off| byte_span(off, size as u64, self.opts.page_size))
                    .map_err(|m| self.bytes.error_at(at, m))?,
            };
            out.push(Record::Access(Access::file(
                time as u64 * 1_000_000_000,
                page,
                npages,
                Op::Read,
                0,
                size,
            )));
            n += 1;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.opts.page_size
    }

    fn format(&self) -> &'static str {
        "oracle"
    }
}
