//! An indexed 4-ary min-heap over slots: each element is a key and the slot it belongs to, and
//! every slot knows its position, so a slot's key can be changed or removed in O(log n) without
//! a search. Keys live in the heap array (a sift compares neighbouring entries, not entries
//! reached through the slot), and nothing is allocated per operation once the arrays have
//! grown to the cache's size.
//!
//! For the priority policies (LRU-K, GDSF, LFUDA) this replaces a `BTreeSet` of keys: the same
//! minimum (keys must be distinct, or equal keys interchangeable, as in a set), at a fraction of
//! the cost: a hit that raises a large key (a hot page's) is a sift of a level or two near the
//! leaves, where a tree walks from its root. Four children per node halve the depth of a binary
//! heap and read the children from one or two cache lines. Crates with a changeable-priority
//! queue (`priority-queue`, `keyed_priority_queue`) find elements through a hash map; here the
//! handle is already a dense slot number, so a position array does it without hashing.

use crate::policy::list::{prefetch, NIL};

const D: usize = 4;

#[derive(Debug, Clone)]
pub struct IndexedHeap<K> {
    heap: Vec<(K, u32)>,
    /// Slot -> its index in `heap`, or [`NIL`].
    pos: Vec<u32>,
}

impl<K> Default for IndexedHeap<K> {
    fn default() -> Self {
        IndexedHeap {
            heap: Vec::new(),
            pos: Vec::new(),
        }
    }
}

