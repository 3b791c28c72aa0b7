//! Fixed-size binary records of any layout, described in Python's `struct` notation (what
//! libCacheSim's `binary` reader takes as `binary_fmt_str`, `traceReader/generalReader/binary.c`).
//!
//! The layout starts with its byte order (`<` little-endian, `>` or `!` big-endian, `=` this
//! machine's order), then one character per field, each optionally preceded by a repeat count:
//! `b`/`B` (8-bit), `h`/`H` (16), `i`/`I`/`l`/`L` (32), `q`/`Q` (64-bit signed/unsigned
//! integers), `c` and `?` (one byte, read as an unsigned integer), `f`/`d` (32/64-bit floats,
//! for the time field only) and `x` (a pad byte, no field). Sizes are the standard ones and there
//! is no alignment (Python's `<`, `>`, `!` and `=` modes); a layout without a byte order (Python's
//! native `@` mode) is refused, since a file does not say which order it was written in. Fields
//! are numbered from 1 in the order `struct.unpack` returns them (pad bytes are not fields): the
//! options `id` (default 1), `size`, `op`, `time` and `next` name them (0: the record has none).
//!
//! - `id`: the object id (an integer field; a negative one is taken as its 64-bit two's
//!   complement, as libCacheSim does).
//! - `size`: the object size in bytes (a positive integer below 2^32; 0 is an error unless
//!   `skip_zero_size = true`, which skips such records as libCacheSim does by default).
//! - `op`: libCacheSim's operation codes (`ops = "libcachesim"`, the default: 0 nop, 1 get,
//!   2 gets, 12 read and 9 delete are reads, since libCacheSim's simulator replays a delete as a
//!   request; 3 set, 4 add, 5 cas, 6 replace, 7 append, 8 prepend, 10 incr, 11 decr, 13 write,
//!   14 update are writes; anything else is an error), or `ops = "rw"`: 0 read, 1 write.
//! - `time`: a timestamp in `time_unit` (`"s"` by default, libCacheSim's clock unit; `ms`, `us`,
//!   `ns`), integer or float; without it a record's time is its ordinal.
//! - `next`: the next-access field of oracle layouts; checked to exist, not used (tierlab
//!   computes future knowledge itself).
//!
//! Other options: `offset` (bytes skipped before the first record, libCacheSim's
//! `trace_start_offset`), `addressing` (`"object"`, the default: one page per record keyed by the
//! id, libCacheSim's unit-size counting; `"block"`: the id counts `block_size`-byte blocks,
//! default 512, and the record covers the pages of `page_size` bytes its `size` bytes touch, one
//! block without a size field), `page_size` (4096).
//!
//! Differences from libCacheSim, which reads only little-endian layouts: libCacheSim reads
//! unsigned fields as signed ones (`I` = 0xffffffff gives the id 2^64 - 1, `B` = 200 gives
//! 2^64 - 56); tierlab reads them as Python does (4294967295, 200). Both mappings are one-to-one,
//! so the same records hit and miss the same way; tests/test_binary_formats_libcachesim.py checks
//! the ids, sizes and ops against pip `libcachesim` on generated files of every layout.
//!
//! Errors, each naming the file and the byte offset or value: a layout that does not parse (the
//! offending character), a field number beyond the layout, a float id, size or op, data that is
//! not a whole number of records (checked from the file length up front for uncompressed files,
//! at the end otherwise), and field values out of range. `FORMAT_HELP` (printed when a binary
//! file comes without a layout) lists the common layouts.
//!
//! Cost: one fixed-size read and a few field decodes per record; constant memory.

use super::common::{byte_span, check_page_size, empty_binary, to_bytes, Addressing, TimeUnit};
use crate::error::{Error, Location, Result};
use crate::trace::input::{open_input, Bytes, Compression};
use crate::trace::{Access, Op, Record, TraceReader};
use serde::Deserialize;
use std::path::Path;

/// The common layouts, for the error on a binary file given without one.
pub const LAYOUT_HELP: &str = "layouts in Python struct notation, fields numbered from 1: \
'<I' / '>I' (a raw array of little-/big-endian 32-bit ids, e.g. block numbers), '<Q' / '>Q' \
(64-bit), '<IQIq' with id=2 size=3 time=1 next=4 (libCacheSim oracleGeneral, also -f oracle), \
'<IQIIq' with time=1 id=2 size=3 (op in the low byte of field 4 in libCacheSim's lcs v2: use -f \
lcs for .lcs files); e.g. -f binary -O layout='<I' or -f binary -O layout='<IQIq' -O id=2 -O size=3";

