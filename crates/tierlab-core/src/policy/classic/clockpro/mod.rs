//! CLOCK-Pro (Jiang, Chen & Zhang, "CLOCK-Pro: An Effective Improvement of
//! the CLOCK Replacement", USENIX ATC 2005, Section 4): one clock holding hot
//! pages, resident cold pages, and non-resident cold pages still in their
//! test period, swept by three hands. HAND_cold evicts unreferenced cold
//! pages (they stay in the clock as non-resident test entries) and turns
//! referenced cold pages hot; HAND_hot turns unreferenced hot pages cold
//! (clearing reference bits as it goes); HAND_test ends test periods,
//! dropping non-resident entries. A miss on a page still in its test period
//! raises the cold target m_c by one (the page proved a small reuse
//! distance) and brings it in hot; a test period that ends without a reuse
//! lowers m_c by one (Section 4.3). Non-resident entries are bounded by the
//! memory size m (Section 4.2).
//!
//! Choices where the paper leaves room, after the paper's authors' reference
//! simulator as reimplemented in PyClockPro (Lehtinen): a resident cold page
//! is in its test period from its fault until HAND_cold passes it (so an
//! unreferenced cold page always leaves a test entry), new pages are inserted
//! just behind HAND_hot (the list head), and m_c starts at `cold_init` x m
//! (default 1.0, PyClockPro's start, and never below 1 page).
//!
//! Consequence of the adaptation rule worth knowing: on a pure loop longer
//! than memory but shorter than memory plus m test entries, every page
//! faults inside its test period, so m_c climbs to m, no page stays hot and
//! CLOCK-Pro behaves like CLOCK there (tests/classic_claims.rs checks the
//! paper's claim where it holds: it beats CLOCK on mixed traces).
//!
//! Cost: HAND_hot acts only on hot pages, and once m_c nears m (every resident
//! page cold, as on long loops) it would pass up to the whole clock (resident
//! pages plus up to m test entries) to find the one hot page a test fault just
//! brought in, O(m) per such fault. When one balance sweep has passed more
//! than a quarter of the clock, the policy builds (O(m), paid for by that
//! sweep) an ordered mode: the hot pages also linked into a ring in clock
//! order, and every node carrying an order label (a list labelling after
//! Bender, Cole, Demaine, Farach-Colton & Zito, "Two Simplified Algorithms for
//! Maintaining Order in a List", ESA 2002: labels increase along the clock,
//! relabelled in the smallest sparse enough aligned range when an insertion
//! finds no gap, amortized O(log m)). HAND_hot's balance sweep then jumps
//! straight to the first of the next hot page and HAND_test (where it would
//! push HAND_test), exactly where stepping one node at a time would next do
//! anything: the same evictions, in the same order, as the step-by-step sweep
//! (a test replays both and compares every event). The mode ends (O(1)) after
//! m insertions without a long jump, since its upkeep costs more than plain
//! stepping where sweeps are short.
//!
//! A hit only sets the page's reference (and dirty) bit, but reads its table entry and node at
//! random places: the prefetch hint loads the entry 16 references ahead and the node 6 ahead.
//! The hands chase links through nodes placed at random in memory: each hand step loads the node
//! after it, and a walker per sweeping hand (HAND_cold, HAND_test) runs up to 8 nodes ahead of
//! it, one node per reference, so a miss's sweep finds its nodes loaded. The walker is itself a
//! chain of dependent loads, so each node also keeps a hint, the node HAND_cold reached 8 steps
//! after it on its last pass, whose load a hand starts when it leaves the node (hints only, never
//! followed: the decisions are those of the plain hands). Memory: a list node (frame, kind, order
//! label, hot-ring links, hint) per resident page and per test entry, 96 B per resident page at
//! 10% of a Zipf trace (the `memory` example), and a 4-byte id -> slot entry per distinct page.

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockProConfig {
    /// Initial cold target m_c as a fraction of memory.
    pub cold_init: f64,
}

