//! Pieces shared by the readers: turning byte ranges into page ranges with the
//! checks every byte- or sector-addressed format needs, exact decimal time
//! parsing, the object-versus-block addressing choice of the libCacheSim
//! formats, op names, and the app-name table.

use crate::trace::MAX_REQUEST_PAGES;
use rustc_hash::FxHashMap;
use serde::Deserialize;

/// Bytes per sector in every sector-addressed format tierlab reads.
pub const SECTOR: u64 = 512;

/// Checks a `page_size` option: a power of two between 64 B and 1 GiB.
pub fn check_page_size(format: &str, page_size: u32) -> crate::Result<u32> {
    if page_size.is_power_of_two() && (64..=1 << 30).contains(&page_size) {
        Ok(page_size)
    } else {
        Err(crate::Error::config(format!(
            "options of trace format '{format}': page_size = {page_size}: expected a power of two between 64 and 1073741824 bytes"
        )))
    }
}

/// The pages touched by the byte range `[offset, offset + len)`: the first page
/// and the number of pages. A range that straddles page boundaries covers every
/// page it touches. Errors (as a message for the caller to locate) on an empty
/// range, on 64-bit overflow, and on more than [`MAX_REQUEST_PAGES`] pages.
pub fn byte_span(offset: u64, len: u64, page_size: u32) -> Result<(u64, u32), String> {
    if len == 0 {
        return Err("expected a request size > 0, found 0".into());
    }
    let end = offset
        .checked_add(len - 1)
        .ok_or_else(|| format!("offset {offset} + size {len} overflows 64 bits"))?;
    let ps = page_size as u64;
    let first = offset / ps;
    let n = end / ps - first + 1;
    if n > MAX_REQUEST_PAGES {
        return Err(format!(
            "request of {len} bytes covers {n} pages, more than the limit of {MAX_REQUEST_PAGES} (corrupt size field?)"
        ));
    }
    Ok((first, n as u32))
}

/// `units * unit_bytes` as a byte offset, or an overflow message naming `what`.
pub fn to_bytes(units: u64, unit_bytes: u64, what: &str) -> Result<u64, String> {
    units.checked_mul(unit_bytes).ok_or_else(|| {
        format!("{what} {units} x {unit_bytes} bytes overflows a 64-bit byte address")
    })
}

/// How the libCacheSim formats (csv, txt, oracleGeneral, vscsi) map a request
/// to pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Addressing {
    /// Each request is ONE page whose number is the object id, whatever its
    /// size: what libCacheSim counts with unit object size, so miss counts
    /// match it request for request. The default.
    #[default]
    Object,
    /// The id is a block address in units of `block_size` bytes and the size a
    /// length in bytes; the request covers every page of `page_size` bytes it
    /// touches (one block when the format has no size).
    Block,
}

/// Parses a non-negative decimal number `I[.F]` and returns it multiplied by
/// `10^scale`, exactly (no floating point), truncating fraction digits beyond
/// `scale`. `scale = 9` turns seconds into nanoseconds. A leading `+`, an
/// exponent or a sign are rejected.
pub fn parse_decimal_scaled(field: &[u8], scale: u32) -> Option<u64> {
    let field = crate::trace::input::trim(field);
    let (int, frac) = match memchr::memchr(b'.', field) {
        Some(i) => (&field[..i], &field[i + 1..]),
        None => (field, &field[..0]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in int {
        v = v.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    v = v.checked_mul(10u64.checked_pow(scale)?)?;
    let mut unit = 10u64.pow(scale);
    for &d in frac.iter().take(scale as usize) {
        unit /= 10;
        v = v.checked_add((d - b'0') as u64 * unit)?;
    }
    Some(v)
}

/// Seconds with an optional fraction to nanoseconds.
pub fn parse_seconds_ns(field: &[u8]) -> Option<u64> {
    parse_decimal_scaled(field, 9)
}

/// Time unit of a numeric timestamp column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum TimeUnit {
    #[default]
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "ms")]
    Millis,
    #[serde(rename = "us")]
    Micros,
    #[serde(rename = "ns")]
    Nanos,
}

