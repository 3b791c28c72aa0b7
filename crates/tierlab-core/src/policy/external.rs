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
//!
//! Both modes are one [`ExternalCache`], generic over what it holds per resident key ([`Held`]):
//! [`External`] holds a [`Frame`] per page and counts pages; in object-size mode the engine runs
//! the same callbacks through [`crate::policy::object::external::ObjExternal`]
//! (`External::into_object_mode`, chosen once per run), which holds each object's frame and
//! admitted size, counts bytes, and asks for victims until the missed object fits.

use crate::error::Error;
use crate::policy::{Frame, Policy};
use crate::sim::{PageRef, Sink};
use std::collections::HashMap;

/// What [`External`] knows of the reference a callback is about, beyond its page: for policies
/// that need time or sizes (LRB's deltas and decayed counters count requests, §4.3 of its paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefInfo {
    /// Position of the reference in the trace (0-based, page references: [`PageRef::seq`]).
    pub seq: u64,
    /// Time of its request as the trace gives it ([`PageRef::time`]).
    pub time: u64,
    /// Its size ([`PageRef::size`]): 1 (one page) in page mode; in object-size mode the size in
    /// bytes the request gives (on a hit it may differ from the size the object was admitted
    /// with, which is the one that counts against the capacity).
    pub size: u64,
}

impl RefInfo {
    pub fn of(r: &PageRef) -> Self {
        RefInfo {
            seq: r.seq(),
            time: r.time(),
            size: r.size(),
        }
    }
}

/// The decisions of a policy defined outside the crate. Errors are messages (the caller
/// prefixes the policy's name and the callback).
///
/// [`External`] calls the `*_at` methods, which by default drop the [`RefInfo`] and call the
/// page-only ones; a policy that needs the reference's position, time or size overrides them.
pub trait ExternalPolicy: Send + 'static {
    /// `page` is referenced and resident.
    fn hit(&mut self, page: u64) -> std::result::Result<(), String>;
    /// Memory is full and `page` misses: which resident page to evict. In object-size mode:
    /// the object `page` does not fit, which resident object to evict (asked again, with the
    /// same [`RefInfo`], until it fits).
    fn evict(&mut self, page: u64) -> std::result::Result<u64, String>;
    /// `page` missed and is now resident (after the eviction, if any).
    fn miss(&mut self, page: u64) -> std::result::Result<(), String>;
    /// The runtime to enter around each batch of callbacks, if any (see [`Host`]).
    fn host(&self) -> Option<std::sync::Arc<dyn Host>> {
        None
    }
    /// [`Self::hit`] with the reference's [`RefInfo`].
    fn hit_at(&mut self, page: u64, _info: RefInfo) -> std::result::Result<(), String> {
        self.hit(page)
    }
    /// [`Self::evict`] with the missing reference's [`RefInfo`].
    fn evict_at(&mut self, page: u64, _info: RefInfo) -> std::result::Result<u64, String> {
        self.evict(page)
    }
    /// [`Self::miss`] with the reference's [`RefInfo`].
    fn miss_at(&mut self, page: u64, _info: RefInfo) -> std::result::Result<(), String> {
        self.miss(page)
    }
}

/// The runtime a policy defined outside the crate runs in, entered once around each batch of
/// references: for Python, its interpreter lock. Taken per callback on a replay thread Python
/// has not seen, the lock costs a new thread state every time (a run of Python policies on two
/// threads took 20 to 30 times as long as on one); held across the batch, the callbacks inside
/// find it held.
pub trait Host: Send + Sync {
    /// Runs `body` inside the runtime.
    fn enter(&self, body: &mut dyn FnMut());
}

/// What [`ExternalCache`] holds per resident key and counts against its capacity: in page mode a
/// [`Frame`] (one page), in object-size mode the frame and the size the object was admitted with
/// ([`crate::policy::object::external::Resident`]).
pub trait Held: Send + 'static {
    /// What a key is called in error messages ("page", "object").
    const NOUN: &'static str;
    /// What `r`'s key would count against the capacity if admitted now.
    fn size_of(r: &PageRef) -> u64;
    /// The entry of `r`'s key, admitted now.
    fn admit(r: &PageRef) -> Self;
    /// What the entry counts against the capacity.
    fn size(&self) -> u64;
    fn frame(&self) -> &Frame;
    fn frame_mut(&mut self) -> &mut Frame;
}

