//! libCacheSim's own trace format, `.lcs` (`traceReader/customizedReader/lcs.{h,c}`), every
//! version libCacheSim writes (`tracePrint`/`traceConv`, pip `libcachesim`'s
//! `Util.convert_to_lcs(..., lcs_ver=1..8)`): an 8192-byte header (`u64` start magic
//! `0x123456789abcdef0`, `u64` version, 8000 bytes of trace statistics, reserved words, `u64` end
//! magic), then fixed-size little-endian records:
//!
//! | version | record | layout (Python struct) |
//! | --- | --- | --- |
//! | 1 | 24 B: time, id, size, next access (= oracleGeneral) | `<IQIq` |
//! | 2 | 28 B: time, id, size, op (low 8 bits) and tenant (high 24), next | `<IQIB3xq` |
//! | 3 | 36 B: time, id, 64-bit size, op and tenant, ttl, next | `<IQqB3xIq` |
//! | 4-8 | version 3 and 1, 2, 4, 8 or 16 32-bit features | `<IQqB3xIq` + `NI` |
//!
//! Records are read by the `binary` reader with these layouts: the op is libCacheSim's op code
//! (see `binary`), time is in seconds, tenant, ttl, features and the next-access field are not
//! used. Options: `addressing`, `block_size`, `page_size`, `skip_zero_size` as for `oracle`
//! (libCacheSim skips zero-size records by default; here they are an error unless
//! `skip_zero_size = true`). A wrong magic, an unknown version or data that is not a whole number
//! of records is an error naming the file and the value found.
//!
//! Cost: as `binary`, plus one 8 KiB header read.

use super::binary::{BinaryOptions, BinaryReader, Fields, Layout};
use super::common::Addressing;
use crate::error::{Error, Location, Result};
use crate::trace::input::Bytes;
use serde::Deserialize;
use std::path::Path;

/// Bytes of the header.
pub const HEADER: usize = 8192;
/// The start and end magic, as the first 8 bytes of the file read little-endian.
pub const MAGIC: u64 = 0x1234_5678_9abc_def0;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LcsOptions {
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
    pub skip_zero_size: bool,
}

impl Default for LcsOptions {
    fn default() -> Self {
        LcsOptions {
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
            skip_zero_size: false,
        }
    }
}

/// The record layout of lcs `version` and its (time, id, size, op) field numbers (from 1).
pub fn version_layout(version: u64) -> Option<(String, usize, usize, usize, usize)> {
    Some(match version {
        1 => ("<IQIq".into(), 1, 2, 3, 0),
        2 => ("<IQIB3xq".into(), 1, 2, 3, 4),
        3 => ("<IQqB3xIq".into(), 1, 2, 3, 4),
        4..=8 => (format!("<IQqB3xIq{}I", 1u32 << (version - 4)), 1, 2, 3, 4),
        _ => return None,
    })
}

/// Whether `head` (a file's first bytes) starts with the lcs magic.
pub fn is_lcs(head: &[u8]) -> bool {
    head.len() >= 8 && u64::from_le_bytes(head[..8].try_into().unwrap()) == MAGIC
}

pub struct LcsReader;

impl LcsReader {
    #[allow(clippy::new_ret_no_self)]
    pub fn open(path: &Path, opts: LcsOptions) -> Result<BinaryReader> {
        let mut head = vec![0u8; HEADER];
        let mut bytes = Bytes::open(path)?;
        bytes.read_header(&mut head, "lcs header (8192 bytes)")?;
        let word = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().unwrap());
        let bad = |msg: String| Error::input(bytes.name(), Location::Whole, msg);
        if word(0) != MAGIC || word(HEADER - 8) != MAGIC {
            return Err(bad(format!(
                "not an lcs trace: start/end magic {:#x}/{:#x}, expected {MAGIC:#x}",
                word(0),
                word(HEADER - 8)
            )));
        }
        let version = word(8);
        let (layout, time, id, size, op) = version_layout(version)
            .ok_or_else(|| bad(format!("lcs version {version}: expected 1 to 8")))?;
        let bopts = BinaryOptions {
            layout: Some(layout.clone()),
            id,
            size,
            op,
            time,
            addressing: opts.addressing,
            block_size: opts.block_size,
            page_size: opts.page_size,
            skip_zero_size: opts.skip_zero_size,
            ..BinaryOptions::default()
        };
        let layout = Layout::parse(&layout).expect("lcs layouts parse");
        let fields = Fields::new("lcs", layout, &bopts)?;
        BinaryReader::with_fields(path, fields, bopts, "lcs", HEADER as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sizes_are_libcachesims() {
        // lcs.h's static asserts: 24, 28, 36, 40, 44, 52, 68, 100 bytes.
        let sizes: Vec<usize> = (1..=8)
            .map(|v| Layout::parse(&version_layout(v).unwrap().0).unwrap().record)
            .collect();
        assert_eq!(sizes, [24, 28, 36, 40, 44, 52, 68, 100]);
        assert!(version_layout(0).is_none() && version_layout(9).is_none());
    }
}
