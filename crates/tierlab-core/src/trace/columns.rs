//! A batch of trace records column by column, the form in which the replay engine carries them
//! from the reading thread to the dense-id decoder.
//!
//! The replay's own batch (`sim::RefBatch`) is columns too, with the same time, page and app
//! columns and the same flag bits, so a batch of single-page accesses becomes page references by
//! handing those columns over (no copy) and computing only the dense ids. A reader that decodes
//! columns itself (the native format) never builds a [`Record`]; the others fill the columns
//! from their records ([`TraceReader::read_columns`]'s default).

use super::{Access, Event, Kind, Op, Record, TraceReader};
use crate::error::Result;

/// Flag bit of a write access (`RecordColumns::flags`, and the same bit in `sim::RefBatch`).
pub const FLAG_WRITE: u8 = 1;
/// Flag bit of an anonymous-page access.
pub const FLAG_ANON: u8 = 2;
/// Flag bit of the first page of a request: set on every access record.
pub const FLAG_REQ_START: u8 = 4;

/// The flags of an access with `op` and `kind`, as the first page of its request.
#[inline(always)]
pub fn access_flags(op: Op, kind: Kind) -> u8 {
    FLAG_REQ_START | (op as u8 * FLAG_WRITE) | (kind as u8 * FLAG_ANON)
}

/// Accesses as columns in trace order, and the events between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordColumns {
    pub time: Vec<u64>,
    pub page: Vec<u64>,
    pub app: Vec<u32>,
    /// Request length in pages.
    pub npages: Vec<u32>,
    /// [`FLAG_WRITE`] | [`FLAG_ANON`] | [`FLAG_REQ_START`] (always set).
    pub flags: Vec<u8>,
    /// Object sizes in bytes, one per access; empty when the format carries none (all 0).
    pub size: Vec<u32>,
    /// Each event with the number of accesses before it in this batch; in trace order.
    pub events: Vec<(usize, Event)>,
    /// Whether every access spans one page (kept up to date by the push methods, and by
    /// whoever fills the columns directly).
    pub single_pages: bool,
}

impl RecordColumns {
    /// Accesses in the batch.
    #[inline]
    pub fn accesses(&self) -> usize {
        self.time.len()
    }

    /// Records (accesses and events) in the batch.
    #[inline]
    pub fn records(&self) -> usize {
        self.time.len() + self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records() == 0
    }

    /// Page references the accesses expand to.
    pub fn page_refs(&self) -> u64 {
        if self.single_pages {
            self.accesses() as u64
        } else {
            self.npages.iter().map(|&n| n as u64).sum()
        }
    }

    pub fn clear(&mut self) {
        self.time.clear();
        self.page.clear();
        self.app.clear();
        self.npages.clear();
        self.flags.clear();
        self.size.clear();
        self.events.clear();
        self.single_pages = true;
    }

    pub fn reserve(&mut self, n: usize) {
        self.time.reserve(n);
        self.page.reserve(n);
        self.app.reserve(n);
        self.npages.reserve(n);
        self.flags.reserve(n);
    }

    #[inline]
    pub fn push_access(&mut self, a: &Access) {
        if self.time.is_empty() {
            self.single_pages = true;
        }
        self.single_pages &= a.npages == 1;
        if a.size != 0 || !self.size.is_empty() {
            // The size column starts at the first sized access, zeros before it.
            self.size.resize(self.time.len(), 0);
            self.size.push(a.size);
        }
        self.time.push(a.time);
        self.page.push(a.page);
        self.app.push(a.app);
        self.npages.push(a.npages);
        self.flags.push(access_flags(a.op, a.kind));
    }

    #[inline]
    pub fn push_event(&mut self, e: Event) {
        self.events.push((self.time.len(), e));
    }

    /// Appends `records`.
    pub fn extend_records(&mut self, records: &[Record]) {
        self.reserve(records.len());
        for r in records {
            match r {
                Record::Access(a) => self.push_access(a),
                Record::Event(e) => self.push_event(*e),
            }
        }
    }

    /// Access `i` as a record.
    pub fn access(&self, i: usize) -> Access {
        let f = self.flags[i];
        Access {
            time: self.time[i],
            page: self.page[i],
            op: if f & FLAG_WRITE != 0 {
                Op::Write
            } else {
                Op::Read
            },
            kind: if f & FLAG_ANON != 0 {
                Kind::Anon
            } else {
                Kind::File
            },
            app: self.app[i],
            npages: self.npages[i],
            size: self.size.get(i).copied().unwrap_or(0),
        }
    }

    /// Accesses and events before record `r` (records counted in trace order).
    fn split(&self, r: usize) -> (usize, usize) {
        // Event j is record number `events[j].0 + j`.
        let e = self
            .events
            .iter()
            .enumerate()
            .take_while(|(j, (pos, _))| pos + j < r)
            .count();
        (r - e, e)
    }