impl Held for Frame {
    const NOUN: &'static str = "page";
    #[inline]
    fn size_of(_r: &PageRef) -> u64 {
        1
    }
    #[inline]
    fn admit(r: &PageRef) -> Frame {
        Frame::of(r)
    }
    #[inline]
    fn size(&self) -> u64 {
        1
    }
    #[inline]
    fn frame(&self) -> &Frame {
        self
    }
    #[inline]
    fn frame_mut(&mut self) -> &mut Frame {
        self
    }
}

/// A [`Policy`] that delegates its decisions to an [`ExternalPolicy`], keeping residency itself:
/// the keys resident with their [`Held`] entries and what they use of the capacity (pages, or
/// bytes in object-size mode). One rule serves both modes: a resident key hits; a key larger
/// than the whole capacity, or any miss after a callback failed, bypasses; any other miss asks
/// for victims until the key fits, then inserts it. In page mode every key is one page, so a
/// miss with memory full asks for exactly one victim.
pub struct ExternalCache<H> {
    name: String,
    /// Capacity in pages (page mode) or bytes (object-size mode).
    cap: u64,
    inner: Box<dyn ExternalPolicy>,
    resident: HashMap<u64, H>,
    /// What the resident keys use of `cap`.
    used: u64,
    failure: CallbackFailure,
}

/// A policy defined outside the crate, in page mode.
pub type External = ExternalCache<Frame>;

impl<H> ExternalCache<H> {
    pub(crate) fn with_map(
        name: String,
        cap: u64,
        inner: Box<dyn ExternalPolicy>,
        resident: HashMap<u64, H>,
    ) -> Self {
        ExternalCache {
            name,
            cap,
            inner,
            resident,
            used: 0,
            failure: CallbackFailure::default(),
        }
    }

    /// The runtime its callbacks need around a batch ([`ExternalPolicy::host`]).
    pub fn host(&self) -> Option<std::sync::Arc<dyn Host>> {
        self.inner.host()
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl External {
    /// `name` appears in results and in error messages.
    pub fn new(name: impl Into<String>, capacity: usize, inner: Box<dyn ExternalPolicy>) -> Self {
        let resident = HashMap::with_capacity(capacity.min(1 << 20));
        ExternalCache::with_map(name.into(), capacity as u64, inner, resident)
    }

    /// Memory size in pages.
    pub fn capacity(&self) -> usize {
        self.cap as usize
    }

    /// Its name, capacity and callbacks, for the same policy in object-size mode
    /// (`External::into_object_mode`, in [`crate::policy::object::external`]).
    pub(crate) fn into_parts(self) -> (String, usize, Box<dyn ExternalPolicy>) {
        (self.name, self.cap as usize, self.inner)
    }
}

impl<H: Held> ExternalCache<H> {
    fn fail(&mut self, what: &str, key: u64, msg: String) {
        self.failure.set(&self.name, what, H::NOUN, key, &msg);
    }

    /// What the resident keys use of the capacity (pages, or bytes in object-size mode).
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The capacity (pages, or bytes in object-size mode).
    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }
}

/// The first failed callback of a policy defined outside the crate, in either mode: once set,
/// the policy makes no more callbacks, and its error goes to the engine once ([`Policy::failed`]).
#[derive(Default)]
struct CallbackFailure {
    error: Option<Error>,
    /// The error has been handed to the engine.
    reported: bool,
}

impl CallbackFailure {
    /// Whether a callback has failed (and its error is not handed over yet).
    fn is_set(&self) -> bool {
        self.error.is_some()
    }

    /// Records `policy 'NAME': WHAT(NOUN ID) failed: MSG` (one line).
    fn set(&mut self, name: &str, what: &str, noun: &str, id: u64, msg: &str) {
        self.error = Some(Error::Policy(format!(
            "policy '{name}': {what}({noun} {id}) failed: {}",
            msg.replace('\n', " ")
        )));
    }

