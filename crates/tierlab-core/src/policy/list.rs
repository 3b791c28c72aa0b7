//! Index-based intrusive doubly linked lists over a shared node arena, and the
//! page-id -> slot table. Policies keep their metadata in slots of a `Vec`
//! (no allocation per access, no hashing: page ids are dense) and link slots
//! into as many lists as they need (LRU stacks, ARC's T1/T2/B1/B2, ...).

use crate::policy::Frame;
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;

/// "No slot".
pub const NIL: u32 = u32::MAX;

/// Asks the CPU to start loading `v[i]` into cache (does nothing past the end, or off x86_64).
/// The replay loop knows the references to come, so a policy can fetch the metadata of the
/// page it will see a few references later while it handles this one: the loop then runs at the
/// memory system's throughput instead of waiting out one cache miss after another.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    if i < v.len() {
        prefetch_unchecked(v, i);
    }
}

/// [`prefetch`] without the bounds test, for a hot loop whose `i` is known to be at most
/// `v.len()` (one past the end is allowed: the slot an insertion fills).
#[inline(always)]
pub fn prefetch_unchecked<T>(v: &[T], i: usize) {
    debug_assert!(i <= v.len());
    prefetch_ptr(v.as_ptr().wrapping_add(i));
}

/// Starts loading the cache line at `p`, any address (a hint: it never faults, has no visible
/// effect, and `p` is not dereferenced). What [`prefetch`] does once it has the address; for
/// lines within a structure (a chunk's header and keys) and addresses from stale data.
#[inline(always)]
pub fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults and has no visible effect, and the
    // pointer is not dereferenced.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Debug, Clone)]
struct Node<T> {
    prev: u32,
    next: u32,
    val: T,
}

/// Storage for list nodes; freed slots are reused.
#[derive(Debug, Clone, Default)]
pub struct Arena<T> {
    nodes: Vec<Node<T>>,
    free: Vec<u32>,
}

impl<T> Arena<T> {
    pub fn with_capacity(n: usize) -> Self {
        Arena {
            nodes: Vec::with_capacity(n),
            free: Vec::new(),
        }
    }

    /// Stores `val` in a fresh (unlinked) slot.
    #[inline]
    pub fn alloc(&mut self, val: T) -> u32 {
        if let Some(i) = self.free.pop() {
            let n = &mut self.nodes[i as usize];
            n.val = val;
            n.prev = NIL;
            n.next = NIL;
            i
        } else {
            self.nodes.push(Node {
                prev: NIL,
                next: NIL,
                val,
            });
            (self.nodes.len() - 1) as u32
        }
    }

    /// Releases an unlinked slot.
    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.nodes[i as usize].val
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.nodes[i as usize].val
    }

    /// Slot `i`'s value, or `None` past the slots (`NIL` among them).
    #[inline]
    pub fn get_mut_checked(&mut self, i: u32) -> Option<&mut T> {
        self.nodes.get_mut(i as usize).map(|n| &mut n.val)
    }

    /// Starts loading slot `i`'s node (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        prefetch(&self.nodes, i as usize);
    }

    /// Starts loading the nodes before and after slot `i` in its list, which unlinking `i`
    /// rewrites (reads `i`'s node: call it once that has been prefetched).
    #[inline(always)]
    pub fn prefetch_neighbours(&self, i: u32) {
        if let Some(n) = self.nodes.get(i as usize) {
            // `NIL` is past the end: no load.
            prefetch(&self.nodes, n.prev as usize);
            prefetch(&self.nodes, n.next as usize);
        }
    }

    /// Slots in use.
    pub fn live(&self) -> usize {
        self.nodes.len() - self.free.len()
    }
}

