//! Object-size mode of a policy defined outside the crate (a `tierlab.PythonPolicy`): the
//! [`ExternalPolicy`] callbacks of [`crate::policy::external`], with capacity and residency in
//! bytes, as the built-in variants of this module count them.
//!
//! [`ObjExternal`] is page mode's [`ExternalCache`] holding a [`Resident`] per object (its frame
//! and admitted size) and counting the bytes they use; it follows [`super::ObjectCache`]'s steps
//! (libCacheSim's `cache_get_base`), asking the callbacks only which object goes:
//!
//! - a request for a resident object is a hit ([`ExternalPolicy::hit_at`]); the object keeps the
//!   size it was admitted with (libCacheSim's `cache_find_base` does not update it), so the bytes
//!   in use do not change even when the request gives another size;
//! - a miss of an object larger than the whole cache is not admitted (`miss_bypass`, counted as
//!   `too_large`) and the policy is not called;
//! - any other miss asks [`ExternalPolicy::evict_at`] for a victim, checks that it is resident,
//!   evicts it, and asks again until the object fits (`used + size <= capacity`), then inserts it
//!   and calls [`ExternalPolicy::miss_at`]. Every answer removes a resident object, so the loop
//!   ends.
//!
//! A failed callback or a victim that is not resident stops the policy as in page mode: the
//! object being missed is bypassed (victims already evicted for it stay evicted), later hits on
//! resident objects still hit, later misses bypass, and the engine ends the run with the error
//! ([`Policy::failed`]), which names the policy, the callback and the object.

use crate::policy::external::{ExternalCache, ExternalPolicy, Held};
use crate::policy::Frame;
use crate::sim::PageRef;
use std::collections::HashMap;

/// A resident object: its frame and the size it was admitted with.
pub struct Resident {
    f: Frame,
    size: u64,
}

impl Held for Resident {
    const NOUN: &'static str = "object";
    #[inline]
    fn size_of(r: &PageRef) -> u64 {
        r.size()
    }
    #[inline]
    fn admit(r: &PageRef) -> Resident {
        Resident {
            f: Frame::of(r),
            size: r.size(),
        }
    }
    #[inline]
    fn size(&self) -> u64 {
        self.size
    }
    #[inline]
    fn frame(&self) -> &Frame {
        &self.f
    }
    #[inline]
    fn frame_mut(&mut self) -> &mut Frame {
        &mut self.f
    }
}

/// A policy defined outside the crate, in object-size mode (see the module doc).
pub type ObjExternal = ExternalCache<Resident>;

impl crate::policy::external::External {
    /// The same policy in object-size mode (capacity in bytes): the engine's choice, once per
    /// run, when `RunOptions::object_sizes` is set.
    pub fn into_object_mode(self) -> ObjExternal {
        let (name, cap, inner) = self.into_parts();
        ObjExternal::new(name, cap as u64, inner)
    }
}