impl TimeUnit {
    /// Decimal digits to shift the value by to get nanoseconds.
    pub fn scale(self) -> u32 {
        match self {
            TimeUnit::Seconds => 9,
            TimeUnit::Millis => 6,
            TimeUnit::Micros => 3,
            TimeUnit::Nanos => 0,
        }
    }
}

/// Interns app (process) names into dense ids in order of first appearance.
#[derive(Debug, Default)]
pub struct AppTable {
    names: Vec<String>,
    ids: FxHashMap<String, u32>,
}

impl AppTable {
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    pub fn names(&self) -> Vec<String> {
        if self.names.is_empty() {
            vec!["all".to_string()]
        } else {
            self.names.clone()
        }
    }
}

/// FNV-1a, 64 bits: a stable hash for string object ids (the same id always
/// maps to the same page in every run and on every machine).
pub fn hash_id(s: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        assert_eq!(byte_span(0, 4096, 4096), Ok((0, 1)));
        assert_eq!(byte_span(4095, 2, 4096), Ok((0, 2)));
        assert_eq!(byte_span(8192, 1, 4096), Ok((2, 1)));
        assert_eq!(byte_span(512 * 7, 1024, 4096), Ok((0, 2)));
        assert!(byte_span(0, 0, 4096).is_err());
        assert!(byte_span(u64::MAX, 2, 4096).is_err());
        assert!(byte_span(0, (MAX_REQUEST_PAGES + 1) * 4096, 4096).is_err());
        assert_eq!(
            byte_span(0, MAX_REQUEST_PAGES * 4096, 4096),
            Ok((0, MAX_REQUEST_PAGES as u32))
        );
    }

    #[test]
    fn decimals() {
        assert_eq!(
            parse_seconds_ns(b"653406.907265"),
            Some(653_406_907_265_000)
        );
        assert_eq!(
            parse_seconds_ns(b"660881.0188740001"),
            Some(660_881_018_874_000)
        );
        assert_eq!(parse_seconds_ns(b"12"), Some(12_000_000_000));
        assert_eq!(parse_seconds_ns(b".5"), Some(500_000_000));
        assert_eq!(parse_decimal_scaled(b"7", 0), Some(7));
        assert_eq!(parse_decimal_scaled(b"7.9", 0), Some(7));
        for bad in [
            &b""[..],
            b".",
            b"-1",
            b"1e3",
            b"1.2.3",
            b"x",
            b"99999999999999999999",
        ] {
            assert_eq!(parse_seconds_ns(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn apps_interned_in_order() {
        let mut t = AppTable::default();
        assert_eq!(t.names(), vec!["all"]);
        assert_eq!(t.id("a"), 0);
        assert_eq!(t.id("b"), 1);
        assert_eq!(t.id("a"), 0);
        assert_eq!(t.names(), vec!["a", "b"]);
    }
}

/// What a line parser decided about one line.
pub enum Step {
    /// Not a record (blank line, comment, event the reader does not take).
    Skip,
    Push(crate::trace::Access),
    /// The trace ends here (an end marker or a trailing summary).
    End,
}

/// Progress of a text reader, for [`read_lines`].
#[derive(Debug, Default)]
pub struct LineState {
    pub done: bool,
    pub records: u64,
}

/// Drives a text reader: feeds lines to `parse` until `max` records were
/// appended or the input ends; a parse error becomes an input error at the
/// current line. Returns `Ok(false)` at the end of the trace. A trace without
/// a single record is an error (`what` names what was expected).
pub fn read_lines<F>(
    lines: &mut crate::trace::input::Lines,
    state: &mut LineState,
    what: &str,
    out: &mut Vec<crate::trace::Record>,
    max: usize,
    mut parse: F,
) -> crate::Result<bool>
where
    F: FnMut(&[u8]) -> Result<Step, String>,
{
    if state.done {
        return Ok(false);
    }
    let mut n = 0;
    while n < max {
        let line = lines.next_line()?;
        let step = match line {
            None => Ok(Step::End),
            Some(line) => parse(line),
        };
        match step {
            Ok(Step::Skip) => {}
            Ok(Step::Push(a)) => {
                out.push(crate::trace::Record::Access(a));
                state.records += 1;
                n += 1;
            }
            Ok(Step::End) => {
                state.done = true;
                if state.records == 0 {
                    return Err(crate::Error::input(
                        lines.name(),
                        crate::error::Location::Whole,
                        format!("no requests found (empty trace?): expected {what}"),
                    ));
                }
                return Ok(false);
            }
            Err(msg) => return Err(lines.error(msg)),
        }
    }
    Ok(true)
}

/// Where a line stands in its trace, for [`LineFormat::parse`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LineAt {
    /// 1-based line number.
    pub line: u64,
    /// Records before this line's: the time of formats without timestamps.
    pub record: u64,
}

/// The per-format part of a line-oriented trace: how one line becomes a request. A
/// [`LineReader`] does the rest (batching, line numbers in errors, the empty-trace error).
pub trait LineFormat: Send + 'static {
    /// Format name (`TraceReader::format`).
    const NAME: &'static str;
    /// What the lines look like, for the error on a trace without a request.
    const EXPECTED: &'static str;
    fn parse(&mut self, line: &[u8], at: LineAt) -> Result<Step, String>;
    fn page_size(&self) -> u32 {
        crate::trace::DEFAULT_PAGE_SIZE
    }
}

/// A text trace read line by line through its [`LineFormat`].
pub struct LineReader<F> {
    lines: crate::trace::input::Lines,
    state: LineState,
    format: F,
}

impl<F: LineFormat> LineReader<F> {
    pub fn new(path: &std::path::Path, format: F) -> crate::Result<Self> {
        Ok(LineReader {
            lines: crate::trace::input::Lines::open(path)?,
            state: LineState::default(),
            format,
        })
    }
}

impl<F: LineFormat> crate::trace::TraceReader for LineReader<F> {
    fn read_batch(
        &mut self,
        out: &mut Vec<crate::trace::Record>,
        max: usize,
    ) -> crate::Result<bool> {
        let mut at = LineAt {
            line: self.lines.line_no(),
            record: self.state.records,
        };
        let format = &mut self.format;
        read_lines(
            &mut self.lines,
            &mut self.state,
            F::EXPECTED,
            out,
            max,
            |line| {
                at.line += 1;
                let step = format.parse(line, at)?;
                if matches!(step, Step::Push(_)) {
                    at.record += 1;
                }
                Ok(step)
            },
        )
    }

    fn page_size(&self) -> u32 {
        self.format.page_size()
    }

    fn format(&self) -> &'static str {
        F::NAME
    }
}

