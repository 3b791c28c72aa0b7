//! Trace records to page references: the dense page-id map and the split of requests into
//! pages (or, in object-size mode, one sized reference per request).
//!
//! Records arrive as columns ([`RecordColumns`]). A batch of single-page accesses, the common
//! case (generated, LIRS, ARC, oracleGeneral and most native traces), becomes a [`RefBatch`] by
//! handing its time, page, app and flag columns over and computing only the ids, so a native
//! block goes from its varints to the replay without a per-record struct in between.

use super::page_ids::PageIds;
use super::{RefBatch, NEVER};
use crate::error::{Error, Result};
use crate::trace::columns::FLAG_REQ_START;
use crate::trace::{Event, Record, RecordColumns, TraceReader};

/// Splits trace records into page references with dense ids (or, in object-size mode, into
/// one reference per record, sized).
#[derive(Default)]
pub struct Decoder {
    ids: PageIds,
    seq: u64,
    pub requests: u64,
    pub events: u64,
    /// Object-size mode: one reference per record, with its size (see
    /// [`super::engine::RunOptions`]).
    pub object_sizes: bool,
    /// Bytes of the object references decoded so far (object-size mode only).
    pub bytes: u64,
    /// Columns for [`Decoder::decode`]'s records and [`Decoder::read`]'s batches.
    scratch: RecordColumns,
    /// Records for readers that produce them ([`TraceReader::read_columns`]'s default).
    scratch_records: Vec<Record>,
}

/// References ahead whose page-id entry the decoder prefetches.
const DECODE_PREFETCH: usize = 16;

impl Decoder {
    /// A decoder for page mode, or object-size mode if `object_sizes`.
    pub fn new(object_sizes: bool) -> Self {
        Decoder {
            object_sizes,
            ..Decoder::default()
        }
    }

    pub fn distinct(&self) -> usize {
        self.ids.len()
    }

    /// Page references decoded so far (the `seq` of the next one).
    pub fn decoded(&self) -> u64 {
        self.seq
    }

    /// Reads up to `max` records from `reader` and appends their page references to `refs` and
    /// their events to `events` (as [`Decoder::decode_columns`]); `Ok(false)` once the trace is
    /// exhausted. Records come as columns, so a native trace never becomes `Record`s.
    pub fn read(
        &mut self,
        reader: &mut (impl TraceReader + ?Sized),
        max: usize,
        refs: &mut RefBatch,
        events: &mut Vec<(usize, Event)>,
    ) -> Result<bool> {
        let mut cols = std::mem::take(&mut self.scratch);
        cols.clear();
        let res = reader
            .read_columns(&mut cols, max, &mut self.scratch_records)
            .and_then(|more| self.decode_columns(&mut cols, refs, events).map(|()| more));
        cols.clear();
        self.scratch = cols;
        res
    }

    /// Appends the page references of `records` to `refs` and events (with the
    /// index of the reference they precede) to `events`.
    pub fn decode(
        &mut self,
        records: &[Record],
        refs: &mut RefBatch,
        events: &mut Vec<(usize, Event)>,
    ) -> Result<()> {
        let mut cols = std::mem::take(&mut self.scratch);
        cols.clear();
        cols.extend_records(records);
        let res = self.decode_columns(&mut cols, refs, events);
        cols.clear();
        self.scratch = cols;
        res
    }

    /// Appends the page references of `cols` to `refs` and its events (with the index of the
    /// reference they precede) to `events`. Takes the columns' buffers when it can: `cols` is
    /// left empty.
    pub fn decode_columns(
        &mut self,
        cols: &mut RecordColumns,
        refs: &mut RefBatch,
        events: &mut Vec<(usize, Event)>,
    ) -> Result<()> {
        let base = refs.len();
        if self.object_sizes {
            self.check_sizes(cols)?;
            self.bytes += cols.size.iter().map(|&s| s as u64).sum::<u64>();
        }
        self.requests += cols.accesses() as u64;
        self.events += cols.events.len() as u64;
        if self.object_sizes || cols.single_pages {
            // One reference per access: the ids are the only new column.
            self.dense_ids(&cols.page, &mut refs.ids)?;
            events.extend(cols.events.iter().map(|&(pos, e)| (base + pos, e)));
            refs.take_columns(cols, base, self.object_sizes);
        } else {
            self.split_requests(cols, refs, events)?;
        }
        self.seq += (refs.len() - base) as u64;
        cols.clear();
        Ok(())
    }

