//! One-pass trace summary for `tierlab info`: size, mix, footprint, apps and
//! reuse. Memory is proportional to the distinct pages, not the trace length; a
//! progress callback is called after every batch read, as in a replay.

use crate::error::Result;
use crate::sim::engine::{Decoder, Progress};
use crate::sim::RefBatch;
use crate::trace::{Kind, Op, TraceReader};

/// What `tierlab info` prints.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TraceInfo {
    pub format: String,
    pub page_size: u32,
    pub requests: u64,
    pub page_refs: u64,
    pub events: u64,
    pub distinct_pages: u64,
    pub footprint_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub file_refs: u64,
    pub anon_refs: u64,
    /// Distinct pages ever written.
    pub written_pages: u64,
    pub apps: Vec<String>,
    /// Page references per app, in `apps` order.
    pub refs_per_app: Vec<u64>,
    /// Re-references (page refs minus first touches).
    pub reuses: u64,
    /// Reuse time (page references between two references to the same page)
    /// percentiles: 10, 25, 50, 75, 90, 99. Approximate: log2 buckets,
    /// reported as the bucket's upper bound.
    pub reuse_time_percentiles: Vec<(u32, u64)>,
    pub mean_request_pages: f64,
    pub first_time: u64,
    pub last_time: u64,
}

/// Reads the whole trace once and summarises it.
pub fn summarize(reader: &mut dyn TraceReader, limit: Option<u64>) -> Result<TraceInfo> {
    summarize_with(reader, limit, &mut |_| Ok(()))
}

/// [`summarize`], calling `progress` after every batch (the references and requests read so
/// far); an error from it stops the pass and is returned.
pub fn summarize_with(
    reader: &mut dyn TraceReader,
    limit: Option<u64>,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
) -> Result<TraceInfo> {
    let mut info = TraceInfo {
        format: reader.format().to_string(),
        page_size: reader.page_size(),
        ..Default::default()
    };
    let mut decoder = Decoder::default();
    let mut refs = RefBatch::default();
    let mut events = Vec::new();
    let mut last_seen: Vec<u64> = Vec::new();
    let mut written: Vec<bool> = Vec::new();
    let mut hist = [0u64; 64];
    let mut per_app: Vec<u64> = Vec::new();
    let mut first_time = None;
    let limit = limit.unwrap_or(u64::MAX);
    // Requests and pages among the references counted: the decoder reads whole batches, past a
    // limit.
    let (mut requests_counted, mut distinct_counted) = (0u64, 0u64);
    let mut more = true;
    while more && info.page_refs < limit {
        refs.clear(decoder.decoded());
        events.clear();
        more = decoder.read(reader, 1 << 16, &mut refs, &mut events)?;
        let n = decoder.distinct();
        last_seen.resize(n, u64::MAX);
        written.resize(n, false);
        for r in refs.iter() {
            if info.page_refs >= limit {
                break;
            }
            first_time.get_or_insert(r.time());
            requests_counted += r.req_start() as u64;
            info.last_time = r.time();
            match r.op() {
                Op::Read => info.reads += 1,
                Op::Write => {
                    info.writes += 1;
                    if !written[r.id as usize] {
                        written[r.id as usize] = true;
                        info.written_pages += 1;
                    }
                }
            }
            match r.kind() {
                Kind::File => info.file_refs += 1,
                Kind::Anon => info.anon_refs += 1,
            }
            let app = r.app() as usize;
            if per_app.len() <= app {
                per_app.resize(app + 1, 0);
            }
            per_app[app] += 1;
            let prev = last_seen[r.id as usize];
            if prev != u64::MAX {
                info.reuses += 1;
                let gap = r.seq() - prev;
                hist[(64 - gap.leading_zeros()) as usize % 64] += 1;
            } else {
                distinct_counted += 1;
            }
            last_seen[r.id as usize] = r.seq();
            info.page_refs += 1;
        }
        info.events += events.len() as u64;
        progress(&Progress {
            page_refs: info.page_refs,
            requests: decoder.requests,
        })?;
    }
    if decoder.decoded() > info.page_refs {
        // Stopped at the limit: what was decoded beyond it is not the trace's first `limit`.
        info.requests = requests_counted;
        info.distinct_pages = distinct_counted;
    } else {
        info.requests = decoder.requests;
        info.distinct_pages = decoder.distinct() as u64;
    }
    info.footprint_bytes = info.distinct_pages * info.page_size as u64;
    info.first_time = first_time.unwrap_or(0);
    info.mean_request_pages = if info.requests > 0 {
        info.page_refs as f64 / info.requests as f64
    } else {
        0.0
    };
    info.apps = reader.app_names();
    per_app.resize(info.apps.len().max(per_app.len()), 0);
    info.refs_per_app = per_app;
    for p in [10u32, 25, 50, 75, 90, 99] {
        let target = (info.reuses as f64 * p as f64 / 100.0).ceil() as u64;
        let mut acc = 0;
        for (b, &c) in hist.iter().enumerate() {
            acc += c;
            if acc >= target && info.reuses > 0 {
                info.reuse_time_percentiles
                    .push((p, if b == 0 { 0 } else { (1u64 << b) - 1 }));
                break;
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::trace::{open, TraceSpec};

    fn reader() -> Box<dyn TraceReader> {
        open(&TraceSpec::new("zipf:alpha=0.9,pages=3000,n=300000,seed=4")).unwrap()
    }

    #[test]
    fn progress_is_reported_after_every_batch_up_to_the_whole_pass() {
        let mut seen = Vec::new();
        let info = summarize_with(reader().as_mut(), None, &mut |p| {
            seen.push((p.page_refs, p.requests));
            Ok(())
        })
        .unwrap();
        assert_eq!(info.page_refs, 300_000);
        // 300,000 one-page requests in batches of 65,536: five reports, each further on.
        assert_eq!(seen.len(), 5);
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(*seen.last().unwrap(), (300_000, 300_000));
        let plain = summarize(reader().as_mut(), None).unwrap();
        assert_eq!(plain.distinct_pages, info.distinct_pages);
    }

    #[test]
    fn a_limit_counts_requests_and_pages_of_the_first_references_only() {
        // Pages 0..=39 once each, then again: the first 10 references have 10 pages.
        let spec = TraceSpec::new("loop:pages=40,n=80");
        let first = summarize(open(&spec).unwrap().as_mut(), Some(10)).unwrap();
        assert_eq!(
            (first.page_refs, first.requests, first.distinct_pages),
            (10, 10, 10)
        );
        assert_eq!(first.footprint_bytes, 10 * first.page_size as u64);
        let half = summarize(open(&spec).unwrap().as_mut(), Some(60)).unwrap();
        assert_eq!(
            (half.page_refs, half.distinct_pages, half.reuses),
            (60, 40, 20)
        );
        let all = summarize(open(&spec).unwrap().as_mut(), None).unwrap();
        assert_eq!(
            (all.page_refs, all.requests, all.distinct_pages),
            (80, 80, 40)
        );
    }

    #[test]
    fn an_error_from_progress_stops_the_pass() {
        let mut calls = 0;
        let r = summarize_with(reader().as_mut(), None, &mut |_| {
            calls += 1;
            Err(Error::Interrupted)
        });
        assert!(matches!(r, Err(Error::Interrupted)));
        assert_eq!(calls, 1);
    }
}