/// Options of the formats whose only option is the page size (4096 by default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PageSizeOptions {
    pub page_size: u32,
}

impl Default for PageSizeOptions {
    fn default() -> Self {
        PageSizeOptions { page_size: 4096 }
    }
}

/// The rule of a comma-separated block trace (MSR, SPC): how one line becomes a request.
pub trait CsvBlockFormat: Send + 'static {
    const NAME: &'static str;
    const EXPECTED: &'static str;
    /// How a header starts: a first line starting so (after white space) is skipped.
    const HEADER: &'static [u8];
    /// One line that is neither blank nor the header; `fields` are its comma-separated
    /// fields (byte ranges of `line`, from [`split_fields`]).
    fn parse(line: &[u8], page_size: u32, fields: &[(usize, usize)]) -> Result<Step, String>;
}

/// A comma-separated block trace as a [`LineFormat`]: its page size and field buffer.
pub struct CsvBlockLines<F> {
    page_size: u32,
    fields: Vec<(usize, usize)>,
    rule: std::marker::PhantomData<F>,
}

impl<F: CsvBlockFormat> LineReader<CsvBlockLines<F>> {
    /// Opens a comma-separated block trace in format `F` (`MsrReader::open`, `SpcReader::open`).
    pub fn open(path: &std::path::Path, opts: PageSizeOptions) -> crate::Result<Self> {
        let format = CsvBlockLines {
            page_size: check_page_size(F::NAME, opts.page_size)?,
            fields: Vec::with_capacity(8),
            rule: std::marker::PhantomData,
        };
        LineReader::new(path, format)
    }
}