/// A list of arena slots. Front = most recent (MRU), back = oldest (LRU).
#[derive(Debug, Clone, Copy)]
pub struct List {
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }
    #[inline]
    pub fn back(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    #[inline]
    pub fn push_front<T>(&mut self, a: &mut Arena<T>, i: u32) {
        let old = self.head;
        {
            let n = &mut a.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            a.nodes[old as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }

    #[inline]
    pub fn push_back<T>(&mut self, a: &mut Arena<T>, i: u32) {
        let old = self.tail;
        {
            let n = &mut a.nodes[i as usize];
            n.next = NIL;
            n.prev = old;
        }
        if old != NIL {
            a.nodes[old as usize].next = i;
        } else {
            self.head = i;
        }
        self.tail = i;
        self.len += 1;
    }

    /// Unlinks slot `i`, which must be in this list.
    #[inline]
    pub fn unlink<T>(&mut self, a: &mut Arena<T>, i: u32) {
        let (p, n) = {
            let node = &a.nodes[i as usize];
            (node.prev, node.next)
        };
        if p != NIL {
            a.nodes[p as usize].next = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            a.nodes[n as usize].prev = p;
        } else {
            self.tail = p;
        }
        self.len -= 1;
    }

    #[inline]
    pub fn pop_back<T>(&mut self, a: &mut Arena<T>) -> Option<u32> {
        let t = self.back()?;
        self.unlink(a, t);
        Some(t)
    }

    /// Links `i` just before `at` (towards the front).
    #[inline]
    pub fn insert_before<T>(&mut self, a: &mut Arena<T>, at: u32, i: u32) {
        let p = a.nodes[at as usize].prev;
        {
            let n = &mut a.nodes[i as usize];
            n.prev = p;
            n.next = at;
        }
        a.nodes[at as usize].prev = i;
        if p != NIL {
            a.nodes[p as usize].next = i;
        } else {
            self.head = i;
        }
        self.len += 1;
    }

    #[inline]
    pub fn pop_front<T>(&mut self, a: &mut Arena<T>) -> Option<u32> {
        let h = self.front()?;
        self.unlink(a, h);
        Some(h)
    }

    #[inline]
    pub fn move_to_front<T>(&mut self, a: &mut Arena<T>, i: u32) {
        if self.head != i {
            self.unlink(a, i);
            self.push_front(a, i);
        }
    }

    /// A speed hint for a policy that takes its victims from the back, called each time it
    /// took one: reads the back node (which the previous call started loading), starts loading
    /// the node before it (the victim after next), and hands the back's value to `then`, which
    /// may prefetch what the next victim will touch (its table entry, ...). Changes nothing.
    /// (Reading two nodes deep instead measured no faster.)
    #[inline(always)]
    pub fn prefetch_back<T>(&self, a: &Arena<T>, then: impl FnOnce(&T)) {
        if self.tail != NIL {
            let n = &a.nodes[self.tail as usize];
            if n.prev != NIL {
                a.prefetch(n.prev);
            }
            then(&n.val);
        }
    }

    /// The slot after `i` (towards the back).
    #[inline]
    pub fn next_of<T>(&self, a: &Arena<T>, i: u32) -> Option<u32> {
        let n = a.nodes[i as usize].next;
        (n != NIL).then_some(n)
    }

    /// The slot before `i` (towards the front).
    #[inline]
    pub fn prev_of<T>(&self, a: &Arena<T>, i: u32) -> Option<u32> {
        let p = a.nodes[i as usize].prev;
        (p != NIL).then_some(p)
    }

    /// Slots from front to back.
    pub fn iter<'a, T>(&self, a: &'a Arena<T>) -> impl Iterator<Item = u32> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                None
            } else {
                let i = cur;
                cur = a.nodes[i as usize].next;
                Some(i)
            }
        })
    }
}

/// One bit per slot (a reference or dirty bit), 64 to a word: 100K slots take 12.5 KB, so the
/// bits of a whole cache stay in L1 and CLOCK's hand can pass 64 slots with one
/// `trailing_zeros` instead of a branch per slot.
#[derive(Debug, Clone, Default)]
pub struct SlotBits {
    words: Vec<u64>,
}