impl ObjExternal {
    /// `name` appears in results and error messages; `capacity` is in bytes.
    pub fn new(name: impl Into<String>, capacity: u64, inner: Box<dyn ExternalPolicy>) -> Self {
        ExternalCache::with_map(name.into(), capacity, inner, HashMap::new())
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.cap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::external::{External, RefInfo};
    use crate::policy::object::testing::{replay_objects, replay_runner, sized_batch};
    use crate::policy::Policy;
    use crate::sim::engine::external_instance;
    use crate::sim::Sink;
    use std::sync::{Arc, Mutex};

    type Log = Arc<Mutex<Vec<(char, u64, RefInfo)>>>;

    /// Which end of its queue a policy through the callbacks evicts from: FIFO (a hit does not
    /// move) or LRU (a hit moves to the back); `bad`: answer this object to the first eviction.
    struct Queue {
        lru: bool,
        order: Vec<u64>,
        log: Log,
        bad: Option<u64>,
    }

    impl Queue {
        fn new(lru: bool, log: &Log) -> Self {
            Queue {
                lru,
                order: Vec::new(),
                log: log.clone(),
                bad: None,
            }
        }
    }

    impl ExternalPolicy for Queue {
        fn hit(&mut self, _p: u64) -> std::result::Result<(), String> {
            unreachable!("hit_at is overridden")
        }
        fn evict(&mut self, _p: u64) -> std::result::Result<u64, String> {
            unreachable!("evict_at is overridden")
        }
        fn miss(&mut self, _p: u64) -> std::result::Result<(), String> {
            unreachable!("miss_at is overridden")
        }
        fn hit_at(&mut self, p: u64, i: RefInfo) -> std::result::Result<(), String> {
            self.log.lock().unwrap().push(('h', p, i));
            if self.lru {
                self.order.retain(|&q| q != p);
                self.order.push(p);
            }
            Ok(())
        }
        fn evict_at(&mut self, p: u64, i: RefInfo) -> std::result::Result<u64, String> {
            self.log.lock().unwrap().push(('e', p, i));
            if let Some(b) = self.bad.take() {
                return Ok(b);
            }
            if p == 666 {
                return Err("boom\nsecond line".into());
            }
            Ok(self.order.remove(0))
        }
        fn miss_at(&mut self, p: u64, i: RefInfo) -> std::result::Result<(), String> {
            self.log.lock().unwrap().push(('m', p, i));
            self.order.push(p);
            Ok(())
        }
    }

    /// `(hits, misses, byte_misses, too_large)` of `q` in object-size mode with `cap` bytes,
    /// through the engine's instance (`external_instance` with `object_sizes`).
    fn replay(q: Queue, cap: usize, reqs: &[(u64, u32)]) -> (u64, u64, u64, u64) {
        let p = External::new("q", cap, Box::new(q));
        replay_runner(reqs, |acct| external_instance(p, acct, true))
    }

    fn info(seq: u64, size: u64) -> RefInfo {
        // replay_runner gives request t the time t.
        RefInfo {
            seq,
            time: seq,
            size,
        }
    }

    #[test]
    fn evicts_several_objects_for_one_big_one() {
        let log = Log::default();
        // 10 bytes: a(4) b(3) c(2) use 9; d(8) evicts a (5 left) and b (2 left) and fits; c hits.
        let t = [(1, 4), (2, 3), (3, 2), (4, 8), (3, 2)];
        assert_eq!(replay(Queue::new(false, &log), 10, &t), (1, 4, 17, 0));
        let want = vec![
            ('m', 1, info(0, 4)),
            ('m', 2, info(1, 3)),
            ('m', 3, info(2, 2)),
            ('e', 4, info(3, 8)),
            ('e', 4, info(3, 8)),
            ('m', 4, info(3, 8)),
            ('h', 3, info(4, 2)),
        ];
        assert_eq!(*log.lock().unwrap(), want);
        assert_eq!(replay_objects("fifo", 10, &t), (1, 4, 17, 0));
    }

    #[test]
    fn an_object_larger_than_the_cache_bypasses_without_a_callback() {
        let log = Log::default();
        // 10 bytes: a(4); e(11) is too large: bypassed, a stays; e(10) fits after evicting a.
        let t = [(1, 4), (5, 11), (1, 4), (5, 10), (1, 4)];
        assert_eq!(
            replay(Queue::new(false, &log), 10, &t),
            (1, 4, 4 + 11 + 10 + 4, 1)
        );
        let want = vec![
            ('m', 1, info(0, 4)),
            ('h', 1, info(2, 4)),
            ('e', 5, info(3, 10)),
            ('m', 5, info(3, 10)),
            ('e', 1, info(4, 4)),
            ('m', 1, info(4, 4)),
        ];
        assert_eq!(*log.lock().unwrap(), want);
        assert_eq!(replay_objects("fifo", 10, &t), (1, 4, 29, 1));
    }

    #[test]
    fn a_hit_keeps_the_admitted_size_as_the_builtins_do() {
        let log = Log::default();
        // 10 bytes: a(4); a again as 9 bytes hits and still uses 4, so b(6) fits without an
        // eviction (it would need one if a counted 9); then c(1) evicts a (FIFO), freeing 4.
        // The hit's callback gets the request's size (9).
        let t = [(1, 4), (1, 9), (2, 6), (3, 1), (2, 6)];
        assert_eq!(replay(Queue::new(false, &log), 10, &t), (2, 3, 11, 0));
        let want = vec![
            ('m', 1, info(0, 4)),
            ('h', 1, info(1, 9)),
            ('m', 2, info(2, 6)),
            ('e', 3, info(3, 1)),
            ('m', 3, info(3, 1)),
            ('h', 2, info(4, 6)),
        ];
        assert_eq!(*log.lock().unwrap(), want);
        assert_eq!(replay_objects("fifo", 10, &t), (2, 3, 11, 0));
        assert_eq!(replay_objects("lru", 10, &t), (2, 3, 11, 0));
    }

    #[test]
    fn a_victim_that_is_not_resident_stops_the_policy_with_an_error() {
        let log = Log::default();
        let mut q = Queue::new(false, &log);
        q.bad = Some(9);
        let mut p = External::new("bad", 10, Box::new(q)).into_object_mode();
        let mut sink = Counts::default();
        for r in sized_batch(&[(1, 6), (2, 6), (1, 6), (3, 2)]).0.iter() {
            p.access(&r, &mut sink);
        }
        // a misses; b asks for a victim, gets 9 (not resident): b bypasses; a still hits;
        // c (would fit) bypasses too, the policy being stopped.
        assert_eq!(
            (sink.hits, sink.misses, sink.bypasses, sink.evictions),
            (1, 1, 2, 0)
        );
        assert_eq!((p.resident(), p.used()), (1, 6));
        let e = p.failed().expect("error").to_string();
        assert!(
            e.contains("policy 'bad': evict(object 2) failed: returned 9, which is not resident"),
            "{e}"
        );
        assert!(p.failed().is_none());
        // A callback's error is reported on one line.
        let mut p = External::new("boom", 4, Box::new(Queue::new(true, &log))).into_object_mode();
        for r in sized_batch(&[(1, 4), (666, 4)]).0.iter() {
            p.access(&r, &mut sink);
        }
        let e = p.failed().expect("error").to_string();
        assert!(
            e.contains("policy 'boom': evict(object 666) failed: boom second line"),
            "{e}"
        );
    }

    /// Counts what a policy reports.
    #[derive(Default)]
    struct Counts {
        hits: u64,
        misses: u64,
        bypasses: u64,
        evictions: u64,
    }

    impl Sink for Counts {
        fn hit(&mut self, _r: &PageRef, _tier: u8) {
            self.hits += 1;
        }
        fn miss(&mut self, _r: &PageRef, _tier: u8) {
            self.misses += 1;
        }
        fn miss_bypass(&mut self, _r: &PageRef) {
            self.bypasses += 1;
        }
        fn evict(&mut self, _p: crate::sim::PageOut) {
            self.evictions += 1;
        }
        fn write_back(&mut self, _pages: &[crate::sim::PageOut]) {}
        fn migrate(&mut self, _id: crate::sim::PageId, _page: u64, _from: u8, _to: u8) {}
    }

    #[test]
    fn fifo_and_lru_through_the_callbacks_equal_the_builtin_variants() {
        // Random traces with sizes that change between requests (so hits with other sizes) and
        // objects larger than the cache: the callbacks' FIFO and LRU give the built-in object-size
        // fifo's and lru's counts exactly.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..40 {
            let n_obj = 5 + round % 30;
            let reqs: Vec<(u64, u32)> = (0..400)
                .map(|_| (next() % n_obj, 1 + (next() % 60) as u32))
                .collect();
            for cap in [1usize, 30, 59, 100, 400] {
                for (lru, name) in [(false, "fifo"), (true, "lru")] {
                    let log = Log::default();
                    let got = replay(Queue::new(lru, &log), cap, &reqs);
                    assert_eq!(got, replay_objects(name, cap, &reqs), "{name} at {cap}");
                }
            }
        }
    }
}