    /// The dense id of every page in `pages`, appended to `ids`.
    fn dense_ids(&mut self, pages: &[u64], ids: &mut Vec<u32>) -> Result<()> {
        ids.reserve(pages.len());
        for (i, &page) in pages.iter().enumerate() {
            if let Some(&ahead) = pages.get(i + DECODE_PREFETCH) {
                self.ids.prefetch(ahead);
            }
            ids.push(self.id(page)?);
        }
        Ok(())
    }

    #[inline(always)]
    fn id(&mut self, page: u64) -> Result<u32> {
        self.ids.id(page).ok_or_else(|| {
            Error::config(if self.object_sizes {
                "more than 2^32-1 distinct objects in one trace"
            } else {
                "more than 2^32-1 distinct pages in one trace"
            })
        })
    }

    /// Page mode with requests of several pages: each becomes its pages, the first marked as
    /// the request's start.
    fn split_requests(
        &mut self,
        cols: &RecordColumns,
        refs: &mut RefBatch,
        events: &mut Vec<(usize, Event)>,
    ) -> Result<()> {
        refs.reserve(cols.page_refs() as usize);
        let mut pending = cols.events.iter().peekable();
        for i in 0..cols.accesses() {
            while let Some(&(_, e)) = pending.next_if(|(pos, _)| *pos <= i) {
                events.push((refs.len(), e));
            }
            if let Some(&ahead) = cols.page.get(i + DECODE_PREFETCH) {
                self.ids.prefetch(ahead);
            }
            let (page, flags) = (cols.page[i], cols.flags[i]);
            for k in 0..cols.npages[i] as u64 {
                let id = self.id(page + k)?;
                let f = if k == 0 {
                    flags
                } else {
                    flags & !FLAG_REQ_START
                };
                refs.push_raw(id, f, page + k, cols.time[i], cols.app[i]);
            }
        }
        events.extend(pending.map(|&(_, e)| (refs.len(), e)));
        Ok(())
    }

    /// Object-size mode needs every request's size.
    fn check_sizes(&self, cols: &RecordColumns) -> Result<()> {
        let missing = if cols.size.is_empty() {
            (cols.accesses() > 0).then_some(0)
        } else {
            cols.size.iter().position(|&s| s == 0)
        };
        match missing {
            Some(i) => Err(Error::config(format!(
                "object-size mode: request {} has no object size; the trace's format must carry one (oracleGeneral, lcs, csv with a size column, binary with a size field, vscsi)",
                self.requests + i as u64 + 1
            ))),
            None => Ok(()),
        }
    }
}