/// Bits `0..n` of a word set (`n` < 64).
#[inline(always)]
fn low_bits(n: u32) -> u64 {
    (1u64 << n) - 1
}

impl SlotBits {
    /// Room for `slots` bits, all clear.
    pub fn with_slots(slots: usize) -> Self {
        SlotBits {
            words: vec![0; slots.div_ceil(64)],
        }
    }
    /// Makes room for bits `0..slots` (new bits clear).
    #[inline]
    pub fn grow(&mut self, slots: usize) {
        let words = slots.div_ceil(64);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
    }
    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 != 0
    }
    #[inline(always)]
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    /// Sets bit `i` if `on` (no branch: for a flag of every reference, such as "is a write").
    #[inline(always)]
    pub fn set_if(&mut self, i: usize, on: bool) {
        self.words[i / 64] |= (on as u64) << (i % 64);
    }
    /// Sets bit `i` to `on`.
    #[inline(always)]
    pub fn assign(&mut self, i: usize, on: bool) {
        let w = &mut self.words[i / 64];
        *w = (*w & !(1 << (i % 64))) | ((on as u64) << (i % 64));
    }
    /// CLOCK's hand over slots `0..len` (`len` > 0, at most the slots made room for): the
    /// first slot at or after `hand`, going round, whose bit is clear; every set bit it passes
    /// is cleared on the way (the second chance is used up). Terminates: after one full turn
    /// every bit is clear.
    #[inline]
    pub fn sweep(&mut self, hand: usize, len: usize) -> usize {
        let last = (len - 1) / 64;
        // Bits past `len` in the last word count as set, so the hand never stops there.
        let past_end = if len.is_multiple_of(64) {
            0
        } else {
            !low_bits((len % 64) as u32)
        };
        let (mut w, mut from) = (hand / 64, (hand % 64) as u32);
        loop {
            let beyond = if w == last { past_end } else { 0 };
            let passed_or_set = self.words[w] | low_bits(from) | beyond;
            if passed_or_set != u64::MAX {
                let b = (!passed_or_set).trailing_zeros();
                self.words[w] &= !(low_bits(b) & !low_bits(from));
                return w * 64 + b as usize;
            }
            self.words[w] &= low_bits(from);
            w = if w == last { 0 } else { w + 1 };
            from = 0;
        }
    }
}

/// The pages of a policy's slots: id, page number and kind per slot, read back only when the
/// slot is evicted, and dirty bits apart in a [`SlotBits`], so a write hit sets a bit that stays
/// in L1 instead of touching the slot's frame. CLOCK, LRU and FIFO keep their pages here.
#[derive(Debug, Clone, Default)]
pub struct SlotFrames {
    ids: Vec<PageId>,
    pages: Vec<u64>,
    kinds: Vec<Kind>,
    dirty: SlotBits,
}