/// One field's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl FieldType {
    fn of(c: char) -> Option<FieldType> {
        Some(match c {
            'b' => FieldType::I8,
            'B' | 'c' | '?' => FieldType::U8,
            'h' => FieldType::I16,
            'H' => FieldType::U16,
            'i' | 'l' => FieldType::I32,
            'I' | 'L' => FieldType::U32,
            'q' => FieldType::I64,
            'Q' => FieldType::U64,
            'f' => FieldType::F32,
            'd' => FieldType::F64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> usize {
        match self {
            FieldType::I8 | FieldType::U8 => 1,
            FieldType::I16 | FieldType::U16 => 2,
            FieldType::I32 | FieldType::U32 | FieldType::F32 => 4,
            FieldType::I64 | FieldType::U64 | FieldType::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, FieldType::F32 | FieldType::F64)
    }
}

/// A parsed record layout: byte order, fields with their offsets, record length.
#[derive(Debug, Clone)]
pub struct Layout {
    pub text: String,
    pub big_endian: bool,
    /// (type, byte offset in the record), in field order.
    pub fields: Vec<(FieldType, usize)>,
    pub record: usize,
}

/// Longest record a layout may describe (a typo like `<1000000000x` must not allocate).
const MAX_RECORD: usize = 1 << 16;

impl Layout {
    /// Parses a layout in Python's struct notation (see the module doc).
    pub fn parse(text: &str) -> std::result::Result<Layout, String> {
        let bad = |msg: String| format!("layout '{text}': {msg}");
        let mut chars = text.chars().peekable();
        let big_endian = match chars.next() {
            Some('<') => false,
            Some('>' | '!') => true,
            Some('=') => cfg!(target_endian = "big"),
            Some('@') => {
                return Err(bad("native alignment ('@') is not supported: start the layout with '<' (little-endian) or '>' (big-endian)".into()))
            }
            _ => {
                return Err(bad(
                    "no byte order: start the layout with '<' (little-endian) or '>' (big-endian)"
                        .into(),
                ))
            }
        };
        let mut fields = Vec::new();
        let mut offset = 0usize;
        let mut pos = 1;
        while let Some(c) = chars.next() {
            pos += 1;
            if c.is_whitespace() {
                continue;
            }
            let mut count = 1usize;
            let mut c = c;
            if c.is_ascii_digit() {
                let mut n: usize = c.to_digit(10).unwrap() as usize;
                loop {
                    match chars.next() {
                        Some(d) if d.is_ascii_digit() => {
                            pos += 1;
                            n = n
                                .checked_mul(10)
                                .and_then(|n| n.checked_add(d.to_digit(10).unwrap() as usize))
                                .filter(|&n| n <= MAX_RECORD)
                                .ok_or_else(|| bad(format!("repeat count over {MAX_RECORD}")))?;
                        }
                        Some(d) => {
                            pos += 1;
                            c = d;
                            break;
                        }
                        None => return Err(bad("a repeat count without a field character".into())),
                    }
                }
                count = n;
            }
            if c == 'x' {
                offset += count;
            } else if let Some(t) = FieldType::of(c) {
                for _ in 0..count {
                    fields.push((t, offset));
                    offset += t.bytes();
                    if offset > MAX_RECORD {
                        break;
                    }
                }
            } else {
                let why = match c {
                    's' | 'p' => "strings are not supported",
                    'e' => "half floats are not supported",
                    'n' | 'N' | 'P' => "native-only types are not supported",
                    _ => "not a struct format character",
                };
                return Err(bad(format!(
                    "'{c}' (character {pos}): {why}; expected one of x b B c ? h H i I l L q Q f d"
                )));
            }
            if offset > MAX_RECORD {
                return Err(bad(format!("records longer than {MAX_RECORD} bytes")));
            }
        }
        if fields.is_empty() {
            return Err(bad("no fields".into()));
        }
        Ok(Layout {
            text: text.to_string(),
            big_endian,
            fields,
            record: offset,
        })
    }

    fn raw(&self, rec: &[u8], field: usize) -> (FieldType, u64) {
        let (t, at) = self.fields[field];
        let n = t.bytes();
        let mut b = [0u8; 8];
        if self.big_endian {
            b[8 - n..].copy_from_slice(&rec[at..at + n]);
            (t, u64::from_be_bytes(b))
        } else {
            b[..n].copy_from_slice(&rec[at..at + n]);
            (t, u64::from_le_bytes(b))
        }
    }

    /// Integer field `field` (0-based) of `rec`, sign-extended for signed types.
    pub fn int(&self, rec: &[u8], field: usize) -> i128 {
        let (t, v) = self.raw(rec, field);
        match t {
            FieldType::I8 => v as u8 as i8 as i128,
            FieldType::I16 => v as u16 as i16 as i128,
            FieldType::I32 => v as u32 as i32 as i128,
            FieldType::I64 => v as i64 as i128,
            FieldType::F32 => f32::from_bits(v as u32) as i128,
            FieldType::F64 => f64::from_bits(v) as i128,
            _ => v as i128,
        }
    }

    /// Field `field` as a float (integers converted).
    pub fn float(&self, rec: &[u8], field: usize) -> f64 {
        let (t, v) = self.raw(rec, field);
        match t {
            FieldType::F32 => f32::from_bits(v as u32) as f64,
            FieldType::F64 => f64::from_bits(v),
            _ => self.int(rec, field) as f64,
        }
    }
}

/// How the op field's values map to reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpCodes {
    /// libCacheSim's `req_op_e` codes (see the module doc).
    #[default]
    Libcachesim,
    /// 0 read, 1 write.
    Rw,
}

impl OpCodes {
    pub fn op(self, v: i128) -> Option<Op> {
        match (self, v) {
            (OpCodes::Rw, 0) => Some(Op::Read),
            (OpCodes::Rw, 1) => Some(Op::Write),
            (OpCodes::Libcachesim, 0 | 1 | 2 | 9 | 12) => Some(Op::Read),
            (OpCodes::Libcachesim, 3..=8 | 10 | 11 | 13 | 14) => Some(Op::Write),
            _ => None,
        }
    }

    fn expected(self) -> &'static str {
        match self {
            OpCodes::Rw => "0 (read) or 1 (write) (ops = \"rw\")",
            OpCodes::Libcachesim => {
                "a libCacheSim op code 0..=14 (or set ops = \"rw\" for 0 read / 1 write)"
            }
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BinaryOptions {
    /// The record layout (required).
    pub layout: Option<String>,
    pub id: usize,
    pub size: usize,
    pub op: usize,
    pub time: usize,
    pub next: usize,
    pub ops: OpCodes,
    pub time_unit: TimeUnit,
    pub offset: u64,
    pub addressing: Addressing,
    pub block_size: u64,
    pub page_size: u32,
    pub skip_zero_size: bool,
}

impl Default for BinaryOptions {
    fn default() -> Self {
        BinaryOptions {
            layout: None,
            id: 1,
            size: 0,
            op: 0,
            time: 0,
            next: 0,
            ops: OpCodes::Libcachesim,
            time_unit: TimeUnit::Seconds,
            offset: 0,
            addressing: Addressing::Object,
            block_size: 512,
            page_size: 4096,
            skip_zero_size: false,
        }
    }
}

/// Which fields of a layout are what (0-based field indices).
#[derive(Debug, Clone)]
pub struct Fields {
    pub layout: Layout,
    pub id: usize,
    pub size: Option<usize>,
    pub op: Option<usize>,
    pub time: Option<usize>,
}

impl Fields {
    /// Checks the field numbers of `opts` against `layout` (`format` names the reader in errors).
    pub fn new(format: &str, layout: Layout, opts: &BinaryOptions) -> Result<Fields> {
        let n = layout.fields.len();
        let pick = |name: &str, k: usize, int: bool| -> Result<Option<usize>> {
            if k == 0 {
                return Ok(None);
            }
            if k > n {
                return Err(Error::config(format!(
                    "options of trace format '{format}': {name} = {k}, but layout '{}' has {n} field{} (numbered from 1)",
                    layout.text,
                    if n == 1 { "" } else { "s" }
                )));
            }
            let t = layout.fields[k - 1].0;
            if int && t.is_float() {
                return Err(Error::config(format!(
                    "options of trace format '{format}': {name} = {k} is a float field of layout '{}'; {name} must be an integer field",
                    layout.text
                )));
            }
            Ok(Some(k - 1))
        };
        let id = pick("id", opts.id, true)?.ok_or_else(|| {
            Error::config(format!(
                "options of trace format '{format}': id = 0; every record needs an id field (numbered from 1)"
            ))
        })?;
        let size = pick("size", opts.size, true)?;
        let op = pick("op", opts.op, true)?;
        let time = pick("time", opts.time, false)?;
        pick("next", opts.next, true)?;
        Ok(Fields {
            layout,
            id,
            size,
            op,
            time,
        })
    }
}

/// Reads records of a [`Layout`]; also the engine of the `lcs` reader.
pub struct BinaryReader {
    bytes: Bytes,
    fields: Fields,
    opts: BinaryOptions,
    what: String,
    buf: Vec<u8>,
    records: u64,
    name: &'static str,
}

/// The options error of `-f binary` without a layout.
pub fn no_layout(path: &Path) -> Error {
    Error::config(format!(
        "{}: trace format 'binary' needs a record layout (-O layout=...); {LAYOUT_HELP}",
        path.display()
    ))
}

impl BinaryReader {
    pub fn open(path: &Path, opts: BinaryOptions) -> Result<Self> {
        let text = opts.layout.clone().ok_or_else(|| no_layout(path))?;
        let layout = Layout::parse(&text)
            .map_err(|m| Error::config(format!("options of trace format 'binary': {m}")))?;
        let fields = Fields::new("binary", layout, &opts)?;
        Self::with_fields(path, fields, opts, "binary", 0)
    }

    /// A reader of `fields` records after `header` bytes (plus `opts.offset`), as format `name`.
    pub fn with_fields(
        path: &Path,
        fields: Fields,
        opts: BinaryOptions,
        name: &'static str,
        header: u64,
    ) -> Result<Self> {
        check_page_size(name, opts.page_size)?;
        if opts.block_size == 0 {
            return Err(Error::config(format!(
                "options of trace format '{name}': block_size must be > 0"
            )));
        }
        let input = open_input(path)?;
        let record = fields.layout.record as u64;
        let skip = header + opts.offset;
        if input.compression == Compression::None {
            let len = std::fs::metadata(path)
                .map_err(|e| Error::io(path, e))?
                .len();
            let data = len.saturating_sub(skip);
            if len < skip || data % record != 0 {
                return Err(Error::input(
                    &input.name,
                    Location::Whole,
                    format!(
                        "{len} bytes: after {skip} bytes of header and offset, {data} bytes are not a whole number of {record}-byte records of layout '{}' ({} bytes left over)",
                        fields.layout.text,
                        data % record
                    ),
                ));
            }
        }
        let mut bytes = Bytes::new(input);
        bytes.skip(skip, "header")?;
        let what = format!("record of layout '{}' ({record} bytes)", fields.layout.text);
        Ok(BinaryReader {
            bytes,
            buf: vec![0; fields.layout.record],
            fields,
            opts,
            what,
            records: 0,
            name,
        })
    }

    fn access(&self) -> std::result::Result<Option<Access>, String> {
        let (l, rec) = (&self.fields.layout, &self.buf[..]);
        let id = l.int(rec, self.fields.id) as u64;
        let size = match self.fields.size {
            None => 0,
            Some(f) => match l.int(rec, f) {
                0 if self.opts.skip_zero_size => return Ok(None),
                0 => {
                    return Err("expected size > 0, found 0 (set skip_zero_size = true to skip such records as libCacheSim does)".into())
                }
                s if s < 0 || s > u32::MAX as i128 => {
                    return Err(format!(
                        "size field {} = {s}: expected 1..=4294967295 bytes",
                        f + 1
                    ))
                }
                s => s as u32,
            },
        };
        let op = match self.fields.op {
            None => Op::Read,
            Some(f) => {
                let v = l.int(rec, f);
                self.opts.ops.op(v).ok_or_else(|| {
                    format!(
                        "op field {} = {v}: expected {}",
                        f + 1,
                        self.opts.ops.expected()
                    )
                })?
            }
        };
        let time = match self.fields.time {
            None => self.records,
            Some(f) => {
                let scale = self.opts.time_unit.scale();
                // Integers exactly in i128; floats through f64 (what a float field holds).
                let t: Option<i128> = if l.fields[f].0.is_float() {
                    let x = l.float(rec, f) * 10f64.powi(scale as i32);
                    (0.0..1.8e19).contains(&x).then_some(x as i128)
                } else {
                    Some(l.int(rec, f) * 10i128.pow(scale))
                };
                match t {
                    Some(t) if (0..=u64::MAX as i128).contains(&t) => t as u64,
                    _ => {
                        return Err(format!(
                            "time field {} = {}: expected a time >= 0 that fits 64-bit nanoseconds",
                            f + 1,
                            l.float(rec, f)
                        ))
                    }
                }
            }
        };
        let (page, npages) = match self.opts.addressing {
            Addressing::Object => (id, 1),
            Addressing::Block => {
                let off = to_bytes(id, self.opts.block_size, "id")?;
                let len = if size == 0 {
                    self.opts.block_size
                } else {
                    size as u64
                };
                byte_span(off, len, self.opts.page_size)?
            }
        };
        Ok(Some(Access::file(time, page, npages, op, 0, size)))
    }
}

impl TraceReader for BinaryReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let mut n = 0;
        while n < max {
            let at = self.bytes.offset();
            if !self.bytes.read_record(&mut self.buf, &self.what)? {
                if self.records == 0 {
                    return Err(empty_binary(&self.bytes, &self.what));
                }
                return Ok(false);
            }
            let a = self.access().map_err(|m| self.bytes.error_at(at, m))?;
            self.records += 1;
            if let Some(a) = a {
                out.push(Record::Access(a));
                n += 1;
            }
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.opts.page_size
    }

    fn format(&self) -> &'static str {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_like_python_struct() {
        let l = Layout::parse("<IQIq").unwrap();
        assert_eq!(l.record, 24);
        assert_eq!(
            l.fields,
            vec![
                (FieldType::U32, 0),
                (FieldType::U64, 4),
                (FieldType::U32, 12),
                (FieldType::I64, 16)
            ]
        );
        let l = Layout::parse(">2x2H d").unwrap();
        assert!(l.big_endian);
        assert_eq!(l.record, 14);
        assert_eq!(
            l.fields,
            vec![
                (FieldType::U16, 2),
                (FieldType::U16, 4),
                (FieldType::F64, 6)
            ]
        );
        for (bad, needle) in [
            ("I", "no byte order"),
            ("@I", "native alignment"),
            ("<I5s", "'s' (character 4): strings"),
            ("<Iz", "'z'"),
            ("<", "no fields"),
            ("<4x", "no fields"),
            ("<3", "repeat count without"),
            ("<99999999x", "repeat count over"),
        ] {
            let e = Layout::parse(bad).unwrap_err();
            assert!(e.contains(needle) && e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn fields_decode_in_either_byte_order() {
        let le = Layout::parse("<bHiQd").unwrap();
        let mut rec = vec![0xffu8];
        rec.extend(0xfffeu16.to_le_bytes());
        rec.extend((-5i32).to_le_bytes());
        rec.extend(u64::MAX.to_le_bytes());
        rec.extend(2.75f64.to_le_bytes());
        assert_eq!(le.int(&rec, 0), -1);
        assert_eq!(le.int(&rec, 1), 0xfffe);
        assert_eq!(le.int(&rec, 2), -5);
        assert_eq!(le.int(&rec, 3), u64::MAX as i128);
        assert_eq!(le.float(&rec, 4), 2.75);
        assert_eq!(le.int(&rec, 4), 2);
        let be = Layout::parse(">I").unwrap();
        assert_eq!(be.int(&0x01020304u32.to_be_bytes(), 0), 0x01020304);
    }

    #[test]
    fn op_codes() {
        use OpCodes::*;
        assert_eq!(Libcachesim.op(1), Some(Op::Read));
        assert_eq!(Libcachesim.op(9), Some(Op::Read));
        assert_eq!(Libcachesim.op(13), Some(Op::Write));
        assert_eq!(Libcachesim.op(15), None);
        assert_eq!(Libcachesim.op(-1), None);
        assert_eq!(Rw.op(1), Some(Op::Write));
        assert_eq!(Rw.op(2), None);
    }
}
