//! Opening trace files with transparent decompression, and the two cursors the
//! readers are built on: a line cursor for text formats and a byte cursor for
//! binary ones. Both turn every failure (including a truncated compressed
//! stream) into an [`Error::Input`] that names the file and the line or byte
//! offset.
//!
//! Compression is recognised by magic bytes, not by file name: gzip, zstd, xz
//! and legacy `.lzma` (LZMA-alone) streams.

use crate::error::{Error, Location, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Compression of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
    Xz,
    Lzma,
}

impl Compression {
    /// Identifies a stream by its first bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if head.len() >= 13
            && head[0] == 0x5d
            && matches!(u32::from_le_bytes([head[1], head[2], head[3], head[4]]), d if d.is_power_of_two() || d == u32::MAX)
        {
            // LZMA-alone: properties byte (0x5d is lc=3 lp=0 pb=2, what every
            // encoder writes by default) followed by a power-of-two dictionary size.
            Compression::Lzma
        } else {
            Compression::None
        }
    }
}

/// Memory an xz or lzma decoder may use (its dictionary). `xz -9` needs 65
/// MiB; a legacy `.lzma` header can ask for up to 4 GiB, which a corrupt or
/// hostile file would make the decoder allocate (found by cargo-fuzz), so a
/// larger request is reported as a corrupt stream instead.
pub const MAX_DECODER_MEMORY: u64 = 1 << 28;

/// A decompressed, buffered input with the name used in error messages.
pub struct Input {
    pub name: String,
    pub compression: Compression,
    pub reader: Box<dyn BufRead + Send>,
}

/// Opens `path`, detecting compression from its magic bytes.
pub fn open_input(path: &Path) -> Result<Input> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut raw = BufReader::with_capacity(1 << 16, file);
    let head = raw.fill_buf().map_err(|e| Error::io(path, e))?.to_vec();
    let compression = Compression::sniff(&head);
    let name = path.display().to_string();
    let reader: Box<dyn BufRead + Send> = match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            1 << 16,
            zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| Error::io(path, e))?,
        )),
        Compression::Xz => {
            let stream = liblzma::stream::Stream::new_stream_decoder(
                MAX_DECODER_MEMORY,
                liblzma::stream::CONCATENATED,
            )
            .map_err(|e| Error::input(&name, Location::Whole, format!("xz decoder: {e}")))?;
            Box::new(BufReader::with_capacity(
                1 << 16,
                liblzma::bufread::XzDecoder::new_stream(raw, stream),
            ))
        }
        Compression::Lzma => {
            let stream = liblzma::stream::Stream::new_lzma_decoder(MAX_DECODER_MEMORY)
                .map_err(|e| Error::input(&name, Location::Whole, format!("lzma decoder: {e}")))?;
            Box::new(BufReader::with_capacity(
                1 << 16,
                liblzma::bufread::XzDecoder::new_stream(raw, stream),
            ))
        }
    };
    Ok(Input {
        name,
        compression,
        reader,
    })
}

fn describe_io(compression: Compression, e: &std::io::Error) -> String {
    match compression {
        Compression::None => format!("read error: {e}"),
        c => format!("corrupt or truncated {c:?} stream: {e}"),
    }
}

/// Longest line a text trace may have (1 MiB): a longer one is an error at its line number, so
/// that a binary file read as text, or a file without newlines, costs no more memory than this.
pub const MAX_LINE: usize = 1 << 20;

/// Reads one line of at most [`MAX_LINE`] bytes (and its `\n`) into `buf`; returns the bytes
/// read, or `Err(None)` if the line is longer.
pub fn read_bounded_line(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
) -> std::result::Result<usize, Option<std::io::Error>> {
    let n = Read::take(reader, MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(Some)?;
    if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
        return Err(None);
    }
    Ok(n)
}

/// Line cursor over a text trace. Lines are handed out as bytes (no UTF-8
/// requirement on the whole file; fields are validated where they are parsed),
/// without the trailing `\n`/`\r\n`, and at most [`MAX_LINE`] bytes long.
pub struct Lines {
    input: Input,
    buf: Vec<u8>,
    line_no: u64,
}

impl Lines {
    pub fn new(input: Input) -> Self {
        Lines {
            input,
            buf: Vec::with_capacity(256),
            line_no: 0,
        }
    }

    pub fn open(path: &Path) -> Result<Self> {
        Ok(Lines::new(open_input(path)?))
    }

    /// The next line, or `None` at end of input.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        self.buf.clear();
        let n = read_bounded_line(&mut self.input.reader, &mut self.buf).map_err(|e| {
            Error::input(
                &self.input.name,
                Location::Line(self.line_no + 1),
                match e {
                    Some(e) => describe_io(self.input.compression, &e),
                    None => format!(
                        "line longer than {} MiB: not a text trace (or the wrong --format)?",
                        MAX_LINE >> 20
                    ),
                },
            )
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        let mut end = self.buf.len();
        while end > 0 && (self.buf[end - 1] == b'\n' || self.buf[end - 1] == b'\r') {
            end -= 1;
        }
        Ok(Some(&self.buf[..end]))
    }

    /// 1-based number of the line last returned.
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    pub fn name(&self) -> &str {
        &self.input.name
    }

    /// An input error at the current line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(&self.input.name, Location::Line(self.line_no), msg)
    }
}