impl Default for ClockProConfig {
    fn default() -> Self {
        ClockProConfig { cold_init: 1.0 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hot,
    Cold,
    /// Non-resident, in its test period.
    Test,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    kind: Kind,
    referenced: bool,
    /// Order label: increases from the clock's front to its back.
    label: u64,
    /// Links of the ring of hot nodes (clock order), meaningful while `kind` is `Hot`.
    hot_prev: u32,
    hot_next: u32,
    /// A speed hint: the node HAND_cold reached [`SKIP`] steps after this one on its last pass
    /// (NIL before), whose load a hand starts when it leaves this node. Only ever prefetched:
    /// stale after insertions and removals (then a load of some other slot), never followed.
    skip: u32,
}

/// Density bound of the list labelling: a label range of 2^i may hold at most (2 / T)^i nodes.
/// T = 1.4 keeps room for about 8.7 x 10^9 nodes in 64-bit labels.
const LABEL_T: f64 = 1.4;
/// Label distance between consecutive insertions of a run (see `assign_label`).
const LABEL_STRIDE: u128 = 1 << 20;

/// How far (in nodes) a [`Runahead`] walks ahead of its hand.
const RUNAHEAD: u32 = 8;
/// Steps between a node and its [`Node::skip`] hint.
const SKIP: usize = 8;

/// A walker a few nodes ahead of a hand, one node a reference (from the replay loop's prefetch
/// hint), loading each: clock order is unrelated to memory order, so a hand stepping on its
/// own waits out a cache miss per node, one after the other; between misses the walker has the
/// time to load the nodes the hand will step on. Only a hint: hands follow the true links, and
/// a walker whose node was removed or relinked just loads the wrong nodes until its hand
/// catches up with it (its lead reaches 0) and it restarts from the hand.
#[derive(Default)]
struct Runahead {
    at: Cell<u32>,
    /// Steps of the walker not yet taken by the hand.
    lead: Cell<u32>,
}

impl Runahead {
    /// One step of the walker from `hand` (or from where it is) through `next` (the clock's
    /// successor), loading the node it reaches.
    #[inline(always)]
    fn step(&self, hand: u32, arena: &Arena<Node>, next: impl Fn(u32) -> u32) {
        let lead = self.lead.get();
        if lead >= RUNAHEAD || hand == NIL {
            return;
        }
        let at = if lead == 0 { hand } else { self.at.get() };
        let n = next(at);
        if n != NIL {
            arena.prefetch(n);
            self.at.set(n);
            self.lead.set(lead + 1);
        }
    }

    /// Its hand took one step.
    #[inline(always)]
    fn hand_stepped(&self) {
        self.lead.set(self.lead.get().saturating_sub(1));
    }
}

pub struct ClockPro {
    mem_max: usize,
    mem_cold: usize,
    arena: Arena<Node>,
    /// The clock, in hand order front -> back, wrapping.
    clock: List,
    table: SlotTable,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    cold_ahead: Runahead,
    test_ahead: Runahead,
    /// HAND_cold's last [`SKIP`] positions (a ring at `trail_at`), whose hints it sets.
    trail: [u32; SKIP],
    trail_at: usize,
    count_hot: usize,
    count_cold: usize,
    count_test: usize,
    /// Nesting of hand sweeps (see `run_hand_cold`).
    depth: u32,
    /// First hot node at or after HAND_hot (NIL when there is none).
    hot_after_hand_hot: u32,
    /// First hot node at or after HAND_cold (NIL when there is none).
    hot_after_hand_cold: u32,
    /// Whether the ordered mode (labels, hot ring, first-hot pointers) is on.
    ordered: bool,
    /// Insertions since the ordered mode last made a long jump (it ends after `clock.len()`).
    quiet_inserts: usize,
    /// Balance-sweep steps before the ordered mode may start (with a quarter of the clock).
    min_sweep: usize,
    /// Whether the ordered mode may start (tests turn it off to compare against the plain
    /// step-by-step sweep).
    skip: bool,
    /// Nodes HAND_hot's jumps passed over (for the tests).
    #[cfg(test)]
    jumped: u64,
    /// Times `assign_label` found no gap (for the tests).
    #[cfg(test)]
    relabels: u64,
}

impl PolicyDef for ClockPro {
    const NAME: &'static str = "clock-pro";
    const ALIASES: &'static [&'static str] = &["clockpro"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC 2005): hot/cold/test pages under three clock hands.";
    type Config = ClockProConfig;
    fn build(cfg: &ClockProConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(cfg.cold_init.is_finite() && cfg.cold_init > 0.0 && cfg.cold_init <= 1.0) {
            return Err(Error::config(format!(
                "policy 'clock-pro': cold_init must be in (0, 1], got {}",
                cfg.cold_init
            )));
        }
        Ok(ClockPro {
            mem_max: ctx.capacity,
            mem_cold: ((cfg.cold_init * ctx.capacity as f64) as usize).max(1),
            arena: Arena::with_capacity(ctx.capacity * 2),
            clock: List::default(),
            table: SlotTable::default(),
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            cold_ahead: Runahead::default(),
            test_ahead: Runahead::default(),
            trail: [NIL; SKIP],
            trail_at: 0,
            count_hot: 0,
            count_cold: 0,
            count_test: 0,
            depth: 0,
            hot_after_hand_hot: NIL,
            hot_after_hand_cold: NIL,
            ordered: false,
            quiet_inserts: 0,
            min_sweep: 64,
            skip: true,
            #[cfg(test)]
            jumped: 0,
            #[cfg(test)]
            relabels: 0,
        })
    }
}

impl ClockPro {
    fn next(&self, x: u32) -> u32 {
        self.clock
            .next_of(&self.arena, x)
            .or_else(|| self.clock.front())
            .unwrap_or(NIL)
    }

