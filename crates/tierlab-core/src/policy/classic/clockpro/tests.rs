use super::*;
use crate::sim::check::make_refs;
use crate::sim::{PageId, PageOut};

/// Every sink call, in order.
#[derive(Default)]
struct Events(Vec<(u8, u64)>);

impl Sink for Events {
    fn hit(&mut self, r: &PageRef, _tier: u8) {
        self.0.push((0, r.page()));
    }
    fn miss(&mut self, r: &PageRef, _tier: u8) {
        self.0.push((1, r.page()));
    }
    fn miss_bypass(&mut self, r: &PageRef) {
        self.0.push((2, r.page()));
    }
    fn evict(&mut self, p: PageOut) {
        self.0.push((3, p.page));
    }
    fn write_back(&mut self, pages: &[PageOut]) {
        self.0.extend(pages.iter().map(|p| (4, p.page)));
    }
    fn migrate(&mut self, _id: PageId, page: u64, _from: u8, _to: u8) {
        self.0.push((5, page));
    }
}

impl ClockPro {
    /// Checks the hot ring and the first-hot pointers against a walk of the clock, and
    /// that labels increase along it.
    fn check(&self) {
        if !self.ordered {
            return;
        }
        let order: Vec<u32> = self.clock.iter(&self.arena).collect();
        for w in order.windows(2) {
            assert!(self.arena.get(w[0]).label < self.arena.get(w[1]).label);
        }
        let hot: Vec<u32> = order
            .iter()
            .copied()
            .filter(|&x| self.arena.get(x).kind == Kind::Hot)
            .collect();
        assert_eq!(hot.len(), self.count_hot);
        for (i, &x) in hot.iter().enumerate() {
            assert_eq!(self.arena.get(x).hot_next, hot[(i + 1) % hot.len()]);
        }
        let first_hot_at = |h: u32| {
            let i = order.iter().position(|&x| x == h).unwrap();
            (0..order.len())
                .map(|k| order[(i + k) % order.len()])
                .find(|&x| self.arena.get(x).kind == Kind::Hot)
                .unwrap_or(NIL)
        };
        if !order.is_empty() {
            assert_eq!(self.hot_after_hand_hot, first_hot_at(self.hand_hot));
            assert_eq!(self.hot_after_hand_cold, first_hot_at(self.hand_cold));
        }
    }
}

/// Every sink event, the final m_c and the test entries left.
type Outcome = (Vec<(u8, u64)>, usize, usize);

fn replay(pages: &[u64], capacity: usize, skip: bool) -> Outcome {
    replay_counting(pages, capacity, skip).0
}

/// Also returns how many nodes HAND_hot's jumps passed over.
fn replay_counting(pages: &[u64], capacity: usize, skip: bool) -> (Outcome, u64, u64) {
    let ctx = PolicyCtx {
        capacity,
        tiers: 1,
        page_size: 4096,
    };
    let mut p = ClockPro::build(&ClockProConfig::default(), &ctx).unwrap();
    p.skip = skip;
    p.min_sweep = 2;
    let refs: Vec<(u64, bool)> = pages.iter().map(|&x| (x, x % 5 == 0)).collect();
    let refs = make_refs(&refs);
    p.grow(pages.len());
    let mut sink = Events::default();
    for (i, r) in refs.iter().enumerate() {
        p.access(&r, &mut sink);
        if i % 97 == 0 {
            p.check();
        }
    }
    p.check();
    ((sink.0, p.mem_cold, p.count_test), p.jumped, p.relabels)
}

/// A few access patterns: loops longer than memory (where m_c climbs to m and HAND_hot
/// would walk the clock), skewed reuse, and a loop mixed with random pages.
fn traces() -> Vec<(Vec<u64>, usize)> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut out = Vec::new();
    for cap in [1, 2, 3, 7, 50] {
        let looped: Vec<u64> = (0..4000).map(|i| i % (cap as u64 * 3 / 2 + 1)).collect();
        out.push((looped, cap));
        let skewed: Vec<u64> = (0..4000)
            .map(|_| {
                let r = rnd(1000);
                r * r / (cap as u64 * 40 + 1)
            })
            .collect();
        out.push((skewed, cap));
        let mixed: Vec<u64> = (0..4000)
            .map(|i| {
                if rnd(3) == 0 {
                    1000 + rnd(cap as u64 * 4)
                } else {
                    i % (cap as u64 * 2)
                }
            })
            .collect();
        out.push((mixed, cap));
    }
    out
}

#[test]
fn jumping_hand_hot_gives_the_same_events_as_stepping() {
    let mut passed = 0;
    for (pages, cap) in traces() {
        let (stepped, none, _) = replay_counting(&pages, cap, false);
        let (jumped, n, _) = replay_counting(&pages, cap, true);
        assert_eq!(stepped, jumped, "capacity {cap}");
        assert_eq!(none, 0);
        passed += n;
    }
    // The jumps did pass nodes (else this compared the step-by-step sweep with itself).
    assert!(passed > 1000, "{passed}");
}

#[test]
fn a_loop_longer_than_memory_drives_the_cold_target_to_memory() {
    // Memory 4, a loop over 5 pages: faults after the first lap come in their test period
    // (Section 4.3), so m_c ends at m, the regime where HAND_hot would walk the clock.
    let pages: Vec<u64> = (0..200).map(|i| i % 5).collect();
    let (_, mem_cold, _) = replay(&pages, 4, true);
    assert_eq!(mem_cold, 4);
}

#[test]
fn labels_stay_ordered_when_every_insertion_lands_in_one_gap() {
    // The ordered mode from an empty clock, two nodes whose labels are then made adjacent,
    // and 20,000 insertions between them, just behind the parked HAND_hot (one gap): the
    // first finds no gap and relabels, the run goes on in the room that made.
    let ctx = PolicyCtx {
        capacity: 100_000,
        tiers: 1,
        page_size: 4096,
    };
    let mut p = ClockPro::build(&ClockProConfig::default(), &ctx).unwrap();
    p.grow(20_002);
    p.build_order();
    let refs = make_refs(&(0..20_002u64).map(|i| (i, false)).collect::<Vec<_>>());
    for (i, r) in refs.iter().enumerate() {
        p.insert(Node {
            f: Frame::of(&r),
            kind: if i % 7 == 0 { Kind::Hot } else { Kind::Cold },
            referenced: false,
            label: 0,
            hot_prev: NIL,
            hot_next: NIL,
            skip: NIL,
        });
        if i % 7 == 0 {
            p.count_hot += 1;
        } else {
            p.count_cold += 1;
        }
        if i == 1 {
            let first = p.clock.front().unwrap();
            let l = p.arena.get(first).label;
            p.arena.get_mut(p.hand_hot).label = l + 1;
            p.check();
        }
    }
    assert!(p.ordered);
    assert!(p.relabels >= 1, "{}", p.relabels);
    p.check();
}
