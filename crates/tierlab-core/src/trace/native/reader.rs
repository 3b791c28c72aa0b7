//! Reading a native trace: the header, footer and trailer when opening, then every block verified before its records are handed out.

use super::codec::*;
use super::*;

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
    /// The current block, decoded; `pos` counts its records already handed out.
    decoded: RecordColumns,
    pos: usize,
    comp: Vec<u8>,
    raw: Vec<u8>,
    dctx: zstd::bulk::Decompressor<'static>,
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
            decoded: RecordColumns::default(),
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
        if let Err(m) = res {
            self.decoded.clear();
            return Err(self.block_err(off, m));
        }
        self.offset = off + BLOCK_HEADER_LEN as u64 + hdr.comp_len as u64;
        self.block_index += 1;
        self.records_read += hdr.n_records as u64;
        self.events_read += hdr.n_events as u64;
        Ok(true)
    }
}

/// When a file has no footer, walks the block headers to find the block that
/// runs past the end of the file (truncation), so the error can name it.
pub(super) fn find_truncated_block(f: &mut File, len: u64) -> Option<(u64, u64, String)> {
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

pub(super) fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
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

pub(super) fn read_at(f: &mut File, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(buf)
}

impl TraceReader for NativeReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut left = max;
        while left > 0 {
            if self.pos == self.decoded.records() && !self.next_block()? {
                return Ok(false);
            }
            let take = left.min(self.decoded.records() - self.pos);
            self.decoded.records_to(self.pos, self.pos + take, out);
            self.pos += take;
            left -= take;
        }
        Ok(true)
    }

    fn read_columns(
        &mut self,
        out: &mut RecordColumns,
        max: usize,
        _scratch: &mut Vec<Record>,
    ) -> Result<bool> {
        let mut left = max;
        while left > 0 {
            if self.pos == self.decoded.records() && !self.next_block()? {
                return Ok(false);
            }
            let have = self.decoded.records();
            let take = left.min(have - self.pos);
            if out.is_empty() && self.pos == 0 && take == have {
                // A whole block into an empty batch: hand over the decoded columns instead of
                // copying them (the next block decodes into the batch's old buffers).
                std::mem::swap(out, &mut self.decoded);
                self.decoded.clear();
            } else {
                out.extend_from(&self.decoded, self.pos, self.pos + take);
                self.pos += take;
                if self.pos == have {
                    self.decoded.clear();
                    self.pos = 0;
                }
            }
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