/// Byte cursor over a binary trace, tracking the offset into the decompressed
/// stream for error messages.
pub struct Bytes {
    input: Input,
    offset: u64,
}

impl Bytes {
    pub fn new(input: Input) -> Self {
        Bytes { input, offset: 0 }
    }

    pub fn open(path: &Path) -> Result<Self> {
        Ok(Bytes::new(open_input(path)?))
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn name(&self) -> &str {
        &self.input.name
    }

    /// Fills `buf` completely. Returns `Ok(false)` on a clean end of input (no
    /// byte read); a partial record is an error naming the record's offset.
    pub fn read_record(&mut self, buf: &mut [u8], what: &str) -> Result<bool> {
        let start = self.offset;
        let mut filled = 0;
        while filled < buf.len() {
            match self.input.reader.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::input(
                        &self.input.name,
                        Location::Offset(start + filled as u64),
                        describe_io(self.input.compression, &e),
                    ))
                }
            }
        }
        self.offset += filled as u64;
        if filled == 0 {
            return Ok(false);
        }
        if filled < buf.len() {
            return Err(Error::input(
                &self.input.name,
                Location::Offset(start),
                format!(
                    "truncated {what}: expected {} bytes, found {filled}",
                    buf.len()
                ),
            ));
        }
        Ok(true)
    }

    /// Skips `n` bytes (a header); a shorter input is an error naming `what`.
    pub fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        let got = std::io::copy(&mut (&mut self.input.reader).take(n), &mut std::io::sink())
            .map_err(|e| {
                Error::input(
                    &self.input.name,
                    Location::Offset(self.offset),
                    describe_io(self.input.compression, &e),
                )
            })?;
        self.offset += got;
        if got < n {
            return Err(Error::input(
                &self.input.name,
                Location::Whole,
                format!("{got} bytes: expected at least {n} bytes of {what}"),
            ));
        }
        Ok(())
    }

    /// Reads exactly `buf.len()` bytes (a header); a shorter input is an error naming `what`.
    pub fn read_header(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        if !self.read_record(buf, what)? {
            return Err(Error::input(
                &self.input.name,
                Location::Whole,
                format!("empty file: expected {what}"),
            ));
        }
        Ok(())
    }

    /// An input error at byte offset `at`.
    pub fn error_at(&self, at: u64, msg: impl Into<String>) -> Error {
        Error::input(&self.input.name, Location::Offset(at), msg)
    }
}

/// Parses an unsigned decimal integer field.
pub fn parse_u64(field: &[u8]) -> Option<u64> {
    let field = trim(field);
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

/// Parses an unsigned decimal field named `name`, or says what was `expected` and what was found.
pub fn field_u64(field: &[u8], name: &str, expected: &str) -> Result<u64, String> {
    parse_u64(field).ok_or_else(|| format!("{name}: expected {expected}, found '{}'", show(field)))
}

/// A one-letter read/write field: `read` or `write` in either case; anything else is an error
/// that starts with `expected` (e.g. "Opcode: expected 'r' or 'w'") and shows the field.
pub fn field_op(
    field: &[u8],
    read: u8,
    write: u8,
    expected: &str,
) -> Result<crate::trace::Op, String> {
    match field {
        [c] if c.eq_ignore_ascii_case(&read) => Ok(crate::trace::Op::Read),
        [c] if c.eq_ignore_ascii_case(&write) => Ok(crate::trace::Op::Write),
        other => Err(format!("{expected}, found '{}'", show(other))),
    }
}

/// Parses a hexadecimal integer field with or without a `0x` prefix.
pub fn parse_hex(field: &[u8]) -> Option<u64> {
    let field = trim(field);
    let digits = field
        .strip_prefix(b"0x")
        .or_else(|| field.strip_prefix(b"0X"))
        .unwrap_or(field);
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let s = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(s, 16).ok()
}

/// Parses a decimal floating-point field.
pub fn parse_f64(field: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(trim(field)).ok()?;
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Strips ASCII whitespace at both ends.
pub fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// Shows a field in an error message (lossy, clipped).
pub fn show(field: &[u8]) -> String {
    let s = String::from_utf8_lossy(field);
    if s.len() > 40 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(40).map(|(i, _)| i).unwrap_or(s.len())]
        )
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod field_op_tests {
    use super::field_op;
    use crate::trace::Op;

    #[test]
    fn one_letter_either_case_else_an_error_showing_the_field() {
        assert_eq!(field_op(b"r", b'r', b'w', "x"), Ok(Op::Read));
        assert_eq!(field_op(b"W", b'r', b'w', "x"), Ok(Op::Write));
        assert_eq!(
            field_op(b"rw", b'r', b'w', "Opcode: expected 'r' or 'w'"),
            Err("Opcode: expected 'r' or 'w', found 'rw'".to_string())
        );
        assert!(field_op(b"", b'l', b's', "e").is_err());
    }
}