    /// The error, the first time it is asked for.
    fn take(&mut self) -> Option<Error> {
        if self.reported {
            return None;
        }
        let e = self.error.take()?;
        self.reported = true;
        Some(e)
    }
}

impl<H: Held> Policy for ExternalCache<H> {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let key = r.page();
        if let Some(h) = self.resident.get_mut(&key) {
            h.frame_mut().dirty |= r.is_write();
            sink.hit(r, 0);
            if !self.failure.is_set() {
                if let Err(e) = self.inner.hit_at(key, RefInfo::of(r)) {
                    self.fail("on_hit", key, e);
                }
            }
            return;
        }
        let size = H::size_of(r);
        if self.failure.is_set() || size > self.cap {
            sink.miss_bypass(r);
            return;
        }
        while self.used + size > self.cap {
            let victim = match self.inner.evict_at(key, RefInfo::of(r)) {
                Ok(v) => v,
                Err(e) => {
                    self.fail("evict", key, e);
                    sink.miss_bypass(r);
                    return;
                }
            };
            let Some(h) = self.resident.remove(&victim) else {
                let msg = format!("returned {victim}, which is not resident");
                self.fail("evict", key, msg);
                sink.miss_bypass(r);
                return;
            };
            self.used -= h.size();
            sink.evict(h.frame().out(0));
        }
        self.resident.insert(key, H::admit(r));
        self.used += size;
        sink.miss(r, 0);
        if let Err(e) = self.inner.miss_at(key, RefInfo::of(r)) {
            self.fail("on_miss", key, e);
        }
    }

    fn resident(&self) -> usize {
        self.resident.len()
    }

    fn failed(&mut self) -> Option<Error> {
        self.failure.take()
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

    type Log = std::sync::Arc<std::sync::Mutex<Vec<(char, u64, RefInfo)>>>;

    /// FIFO that records the `RefInfo` of every callback (only the `*_at` methods are called).
    struct Recorder(Log, VecDeque<u64>);
    impl ExternalPolicy for Recorder {
        fn hit(&mut self, _page: u64) -> std::result::Result<(), String> {
            unreachable!("hit_at is overridden")
        }
        fn evict(&mut self, _page: u64) -> std::result::Result<u64, String> {
            unreachable!("evict_at is overridden")
        }
        fn miss(&mut self, _page: u64) -> std::result::Result<(), String> {
            unreachable!("miss_at is overridden")
        }
        fn hit_at(&mut self, page: u64, info: RefInfo) -> std::result::Result<(), String> {
            self.0.lock().unwrap().push(('h', page, info));
            Ok(())
        }
        fn evict_at(&mut self, page: u64, info: RefInfo) -> std::result::Result<u64, String> {
            self.0.lock().unwrap().push(('e', page, info));
            Ok(self.1.pop_front().unwrap())
        }
        fn miss_at(&mut self, page: u64, info: RefInfo) -> std::result::Result<(), String> {
            self.0.lock().unwrap().push(('m', page, info));
            self.1.push_back(page);
            Ok(())
        }
    }

    #[test]
    fn callbacks_at_get_the_references_position_and_size() {
        let log = Log::default();
        let mut p = External::new("rec", 1, Box::new(Recorder(log.clone(), VecDeque::new())));
        assert_eq!(replay(&mut p, &[5, 5, 6]), (1, 2));
        let refs = make_refs(&[(5, false), (5, false), (6, false)]);
        let info: Vec<RefInfo> = refs.iter().map(|r| RefInfo::of(&r)).collect();
        assert_eq!(
            info.iter().map(|i| i.seq).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(info.iter().all(|i| i.size == 1));
        // Miss of 5 at 0, hit at 1; 6 misses at 2: evict (for 6) then miss, both with seq 2.
        let want = vec![
            ('m', 5, info[0]),
            ('h', 5, info[1]),
            ('e', 6, info[2]),
            ('m', 6, info[2]),
        ];
        assert_eq!(*log.lock().unwrap(), want);
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