    /// Nodes from `from` forward to `to` in clock order, as a label distance (0 when equal):
    /// only compared with other distances from the same `from`.
    #[inline]
    fn dist(&self, from: u32, to: u32) -> u64 {
        self.arena
            .get(to)
            .label
            .wrapping_sub(self.arena.get(from).label)
    }

    /// The hot node after hot node `x` in the hot ring, or NIL if `x` is the only one.
    fn hot_successor(&self, x: u32) -> u32 {
        let n = self.arena.get(x).hot_next;
        if n == x {
            NIL
        } else {
            n
        }
    }

    /// Links node `x` (just turned hot) into the hot ring before `succ` (the first hot node
    /// after it; NIL for an empty ring) and updates the hands' first-hot pointers.
    fn hot_link(&mut self, x: u32, succ: u32) {
        if succ == NIL {
            let n = self.arena.get_mut(x);
            n.hot_prev = x;
            n.hot_next = x;
            self.hot_after_hand_hot = x;
            self.hot_after_hand_cold = x;
            return;
        }
        let p = self.arena.get(succ).hot_prev;
        {
            let n = self.arena.get_mut(x);
            n.hot_prev = p;
            n.hot_next = succ;
        }
        self.arena.get_mut(p).hot_next = x;
        self.arena.get_mut(succ).hot_prev = x;
        if self.dist(self.hand_hot, x) < self.dist(self.hand_hot, self.hot_after_hand_hot) {
            self.hot_after_hand_hot = x;
        }
        if self.dist(self.hand_cold, x) < self.dist(self.hand_cold, self.hot_after_hand_cold) {
            self.hot_after_hand_cold = x;
        }
    }

    /// Unlinks hot node `x` from the hot ring (it turns cold).
    fn hot_unlink(&mut self, x: u32) {
        let succ = self.hot_successor(x);
        if succ != NIL {
            let Node {
                hot_prev: p,
                hot_next: n,
                ..
            } = *self.arena.get(x);
            self.arena.get_mut(p).hot_next = n;
            self.arena.get_mut(n).hot_prev = p;
        }
        if self.hot_after_hand_hot == x {
            self.hot_after_hand_hot = succ;
        }
        if self.hot_after_hand_cold == x {
            self.hot_after_hand_cold = succ;
        }
    }

    /// Moves HAND_hot one node on.
    fn advance_hand_hot(&mut self) {
        let x = self.hand_hot;
        if self.ordered && self.hot_after_hand_hot == x {
            self.hot_after_hand_hot = self.arena.get(x).hot_next;
        }
        self.hand_hot = self.next(x);
        self.arena.prefetch(self.hand_hot);
    }

