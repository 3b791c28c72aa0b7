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

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

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
    count_hot: usize,
    count_cold: usize,
    count_test: usize,
    /// Nesting of hand sweeps (see `run_hand_cold`).
    depth: u32,
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
            count_hot: 0,
            count_cold: 0,
            count_test: 0,
            depth: 0,
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

    /// Unlinks and frees node `x`, moving hands off it.
    fn remove(&mut self, x: u32) {
        let n = if self.clock.len() == 1 {
            NIL
        } else {
            self.next(x)
        };
        for h in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
            if *h == x {
                *h = n;
            }
        }
        self.clock.unlink(&mut self.arena, x);
        self.table.clear(self.arena.get(x).f.id);
        self.arena.release(x);
    }

    /// Inserts a node just behind HAND_hot (the list head).
    fn insert(&mut self, node: Node) -> u32 {
        let x = self.arena.alloc(node);
        if self.hand_hot == NIL {
            self.clock.push_back(&mut self.arena, x);
            self.hand_hot = x;
            self.hand_cold = x;
            self.hand_test = x;
        } else {
            self.clock.insert_before(&mut self.arena, self.hand_hot, x);
            if self.hand_cold == self.hand_hot {
                self.hand_cold = x;
            }
            if self.hand_test == self.hand_hot {
                self.hand_test = x;
            }
        }
        self.table.set(node.f.id, x);
        x
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
            self.hand_cold = self.next(self.hand_cold);
        }
        // Balance hot pages against m_c, only from the outermost sweep (a
        // nested sweep of HAND_cold, pushed by HAND_test, leaves it to its
        // caller: this bounds the hands' mutual recursion).
        if self.depth == 0 {
            self.depth += 1;
            while self.mem_max - self.mem_cold < self.count_hot {
                self.run_hand_hot(sink);
            }
            self.depth -= 1;
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
            }
        }
        self.hand_hot = self.next(self.hand_hot);
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
        }
    }
}

impl Policy for ClockPro {
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