    /// Appends records `from..to` of `src` (trace order) to `out`, as records.
    pub fn records_to(&self, from: usize, to: usize, out: &mut Vec<Record>) {
        let (a0, e0) = self.split(from);
        let (a1, e1) = self.split(to);
        out.reserve(to - from);
        let mut events = self.events[e0..e1].iter().peekable();
        for i in a0..a1 {
            while let Some((_, e)) = events.next_if(|(pos, _)| *pos <= i) {
                out.push(Record::Event(*e));
            }
            out.push(Record::Access(self.access(i)));
        }
        out.extend(events.map(|(_, e)| Record::Event(*e)));
    }

    /// Appends records `from..to` of `src` (trace order).
    pub fn extend_from(&mut self, src: &RecordColumns, from: usize, to: usize) {
        let (a0, e0) = src.split(from);
        let (a1, e1) = src.split(to);
        let base = self.accesses();
        if base == 0 {
            self.single_pages = true;
        }
        self.single_pages &= src.single_pages || src.npages[a0..a1].iter().all(|&n| n == 1);
        if !src.size.is_empty() && self.size.len() < base {
            self.size.resize(base, 0);
        }
        self.time.extend_from_slice(&src.time[a0..a1]);
        self.page.extend_from_slice(&src.page[a0..a1]);
        self.app.extend_from_slice(&src.app[a0..a1]);
        self.npages.extend_from_slice(&src.npages[a0..a1]);
        self.flags.extend_from_slice(&src.flags[a0..a1]);
        if !src.size.is_empty() {
            self.size.extend_from_slice(&src.size[a0..a1]);
        } else if !self.size.is_empty() {
            self.size.resize(self.accesses(), 0);
        }
        self.events.extend(
            src.events[e0..e1]
                .iter()
                .map(|&(pos, e)| (base + pos - a0, e)),
        );
    }
}

/// Fills `out` through [`TraceReader::read_batch`], for readers that produce records.
pub fn read_columns_via_records(
    reader: &mut (impl TraceReader + ?Sized),
    out: &mut RecordColumns,
    max: usize,
    scratch: &mut Vec<Record>,
) -> Result<bool> {
    scratch.clear();
    let more = reader.read_batch(scratch, max)?;
    out.extend_records(scratch);
    Ok(more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::EventKind;

    fn records() -> Vec<Record> {
        let ev = |t, app| {
            Record::Event(Event {
                time: t,
                app,
                kind: EventKind::Foreground,
            })
        };
        let mut a = Access::page(1, 10, Op::Write, Kind::Anon);
        a.app = 3;
        vec![
            ev(0, 1),
            Record::Access(a),
            Record::Access(Access::file(2, 20, 4, Op::Read, 0, 512)),
            ev(3, 2),
            ev(4, 2),
            Record::Access(Access::page(5, 11, Op::Read, Kind::File)),
            ev(6, 0),
        ]
    }

    /// Records survive columns whole and in every split, events in place.
    #[test]
    fn records_round_trip_through_columns_in_any_range() {
        let recs = records();
        let mut c = RecordColumns::default();
        c.extend_records(&recs);
        assert_eq!((c.accesses(), c.records()), (3, 7));
        assert!(!c.single_pages);
        assert_eq!(c.page_refs(), 6);
        assert_eq!(c.size, vec![0, 512, 0]);
        assert_eq!(c.flags, vec![7, 4, 4]);
        for from in 0..=recs.len() {
            for to in from..=recs.len() {
                let mut out = Vec::new();
                c.records_to(from, to, &mut out);
                assert_eq!(out, recs[from..to], "records {from}..{to}");
                let mut part = RecordColumns::default();
                part.extend_from(&c, 0, from);
                part.extend_from(&c, from, to);
                let mut whole = Vec::new();
                part.records_to(0, part.records(), &mut whole);
                assert_eq!(whole, recs[..to], "records ..{from} then {from}..{to}");
            }
        }
    }

    #[test]
    fn single_page_batches_are_marked() {
        let mut c = RecordColumns::default();
        c.push_access(&Access::page(0, 1, Op::Read, Kind::File));
        assert!(c.single_pages && c.size.is_empty());
        c.push_access(&Access::file(1, 2, 2, Op::Read, 0, 0));
        assert!(!c.single_pages);
        c.clear();
        c.push_access(&Access::page(0, 1, Op::Read, Kind::File));
        assert!(c.single_pages);
        c.clear();
        c.push_access(&Access::file(0, 1, 1, Op::Read, 0, 100));
        c.push_access(&Access::file(1, 2, 1, Op::Read, 0, 200));
        assert_eq!(c.size, vec![100, 200]);
    }
}
