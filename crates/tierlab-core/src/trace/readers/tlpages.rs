//! `tlpages`: a compact page-reference stream written by `tierlab capture
//! --format tlpages` (trace/capture.rs, `CaptureFormat`): long memory traces
//! repeat over long distances, which one zstd stream with long-distance
//! matching exploits and the native format's per-block compression cannot;
//! the traces tierlab ships (python/tierlab/data/captured) use it.
//!
//! Layout: a zstd stream whose content is the 8-byte magic `TLPAGES1`, the page
//! size (u32, little endian), then one record per page reference: the LEB128
//! varint of `zigzag(page - previous_page) << 2 | op << 1 | kind` (op Read=0
//! Write=1, kind File=0 Anon=1; the first record's previous page is 0). Times
//! are not stored: a record's time is its ordinal. Memory traces revisit the
//! same few pages, so most records are one byte before compression.

use crate::error::{Error, Location, Result};
use crate::trace::input::{open_input, Input};
use crate::trace::{Access, Kind, Op, Record, TraceReader};
use serde::Deserialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Magic bytes at the start of the decompressed stream.
pub const MAGIC: &[u8; 8] = b"TLPAGES1";

/// log2 of the zstd window the writer compresses with: 8 MiB, the largest window RFC 8878
/// recommends every decoder support. A reader holds a buffer of the stream's window while it
/// decodes it, all of it touched once the trace is longer than the window: with long-distance
/// matching's own default (2^27, 128 MiB) that was 128 MiB of resident memory for each of the
/// shipped traces longer than that, for files 12% smaller (3.75 MB against 4.26 MB for the three;
/// traces/README.md).
pub const WINDOW_LOG: u32 = 23;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlpagesOptions {}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Streaming writer (constant memory).
pub struct TlpagesWriter {
    out: zstd::stream::write::Encoder<'static, BufWriter<File>>,
    prev: u64,
    name: String,
    pub written: u64,
}

impl TlpagesWriter {
    pub fn create(path: &Path, page_size: u32) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let mut out = zstd::stream::write::Encoder::new(BufWriter::new(file), 19)
            .map_err(|e| Error::io(path, e))?;
        // Long-distance matching pays off on repetitive memory traces, within a window of
        // WINDOW_LOG (long-distance matching alone would raise it to 128 MiB).
        out.long_distance_matching(true)
            .and_then(|()| out.window_log(WINDOW_LOG))
            .map_err(|e| Error::io(path, e))?;
        out.write_all(MAGIC).map_err(|e| Error::io(path, e))?;
        out.write_all(&page_size.to_le_bytes())
            .map_err(|e| Error::io(path, e))?;
        Ok(TlpagesWriter {
            out,
            prev: 0,
            name: path.display().to_string(),
            written: 0,
        })
    }

    /// Appends one single-page reference.
    pub fn push(&mut self, page: u64, op: Op, kind: Kind) -> Result<()> {
        let delta = page.wrapping_sub(self.prev) as i64;
        self.prev = page;
        let mut v = (zigzag(delta) as u128) << 2 | (op as u128) << 1 | kind as u128;
        let mut buf = [0u8; 19];
        let mut n = 0;
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                buf[n] = b;
                n += 1;
                break;
            }
            buf[n] = b | 0x80;
            n += 1;
        }
        self.written += 1;
        self.out
            .write_all(&buf[..n])
            .map_err(|e| Error::io(&self.name, e))
    }

    /// Flushes and closes the stream.
    pub fn finish(self) -> Result<()> {
        let name = self.name;
        let mut w = self.out.finish().map_err(|e| Error::io(&name, e))?;
        w.flush().map_err(|e| Error::io(&name, e))
    }
}

pub struct TlpagesReader {
    input: Input,
    offset: u64,
    prev: u64,
    seq: u64,
    page_size: u32,
}