/// Fills `next_use` of every reference (one backward pass over a batch holding the whole trace).
pub fn fill_next_use(refs: &mut RefBatch, distinct: usize) {
    let mut next = vec![NEVER; distinct];
    let mut next_use = vec![NEVER; refs.len()];
    for (i, &id) in refs.ids.iter().enumerate().rev() {
        next_use[i] = next[id as usize];
        next[id as usize] = refs.first_seq + i as u64;
    }
    refs.set_next_use(next_use);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RefFields;
    use crate::trace::{Access, EventKind, Kind, Op};

    fn ev(time: u64) -> Record {
        Record::Event(Event {
            time,
            app: 1,
            kind: EventKind::Foreground,
        })
    }

    /// The reference fields `refs` holds, in order.
    fn fields(refs: &RefBatch) -> Vec<RefFields> {
        refs.iter().map(|r| r.fields()).collect()
    }

    /// Hand-worked: a 3-page write request splits into pages 7, 8, 9 with only the first
    /// marked as the request's start; ids are dense in first-seen order; events land before
    /// the reference they preceded in the trace, and at the end.
    #[test]
    fn requests_split_into_pages_with_dense_ids_and_events_in_place() {
        let records = vec![
            ev(0),
            Record::Access(Access::page(1, 9, Op::Read, Kind::Anon)),
            Record::Access(Access::file(2, 7, 3, Op::Write, 2, 0)),
            ev(3),
            Record::Access(Access::page(4, 9, Op::Read, Kind::File)),
            ev(5),
        ];
        let mut dec = Decoder::new(false);
        let (mut refs, mut events) = (RefBatch::default(), Vec::new());
        dec.decode(&records, &mut refs, &mut events).unwrap();
        assert_eq!(refs.ids, vec![0, 1, 2, 0, 0]);
        let got: Vec<_> = fields(&refs)
            .iter()
            .map(|f| (f.page, f.time, f.op, f.kind, f.app, f.req_start))
            .collect();
        assert_eq!(
            got,
            vec![
                (9, 1, Op::Read, Kind::Anon, 0, true),
                (7, 2, Op::Write, Kind::File, 2, true),
                (8, 2, Op::Write, Kind::File, 2, false),
                (9, 2, Op::Write, Kind::File, 2, false),
                (9, 4, Op::Read, Kind::File, 0, true),
            ]
        );
        let at: Vec<_> = events.iter().map(|(i, e)| (*i, e.time)).collect();
        assert_eq!(at, vec![(0, 0), (4, 3), (5, 5)]);
        assert_eq!((dec.requests, dec.events, dec.decoded()), (3, 3, 5));
        assert_eq!(dec.distinct(), 3);
    }

    /// Single-page batches take the handed-over path into an empty batch and the copying path
    /// into a non-empty one; both give what the per-record path gives.
    #[test]
    fn single_page_batches_equal_record_by_record_decoding() {
        let recs = |base: u64| -> Vec<Record> {
            (0..50)
                .map(|i| {
                    if i % 7 == 3 {
                        ev(base + i)
                    } else {
                        let op = if i % 3 == 0 { Op::Write } else { Op::Read };
                        Record::Access(Access::page(base + i, (i * 13) % 17, op, Kind::File))
                    }
                })
                .collect()
        };
        let (a, b) = (recs(0), recs(100));
        // Reference: every record alone (never the whole-batch hand-over).
        let mut one = Decoder::new(false);
        let (mut want, mut want_ev) = (RefBatch::default(), Vec::new());
        for r in a.iter().chain(&b) {
            one.decode(std::slice::from_ref(r), &mut want, &mut want_ev)
                .unwrap();
        }
        let mut dec = Decoder::new(false);
        let (mut refs, mut events) = (RefBatch::default(), Vec::new());
        let mut cols = RecordColumns::default();
        for part in [&a, &b] {
            cols.clear();
            cols.extend_records(part);
            assert!(cols.single_pages);
            dec.decode_columns(&mut cols, &mut refs, &mut events)
                .unwrap();
            assert!(cols.is_empty());
        }
        assert_eq!(refs.ids, want.ids);
        assert_eq!(fields(&refs), fields(&want));
        assert_eq!(events, want_ev);
    }

    #[test]
    fn object_mode_needs_sizes_and_names_the_request() {
        let mut dec = Decoder::new(true);
        let (mut refs, mut events) = (RefBatch::default(), Vec::new());
        let sized = Record::Access(Access::file(0, 5, 2, Op::Read, 0, 4096));
        dec.decode(&[sized], &mut refs, &mut events).unwrap();
        assert_eq!((refs.len(), dec.bytes), (1, 4096));
        let unsized_ = Record::Access(Access::page(1, 6, Op::Read, Kind::File));
        let err = dec
            .decode(&[sized, unsized_], &mut refs, &mut events)
            .unwrap_err()
            .to_string();
        assert!(err.contains("request 3 has no object size"), "{err}");
    }
}
