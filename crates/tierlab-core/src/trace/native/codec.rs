//! The block codec: varints, the per-column encoding, block headers and payload decoding.

use super::*;

#[inline]
pub(super) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub(super) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A cursor over one column; `None` on overrun or an over-long varint.
pub(super) struct Col<'a> {
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
        // Up to eight bytes at once when eight remain: the first byte without the continuation
        // bit ends the varint; its 7-bit groups are gathered without a loop. Page deltas of
        // scattered references are 2-4 bytes, so this is most of a block's decoding.
        if let Some(word) = self.buf.get(self.pos..self.pos + 8) {
            let x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let ends = !x & 0x8080_8080_8080_8080;
            if ends != 0 {
                let len = (ends.trailing_zeros() / 8 + 1) as usize;
                let x = if len == 8 {
                    x
                } else {
                    x & ((1u64 << (8 * len)) - 1)
                };
                let v = (x & 0x7f)
                    | ((x >> 1) & (0x7f << 7))
                    | ((x >> 2) & (0x7f << 14))
                    | ((x >> 3) & (0x7f << 21))
                    | ((x >> 4) & (0x7f << 28))
                    | ((x >> 5) & (0x7f << 35))
                    | ((x >> 6) & (0x7f << 42))
                    | ((x >> 7) & (0x7f << 49));
                self.pos += len;
                return Some(v);
            }
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
    /// The column's remaining bytes, consumed, if they are exactly `n` one-byte varints that
    /// all pass `keep`; otherwise nothing is consumed.
    #[inline]
    fn single_bytes(&mut self, n: usize, keep: impl Fn(u8) -> bool) -> Option<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        if rest.len() != n || !rest.iter().all(|&b| b < 0x80 && keep(b)) {
            return None;
        }
        self.pos = self.buf.len();
        Some(rest)
    }

    fn done(&self) -> bool {
        self.pos == self.buf.len()
    }
}

pub(super) fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
pub(super) fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

pub(super) struct BlockHeader {
    pub(super) n_records: u32,
    pub(super) n_events: u32,
    pub(super) raw_len: u32,
    pub(super) comp_len: u32,
    pub(super) first_record: u64,
    pub(super) crc: u32,
}

/// Checks a block header's fields against each other and the space left.
pub(super) fn parse_block_header(
    h: &[u8],
    off: u64,
    end: u64,
) -> std::result::Result<BlockHeader, String> {
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

/// Decodes a block's payload straight into columns (appended to `out`, which the reader keeps
/// empty between blocks).
pub(super) fn decode_payload(
    raw: &[u8],
    n: u32,
    n_ev: u32,
    out: &mut RecordColumns,
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
    if out.accesses() == 0 {
        out.single_pages = true;
    }
    out.reserve(a);
    out.events.reserve(e);
    let (mut t, mut pg) = (0u64, 0u64);
    let (mut ai, mut ei) = (0usize, 0usize);
    let mut all_single = true;
    if e == 0 {
        // No events (most traces): each column decodes in a loop of its own, and a column whose
        // values are all one byte long (ordinal times, one app, single pages) without varint
        // decoding.
        if let Some(bytes) = time.single_bytes(a, |_| true) {
            out.time.extend(bytes.iter().map(|&b| {
                t = t.wrapping_add(unzigzag(b as u64) as u64);
                t
            }));
        } else {
            for _ in 0..a {
                t = t.wrapping_add(unzigzag(time.varint().ok_or_else(|| col_err(1))?) as u64);
                out.time.push(t);
            }
        }
        for _ in 0..a {
            pg = pg.wrapping_add(unzigzag(page.varint().ok_or_else(|| col_err(2))?) as u64);
            out.page.push(pg);
        }
        // The column's bits 0 and 1 are the flags' write and anon bits.
        out.flags
            .extend((0..a).map(|i| FLAG_REQ_START | ((opkind.buf[i / 4] >> (2 * (i % 4))) & 3)));
        if let Some(bytes) = app.single_bytes(a, |_| true) {
            out.app.extend(bytes.iter().map(|&b| b as u32));
        } else {
            for _ in 0..a {
                let ap = app.varint().ok_or_else(|| col_err(4))?;
                out.app.push(u32::try_from(ap).map_err(|_| col_err(4))?);
            }
        }
        match npages.single_bytes(a, |b| b == 1) {
            Some(_) => out.npages.resize(out.npages.len() + a, 1),
            None => {
                for _ in 0..a {
                    let np = npages.varint().ok_or_else(|| col_err(5))?;
                    if np == 0 || np > MAX_REQUEST_PAGES {
                        return Err(format!("request of {np} pages (1..={MAX_REQUEST_PAGES})"));
                    }
                    all_single &= np == 1;
                    out.npages.push(np as u32);
                }
            }
        }
    } else {
        // Events among the accesses: record by record, in trace order.
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
                out.push_event(Event { time: t, app, kind });
                ei += 1;
            } else {
                pg = pg.wrapping_add(unzigzag(page.varint().ok_or_else(|| col_err(2))?) as u64);
                // The column's bits 0 and 1 are the flags' write and anon bits.
                let bits = (opkind.buf[ai / 4] >> (2 * (ai % 4))) & 3;
                let ap = app.varint().ok_or_else(|| col_err(4))?;
                let np = npages.varint().ok_or_else(|| col_err(5))?;
                if np == 0 || np > MAX_REQUEST_PAGES {
                    return Err(format!("request of {np} pages (1..={MAX_REQUEST_PAGES})"));
                }
                all_single &= np == 1;
                out.time.push(t);
                out.page.push(pg);
                out.app.push(u32::try_from(ap).map_err(|_| col_err(4))?);
                out.npages.push(np as u32);
                out.flags.push(FLAG_REQ_START | bits);
                ai += 1;
            }
        }
    }
    out.single_pages &= all_single;
    for (i, c) in cols.iter().enumerate() {
        if i != 0 && i != 3 && i != 6 && !c.done() {
            return Err(format!("{} column has trailing bytes", NAMES[i]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{put_varint, Col};

    /// Values of every encoded length (1 to 10 bytes), each at every distance from the end of
    /// the column (the eight-byte path and the byte-by-byte one), decode to themselves.
    #[test]
    fn varints_of_every_length_round_trip_anywhere_in_a_column() {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([u64::MAX, 0x7f, 0x80, 0x3fff, 0x4000, 300, 1 << 56]);
        for &v in &values {
            for tail in 0..10 {
                let mut buf = Vec::new();
                put_varint(&mut buf, v);
                let len = buf.len();
                buf.extend(std::iter::repeat_n(0u8, tail));
                let mut c = Col { buf: &buf, pos: 0 };
                assert_eq!(c.varint(), Some(v), "{v:#x} with {tail} bytes after");
                assert_eq!(c.pos, len);
            }
        }
    }

    #[test]
    fn over_long_or_cut_varints_are_none() {
        // Eleven bytes with continuation bits, or a value past 64 bits in the tenth byte.
        let long = [0xffu8; 11];
        assert_eq!(Col { buf: &long, pos: 0 }.varint(), None);
        let mut past = vec![0xffu8; 9];
        past.push(0x02);
        assert_eq!(Col { buf: &past, pos: 0 }.varint(), None);
        // Cut short: the continuation bit promises a byte that is not there.
        let cut = [0x80u8, 0x80, 0x80];
        assert_eq!(Col { buf: &cut, pos: 0 }.varint(), None);
    }
}