    /// Moves HAND_cold one node on.
    fn advance_hand_cold(&mut self) {
        let x = self.hand_cold;
        if self.ordered && self.hot_after_hand_cold == x {
            self.hot_after_hand_cold = self.arena.get(x).hot_next;
        }
        self.hand_cold = self.next(x);
        self.arena.prefetch(self.hand_cold);
        self.cold_ahead.hand_stepped();
        self.leave(x);
        // The hint of the node it was at SKIP steps ago: this position.
        let back = std::mem::replace(&mut self.trail[self.trail_at], self.hand_cold);
        self.trail_at = (self.trail_at + 1) % SKIP;
        if let Some(n) = self.arena.get_mut_checked(back) {
            n.skip = self.hand_cold;
        }
    }

    /// A hand leaves node `x` (loaded): start loading its hint, about [`SKIP`] nodes on, so that
    /// the nodes ahead load side by side instead of one link after another (a speed hint only).
    #[inline(always)]
    fn leave(&self, x: u32) {
        self.arena.prefetch(self.arena.get(x).skip);
    }

    /// Unlinks and frees test node `x`, moving hands off it (no first-hot pointer changes:
    /// `x` is not hot).
    fn remove(&mut self, x: u32) {
        debug_assert_eq!(self.arena.get(x).kind, Kind::Test);
        let n = if self.clock.len() == 1 {
            NIL
        } else {
            self.next(x)
        };
        // A hand on `x` moves one node on, as a step (its walker's lead shrinks by one).
        if self.hand_cold == x {
            self.cold_ahead.hand_stepped();
        }
        if self.hand_test == x {
            self.test_ahead.hand_stepped();
        }
        for h in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
            if *h == x {
                *h = n;
            }
        }
        self.arena.prefetch(n);
        self.clock.unlink(&mut self.arena, x);
        self.table.clear(self.arena.get(x).f.id);
        self.arena.release(x);
    }

    /// Inserts a node just behind HAND_hot (the list head).
    #[inline(always)]
    fn insert(&mut self, node: Node) -> u32 {
        let x = self.arena.alloc(node);
        if self.hand_hot == NIL {
            self.clock.push_back(&mut self.arena, x);
            self.arena.get_mut(x).label = 1 << 63;
            self.hand_hot = x;
            self.hand_cold = x;
            self.hand_test = x;
        } else {
            let at = self.hand_hot;
            self.clock.insert_before(&mut self.arena, at, x);
            if self.ordered {
                self.assign_label(x);
                self.quiet_inserts += 1;
                if self.quiet_inserts > self.clock.len() {
                    self.ordered = false;
                }
            }
            if self.hand_cold == at {
                // HAND_cold moves back onto the new node, just before HAND_hot.
                self.hand_cold = x;
                self.hot_after_hand_cold = self.hot_after_hand_hot;
            }
            if self.hand_test == at {
                self.hand_test = x;
            }
        }
        if self.ordered && node.kind == Kind::Hot {
            // The new node is the last one before HAND_hot: its successor in the ring is the
            // first hot node at or after HAND_hot.
            self.hot_link(x, self.hot_after_hand_hot);
        }
        self.table.set(node.f.id, x);
        x
    }

