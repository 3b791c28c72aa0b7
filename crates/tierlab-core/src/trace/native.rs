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

use crate::error::{Error, Location, Result};
use crate::trace::{
    self, Access, Event, EventKind, Kind, Op, Record, TraceReader, TraceSpec, MAX_REQUEST_PAGES,
};
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

const HEADER_LEN: u64 = 24;
const BLOCK_HEADER_LEN: usize = 32;
const BLOCK_MAGIC: [u8; 4] = *b"TLBK";
const TRAILER_MAGIC: [u8; 4] = *b"TLTR";
const FOOTER_MAGIC: [u8; 8] = *b"TLFOOTER";
const FOOTER_LEN: u64 = 16;
const N_COLUMNS: usize = 8;
/// Largest block a reader accepts, in records.
pub const MAX_BLOCK_RECORDS: u32 = 1 << 22;
/// Worst case bytes per record in a payload (time + page varints of 10 bytes,
/// app and npages of 5, the tag bit and the op/kind bits), plus the column table.
const MAX_BYTES_PER_RECORD: u64 = 32;

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

// ---------------------------------------------------------------------------
// varints

#[inline]
fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A cursor over one column; `None` on overrun or an over-long varint.
struct Col<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Col<'a> {
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b = *self.buf.get(self.pos)?;
        if b < 0x80 {
            self.pos += 1;
            return Some(b as u64);
        }
        self.varint_slow()
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            if shift == 63 && b > 1 {
                return None;
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }
    fn done(&self) -> bool {
        self.pos == self.buf.len()
    }
}

// ---------------------------------------------------------------------------
// writer

/// Totals of a finished native trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NativeTotals {
    pub blocks: u64,
    pub records: u64,
    pub events: u64,
    /// Bytes of the whole file.
    pub bytes: u64,
}

/// Streams records into a native trace: `create`, `push` records, `finish`
/// with the app names.
pub struct NativeWriter<W: Write> {
    w: W,
    name: String,
    opts: WriterOptions,
    offset: u64,
    pending: Vec<Record>,
    payload: Vec<u8>,
    columns: [Vec<u8>; N_COLUMNS],
    totals: NativeTotals,
}

impl NativeWriter<BufWriter<File>> {
    /// Creates (or truncates) `path` with the default options.
    pub fn create(path: &Path, page_size: u32) -> Result<Self> {
        Self::create_with(path, page_size, WriterOptions::default())
    }

    pub fn create_with(path: &Path, page_size: u32, opts: WriterOptions) -> Result<Self> {
        let f = File::create(path).map_err(|e| Error::io(path, e))?;
        NativeWriter::new(
            BufWriter::with_capacity(1 << 20, f),
            &path.display().to_string(),
            page_size,
            opts,
        )
    }
}

