//! Object-size mode's sink: byte accounting around the engine's sink.
//!
//! In object-size mode (`RunOptions::object_sizes`) every trace record is one object of the
//! size the trace gives, the cache's capacity is in bytes, and the policy is the object-size
//! variant of the named policy (`PolicyDef::visit_object_mode`). The engine wraps its sink in an
//! [`ObjectSink`], which adds up the bytes requested and missed and counts the objects larger
//! than the cache (which policies refuse, as libCacheSim does); device models still see one
//! reference per object. Page mode never builds one, so it pays nothing for any of this.

use super::accounting::Stats;
use super::{PageId, PageOut, PageRef, Sink};
use crate::trace::Event;

/// A sink that counts bytes (requested, missed) and objects too large for the cache, and
/// passes every report on to `inner`.
pub struct ObjectSink<S> {
    inner: S,
    capacity: u64,
    bytes: u64,
    byte_misses: u64,
    too_large: u64,
}

impl<S> ObjectSink<S> {
    /// Wraps `inner` for a cache of `capacity` bytes.
    pub fn new(inner: S, capacity: u64) -> Self {
        ObjectSink {
            inner,
            capacity,
            bytes: 0,
            byte_misses: 0,
            too_large: 0,
        }
    }
}

impl<S: Sink> Sink for ObjectSink<S> {
    #[inline]
    fn hit(&mut self, r: &PageRef, tier: u8) {
        self.bytes += r.size();
        self.inner.hit(r, tier);
    }
    #[inline]
    fn miss(&mut self, r: &PageRef, tier: u8) {
        debug_assert!(
            r.size() <= self.capacity,
            "an object larger than the cache was admitted"
        );
        self.bytes += r.size();
        self.byte_misses += r.size();
        self.inner.miss(r, tier);
    }
    #[inline]
    fn miss_bypass(&mut self, r: &PageRef) {
        self.bytes += r.size();
        self.byte_misses += r.size();
        if r.size() > self.capacity {
            self.too_large += 1;
        }
        self.inner.miss_bypass(r);
    }
    fn evict(&mut self, p: PageOut) {
        self.inner.evict(p)
    }
    fn write_back(&mut self, pages: &[PageOut]) {
        self.inner.write_back(pages)
    }
    fn migrate(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.inner.migrate(id, page, from, to)
    }
    fn event(&mut self, e: &Event) {
        self.inner.event(e)
    }
    fn remap(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.inner.remap(id, page, from, to)
    }
}

impl<S> ObjectSink<S> {
    /// The sink it wraps.
    pub(super) fn inner(&self) -> &S {
        &self.inner
    }
    /// The sink it wraps (to pass the engine's calls on).
    pub(super) fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }
    /// The sink it wraps, and its counts written into that sink's `stats`.
    pub(super) fn into_inner(self) -> (S, impl FnOnce(&mut Stats)) {
        let (bytes, byte_misses, too_large) = (self.bytes, self.byte_misses, self.too_large);
        (self.inner, move |stats: &mut Stats| {
            stats.byte_accesses = bytes;
            stats.byte_misses = byte_misses;
            stats.too_large = too_large;
        })
    }
    /// The object counts written into each of `all` (the inner sink's stats per device variant).
    pub(super) fn write_counts_into(&self, all: &mut [Stats]) {
        for stats in all {
            stats.byte_accesses = self.bytes;
            stats.byte_misses = self.byte_misses;
            stats.too_large = self.too_large;
        }
    }
}