    /// Gives the just linked node `x` a label between its neighbours'. Insertions come in runs
    /// at one place (just behind a parked HAND_hot, each after the one before), so a new label
    /// sits `LABEL_STRIDE` after its predecessor's (half the gap when that is less), leaving the
    /// rest of the gap to the run. With no gap, the smallest aligned label range around `x`
    /// that is sparse enough (at most (2 / T)^i nodes in 2^i labels, and room for 4
    /// `LABEL_STRIDE`s a node) is relabelled: its nodes up to `x` packed `LABEL_STRIDE` apart
    /// (or closer) from its start, the rest the same at its end, so the run continues into the
    /// free middle. Each relabelling of c nodes is followed by at least c insertions there.
    fn assign_label(&mut self, x: u32) {
        let prev = self.clock.prev_of(&self.arena, x);
        let next = self.clock.next_of(&self.arena, x);
        let lo: u128 = prev.map_or(0, |p| self.arena.get(p).label as u128 + 1);
        let hi: u128 = next.map_or(1 << 64, |n| self.arena.get(n).label as u128);
        if hi > lo {
            let step = ((hi - lo) / 2).min(LABEL_STRIDE);
            self.arena.get_mut(x).label = (lo + step) as u64;
            return;
        }
        // No gap: grow an aligned range around the neighbours until it is sparse enough.
        #[cfg(test)]
        {
            self.relabels += 1;
        }
        let anchor: u128 = prev.map_or(0, |p| self.arena.get(p).label as u128);
        let (mut first, mut last) = (x, x);
        let (mut before, mut after) = (0u128, 0u128);
        for i in 1..=64u32 {
            let size: u128 = 1 << i;
            let base = anchor & !(size - 1);
            let end = base + size;
            while let Some(p) = self.clock.prev_of(&self.arena, first) {
                if (self.arena.get(p).label as u128) < base {
                    break;
                }
                first = p;
                before += 1;
            }
            while let Some(n) = self.clock.next_of(&self.arena, last) {
                if (self.arena.get(n).label as u128) >= end {
                    break;
                }
                last = n;
                after += 1;
            }
            let count = before + 1 + after;
            if (count as f64) <= (2.0 / LABEL_T).powi(i as i32) && 4 * count * LABEL_STRIDE <= size
            {
                let d = (size / (4 * count)).min(LABEL_STRIDE);
                let mut cur = first;
                for j in 0..=before {
                    self.arena.get_mut(cur).label = (base + (j + 1) * d) as u64;
                    cur = self.clock.next_of(&self.arena, cur).unwrap_or(NIL);
                }
                for k in 0..after {
                    self.arena.get_mut(cur).label = (end - (after - k) * d) as u64;
                    cur = self.clock.next_of(&self.arena, cur).unwrap_or(NIL);
                }
                return;
            }
        }
        unreachable!("clock-pro: more nodes than 64-bit order labels can hold");
    }

    fn run_hand_cold<S: Sink>(&mut self, sink: &mut S) {
        let x = self.hand_cold;
        let n = self.arena.get_mut(x);
        if n.kind == Kind::Cold {
            if n.referenced {
                n.kind = Kind::Hot;
                n.referenced = false;
                self.count_cold -= 1;
                self.count_hot += 1;
                if self.ordered {
                    self.hot_link(x, self.hot_after_hand_cold);
                }
            } else {
                n.kind = Kind::Test;
                let out = n.f.out(0);
                self.count_cold -= 1;
                self.count_test += 1;
                sink.evict(out);
                while self.mem_max < self.count_test {
                    self.run_hand_test(sink);
                }
            }
        }
        if self.hand_cold != NIL {
            self.advance_hand_cold();
        }
        // Balance hot pages against m_c, only from the outermost sweep (a
        // nested sweep of HAND_cold, pushed by HAND_test, leaves it to its
        // caller: this bounds the hands' mutual recursion).
        if self.depth == 0 {
            self.depth += 1;
            let mut steps = 0;
            while self.mem_max - self.mem_cold < self.count_hot {
                if self.ordered {
                    self.skip_hand_hot();
                } else if self.skip && steps > self.min_sweep && steps > self.clock.len() / 4 {
                    self.build_order();
                    self.skip_hand_hot();
                }
                self.run_hand_hot(sink);
                steps += 1;
            }
            self.depth -= 1;
        }
    }

    /// Starts the ordered mode: labels spread evenly along the clock, the hot ring linked in
    /// clock order, and the hands' first-hot pointers found by walking. O(clock length).
    fn build_order(&mut self) {
        let n = self.clock.len() as u64;
        let step = u64::MAX / (n + 1);
        let mut hot = Vec::with_capacity(self.count_hot);
        let mut cur = self.clock.front().unwrap_or(NIL);
        let mut label = step;
        while cur != NIL {
            let node = self.arena.get_mut(cur);
            node.label = label;
            if node.kind == Kind::Hot {
                hot.push(cur);
            }
            label += step;
            cur = self.clock.next_of(&self.arena, cur).unwrap_or(NIL);
        }
        for (i, &x) in hot.iter().enumerate() {
            let node = self.arena.get_mut(x);
            node.hot_next = hot[(i + 1) % hot.len()];
            node.hot_prev = hot[(i + hot.len() - 1) % hot.len()];
        }
        let first_hot_from = |c: &Self, h: u32| {
            if hot.is_empty() || h == NIL {
                return NIL;
            }
            let mut x = h;
            while c.arena.get(x).kind != Kind::Hot {
                x = c.next(x);
            }
            x
        };
        self.hot_after_hand_hot = first_hot_from(self, self.hand_hot);
        self.hot_after_hand_cold = first_hot_from(self, self.hand_cold);
        self.ordered = true;
        self.quiet_inserts = 0;
    }