impl SlotFrames {
    /// No slots yet, room for `slots`.
    pub fn with_slots(slots: usize) -> Self {
        SlotFrames {
            ids: Vec::with_capacity(slots),
            pages: Vec::with_capacity(slots),
            kinds: Vec::with_capacity(slots),
            dirty: SlotBits::with_slots(slots),
        }
    }
    /// Slots made so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// No slot made yet.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// A new slot holding `r`'s page (dirty if `r` writes); returns its index.
    #[inline]
    pub fn push(&mut self, r: &PageRef) -> usize {
        self.ids.push(NIL);
        self.pages.push(0);
        self.kinds.push(Kind::File);
        let s = self.ids.len() - 1;
        self.dirty.grow(s + 1);
        self.put(s, r);
        s
    }
    /// A new slot that never holds a page (so slot numbers can match a list with a sentinel).
    pub fn push_unused(&mut self) {
        self.ids.push(NIL);
        self.pages.push(0);
        self.kinds.push(Kind::File);
        self.dirty.grow(self.ids.len());
    }
    /// Slot `s` now holds `r`'s page (dirty if `r` writes).
    #[inline]
    pub fn put(&mut self, s: usize, r: &PageRef) {
        self.ids[s] = r.id;
        self.pages[s] = r.page();
        self.kinds[s] = r.kind();
        self.dirty.assign(s, r.is_write());
    }
    /// Slot `s`'s page is evicted from `tier` (forgotten by `table`, reported to `sink`) and
    /// `r`'s page takes the slot: the steady-state miss of a full cache, with no allocation.
    #[inline]
    pub fn replace<S: Sink>(
        &mut self,
        s: usize,
        r: &PageRef,
        table: &mut SlotTable,
        tier: u8,
        sink: &mut S,
    ) {
        table.clear(self.id(s));
        sink.evict(self.out(s, tier));
        self.put(s, r);
    }
    /// A hit by `r` on slot `s`: dirty from now on if `r` writes.
    #[inline(always)]
    pub fn touch(&mut self, s: usize, r: &PageRef) {
        self.dirty.set_if(s, r.is_write());
    }
    #[inline]
    pub fn id(&self, s: usize) -> PageId {
        self.ids[s]
    }
    /// Slot `s`'s page as it leaves `tier`.
    #[inline]
    pub fn out(&self, s: usize, tier: u8) -> PageOut {
        PageOut {
            id: self.ids[s],
            page: self.pages[s],
            kind: self.kinds[s],
            dirty: self.dirty.get(s),
            tier,
        }
    }
}

/// A doubly linked list of slots `1..` with a sentinel at slot 0, as `[prev, next]` pairs
/// (8 bytes a slot): with the sentinel no link is ever NIL, so moving a slot to the front is
/// six loads and stores with no branch (LRU's hit). Front = most recent.
#[derive(Debug, Clone)]
pub struct Ring {
    links: Vec<[u32; 2]>,
}

impl Ring {
    /// An empty ring with room for `slots` slots (numbered from 1).
    pub fn with_slots(slots: usize) -> Self {
        let mut links = Vec::with_capacity(slots + 1);
        links.push([0, 0]);
        Ring { links }
    }
    /// Slots made so far (linked or not).
    #[inline]
    pub fn slots(&self) -> usize {
        self.links.len() - 1
    }
    /// A new slot, linked at the front.
    #[inline]
    pub fn push_new_front(&mut self) -> u32 {
        let i = self.links.len() as u32;
        self.links.push([0, 0]);
        self.link_front(i);
        i
    }
    #[inline(always)]
    fn link_front(&mut self, i: u32) {
        let first = self.links[0][1];
        self.links[i as usize] = [0, first];
        self.links[first as usize][0] = i;
        self.links[0][1] = i;
    }
    #[inline(always)]
    fn unlink(&mut self, i: u32) {
        let [p, n] = self.links[i as usize];
        self.links[p as usize][1] = n;
        self.links[n as usize][0] = p;
    }
    /// Moves linked slot `i` to the front.
    #[inline(always)]
    pub fn move_to_front(&mut self, i: u32) {
        self.unlink(i);
        self.link_front(i);
    }
    /// The back (least recent) slot, or None when empty.
    #[inline]
    pub fn back(&self) -> Option<u32> {
        let b = self.links[0][0];
        (b != 0).then_some(b)
    }
    /// Starts loading slot `i`'s links (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        prefetch(&self.links, i as usize);
    }
    /// Slots from front to back.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.links[0][1];
        std::iter::from_fn(move || {
            (cur != 0).then(|| {
                let i = cur;
                cur = self.links[i as usize][1];
                i
            })
        })
    }
}

/// A node that knows its page's id, for structures that forget pages (e.g. [`GhostFifo`]).
pub trait PageNode {
    fn page_id(&self) -> PageId;
}