impl TlpagesReader {
    pub fn open(path: &Path, _options: TlpagesOptions) -> Result<Self> {
        let mut input = open_input(path)?;
        let mut head = [0u8; 12];
        let mut filled = 0;
        while filled < head.len() {
            match input.reader.read(&mut head[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => {
                    return Err(Error::input(
                        &input.name,
                        Location::Offset(filled as u64),
                        format!("read error in the header: {e}"),
                    ))
                }
            }
        }
        if filled < 12 || &head[..8] != MAGIC {
            return Err(Error::input(
                &input.name,
                Location::Offset(0),
                "expected the tlpages header (magic 'TLPAGES1' and a page size) in a zstd stream",
            ));
        }
        let page_size = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if !page_size.is_power_of_two() || page_size < 512 {
            return Err(Error::input(
                &input.name,
                Location::Offset(8),
                format!("expected a power-of-two page size >= 512, found {page_size}"),
            ));
        }
        Ok(TlpagesReader {
            input,
            offset: 12,
            prev: 0,
            seq: 0,
            page_size,
        })
    }
}

use std::io::{BufRead, Read};

impl TraceReader for TlpagesReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut n = 0;
        let mut v: u128 = 0;
        let mut shift = 0u32;
        let mut start = self.offset;
        while n < max {
            let buf = match self.input.reader.fill_buf() {
                Ok(b) => b,
                Err(e) => {
                    return Err(Error::input(
                        &self.input.name,
                        Location::Offset(self.offset),
                        format!("corrupt or truncated stream: {e}"),
                    ))
                }
            };
            if buf.is_empty() {
                if shift != 0 {
                    return Err(Error::input(
                        &self.input.name,
                        Location::Offset(start),
                        "truncated record: the varint has no final byte",
                    ));
                }
                return Ok(false);
            }
            let mut used = 0;
            for &b in buf {
                used += 1;
                if shift >= 126 {
                    return Err(Error::input(
                        &self.input.name,
                        Location::Offset(start),
                        "expected a record varint of at most 18 bytes",
                    ));
                }
                v |= ((b & 0x7f) as u128) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    let op = if v >> 1 & 1 == 1 { Op::Write } else { Op::Read };
                    let kind = if v & 1 == 1 { Kind::Anon } else { Kind::File };
                    let d = v >> 2;
                    if d > u64::MAX as u128 {
                        return Err(Error::input(
                            &self.input.name,
                            Location::Offset(start),
                            "page delta does not fit in 64 bits",
                        ));
                    }
                    let page = self.prev.wrapping_add(unzigzag(d as u64) as u64);
                    self.prev = page;
                    out.push(Record::Access(Access::page(self.seq, page, op, kind)));
                    self.seq += 1;
                    n += 1;
                    v = 0;
                    shift = 0;
                    start = self.offset + used as u64;
                    if n == max {
                        break;
                    }
                }
            }
            self.input.reader.consume(used);
            self.offset += used as u64;
        }
        if shift != 0 {
            // A batch never ends inside a record: records are consumed whole
            // above, so this cannot happen; keep the state consistent anyway.
            return Err(Error::input(
                &self.input.name,
                Location::Offset(start),
                "internal: batch ended inside a record",
            ));
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn format(&self) -> &'static str {
        "tlpages"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_all;

    #[test]
    fn round_trip_and_truncation() {
        let dir = std::env::temp_dir().join(format!("tlpages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.tlp.zst");
        let refs = [
            (5u64, Op::Read, Kind::File),
            (u64::MAX >> 12, Op::Write, Kind::Anon),
            (0, Op::Read, Kind::Anon),
            (0, Op::Write, Kind::File),
            (123_456_789, Op::Read, Kind::Anon),
        ];
        let mut w = TlpagesWriter::create(&path, 4096).unwrap();
        for &(p, o, k) in &refs {
            w.push(p, o, k).unwrap();
        }
        w.finish().unwrap();
        let mut r = TlpagesReader::open(&path, TlpagesOptions {}).unwrap();
        let got = read_all(&mut r).unwrap();
        let want: Vec<Record> = refs
            .iter()
            .enumerate()
            .map(|(i, &(p, o, k))| Record::Access(Access::page(i as u64, p, o, k)))
            .collect();
        assert_eq!(got, want);

        // A record cut in the middle of its varint is a located error.
        let mut raw = Vec::new();
        raw.extend_from_slice(MAGIC);
        raw.extend_from_slice(&4096u32.to_le_bytes());
        raw.extend_from_slice(&[0x04, 0x80]);
        let bad = dir.join("bad.tlp.zst");
        std::fs::write(&bad, zstd::encode_all(&raw[..], 3).unwrap()).unwrap();
        let mut r = TlpagesReader::open(&bad, TlpagesOptions {}).unwrap();
        let e = read_all(&mut r).unwrap_err().to_string();
        assert!(
            e.contains("byte offset 13") && e.contains("truncated"),
            "{e}"
        );

        // Not a tlpages stream.
        std::fs::write(
            &bad,
            zstd::encode_all(&b"hello world, not a trace"[..], 3).unwrap(),
        )
        .unwrap();
        let e = TlpagesReader::open(&bad, TlpagesOptions {})
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("byte offset 0") && e.contains("TLPAGES1"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Reads the first bytes of the zstd stream at `path` with a decoder limited to a window of
    /// 2^WINDOW_LOG: an error when the stream was written with a larger window.
    fn opens_within_the_window(path: &Path) -> std::io::Result<()> {
        let mut d = zstd::stream::read::Decoder::new(File::open(path)?)?;
        d.window_log_max(WINDOW_LOG)?;
        d.read_exact(&mut [0u8; 12])
    }

    #[test]
    fn the_writer_and_the_shipped_traces_use_an_8_mib_window() {
        let dir = std::env::temp_dir().join(format!("tlpages-window-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.tlp.zst");
        let mut w = TlpagesWriter::create(&path, 4096).unwrap();
        w.push(7, Op::Read, Kind::File).unwrap();
        w.finish().unwrap();
        opens_within_the_window(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();

        let shipped =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/tierlab/data/captured");
        let mut n = 0;
        for entry in std::fs::read_dir(&shipped).unwrap() {
            let p = entry.unwrap().path();
            if p.to_string_lossy().ends_with(".tlp.zst") {
                opens_within_the_window(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                n += 1;
            }
        }
        assert_eq!(n, 3, "the traces in {}", shipped.display());
    }
}
