//! Object-size variants of the classic policies (docs/design.md, "Object-size mode").
//!
//! In object-size mode a cache's capacity is in bytes and every reference is one object of
//! `PageRef::size` bytes. The variants here follow the semantics libCacheSim gives sizes
//! (`cache_get_base` in its cache.c): on a miss, an object larger than the whole cache is not
//! admitted (reported with `miss_bypass`, counted as `too_large` by the engine's sink);
//! otherwise the policy evicts, one victim at a time by its own rule, until the object fits,
//! then inserts it. On a hit the object keeps the size it was admitted with (libCacheSim's
//! `cache_find_base` does not update it either). Each variant here has the name of its page-mode
//! policy and reads that policy's config; [`visit_object_form`] finds it by that name (the default
//! of `PolicyDef::visit_object_mode`), so the page-mode files never name this module, and page
//! mode never runs this code.

pub mod clock;
pub mod external;
pub mod fifo;
pub mod hyperbolic;
pub mod lfu;
pub mod lhd;
pub mod lru;
pub mod opt;
pub mod s3fifo;
pub mod sieve;

use crate::policy::list::{Arena, List, NIL};
use crate::policy::{Frame, Policy, PolicyDef, PolicyVisitor};
use crate::sim::{PageRef, Sink};

/// Calls `v.visit::<O>()` with the object-size variant `O` whose name is `page_policy` (a
/// registered page-mode policy's canonical name), or returns `None` if it has none.
pub fn visit_object_form<V: PolicyVisitor>(page_policy: &str, v: V) -> Option<V::Out> {
    macro_rules! forms {
        ($($ty:ty),* $(,)?) => {
            $(
                if page_policy == <$ty as PolicyDef>::NAME {
                    return Some(v.visit::<$ty>());
                }
            )*
        };
    }
    forms!(
        fifo::ObjFifo,
        lru::ObjLru,
        clock::ObjClock,
        opt::ObjOpt,
        s3fifo::ObjS3Fifo,
        sieve::ObjSieve,
        lfu::ObjLfu,
        hyperbolic::ObjHyperbolic,
        lhd::ObjLhd,
    );
    None
}

/// A resident object: its frame (id, number, kind, dirty bit), size, and a per-policy
/// counter (CLOCK's and SIEVE's reference bits, LFU's count).
#[derive(Debug, Clone, Copy)]
pub struct Obj {
    pub f: Frame,
    pub size: u64,
    pub freq: u64,
}

/// The resident objects of an object-size cache: an arena of [`Obj`] (list nodes for the
/// policy's queues), a table from object id to slot, and the bytes in use.
pub struct Store {
    pub arena: Arena<Obj>,
    table: Vec<u32>,
    /// Bytes of the resident objects.
    pub used: u64,
    /// Capacity in bytes.
    pub cap: u64,
}

impl Store {
    pub fn new(cap: usize) -> Self {
        Store {
            arena: Arena::with_capacity(1024),
            table: Vec::new(),
            used: 0,
            cap: cap as u64,
        }
    }
    pub fn grow(&mut self, n: usize) {
        if self.table.len() < n {
            self.table.resize(n, NIL);
        }
    }
    /// The slot of object `r`, or [`NIL`].
    #[inline]
    pub fn slot(&self, r: &PageRef) -> u32 {
        self.table[r.id as usize]
    }
    /// The slot of object id `id`, or [`NIL`].
    #[inline]
    pub fn slot_of_id(&self, id: u32) -> u32 {
        self.table[id as usize]
    }
    /// Marks a hit on `slot` (dirty on a write) and returns its node.
    #[inline]
    pub fn touch(&mut self, slot: u32, r: &PageRef) -> &mut Obj {
        let o = self.arena.get_mut(slot);
        o.f.dirty |= r.is_write();
        o
    }
    /// Whether `r` can be cached at all (libCacheSim: `obj_size > cache_size` is refused).
    #[inline]
    pub fn admissible(&self, r: &PageRef) -> bool {
        r.size() <= self.cap
    }
    /// Whether inserting `r` now would overflow the cache.
    #[inline]
    pub fn needs_room(&self, r: &PageRef) -> bool {
        self.used + r.size() > self.cap
    }
    /// Allocates `r`'s node (with counter `freq`) and maps it; the caller links it.
    pub fn insert(&mut self, r: &PageRef, freq: u64) -> u32 {
        let slot = self.arena.alloc(Obj {
            f: Frame::of(r),
            size: r.size(),
            freq,
        });
        self.table[r.id as usize] = slot;
        self.used += r.size();
        slot
    }
    /// Evicts the (already unlinked) object in `slot`: reports it and frees its node.
    pub fn evict<S: Sink>(&mut self, slot: u32, sink: &mut S) {
        let o = *self.arena.get(slot);
        self.table[o.f.id as usize] = NIL;
        self.used -= o.size;
        sink.evict(o.f.out(0));
        self.arena.release(slot);
    }
    /// Objects resident.
    pub fn len(&self) -> usize {
        self.arena.live()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What differs between the object-size policies: where a hit moves an object, which object
/// goes next, and where a new one goes. [`ObjectCache`] does the rest, as libCacheSim's
/// `cache_get_base` does (refuse an object larger than the cache, evict until the object fits,
/// insert it).
pub trait Queue: Send + 'static {
    /// A request for `r` arrives (before the lookup): for policies that count time in
    /// requests (Hyperbolic). Default: nothing.
    #[inline(always)]
    fn request(&mut self, _r: &PageRef) {}
    /// The counter (`Obj::freq`) a new object starts with.
    fn first_freq(&self, _r: &PageRef) -> u64 {
        0
    }
    /// `r` hit the object in `slot` (already marked dirty on a write).
    fn hit(&mut self, s: &mut Store, slot: u32, r: &PageRef);
    /// Chooses the next victim, unlinks it from the queue and returns its slot.
    fn victim(&mut self, s: &mut Store) -> u32;
    /// `r`'s object was inserted in `slot`: link it.
    fn inserted(&mut self, s: &mut Store, slot: u32, r: &PageRef);
}

/// What differs between the one-list policies (FIFO, LRU, CLOCK, SIEVE): what a hit does and
/// which object goes next. [`ListQueue`] links every new object at the front of its list.
pub trait ListRule: Send + 'static {
    /// `r` hit the object in `slot` of list `q`.
    fn hit(&mut self, q: &mut List, s: &mut Store, slot: u32);
    /// Chooses the next victim, unlinks it from `q` and returns its slot. Default: the back
    /// (the oldest insertion).
    #[inline]
    fn victim(&mut self, q: &mut List, s: &mut Store) -> u32 {
        q.pop_back(&mut s.arena)
            .expect("a cache over capacity is not empty")
    }
}

