//! tierlab's native compact trace format (`.tlt`), and `convert`, which streams
//! any readable trace into it.
//!
//! Replaying a text trace spends most of its time parsing; a sweep replays the
//! same trace many times. The native format stores the record model
//! (`trace::Record`) column by column in independently compressed,
//! checksummed blocks, so it is small, fast to decode, and corruption is caught
//! before a single record of a damaged block reaches a policy.
//!
//! # Layout (version 1; all integers little-endian)
//!
//! ```text
//! header   (24 B)  magic "TLTRACE\0" | version u16 | flags u16 (0) | page_size u32
//!                  | records_per_block u32 (the writer's target) | crc32 of bytes 0..20
//! block*           block header (32 B) + zstd frame of the block's columns
//! trailer          "TLTR" | body_len u32 | crc32(body) u32 | body
//! footer   (16 B)  trailer offset u64 | "TLFOOTER"
//! ```
//!
//! A block header is `"TLBK" | n_records u32 | n_events u32 | raw_len u32 |
//! comp_len u32 | first_record u64 | crc32 u32`, the checksum covering the 28
//! header bytes before it and the `comp_len` compressed bytes after it. The
//! decompressed payload (`raw_len` bytes) is eight column lengths (u32 each)
//! followed by the columns, with `a = n_records - n_events` accesses:
//!
//! | column  | content |
//! |---------|---------|
//! | tags    | `ceil(n/8)` bytes, one bit per record, set = event (record-tag column) |
//! | time    | `n` zigzag varints: delta from the previous record's time (0 before the first) |
//! | page    | `a` zigzag varints: delta from the previous access's page |
//! | opkind  | `ceil(a/4)` bytes, 2 bits per access: bit 0 = Write, bit 1 = Anon |
//! | app     | `a` varints |
//! | npages  | `a` varints |
//! | evkind  | `e` bytes, the `EventKind` discriminant |
//! | evapp   | `e` varints |
//!
//! Every block decodes on its own (deltas restart at 0). The trailer body holds
//! the totals (blocks, records, events) and the app-name table, written last
//! because a streaming writer learns app names as it goes. Readers check the
//! header, the footer and the trailer when opening, and every block's header
//! fields, checksum, decompressed size and column lengths when reading it; any
//! mismatch is an [`Error::Input`] naming the file, the block index and its
//! byte offset.

mod codec;
mod reader;
mod writer;

pub use reader::{NativeOptions, NativeReader};
pub use writer::NativeWriter;

use crate::error::{Error, Location, Result};
use crate::trace::columns::{RecordColumns, FLAG_REQ_START};
use crate::trace::{self, Event, EventKind, Record, TraceReader, TraceSpec, MAX_REQUEST_PAGES};
use serde::Deserialize;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// First bytes of every native trace.
pub const MAGIC: [u8; 8] = *b"TLTRACE\0";
/// The format version this code writes and reads.
pub const VERSION: u16 = 1;
/// File suffix used by `tierlab convert` and recognised by `trace::open`.
pub const SUFFIX: &str = ".tlt";

pub(super) const HEADER_LEN: u64 = 24;
pub(super) const BLOCK_HEADER_LEN: usize = 32;
pub(super) const BLOCK_MAGIC: [u8; 4] = *b"TLBK";
pub(super) const TRAILER_MAGIC: [u8; 4] = *b"TLTR";
pub(super) const FOOTER_MAGIC: [u8; 8] = *b"TLFOOTER";
pub(super) const FOOTER_LEN: u64 = 16;
pub(super) const N_COLUMNS: usize = 8;
/// Largest block a reader accepts, in records.
pub const MAX_BLOCK_RECORDS: u32 = 1 << 22;
/// Worst case bytes per record in a payload (time + page varints of 10 bytes,
/// app and npages of 5, the tag bit and the op/kind bits), plus the column table.
pub(super) const MAX_BYTES_PER_RECORD: u64 = 32;

/// Writer settings.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// Records per block: larger blocks compress better, smaller ones bound the
    /// reader's memory (about 40 bytes per record while a block is decoded).
    pub records_per_block: u32,
    /// zstd level (1-22).
    pub level: i32,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            records_per_block: 1 << 16,
            level: 9,
        }
    }
}

/// Totals of a finished native trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NativeTotals {
    pub blocks: u64,
    pub records: u64,
    pub events: u64,
    /// Bytes of the whole file.
    pub bytes: u64,
}

/// Whether `head` (the first bytes of a file) is a native trace.
pub fn is_native(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// Progress of a conversion, reported after each batch.
#[derive(Debug, Clone, Copy)]
pub struct ConvertProgress {
    pub records: u64,
}

/// What `convert` did.
#[derive(Debug, Clone)]
pub struct ConvertStats {
    pub format_in: String,
    pub records: u64,
    pub accesses: u64,
    pub events: u64,
    /// Pages referenced (sum of `npages`).
    pub page_refs: u64,
    pub blocks: u64,
    /// Size of the input on disk (0 for generated traces).
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub seconds: f64,
}

/// Streams the trace `spec` describes into a native trace at `out`. The file
/// is written under a temporary name next to `out` and renamed when complete,
/// so an interrupted conversion never leaves a partial `out` behind.
pub fn convert(
    spec: &TraceSpec,
    out: &Path,
    progress: &mut dyn FnMut(&ConvertProgress) -> Result<()>,
) -> Result<ConvertStats> {
    convert_with(spec, out, WriterOptions::default(), progress)
}

pub fn convert_with(
    spec: &TraceSpec,
    out: &Path,
    opts: WriterOptions,
    progress: &mut dyn FnMut(&ConvertProgress) -> Result<()>,
) -> Result<ConvertStats> {
    let start = Instant::now();
    let mut reader = trace::open(spec)?;
    let mut tmp: PathBuf = out.to_path_buf();
    let mut tmp_name = out
        .file_name()
        .map(|s| s.to_os_string())
        .unwrap_or_default();
    tmp_name.push(".partial");
    tmp.set_file_name(tmp_name);
    let result = (|| {
        let mut w = NativeWriter::create_with(&tmp, reader.page_size(), opts)?;
        let mut batch = Vec::with_capacity(1 << 16);
        let (mut accesses, mut events, mut page_refs) = (0u64, 0u64, 0u64);
        let mut records = 0u64;
        loop {
            batch.clear();
            let more = reader.read_batch(&mut batch, 1 << 16)?;
            for r in &batch {
                match r {
                    Record::Access(a) => {
                        accesses += 1;
                        page_refs += a.npages as u64;
                    }
                    Record::Event(_) => events += 1,
                }
            }
            w.push_all(&batch)?;
            records += batch.len() as u64;
            progress(&ConvertProgress { records })?;
            if !more {
                break;
            }
        }
        let (_, totals) = w.finish(&reader.app_names())?;
        Ok(ConvertStats {
            format_in: reader.format().to_string(),
            records,
            accesses,
            events,
            page_refs,
            blocks: totals.blocks,
            bytes_in: std::fs::metadata(&spec.path).map(|m| m.len()).unwrap_or(0),
            bytes_out: totals.bytes,
            seconds: 0.0,
        })
    })();
    match result {
        Ok(mut stats) => {
            std::fs::rename(&tmp, out).map_err(|e| Error::io(out, e))?;
            stats.seconds = start.elapsed().as_secs_f64();
            Ok(stats)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