    /// Moves HAND_hot to where its next step would do something: the first hot node or
    /// HAND_test (which it would push), whichever comes first. Every node passed is neither,
    /// so stepping over it would only move the hand; the loop's condition does not change.
    fn skip_hand_hot(&mut self) {
        let h = self.hand_hot;
        let mut to = self.hot_after_hand_hot;
        if self.depth < 3 && (to == NIL || self.dist(h, self.hand_test) < self.dist(h, to)) {
            to = self.hand_test;
        }
        if to != NIL && to != h {
            #[cfg(test)]
            {
                let mut x = h;
                while x != to {
                    x = self.next(x);
                    self.jumped += 1;
                }
            }
            // A long jump (beyond 64 average label gaps) keeps the ordered mode on.
            let average_gap = u64::MAX / self.clock.len() as u64;
            if self.dist(h, to) / 64 >= average_gap {
                self.quiet_inserts = 0;
            }
            // No hot node lies before `to`, so the first-hot pointer stays.
            self.hand_hot = to;
        }
    }

    fn run_hand_hot<S: Sink>(&mut self, sink: &mut S) {
        if self.hand_hot == self.hand_test && self.depth < 3 {
            // HAND_hot never passes HAND_test: push it ahead first.
            self.depth += 1;
            self.run_hand_test(sink);
            self.depth -= 1;
        }
        let x = self.hand_hot;
        let n = self.arena.get_mut(x);
        if n.kind == Kind::Hot {
            if n.referenced {
                n.referenced = false;
            } else {
                n.kind = Kind::Cold;
                self.count_hot -= 1;
                self.count_cold += 1;
                if self.ordered {
                    self.hot_unlink(x);
                }
            }
        }
        self.advance_hand_hot();
    }

    fn run_hand_test<S: Sink>(&mut self, sink: &mut S) {
        if self.hand_test == self.hand_cold && self.depth < 3 {
            // HAND_test never passes HAND_cold: push it ahead first.
            self.depth += 1;
            self.run_hand_cold(sink);
            self.depth -= 1;
        }
        let x = self.hand_test;
        if self.arena.get(x).kind == Kind::Test {
            self.remove(x);
            self.count_test -= 1;
            if self.mem_cold > 1 {
                self.mem_cold -= 1;
            }
        } else {
            self.hand_test = self.next(x);
            self.arena.prefetch(self.hand_test);
            self.test_ahead.hand_stepped();
            self.leave(x);
        }
    }
}

impl Policy for ClockPro {
    /// A hit reads the page's table entry and node: start loading the entry 16 references
    /// ahead and the node 6 ahead, so a run of hits does not wait out two cache misses each.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
        self.cold_ahead
            .step(self.hand_cold, &self.arena, |x| self.next(x));
        self.test_ahead
            .step(self.hand_test, &self.arena, |x| self.next(x));
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        let mut kind = Kind::Cold;
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            if n.kind != Kind::Test {
                n.referenced = true;
                n.f.dirty |= r.is_write();
                sink.hit(r, 0);
                return;
            }
            // A fault in the test period: m_c grows, the page comes in hot.
            if self.mem_cold < self.mem_max {
                self.mem_cold += 1;
            }
            self.remove(slot);
            self.count_test -= 1;
            kind = Kind::Hot;
        }
        if self.mem_max == 0 {
            sink.miss_bypass(r);
            return;
        }
        while self.mem_max <= self.count_hot + self.count_cold {
            self.run_hand_cold(sink);
        }
        self.insert(Node {
            f: Frame::of(r),
            kind,
            referenced: false,
            label: 0,
            hot_prev: NIL,
            hot_next: NIL,
            skip: NIL,
        });
        if kind == Kind::Hot {
            self.count_hot += 1;
        } else {
            self.count_cold += 1;
        }
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.count_hot + self.count_cold
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("cold_target", self.mem_cold as u64),
            ("test_entries", self.count_test as u64),
        ]
    }
}

#[cfg(test)]
mod tests;
