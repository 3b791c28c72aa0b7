//! Policies defined outside this crate: a user's policy (e.g. a Python class, through
//! tierlab-py) behind the [`ExternalPolicy`] callbacks, run by [`External`] through the same
//! replay loop and accounting as every registered policy, so its results have every column.
//!
//! [`External`] keeps residency itself (which pages are in memory, their dirty bits and kinds) and
//! asks the callbacks only for decisions: on a reference to a resident page it reports a hit and
//! calls [`ExternalPolicy::hit`]; on a miss with memory full it calls [`ExternalPolicy::evict`],
//! checks that the answer is a resident page, evicts it, then calls [`ExternalPolicy::miss`] for
//! the new page. A callback that fails (a Python exception) or a victim that is not resident
//! stops the policy: it answers every later reference with a bypass (so the accounting stays
//! consistent) and the engine ends the run with the error after the batch ([`Policy::failed`]).
//! The core stays free of any foreign-language runtime; the callbacks are plain trait methods.

use crate::error::Error;
use crate::policy::{Frame, Policy};
use crate::sim::{PageRef, Sink};
use std::collections::HashMap;

/// The decisions of a policy defined outside the crate. Errors are messages (the caller
/// prefixes the policy's name and the callback).
pub trait ExternalPolicy: Send + 'static {
    /// `page` is referenced and resident.
    fn hit(&mut self, page: u64) -> std::result::Result<(), String>;
    /// Memory is full and `page` misses: which resident page to evict.
    fn evict(&mut self, page: u64) -> std::result::Result<u64, String>;
    /// `page` missed and is now resident (after the eviction, if any).
    fn miss(&mut self, page: u64) -> std::result::Result<(), String>;
}

/// A [`Policy`] that delegates its decisions to an [`ExternalPolicy`].
pub struct External {
    name: String,
    cap: usize,
    inner: Box<dyn ExternalPolicy>,
    resident: HashMap<u64, Frame>,
    error: Option<Error>,
    /// The first error has been handed to the engine.
    reported: bool,
}

impl External {
    /// `name` appears in results and in error messages.
    pub fn new(name: impl Into<String>, capacity: usize, inner: Box<dyn ExternalPolicy>) -> Self {
        External {
            name: name.into(),
            cap: capacity,
            inner,
            resident: HashMap::with_capacity(capacity.min(1 << 20)),
            error: None,
            reported: false,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Memory size in pages.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    fn fail(&mut self, what: &str, page: u64, msg: String) {
        self.error = Some(Error::Policy(format!(
            "policy '{}': {what}(page {page}) failed: {}",
            self.name,
            msg.replace('\n', " ")
        )));
    }
}

impl Policy for External {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let page = r.page();
        if self.error.is_some() || self.cap == 0 {
            if let Some(f) = self.resident.get_mut(&page) {
                f.dirty |= r.is_write();
                sink.hit(r, 0);
            } else {
                sink.miss_bypass(r);
            }
            return;
        }
        if let Some(f) = self.resident.get_mut(&page) {
            f.dirty |= r.is_write();
            sink.hit(r, 0);
            if let Err(e) = self.inner.hit(page) {
                self.fail("on_hit", page, e);
            }
            return;
        }
        if self.resident.len() >= self.cap {
            let victim = match self.inner.evict(page) {
                Ok(v) => v,
                Err(e) => {
                    self.fail("evict", page, e);
                    sink.miss_bypass(r);
                    return;
                }
            };
            let Some(f) = self.resident.remove(&victim) else {
                let msg = format!("returned {victim}, which is not resident");
                self.fail("evict", page, msg);
                sink.miss_bypass(r);
                return;
            };
            sink.evict(f.out(0));
        }
        self.resident.insert(page, Frame::of(r));
        sink.miss(r, 0);
        if let Err(e) = self.inner.miss(page) {
            self.fail("on_miss", page, e);
        }
    }

    fn resident(&self) -> usize {
        self.resident.len()
    }

    fn failed(&mut self) -> Option<Error> {
        if self.reported {
            return None;
        }
        let e = self.error.take()?;
        self.reported = true;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::check::{make_refs, CheckSink, NullSink};
    use std::collections::VecDeque;

    /// FIFO through the callbacks.
    struct Fifo(VecDeque<u64>, Option<u64>);
    impl ExternalPolicy for Fifo {
        fn hit(&mut self, _page: u64) -> std::result::Result<(), String> {
            Ok(())
        }
        fn evict(&mut self, page: u64) -> std::result::Result<u64, String> {
            if Some(page) == self.1 {
                return Err("boom".into());
            }
            Ok(self.0.pop_front().unwrap())
        }
        fn miss(&mut self, page: u64) -> std::result::Result<(), String> {
            self.0.push_back(page);
            Ok(())
        }
    }

    fn replay(p: &mut External, pages: &[u64]) -> (u64, u64) {
        let refs = make_refs(&pages.iter().map(|&p| (p, false)).collect::<Vec<_>>());
        let mut sink = CheckSink::new(NullSink, "external", 2, 1, 64);
        for r in refs.iter() {
            sink.begin(&r);
            p.access(&r, &mut sink);
            sink.end(p.resident());
        }
        (sink.counts.hits, sink.counts.misses)
    }

    #[test]
    fn delegates_decisions_and_reports_errors_once() {
        let mut p = External::new("fifo", 2, Box::new(Fifo(VecDeque::new(), None)));
        // FIFO at 2: 1 2 1(hit) 3(evicts 1) 1(evicts 2) 2(evicts 3).
        assert_eq!(replay(&mut p, &[1, 2, 1, 3, 1, 2]), (1, 5));
        assert!(p.failed().is_none());
        let mut p = External::new("fifo", 2, Box::new(Fifo(VecDeque::new(), Some(3))));
        // The eviction for 3 fails: 3 bypasses, and so does 4 afterwards; 1 still hits.
        assert_eq!(replay(&mut p, &[1, 2, 3, 4, 1]), (1, 4));
        let e = p.failed().expect("error").to_string();
        assert!(
            e.contains("policy 'fifo': evict(page 3) failed: boom"),
            "{e}"
        );
        assert!(p.failed().is_none());
    }
}