/// One list, front = newest insertion, ruled by `R`: the [`Queue`] of FIFO, LRU, CLOCK and
/// SIEVE. O(1) per request but for the victim search `R` does.
#[derive(Default)]
pub struct ListQueue<R> {
    q: List,
    rule: R,
}

impl<R> ListQueue<R> {
    pub fn new(rule: R) -> Self {
        ListQueue {
            q: List::default(),
            rule,
        }
    }
}

impl<R: ListRule> Queue for ListQueue<R> {
    #[inline]
    fn hit(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        self.rule.hit(&mut self.q, s, slot);
    }
    #[inline]
    fn victim(&mut self, s: &mut Store) -> u32 {
        self.rule.victim(&mut self.q, s)
    }
    #[inline]
    fn inserted(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        self.q.push_front(&mut s.arena, slot);
    }
}

/// An object-size cache: the resident objects and the policy's [`Queue`] over them.
pub struct ObjectCache<Q> {
    pub s: Store,
    pub q: Q,
}

impl<Q> ObjectCache<Q> {
    pub fn new(cap_bytes: usize, q: Q) -> Self {
        ObjectCache {
            s: Store::new(cap_bytes),
            q,
        }
    }
}

impl<Q: Queue> Policy for ObjectCache<Q> {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.q.request(r);
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r);
            self.q.hit(&mut self.s, slot, r);
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            let v = self.q.victim(&mut self.s);
            self.s.evict(v, sink);
        }
        let slot = self.s.insert(r, self.q.first_freq(r));
        self.q.inserted(&mut self.s, slot, r);
        sink.miss(r, 0);
    }
    fn grow(&mut self, n: usize) {
        self.s.grow(n);
    }
    fn resident(&self) -> usize {
        self.s.len()
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Replays hand-worked object traces through an object-size policy.
    use crate::policy::PolicySpec;
    use crate::sim::engine::{build_object_instance, fill_next_use, Runner};
    use crate::sim::{Accounting, RefBatch, RefFields};
    use crate::trace::{Kind, Op};

    /// `(hits, misses, byte_misses, too_large)` of `policy` with `cap` bytes over
    /// `(object, size)` requests.
    pub fn replay_objects(policy: &str, cap: usize, reqs: &[(u64, u32)]) -> (u64, u64, u64, u64) {
        let ctx = crate::policy::PolicyCtx {
            capacity: cap,
            tiers: 1,
            page_size: 4096,
        };
        let spec = PolicySpec::parse(policy).unwrap();
        replay_runner(reqs, |acct| {
            build_object_instance(&spec, &ctx, acct).unwrap()
        })
    }

    /// `(object, size)` requests as a batch of reads (time = position, dense ids in order of
    /// first request), and the number of distinct objects.
    pub fn sized_batch(reqs: &[(u64, u32)]) -> (RefBatch, usize) {
        let mut b = RefBatch::default();
        let mut ids = std::collections::HashMap::new();
        for (t, &(obj, size)) in reqs.iter().enumerate() {
            let n = ids.len() as u32;
            let id = *ids.entry(obj).or_insert(n);
            b.push_sized(
                &RefFields {
                    time: t as u64,
                    page: obj,
                    id,
                    app: 0,
                    op: Op::Read,
                    kind: Kind::File,
                    req_start: true,
                },
                size,
            );
        }
        (b, ids.len())
    }

    /// The same counts for the runner `build` makes over the engine's accounting sink.
    pub fn replay_runner(
        reqs: &[(u64, u32)],
        build: impl FnOnce(Accounting) -> Box<dyn Runner>,
    ) -> (u64, u64, u64, u64) {
        let (mut b, distinct) = sized_batch(reqs);
        fill_next_use(&mut b, distinct);
        let sys = crate::device::System::resolve(
            &crate::device::SystemSpec::default(),
            &crate::device::DeviceCatalog::default(),
        )
        .unwrap();
        let mut inst = build(Accounting::new(sys));
        inst.grow(distinct);
        inst.run(&b, &[]);
        let res = inst.finish();
        let s = res.stats;
        (s.hits_total(), s.misses_total(), s.byte_misses, s.too_large)
    }
}
