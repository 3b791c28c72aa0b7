//! The engine decodes on its own thread one batch ahead of the replay: a limit, a reader error in
//! the middle of the trace and a progress callback that stops the run (Ctrl-C from Python) must
//! all end the run cleanly, with the same results as decoding inline would give.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::error::Error;
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{Access, Kind, Op, Record, TraceReader};

/// Pages 0, 1, 2, ... cycling over `pages`, `n` records; fails with an input error when asked
/// for the batch after record `fail_after` (if any).
struct Cycle {
    n: u64,
    pages: u64,
    pos: u64,
    fail_after: Option<u64>,
}

impl TraceReader for Cycle {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> tierlab_core::Result<bool> {
        if self.fail_after.is_some_and(|f| self.pos >= f) {
            return Err(Error::config(format!("broken at record {}", self.pos)));
        }
        let end = (self.pos + max as u64).min(self.n);
        for i in self.pos..end {
            out.push(Record::Access(Access {
                time: i,
                page: i % self.pages,
                op: Op::Read,
                kind: Kind::File,
                app: 0,
                npages: 1,
                size: 0,
            }));
        }
        self.pos = end;
        Ok(self.pos < self.n)
    }
    fn page_size(&self) -> u32 {
        4096
    }
    fn format(&self) -> &'static str {
        "cycle"
    }
}

fn system() -> System {
    System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap()
}

fn lru(capacity: usize) -> Vec<InstanceSpec> {
    vec![InstanceSpec {
        policy: PolicySpec::new("lru"),
        capacity,
    }]
}

fn opts(batch: usize, limit: Option<u64>) -> RunOptions {
    RunOptions {
        batch,
        limit,
        ..RunOptions::default()
    }
}

#[test]
fn a_limit_inside_a_batch_stops_exactly_there() {
    let mut r = Cycle {
        n: 10_000,
        pages: 100,
        pos: 0,
        fail_after: None,
    };
    let out = run(
        &mut r,
        &lru(50),
        &system(),
        &opts(1000, Some(2500)),
        &mut |_| Ok(()),
    )
    .unwrap();
    assert_eq!(out.page_refs, 2500);
    let s = &out.results[0].stats;
    // A 100-page loop through a 50-page LRU misses every time.
    assert_eq!((s.hits_total(), s.misses_total()), (0, 2500));
    // The reader stopped at the batch holding the limit: 3 batches of 1000, not 10.
    assert_eq!(r.pos, 3000);
}

#[test]
fn results_do_not_depend_on_the_batch_size() {
    let go = |batch| {
        let mut r = Cycle {
            n: 20_000,
            pages: 700,
            pos: 0,
            fail_after: None,
        };
        run(
            &mut r,
            &lru(600),
            &system(),
            &opts(batch, None),
            &mut |_| Ok(()),
        )
        .unwrap()
    };
    let (a, b, c) = (go(1), go(333), go(1 << 16));
    assert_eq!(a.results[0].stats, b.results[0].stats);
    assert_eq!(a.results[0].stats, c.results[0].stats);
    assert_eq!(a.page_refs, 20_000);
}

#[test]
fn a_reader_error_mid_trace_is_the_run_error() {
    let mut r = Cycle {
        n: 10_000,
        pages: 100,
        pos: 0,
        fail_after: Some(4000),
    };
    let mut batches = 0;
    let err = run(&mut r, &lru(50), &system(), &opts(1000, None), &mut |_| {
        batches += 1;
        Ok(())
    })
    .unwrap_err();
    assert!(err.to_string().contains("broken at record 4000"), "{err}");
    // The four good batches were replayed before the error arrived.
    assert_eq!(batches, 4);
}

#[test]
fn a_progress_callback_error_stops_the_run_and_the_decoder() {
    let mut r = Cycle {
        n: 1_000_000,
        pages: 100,
        pos: 0,
        fail_after: None,
    };
    let mut calls = 0;
    let err = run(&mut r, &lru(50), &system(), &opts(1000, None), &mut |_| {
        calls += 1;
        if calls == 3 {
            Err(Error::config("interrupted"))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("interrupted"), "{err}");
    assert_eq!(calls, 3);
    // The decoding thread ran at most a couple of batches ahead, then stopped.
    assert!(r.pos <= 6000, "decoder read {} records", r.pos);
}