impl<K: Ord + Copy> IndexedHeap<K> {
    pub fn with_capacity(n: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(n),
            pos: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The smallest key and its slot.
    #[inline]
    pub fn peek(&self) -> Option<(K, u32)> {
        self.heap.first().copied()
    }

    /// The key of `slot` (which must be in the heap).
    #[inline]
    pub fn key(&self, slot: u32) -> K {
        self.heap[self.pos[slot as usize] as usize].0
    }

    /// Whether `slot` is in the heap.
    #[inline]
    pub fn contains(&self, slot: u32) -> bool {
        self.pos.get(slot as usize).is_some_and(|&p| p != NIL)
    }

    /// Starts loading `slot`'s position.
    #[inline(always)]
    pub fn prefetch_pos(&self, slot: u32) {
        prefetch(&self.pos, slot as usize);
    }

    /// Starts loading `slot`'s heap entry and its first children (a sift from there reads
    /// them), if `slot` is in the heap: its position should be cached ([`Self::prefetch_pos`]).
    /// Returns whether it is in the heap.
    #[inline(always)]
    pub fn prefetch_entry(&self, slot: u32) -> bool {
        match self.pos.get(slot as usize) {
            Some(&p) if p != NIL => {
                let i = p as usize;
                prefetch(&self.heap, i);
                prefetch(&self.heap, D * i + 1);
                true
            }
            _ => false,
        }
    }

    /// Adds `slot` (not in the heap) with `key`.
    #[inline]
    pub fn push(&mut self, slot: u32, key: K) {
        let s = slot as usize;
        if self.pos.len() <= s {
            self.pos.resize(s + 1, NIL);
        }
        debug_assert_eq!(self.pos[s], NIL, "slot {slot} is already in the heap");
        let i = self.heap.len();
        self.heap.push((key, slot));
        self.up(i);
    }

    /// Removes and returns the smallest key and its slot.
    #[inline]
    pub fn pop(&mut self) -> Option<(K, u32)> {
        let top = *self.heap.first()?;
        self.remove_at(0);
        Some(top)
    }

    /// Removes `slot` (which must be in the heap); returns its key.
    #[inline]
    pub fn remove(&mut self, slot: u32) -> K {
        let i = self.pos[slot as usize] as usize;
        let key = self.heap[i].0;
        self.remove_at(i);
        key
    }

    /// Gives `slot` (which must be in the heap) the key `key`.
    #[inline]
    pub fn update(&mut self, slot: u32, key: K) {
        let i = self.pos[slot as usize] as usize;
        let old = self.heap[i].0;
        self.heap[i].0 = key;
        if key < old {
            self.up(i);
        } else {
            self.down(i);
        }
    }

    fn remove_at(&mut self, i: usize) {
        let (_, slot) = self.heap[i];
        self.pos[slot as usize] = NIL;
        let last = self.heap.pop().expect("non-empty heap");
        if i < self.heap.len() {
            let old = self.heap[i].0;
            self.heap[i] = last;
            if last.0 < old {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    #[inline]
    fn up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / D;
            let pe = self.heap[p];
            if pe.0 <= e.0 {
                break;
            }
            self.heap[i] = pe;
            self.pos[pe.1 as usize] = i as u32;
            i = p;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }

    #[inline]
    fn down(&mut self, mut i: usize) {
        let e = self.heap[i];
        let n = self.heap.len();
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let end = (first + D).min(n);
            let mut c = first;
            let mut ck = self.heap[first].0;
            for j in first + 1..end {
                let k = self.heap[j].0;
                if k < ck {
                    c = j;
                    ck = k;
                }
            }
            if e.0 <= ck {
                break;
            }
            let ce = self.heap[c];
            self.heap[i] = ce;
            self.pos[ce.1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
}

/// An [`IndexedHeap`] with a sorted run beside it: a slot pushed with a key at least that of
/// the run's last goes to the back of the run (an intrusive list, O(1)), any other to the heap.
/// The smallest is the smaller of the run's front and the heap's root. A policy whose new entries
/// get keys that rarely fall (GDSF's and LFUDA's `L + 1` for a missing page, `L` non-decreasing)
/// then pays O(1) per miss for the insertion, and its evictions mostly take the run's front, where
/// the heap alone would sift a new root down and the new key up: a miss-heavy trace runs at
/// list speed. [`RunHeap::update`] (a hit) moves a slot from the run into the heap.
#[derive(Debug, Clone)]
pub struct RunHeap<K> {
    heap: IndexedHeap<K>,
    /// Per slot: (key, previous, next) while the slot is in the run.
    run: Vec<(K, u32, u32)>,
    head: u32,
    tail: u32,
    run_len: usize,
}

impl<K: Ord + Copy + Default> RunHeap<K> {
    pub fn with_capacity(n: usize) -> Self {
        RunHeap {
            heap: IndexedHeap::with_capacity(n),
            run: Vec::with_capacity(n),
            head: NIL,
            tail: NIL,
            run_len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() + self.run_len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn in_run(&self, slot: u32) -> bool {
        !self.heap.contains(slot)
    }

    /// The smallest key and its slot.
    #[inline]
    pub fn peek(&self) -> Option<(K, u32)> {
        let front = (self.head != NIL).then(|| (self.run[self.head as usize].0, self.head));
        match (front, self.heap.peek()) {
            (Some(f), Some(h)) => Some(if h.0 < f.0 { h } else { f }),
            (f, h) => f.or(h),
        }
    }

    /// Adds `slot` (in neither part) with `key`.
    #[inline]
    pub fn push(&mut self, slot: u32, key: K) {
        if self.tail != NIL && key < self.run[self.tail as usize].0 {
            self.heap.push(slot, key);
            return;
        }
        let s = slot as usize;
        if self.run.len() <= s {
            self.run.resize(s + 1, (K::default(), NIL, NIL));
        }
        self.run[s] = (key, self.tail, NIL);
        if self.tail != NIL {
            self.run[self.tail as usize].2 = slot;
        } else {
            self.head = slot;
        }
        self.tail = slot;
        self.run_len += 1;
    }

    /// The key of `slot` (which must be in).
    #[inline]
    pub fn key(&self, slot: u32) -> K {
        if self.in_run(slot) {
            self.run[slot as usize].0
        } else {
            self.heap.key(slot)
        }
    }

    /// Adds `slot` (in neither part) with `key` to the heap part (for a key that is not a new
    /// entry's, which would end the run's use for the new entries after it).
    #[inline]
    pub fn push_heap(&mut self, slot: u32, key: K) {
        self.heap.push(slot, key);
    }

    fn unlink(&mut self, slot: u32) -> K {
        let (key, p, n) = self.run[slot as usize];
        if p != NIL {
            self.run[p as usize].2 = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.run[n as usize].1 = p;
        } else {
            self.tail = p;
        }
        self.run_len -= 1;
        key
    }

    /// Removes and returns the smallest key and its slot.
    #[inline]
    pub fn pop(&mut self) -> Option<(K, u32)> {
        let (key, slot) = self.peek()?;
        if self.in_run(slot) {
            self.unlink(slot);
        } else {
            self.heap.pop();
        }
        Some((key, slot))
    }

    /// Removes `slot` (which must be in); returns its key.
    #[inline]
    pub fn remove(&mut self, slot: u32) -> K {
        if self.in_run(slot) {
            self.unlink(slot)
        } else {
            self.heap.remove(slot)
        }
    }

    /// Gives `slot` (which must be in) the key `key`; a slot of the run moves to the heap.
    #[inline]
    pub fn update(&mut self, slot: u32, key: K) {
        if self.in_run(slot) {
            self.unlink(slot);
            self.heap.push(slot, key);
        } else {
            self.heap.update(slot, key);
        }
    }

    /// Starts loading `slot`'s position in the heap and its run entry.
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        self.heap.prefetch_pos(slot);
        prefetch(&self.run, slot as usize);
    }

    /// The run's first two slots ([`NIL`] where there are none): after a pop from the run the
    /// next victims, whose metadata a policy may start loading.
    #[inline(always)]
    pub fn run_front(&self) -> (u32, u32) {
        if self.head == NIL {
            return (NIL, NIL);
        }
        (self.head, self.run[self.head as usize].2)
    }

    /// After [`Self::prefetch`] (whose loads should be cached): starts loading what an update
    /// of `slot` touches next, its heap entry and first children, or its neighbours in the run.
    #[inline(always)]
    pub fn prefetch_place(&self, slot: u32) {
        if !self.heap.prefetch_entry(slot) {
            if let Some(&(_, p, n)) = self.run.get(slot as usize) {
                if p != NIL {
                    prefetch(&self.run, p as usize);
                }
                if n != NIL {
                    prefetch(&self.run, n as usize);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IndexedHeap;
    use std::collections::BTreeSet;

    /// The same against a `RunHeap`, with keys that mostly rise (so both parts are used).
    #[test]
    fn run_heap_agrees_with_an_ordered_set() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(18);
        let mut h = super::RunHeap::with_capacity(0);
        let mut set = BTreeSet::new();
        let mut keys = vec![None; 200];
        let mut base = 0u64;
        for _ in 0..200_000 {
            let slot = rng.random_range(0..200u32);
            base += rng.random_range(0..3);
            let key = (base - rng.random_range(0..base.min(5) + 1), slot);
            match (keys[slot as usize], rng.random_range(0..4)) {
                (None, _) => {
                    h.push(slot, key);
                    set.insert(key);
                    keys[slot as usize] = Some(key);
                }
                (Some(old), 0) => {
                    assert_eq!(h.remove(slot), old);
                    set.remove(&old);
                    keys[slot as usize] = None;
                }
                (Some(_), 1) => {
                    let (k, s) = h.pop().expect("non-empty");
                    assert_eq!(Some(k), set.pop_first());
                    keys[s as usize] = None;
                }
                (Some(old), _) => {
                    let new = (old.0 + rng.random_range(0..4), slot);
                    h.update(slot, new);
                    set.remove(&old);
                    set.insert(new);
                    keys[slot as usize] = Some(new);
                }
            }
            assert_eq!(h.len(), set.len());
            assert_eq!(h.peek().map(|e| e.0), set.first().copied());
        }
        assert!(h.run_len > 0 && !h.heap.is_empty());
    }

    /// Random pushes, pops, updates and removals against a `BTreeSet` of (key, slot).
    #[test]
    fn agrees_with_an_ordered_set() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
        let mut next = move |m: u64| rng.random_range(0..m);
        let mut h = IndexedHeap::default();
        let mut set = BTreeSet::new();
        let mut keys = vec![None; 300];
        for _ in 0..200_000 {
            let slot = next(300) as u32;
            let key = next(1000);
            match (keys[slot as usize], next(4)) {
                (None, _) => {
                    h.push(slot, (key, slot));
                    set.insert((key, slot));
                    keys[slot as usize] = Some(key);
                }
                (Some(old), 0) => {
                    assert_eq!(h.remove(slot), (old, slot));
                    set.remove(&(old, slot));
                    keys[slot as usize] = None;
                }
                (Some(old), 1) => {
                    let (k, s) = h.pop().expect("non-empty");
                    assert_eq!(Some((k, s)), set.pop_first().map(|k| (k, k.1)));
                    keys[s as usize] = None;
                    let _ = old;
                }
                (Some(old), _) => {
                    h.update(slot, (key, slot));
                    set.remove(&(old, slot));
                    set.insert((key, slot));
                    keys[slot as usize] = Some(key);
                }
            }
            assert_eq!(h.len(), set.len());
            assert_eq!(h.peek().map(|e| e.0), set.first().copied());
        }
    }
}
