//! VMware vscsi traces (the CloudPhysics traces, e.g. `cloudPhysicsIO.vscsi`),
//! as libCacheSim reads them (`traceReader/customizedReader/vscsi.h`). Two
//! little-endian record layouts:
//!
//! - version 1, 32 bytes: `u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver,
//!   u64 lbn, u64 ts`;
//! - version 2, 40 bytes: `u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG,
//!   u64 lbn, u64 ts, u64 rt`;
//!
//! where `ver >> 8` is the version, `len` the request length in bytes, `lbn`
//! the logical block (512-byte sector) and `ts` the time in microseconds. The
//! version is recognised from the first record (version 2 is tried first, as
//! libCacheSim does); every later record must carry the same version, so a
//! corrupt or misaligned record is reported, not replayed.
//!
//! Ops follow libCacheSim: SCSI commands 0x28, 0x08, 0x88, 0xa8, 0x2d are
//! reads and 0x2a, 0x3f, 0x8a, 0x8e, 0x9a, 0x9c, 0xaa, 0xae writes; libCacheSim
//! still replays other commands (as an invalid op), and so does tierlab, as
//! reads. Kind: File.
//!
//! Options: `addressing` (`"object"`, the default: one page per request keyed
//! by `lbn`, libCacheSim's unit-object-size counting; `"block"`: `lbn` counts
//! `block_size`-byte blocks, default 512, and the request covers every page of
//! `page_size` bytes, default 4096, that its `len` bytes touch),
//! `skip_zero_size` (`false`: `len = 0` is an error; `true` skips such
//! requests as libCacheSim does by default).

use super::common::{byte_span, check_page_size, empty_binary, to_bytes, Addressing};
use crate::error::{Error, Result};
use crate::trace::input::Bytes;
use crate::trace::{Access, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VscsiOptions {
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
    pub skip_zero_size: bool,
}

impl Default for VscsiOptions {
    fn default() -> Self {
        VscsiOptions {
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
            skip_zero_size: false,
        }
    }
}

pub struct VscsiReader {
    bytes: Bytes,
    opts: VscsiOptions,
    /// 1 or 2 once the first record was read.
    version: u8,
    records: u64,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
}

fn scsi_op(cmd: u16) -> Op {
    match cmd {
        0x2a | 0x3f | 0x8a | 0x8e | 0x9a | 0x9c | 0xaa | 0xae => Op::Write,
        _ => Op::Read,
    }
}

impl VscsiReader {
    pub fn open(path: &Path, opts: VscsiOptions) -> Result<Self> {
        check_page_size("vscsi", opts.page_size)?;
        if opts.block_size == 0 {
            return Err(Error::config(
                "options of trace format 'vscsi': block_size must be > 0",
            ));
        }
        Ok(VscsiReader {
            bytes: Bytes::open(path)?,
            opts,
            version: 0,
            records: 0,
        })
    }

    /// The record layout version (1 or 2), known after the first batch.
    pub fn version(&self) -> u8 {
        self.version
    }
}

impl TraceReader for VscsiReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut buf = [0u8; 40];
        let mut n = 0;
        while n < max {
            let at = self.bytes.offset();
            let size = if self.version == 2 { 40 } else { 32 };
            if !self.bytes.read_record(&mut buf[..size], "vscsi record")? {
                if self.records == 0 {
                    return Err(empty_binary(&self.bytes, "vscsi records"));
                }
                return Ok(false);
            }
            if self.version == 0 {
                self.version = if u16_at(&buf, 2) >> 8 == 2 {
                    2
                } else if u16_at(&buf, 14) >> 8 == 1 {
                    1
                } else {
                    return Err(self.bytes.error_at(
                        at,
                        format!(
                            "not a vscsi trace: expected version 2 in bytes 2..4 or version 1 in bytes 14..16 (value >> 8), found {:#06x} and {:#06x}",
                            u16_at(&buf, 2),
                            u16_at(&buf, 14)
                        ),
                    ));
                };
                if self.version == 2
                    && !matches!(
                        self.bytes.read_record(&mut buf[32..40], "vscsi record"),
                        Ok(true)
                    )
                {
                    return Err(self
                        .bytes
                        .error_at(at, "truncated vscsi version 2 record: expected 40 bytes"));
                }
            }
            let (cmd, len, lbn, ts) = if self.version == 2 {
                if u16_at(&buf, 2) >> 8 != 2 {
                    return Err(self.bytes.error_at(
                        at,
                        format!(
                            "corrupt vscsi record: expected version 2 like the first record, found ver field {:#06x}",
                            u16_at(&buf, 2)
                        ),
                    ));
                }
                (
                    u16_at(&buf, 0),
                    u32_at(&buf, 8),
                    u64_at(&buf, 16),
                    u64_at(&buf, 24),
                )
            } else {
                if u16_at(&buf, 14) >> 8 != 1 {
                    return Err(self.bytes.error_at(
                        at,
                        format!(
                            "corrupt vscsi record: expected version 1 like the first record, found ver field {:#06x}",
                            u16_at(&buf, 14)
                        ),
                    ));
                }
                (
                    u16_at(&buf, 12),
                    u32_at(&buf, 4),
                    u64_at(&buf, 16),
                    u64_at(&buf, 24),
                )
            };
            self.records += 1;
            if len == 0 {
                if self.opts.skip_zero_size {
                    continue;
                }
                return Err(self.bytes.error_at(
                    at,
                    "expected len > 0, found 0 (set skip_zero_size = true to skip such requests as libCacheSim does)",
                ));
            }
            let Some(time) = ts.checked_mul(1000) else {
                return Err(self.bytes.error_at(
                    at,
                    format!("timestamp {ts} us overflows 64-bit nanoseconds"),
                ));
            };
            let (page, npages) = match self.opts.addressing {
                Addressing::Object => (lbn, 1),
                Addressing::Block => to_bytes(lbn, self.opts.block_size, "lbn")
                    .and_then(|off| byte_span(off, len as u64, self.opts.page_size))
                    .map_err(|m| self.bytes.error_at(at, m))?,
            };
            out.push(Record::Access(Access::file(
                time,
                page,
                npages,
                scsi_op(cmd),
                0,
                len,
            )));
            n += 1;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.opts.page_size
    }

    fn format(&self) -> &'static str {
        "vscsi"
    }
}