impl<F: CsvBlockFormat> LineFormat for CsvBlockLines<F> {
    const NAME: &'static str = F::NAME;
    const EXPECTED: &'static str = F::EXPECTED;
    fn parse(&mut self, line: &[u8], at: LineAt) -> Result<Step, String> {
        let t = crate::trace::input::trim(line);
        if t.is_empty() || (at.line == 1 && t.starts_with(F::HEADER)) {
            return Ok(Step::Skip);
        }
        split_fields(line, b',', &mut self.fields);
        F::parse(line, self.page_size, &self.fields)
    }
    fn page_size(&self) -> u32 {
        self.page_size
    }
}

/// The error for a text trace that ended without one request (an empty file,
/// or nothing but blank and comment lines).
pub fn no_requests(lines: &crate::trace::input::Lines, what: &str) -> crate::Error {
    crate::Error::input(
        lines.name(),
        crate::error::Location::Whole,
        format!("no requests found (empty trace?): expected {what}"),
    )
}

/// Reads fixed-size binary records: the first read tells an empty input (an
/// error) from a clean end.
pub fn empty_binary(bytes: &crate::trace::input::Bytes, what: &str) -> crate::Error {
    crate::Error::input(
        bytes.name(),
        crate::error::Location::Whole,
        format!("empty file: expected {what}"),
    )
}

/// Splits a line on `delim` (no quoting: none of the trace formats tierlab
/// reads quotes its fields).
pub fn split_fields(line: &[u8], delim: u8, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start = 0;
    for i in memchr::memchr_iter(delim, line) {
        out.push((start, i));
        start = i + 1;
    }
    out.push((start, line.len()));
}

/// Read/write from the op names used by block and key-value traces
/// (case-insensitive): `r`, `read`, `get`, `rs`, `ra` ... are reads; `w`, `write`,
/// `set`, `ws` ... are writes; SCSI opcodes written in hex as in the
/// CloudPhysics csv traces: `28`/`08`/`88`/`a8` (READ 10/6/16/12) and
/// `2a`/`0a`/`8a`/`aa` (WRITE 10/6/16/12).
pub fn parse_op(field: &[u8]) -> Option<crate::trace::Op> {
    use crate::trace::Op;
    let f = crate::trace::input::trim(field);
    let f = f
        .strip_prefix(b"0x")
        .or_else(|| f.strip_prefix(b"0X"))
        .unwrap_or(f);
    if f.len() > 5 {
        return None;
    }
    let mut buf = [0u8; 5];
    for (b, c) in buf.iter_mut().zip(f) {
        *b = c.to_ascii_lowercase();
    }
    match &buf[..f.len()] {
        b"r" | b"read" | b"get" | b"28" | b"08" | b"88" | b"a8" => Some(Op::Read),
        b"w" | b"write" | b"set" | b"2a" | b"0a" | b"8a" | b"aa" => Some(Op::Write),
        _ => None,
    }
}

pub const OP_NAMES: &str =
    "r/read/get or w/write/set (any case), or a SCSI READ/WRITE opcode in hex (28, 08, 88, a8 / 2a, 0a, 8a, aa)";

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The page range is the smallest one holding every byte of the request.
        #[test]
        fn byte_span_covers_exactly_the_touched_pages(
            off in 0u64..1 << 40,
            len in 1u64..1 << 24,
            shift in 6u32..16,
        ) {
            let ps = 1u32 << shift;
            let (first, n) = byte_span(off, len, ps).unwrap();
            let (ps, n) = (ps as u64, n as u64);
            prop_assert!(first * ps <= off && off < (first + 1) * ps);
            prop_assert!((first + n - 1) * ps < off + len && off + len <= (first + n) * ps);
        }

        #[test]
        fn decimal_seconds_are_exact(int in 0u64..10_000_000_000, frac in 0u64..1_000_000_000) {
            let s = format!("{int}.{frac:09}");
            prop_assert_eq!(parse_seconds_ns(s.as_bytes()), Some(int * 1_000_000_000 + frac));
        }
    }
}
