//! What the hybrid-family tests (`hybrid_policies.rs`, `hybrid_models.rs`) share: a sink that
//! records every call as text, and a driver that replays hand-written steps (reads, writes,
//! foreground switches) through a policy.
#![allow(dead_code)] // each test binary uses its own subset

use tierlab_core::policy::{Policy, PolicyCtx};
use tierlab_core::sim::{PageId, PageOut, PageRef, RefBatch, RefFields, Sink};
use tierlab_core::trace::{Event, EventKind, Kind, Op};

/// A sink that records every call as text.
#[derive(Default)]
pub struct Log(pub Vec<String>);

impl Sink for Log {
    fn hit(&mut self, r: &PageRef, tier: u8) {
        self.0.push(format!("hit {} t{tier}", r.page()));
    }
    fn miss(&mut self, r: &PageRef, tier: u8) {
        self.0.push(format!("miss {} t{tier}", r.page()));
    }
    fn miss_bypass(&mut self, r: &PageRef) {
        self.0.push(format!("bypass {}", r.page()));
    }
    fn evict(&mut self, p: PageOut) {
        let d = if p.dirty { "dirty" } else { "clean" };
        self.0.push(format!("evict {} t{} {d}", p.page, p.tier));
    }
    fn write_back(&mut self, _pages: &[PageOut]) {
        self.0.push("write_back".into());
    }
    fn migrate(&mut self, _id: PageId, page: u64, from: u8, to: u8) {
        self.0.push(format!("mig {page} {from}->{to}"));
    }
}

pub enum Step {
    R(u32, u64),
    W(u32, u64),
    Fg(u32),
}
pub use Step::*;

/// The access a step makes (app, page, write), or None for a switch of the foreground app,
/// which it records in `fg`.
pub fn access(s: &Step, fg: &mut Option<u32>) -> Option<(u32, u64, bool)> {
    match *s {
        R(a, p) => Some((a, p, false)),
        W(a, p) => Some((a, p, true)),
        Fg(a) => {
            *fg = Some(a);
            None
        }
    }
}

/// Whether `app` is in the foreground (every app is, before the first switch).
pub fn in_fg(fg: Option<u32>, app: u32) -> bool {
    fg.is_none_or(|f| f == app)
}

/// Replays steps through a policy; page numbers are their own dense ids.
pub fn drive<P: Policy, S: Sink>(p: &mut P, sink: &mut S, steps: &[Step], seq: &mut u64) {
    p.grow(64);
    for s in steps {
        let (app, page, op) = match *s {
            R(a, pg) => (a, pg, Op::Read),
            W(a, pg) => (a, pg, Op::Write),
            Fg(a) => {
                let e = Event {
                    time: *seq,
                    app: a,
                    kind: EventKind::Foreground,
                };
                sink.event(&e);
                p.event(&e, sink);
                continue;
            }
        };
        let one = RefBatch::single(
            *seq,
            RefFields {
                time: *seq,
                page,
                id: page as u32,
                app,
                op,
                kind: Kind::File,
                req_start: true,
            },
        );
        let r = one.get(0);
        *seq += 1;
        p.access(&r, sink);
    }
}

pub fn ctx(capacity: usize) -> PolicyCtx {
    PolicyCtx {
        capacity,
        tiers: 2,
        page_size: 4096,
    }
}

/// Takes the log lines recorded since the last call.
pub fn take(log: &mut Log) -> Vec<String> {
    std::mem::take(&mut log.0)
}