impl<W: Write> NativeWriter<W> {
    /// Starts a native trace on any writer; `name` is used in error messages.
    pub fn new(w: W, name: &str, page_size: u32, opts: WriterOptions) -> Result<Self> {
        if opts.records_per_block == 0 || opts.records_per_block > MAX_BLOCK_RECORDS {
            return Err(Error::config(format!(
                "records_per_block must be in 1..={MAX_BLOCK_RECORDS}, got {}",
                opts.records_per_block
            )));
        }
        if !(1..=22).contains(&opts.level) {
            return Err(Error::config(format!(
                "zstd level must be in 1..=22, got {}",
                opts.level
            )));
        }
        let mut wr = NativeWriter {
            w,
            name: name.to_string(),
            opts,
            offset: 0,
            pending: Vec::with_capacity(opts.records_per_block as usize),
            payload: Vec::new(),
            columns: Default::default(),
            totals: NativeTotals::default(),
        };
        let mut h = Vec::with_capacity(HEADER_LEN as usize);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(&page_size.to_le_bytes());
        h.extend_from_slice(&opts.records_per_block.to_le_bytes());
        let crc = crc32fast::hash(&h);
        h.extend_from_slice(&crc.to_le_bytes());
        wr.write(&h)?;
        Ok(wr)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.w
            .write_all(bytes)
            .map_err(|e| Error::io(&self.name, e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Appends one record.
    #[inline]
    pub fn push(&mut self, r: &Record) -> Result<()> {
        self.pending.push(*r);
        if self.pending.len() >= self.opts.records_per_block as usize {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Appends records.
    pub fn push_all(&mut self, rs: &[Record]) -> Result<()> {
        for r in rs {
            self.push(r)?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        for c in &mut self.columns {
            c.clear();
        }
        let [tags, time, page, opkind, app, npages, evkind, evapp] = &mut self.columns;
        tags.resize(n.div_ceil(8), 0);
        let (mut prev_t, mut prev_p) = (0u64, 0u64);
        let (mut n_acc, mut n_ev) = (0usize, 0u32);
        for (i, r) in self.pending.iter().enumerate() {
            match r {
                Record::Access(a) => {
                    put_varint(time, zigzag(a.time.wrapping_sub(prev_t) as i64));
                    prev_t = a.time;
                    put_varint(page, zigzag(a.page.wrapping_sub(prev_p) as i64));
                    prev_p = a.page;
                    if n_acc % 4 == 0 {
                        opkind.push(0);
                    }
                    let bits = (a.op as u8) | ((a.kind as u8) << 1);
                    *opkind.last_mut().expect("pushed above") |= bits << (2 * (n_acc % 4));
                    put_varint(app, a.app as u64);
                    put_varint(npages, a.npages as u64);
                    n_acc += 1;
                }
                Record::Event(e) => {
                    tags[i / 8] |= 1 << (i % 8);
                    put_varint(time, zigzag(e.time.wrapping_sub(prev_t) as i64));
                    prev_t = e.time;
                    evkind.push(e.kind as u8);
                    put_varint(evapp, e.app as u64);
                    n_ev += 1;
                }
            }
        }
        self.payload.clear();
        for c in &self.columns {
            self.payload
                .extend_from_slice(&(c.len() as u32).to_le_bytes());
        }
        for c in &self.columns {
            self.payload.extend_from_slice(c);
        }
        let comp = zstd::bulk::compress(&self.payload, self.opts.level)
            .map_err(|e| Error::io(&self.name, e))?;
        let mut h = Vec::with_capacity(BLOCK_HEADER_LEN);
        h.extend_from_slice(&BLOCK_MAGIC);
        h.extend_from_slice(&(n as u32).to_le_bytes());
        h.extend_from_slice(&n_ev.to_le_bytes());
        h.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        h.extend_from_slice(&(comp.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.totals.records.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h);
        crc.update(&comp);
        h.extend_from_slice(&crc.finalize().to_le_bytes());
        self.write(&h)?;
        self.write(&comp)?;
        self.totals.blocks += 1;
        self.totals.records += n as u64;
        self.totals.events += n_ev as u64;
        self.pending.clear();
        Ok(())
    }

    /// Writes the last block, the app-name table and the footer; returns the
    /// underlying writer (flushed) and the totals.
    pub fn finish(mut self, app_names: &[String]) -> Result<(W, NativeTotals)> {
        self.flush_block()?;
        let trailer_offset = self.offset;
        let mut body = Vec::new();
        body.extend_from_slice(&self.totals.blocks.to_le_bytes());
        body.extend_from_slice(&self.totals.records.to_le_bytes());
        body.extend_from_slice(&self.totals.events.to_le_bytes());
        body.extend_from_slice(&(app_names.len() as u32).to_le_bytes());
        for name in app_names {
            body.extend_from_slice(&(name.len() as u32).to_le_bytes());
            body.extend_from_slice(name.as_bytes());
        }
        let mut t = Vec::with_capacity(body.len() + 12);
        t.extend_from_slice(&TRAILER_MAGIC);
        t.extend_from_slice(&(body.len() as u32).to_le_bytes());
        t.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        t.extend_from_slice(&body);
        t.extend_from_slice(&trailer_offset.to_le_bytes());
        t.extend_from_slice(&FOOTER_MAGIC);
        self.write(&t)?;
        self.w.flush().map_err(|e| Error::io(&self.name, e))?;
        self.totals.bytes = self.offset;
        Ok((self.w, self.totals))
    }
}

// ---------------------------------------------------------------------------
// reader

/// Options of the `native` format (none: everything is in the file).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeOptions {}

/// Streams a native trace, verifying every block before handing out its records.
pub struct NativeReader {
    file: BufReader<File>,
    name: String,
    page_size: u32,
    app_names: Vec<String>,
    /// Totals from the trailer.
    totals: NativeTotals,
    trailer_offset: u64,
    /// Offset of the next block header.
    offset: u64,
    block_index: u64,
    records_read: u64,
    events_read: u64,
    decoded: Vec<Record>,
    pos: usize,
    comp: Vec<u8>,
    raw: Vec<u8>,
    dctx: zstd::bulk::Decompressor<'static>,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Whether `head` (the first bytes of a file) is a native trace.
pub fn is_native(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

impl NativeReader {
    pub fn open(path: &Path, _options: NativeOptions) -> Result<Self> {
        let name = path.display().to_string();
        let whole = |msg: String| Error::input(&name, Location::Whole, msg);
        let at = |off: u64, msg: String| Error::input(&name, Location::Offset(off), msg);
        let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut h = [0u8; HEADER_LEN as usize];
        let got = read_up_to(&mut f, &mut h).map_err(|e| Error::io(path, e))?;
        if got < 8 || !is_native(&h) {
            let c = trace::input::Compression::sniff(&h[..got]);
            return Err(if c != trace::input::Compression::None {
                whole(format!(
                    "not a native trace but a {c:?}-compressed file; native traces are \
                     compressed block by block and must be stored uncompressed"
                ))
            } else {
                at(
                    0,
                    "not a native trace: bad magic (expected \"TLTRACE\\0\")".into(),
                )
            });
        }
        if got < HEADER_LEN as usize {
            return Err(at(
                0,
                format!("truncated header: {got} of {HEADER_LEN} bytes"),
            ));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(at(
                8,
                format!(
                    "unsupported native format version {version} (this tierlab reads version {VERSION})"
                ),
            ));
        }
        let crc = le_u32(&h, 20);
        if crc32fast::hash(&h[..20]) != crc {
            return Err(at(0, "header checksum mismatch".into()));
        }
        let flags = u16::from_le_bytes([h[10], h[11]]);
        if flags != 0 {
            return Err(at(10, format!("unknown header flags {flags:#06x}")));
        }
        let page_size = le_u32(&h, 12);
        if page_size == 0 {
            return Err(at(12, "page size 0".into()));
        }

        // Footer and trailer.
        let missing_footer = |f: &mut File| -> Error {
            match find_truncated_block(f, len) {
                Some((idx, off, msg)) => at(off, format!("block {idx}: {msg}")),
                None => at(
                    len.saturating_sub(FOOTER_LEN),
                    "no footer: the file is truncated or its writer did not finish".into(),
                ),
            }
        };
        if len < HEADER_LEN + 12 + FOOTER_LEN {
            return Err(missing_footer(&mut f));
        }
        let mut foot = [0u8; FOOTER_LEN as usize];
        read_at(&mut f, len - FOOTER_LEN, &mut foot).map_err(|e| Error::io(path, e))?;
        if foot[8..] != FOOTER_MAGIC {
            return Err(missing_footer(&mut f));
        }
        let trailer_offset = le_u64(&foot, 0);
        // The offset is untrusted: compare without overflowing.
        if trailer_offset < HEADER_LEN || trailer_offset > len - FOOTER_LEN - 12 {
            return Err(at(
                len - FOOTER_LEN,
                format!("footer points to a trailer at byte {trailer_offset}, outside the file"),
            ));
        }
        let mut th = [0u8; 12];
        read_at(&mut f, trailer_offset, &mut th).map_err(|e| Error::io(path, e))?;
        let body_len = le_u32(&th, 4) as u64;
        if th[..4] != TRAILER_MAGIC || trailer_offset + 12 + body_len != len - FOOTER_LEN {
            return Err(at(trailer_offset, "bad trailer header".into()));
        }
        let mut body = vec![0u8; body_len as usize];
        read_at(&mut f, trailer_offset + 12, &mut body).map_err(|e| Error::io(path, e))?;
        if crc32fast::hash(&body) != le_u32(&th, 8) {
            return Err(at(trailer_offset, "trailer checksum mismatch".into()));
        }
        let bad_trailer = || at(trailer_offset, "malformed trailer body".into());
        if body.len() < 28 {
            return Err(bad_trailer());
        }
        let totals = NativeTotals {
            blocks: le_u64(&body, 0),
            records: le_u64(&body, 8),
            events: le_u64(&body, 16),
            bytes: len,
        };
        let n_apps = le_u32(&body, 24) as usize;
        let mut app_names = Vec::with_capacity(n_apps.min(1 << 16));
        let mut p = 28;
        for _ in 0..n_apps {
            if p + 4 > body.len() {
                return Err(bad_trailer());
            }
            let l = le_u32(&body, p) as usize;
            p += 4;
            let s = body.get(p..p + l).ok_or_else(bad_trailer)?;
            app_names.push(String::from_utf8(s.to_vec()).map_err(|_| bad_trailer())?);
            p += l;
        }
        if p != body.len() || totals.events > totals.records {
            return Err(bad_trailer());
        }
        f.seek(SeekFrom::Start(HEADER_LEN))
            .map_err(|e| Error::io(path, e))?;
        Ok(NativeReader {
            file: BufReader::with_capacity(1 << 20, f),
            name,
            page_size,
            app_names,
            totals,
            trailer_offset,
            offset: HEADER_LEN,
            block_index: 0,
            records_read: 0,
            events_read: 0,
            decoded: Vec::new(),
            pos: 0,
            comp: Vec::new(),
            raw: Vec::new(),
            dctx: zstd::bulk::Decompressor::new().map_err(|e| Error::io(path, e))?,
        })
    }

    /// Totals recorded in the trailer (known before reading any block).
    pub fn totals(&self) -> NativeTotals {
        self.totals
    }

    fn block_err(&self, off: u64, msg: impl std::fmt::Display) -> Error {
        Error::input(
            &self.name,
            Location::Offset(off),
            format!("block {}: {msg}", self.block_index),
        )
    }

    /// Reads, verifies and decodes the next block into `self.decoded`.
    /// Returns false at the trailer.
    fn next_block(&mut self) -> Result<bool> {
        let off = self.offset;
        if off == self.trailer_offset {
            if self.block_index != self.totals.blocks
                || self.records_read != self.totals.records
                || self.events_read != self.totals.events
            {
                return Err(self.block_err(
                    off,
                    format!(
                        "trailer says {} blocks, {} records, {} events but the file holds \
                         {} blocks, {} records, {} events",
                        self.totals.blocks,
                        self.totals.records,
                        self.totals.events,
                        self.block_index,
                        self.records_read,
                        self.events_read
                    ),
                ));
            }
            return Ok(false);
        }
        if off + BLOCK_HEADER_LEN as u64 > self.trailer_offset {
            return Err(self.block_err(off, "truncated block header before the trailer"));
        }
        let mut h = [0u8; BLOCK_HEADER_LEN];
        self.file
            .read_exact(&mut h)
            .map_err(|e| self.block_err(off, format!("reading block header: {e}")))?;
        let hdr =
            parse_block_header(&h, off, self.trailer_offset).map_err(|m| self.block_err(off, m))?;
        if hdr.first_record != self.records_read {
            return Err(self.block_err(
                off,
                format!(
                    "block starts at record {} but {} records precede it",
                    hdr.first_record, self.records_read
                ),
            ));
        }
        self.comp.resize(hdr.comp_len as usize, 0);
        self.file.read_exact(&mut self.comp).map_err(|e| {
            Error::input(
                &self.name,
                Location::Offset(off),
                format!(
                    "block {}: reading {} compressed bytes: {e}",
                    self.block_index, hdr.comp_len
                ),
            )
        })?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h[..28]);
        crc.update(&self.comp);
        let computed = crc.finalize();
        if computed != hdr.crc {
            return Err(self.block_err(
                off,
                format!(
                    "checksum mismatch (stored {:08x}, computed {computed:08x}): the block is corrupt",
                    hdr.crc
                ),
            ));
        }
        self.raw.clear();
        self.raw.reserve(hdr.raw_len as usize);
        let n = self
            .dctx
            .decompress_to_buffer(&self.comp, &mut self.raw)
            .map_err(|e| self.block_err(off, format!("decompression failed: {e}")))?;
        if n != hdr.raw_len as usize {
            return Err(self.block_err(
                off,
                format!("decompressed to {n} bytes, header says {}", hdr.raw_len),
            ));
        }
        self.decoded.clear();
        self.pos = 0;
        let raw = std::mem::take(&mut self.raw);
        let res = decode_payload(&raw, hdr.n_records, hdr.n_events, &mut self.decoded);
        self.raw = raw;
        res.map_err(|m| self.block_err(off, m))?;
        self.offset = off + BLOCK_HEADER_LEN as u64 + hdr.comp_len as u64;
        self.block_index += 1;
        self.records_read += hdr.n_records as u64;
        self.events_read += hdr.n_events as u64;
        Ok(true)
    }
}

struct BlockHeader {
    n_records: u32,
    n_events: u32,
    raw_len: u32,
    comp_len: u32,
    first_record: u64,
    crc: u32,
}

/// Checks a block header's fields against each other and the space left.
fn parse_block_header(h: &[u8], off: u64, end: u64) -> std::result::Result<BlockHeader, String> {
    if h[..4] != BLOCK_MAGIC {
        return Err(format!(
            "bad block magic {:02x?} (expected \"TLBK\")",
            &h[..4]
        ));
    }
    let b = BlockHeader {
        n_records: le_u32(h, 4),
        n_events: le_u32(h, 8),
        raw_len: le_u32(h, 12),
        comp_len: le_u32(h, 16),
        first_record: le_u64(h, 20),
        crc: le_u32(h, 28),
    };
    if b.n_records == 0 || b.n_records > MAX_BLOCK_RECORDS {
        return Err(format!(
            "impossible record count {} (1..={MAX_BLOCK_RECORDS})",
            b.n_records
        ));
    }
    if b.n_events > b.n_records {
        return Err(format!(
            "impossible counts: {} events in {} records",
            b.n_events, b.n_records
        ));
    }
    let max_raw = 4 * N_COLUMNS as u64 + b.n_records as u64 * MAX_BYTES_PER_RECORD;
    if (b.raw_len as u64) < 4 * N_COLUMNS as u64 || b.raw_len as u64 > max_raw {
        return Err(format!(
            "impossible decompressed size {} for {} records",
            b.raw_len, b.n_records
        ));
    }
    let avail = end.saturating_sub(off + BLOCK_HEADER_LEN as u64);
    if b.comp_len as u64 > avail {
        return Err(format!(
            "truncated: {} compressed bytes announced, {avail} left before the end",
            b.comp_len
        ));
    }
    Ok(b)
}

/// When a file has no footer, walks the block headers to find the block that
/// runs past the end of the file (truncation), so the error can name it.
fn find_truncated_block(f: &mut File, len: u64) -> Option<(u64, u64, String)> {
    let mut off = HEADER_LEN;
    let mut idx = 0u64;
    loop {
        if off >= len {
            return None;
        }
        let mut h = [0u8; BLOCK_HEADER_LEN];
        if off + BLOCK_HEADER_LEN as u64 > len {
            return Some((
                idx,
                off,
                format!(
                    "truncated block header: {} of {BLOCK_HEADER_LEN} bytes before end of file",
                    len - off
                ),
            ));
        }
        read_at(f, off, &mut h).ok()?;
        if h[..4] != BLOCK_MAGIC {
            return None;
        }
        match parse_block_header(&h, off, len) {
            Ok(b) => off += BLOCK_HEADER_LEN as u64 + b.comp_len as u64,
            Err(m) => return Some((idx, off, m)),
        }
        idx += 1;
    }
}

fn decode_payload(
    raw: &[u8],
    n: u32,
    n_ev: u32,
    out: &mut Vec<Record>,
) -> std::result::Result<(), String> {
    let n = n as usize;
    let e = n_ev as usize;
    let a = n - e;
    let mut lens = [0usize; N_COLUMNS];
    let mut total = 4 * N_COLUMNS;
    for (i, l) in lens.iter_mut().enumerate() {
        *l = le_u32(raw, 4 * i) as usize;
        total += *l;
    }
    if total != raw.len() {
        return Err(format!(
            "column lengths add up to {total} bytes, payload has {}",
            raw.len()
        ));
    }
    let mut starts = [0usize; N_COLUMNS];
    let mut p = 4 * N_COLUMNS;
    for (s, l) in starts.iter_mut().zip(lens) {
        *s = p;
        p += l;
    }
    let mut cols: [Col; N_COLUMNS] = std::array::from_fn(|i| Col {
        buf: &raw[starts[i]..starts[i] + lens[i]],
        pos: 0,
    });
    const NAMES: [&str; N_COLUMNS] = [
        "tags", "time", "page", "opkind", "app", "npages", "evkind", "evapp",
    ];
    let [tags, time, page, opkind, app, npages, evkind, evapp] = &mut cols;
    if tags.buf.len() != n.div_ceil(8) || opkind.buf.len() != a.div_ceil(4) || evkind.buf.len() != e
    {
        return Err("fixed-width column of the wrong length for the record counts".into());
    }
    let ones: u32 = tags.buf.iter().map(|b| b.count_ones()).sum();
    if ones as usize != e {
        return Err(format!(
            "record-tag column marks {ones} events, header says {e}"
        ));
    }
    let col_err = |i: usize| format!("{} column is malformed or too short", NAMES[i]);
    out.reserve(n);
    let (mut t, mut pg) = (0u64, 0u64);
    let (mut ai, mut ei) = (0usize, 0usize);
    for i in 0..n {
        t = t.wrapping_add(unzigzag(time.varint().ok_or_else(|| col_err(1))?) as u64);
        if tags.buf[i / 8] & (1 << (i % 8)) != 0 {
            let kind = match evkind.buf[ei] {
                0 => EventKind::AppLaunch,
                1 => EventKind::Foreground,
                2 => EventKind::Background,
                3 => EventKind::AppExit,
                k => return Err(format!("unknown event kind {k}")),
            };
            let app = evapp.varint().ok_or_else(|| col_err(7))?;
            let app = u32::try_from(app).map_err(|_| col_err(7))?;
            out.push(Record::Event(Event { time: t, app, kind }));
            ei += 1;
        } else {
            pg = pg.wrapping_add(unzigzag(page.varint().ok_or_else(|| col_err(2))?) as u64);
            let bits = (opkind.buf[ai / 4] >> (2 * (ai % 4))) & 3;
            let ap = app.varint().ok_or_else(|| col_err(4))?;
            let np = npages.varint().ok_or_else(|| col_err(5))?;
            if np == 0 || np > MAX_REQUEST_PAGES {
                return Err(format!("request of {np} pages (1..={MAX_REQUEST_PAGES})"));
            }
            out.push(Record::Access(Access {
                time: t,
                page: pg,
                op: if bits & 1 != 0 { Op::Write } else { Op::Read },
                kind: if bits & 2 != 0 {
                    Kind::Anon
                } else {
                    Kind::File
                },
                app: u32::try_from(ap).map_err(|_| col_err(4))?,
                npages: np as u32,
                size: 0,
            }));
            ai += 1;
        }
    }
    for (i, c) in cols.iter().enumerate() {
        if i != 0 && i != 3 && i != 6 && !c.done() {
            return Err(format!("{} column has trailing bytes", NAMES[i]));
        }
    }
    Ok(())
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn read_at(f: &mut File, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(buf)
}

impl TraceReader for NativeReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut left = max;
        while left > 0 {
            if self.pos == self.decoded.len() && !self.next_block()? {
                return Ok(false);
            }
            let take = left.min(self.decoded.len() - self.pos);
            out.extend_from_slice(&self.decoded[self.pos..self.pos + take]);
            self.pos += take;
            left -= take;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn app_names(&self) -> Vec<String> {
        if self.app_names.is_empty() {
            vec!["all".to_string()]
        } else {
            self.app_names.clone()
        }
    }

    fn format(&self) -> &'static str {
        "native"
    }
}

// ---------------------------------------------------------------------------
// convert

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