/// A bounded FIFO of ghosts: the nodes of evicted pages, kept in the policy's arena and table so
/// that a page coming back is recognised (2Q's A1out, S3-FIFO's G). Front = newest.
#[derive(Debug, Clone, Default)]
pub struct GhostFifo {
    list: List,
    cap: usize,
}

impl GhostFifo {
    pub fn new(cap: usize) -> Self {
        GhostFifo {
            list: List::default(),
            cap,
        }
    }
    pub fn len(&self) -> usize {
        self.list.len()
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// Keeps node `v`, whose page was just evicted and which is in no list, as the newest ghost,
    /// forgetting the oldest ghost when full. With no room at all (capacity 0) `v` is forgotten
    /// instead and `false` returned; `true` means the caller should mark `v` as a ghost.
    pub fn admit<N: PageNode>(
        &mut self,
        arena: &mut Arena<N>,
        table: &mut SlotTable,
        v: u32,
    ) -> bool {
        if self.cap == 0 {
            table.clear(arena.get(v).page_id());
            arena.release(v);
            return false;
        }
        if self.list.len() >= self.cap {
            let oldest = self
                .list
                .pop_back(arena)
                .expect("a full ghost FIFO has a back");
            table.clear(arena.get(oldest).page_id());
            arena.release(oldest);
        }
        self.list.push_front(arena, v);
        true
    }
    /// Ghost `v` was requested again: it leaves the FIFO and is forgotten (the caller admits the
    /// page anew).
    pub fn remove<N: PageNode>(&mut self, arena: &mut Arena<N>, table: &mut SlotTable, v: u32) {
        self.list.unlink(arena, v);
        table.clear(arena.get(v).page_id());
        arena.release(v);
    }
}

/// The [`Policy`](crate::policy::Policy) methods that every policy keyed by a `table:
/// SlotTable` writes alike, for its `impl Policy` block: `grow` grows the table; `prefetch`
/// loads the table entry of the reference [`PREFETCH_FAR`](crate::policy::PREFETCH_FAR) ahead
/// and, with `arena` (nodes in an `arena: Arena<_>` indexed by slot), also the node of the one
/// [`PREFETCH_NEAR`](crate::policy::PREFETCH_NEAR) ahead, so a hit finds its node in cache (its
/// list neighbours are still loaded on demand). They cost those prefetches and nothing else. A
/// macro because the methods read the policy's own fields.
macro_rules! table_glue {
    (arena) => {
        #[inline(always)]
        fn prefetch(&self, near: $crate::sim::PageId, far: $crate::sim::PageId) {
            self.table
                .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
        }
        $crate::policy::list::table_glue!(grow);
    };
    (table) => {
        #[inline(always)]
        fn prefetch(&self, _near: $crate::sim::PageId, far: $crate::sim::PageId) {
            self.table.prefetch(far);
        }
        $crate::policy::list::table_glue!(grow);
    };
    (grow) => {
        fn grow(&mut self, n: usize) {
            self.table.grow(n);
        }
    };
}
pub(crate) use table_glue;

/// Page id -> slot (or [`NIL`]), one `u32` per distinct page.
#[derive(Debug, Clone, Default)]
pub struct SlotTable {
    slots: Vec<u32>,
}

impl SlotTable {
    pub fn grow(&mut self, n: usize) {
        if self.slots.len() < n {
            self.slots.resize(n, NIL);
        }
    }
    #[inline]
    pub fn get(&self, id: u32) -> u32 {
        self.slots[id as usize]
    }
    /// The slot of `id`, or [`NIL`] also for ids the table has not grown to.
    #[inline(always)]
    pub fn lookup(&self, id: u32) -> u32 {
        self.slots.get(id as usize).copied().unwrap_or(NIL)
    }
    /// Starts loading `id`'s entry (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        prefetch(&self.slots, id as usize);
    }
    /// The usual [`crate::policy::Policy::prefetch`] of a policy keyed by this table: loads
    /// `far`'s entry, and hands `near`'s slot (its entry is cached by now) to `then`, which
    /// prefetches what the slot indexes.
    #[inline(always)]
    pub fn prefetch_ahead(&self, near: PageId, far: PageId, then: impl FnOnce(u32)) {
        self.prefetch(far);
        self.prefetch_through(near, then);
    }
    /// Hands `id`'s slot, when it has one, to `then` (a prefetch stage after the one that
    /// loaded `id`'s entry: `then` prefetches what the slot indexes).
    #[inline(always)]
    pub fn prefetch_through(&self, id: PageId, then: impl FnOnce(u32)) {
        let s = self.lookup(id);
        if s != NIL {
            then(s);
        }
    }
    #[inline]
    pub fn set(&mut self, id: u32, slot: u32) {
        self.slots[id as usize] = slot;
    }
    #[inline]
    pub fn clear(&mut self, id: u32) {
        self.slots[id as usize] = NIL;
    }
    /// `victim` leaves `tier`: its page has no slot any more, and `sink` hears of the eviction
    /// (with its dirty bit, so a dirty page is written back).
    #[inline]
    pub fn forget_evicted<S: Sink>(&mut self, victim: &Frame, tier: u8, sink: &mut S) {
        self.clear(victim.id);
        sink.evict(victim.out(tier));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_operations_keep_order_and_length() {
        let mut a = Arena::default();
        let mut l = List::default();
        let x: Vec<u32> = (0..5).map(|v| a.alloc(v)).collect();
        for &i in &x {
            l.push_front(&mut a, i);
        }
        assert_eq!(
            l.iter(&a).map(|i| *a.get(i)).collect::<Vec<_>>(),
            vec![4, 3, 2, 1, 0]
        );
        l.move_to_front(&mut a, x[0]);
        l.unlink(&mut a, x[2]);
        assert_eq!(
            l.iter(&a).map(|i| *a.get(i)).collect::<Vec<_>>(),
            vec![0, 4, 3, 1]
        );
        assert_eq!(l.pop_back(&mut a).map(|i| *a.get(i)), Some(1));
        assert_eq!(l.len(), 3);
        l.push_back(&mut a, x[2]);
        assert_eq!(l.back(), Some(x[2]));
        assert_eq!(l.iter(&a).count(), 4);
    }

    #[test]
    fn ring_moves_to_front_and_reports_the_back() {
        let mut r = Ring::with_slots(4);
        assert_eq!(r.back(), None);
        let x: Vec<u32> = (0..4).map(|_| r.push_new_front()).collect();
        assert_eq!(x, vec![1, 2, 3, 4]);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![4, 3, 2, 1]);
        r.move_to_front(1);
        r.move_to_front(1);
        r.move_to_front(3);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![3, 1, 4, 2]);
        assert_eq!(r.back(), Some(2));
        assert_eq!(r.slots(), 4);
    }

    /// CLOCK's hand one slot at a time: what [`SlotBits::sweep`] must equal.
    fn sweep_one_by_one(bits: &mut [bool], mut hand: usize) -> usize {
        while bits[hand] {
            bits[hand] = false;
            hand = (hand + 1) % bits.len();
        }
        hand
    }

    proptest::proptest! {
        #[test]
        fn sweep_equals_the_hand_one_slot_at_a_time(
            bits in proptest::collection::vec(proptest::bool::weighted(0.9), 1..300),
            hand_seed in 0usize..10_000,
        ) {
            let hand = hand_seed % bits.len();
            let mut expected_bits = bits.clone();
            let expected = sweep_one_by_one(&mut expected_bits, hand);
            let mut sb = SlotBits::with_slots(bits.len());
            for (i, &b) in bits.iter().enumerate() {
                sb.assign(i, b);
            }
            proptest::prop_assert_eq!(sb.sweep(hand, bits.len()), expected);
            let after: Vec<bool> = (0..bits.len()).map(|i| sb.get(i)).collect();
            proptest::prop_assert_eq!(after, expected_bits);
        }
    }
}
