//! CLOCK with object sizes: the hand evicts objects, one at a time, until the missed object
//! fits; an object with its reference count set loses one count and goes round again. Matches
//! libCacheSim's `Clock` with sizes (its default one-bit counter; `bits` as in page mode).

use super::Store;
use crate::error::{Error, Result};
use crate::policy::classic::clock::ClockConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

pub struct ObjClock {
    s: Store,
    /// Front = most recently inserted (or passed over); the hand is at the back.
    q: List,
    max_freq: u64,
}

impl PolicyDef for ObjClock {
    const NAME: &'static str = "clock";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "CLOCK (object sizes).";
    type Config = ClockConfig;
    fn build(cfg: &ClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(1..=16).contains(&cfg.bits) {
            return Err(Error::config(format!(
                "policy 'clock': bits must be in 1..=16, got {}",
                cfg.bits
            )));
        }
        Ok(ObjClock {
            s: Store::new(ctx.capacity),
            q: List::default(),
            max_freq: (1u64 << cfg.bits) - 1,
        })
    }
}

impl Policy for ObjClock {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            let max = self.max_freq;
            let o = self.s.touch(slot, r);
            o.freq = (o.freq + 1).min(max);
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            loop {
                let v = self.q.back().expect("a cache over capacity is not empty");
                let o = self.s.arena.get_mut(v);
                if o.freq == 0 {
                    self.q.unlink(&mut self.s.arena, v);
                    self.s.evict(v, sink);
                    break;
                }
                o.freq -= 1;
                self.q.move_to_front(&mut self.s.arena, v);
            }
        }
        let slot = self.s.insert(r, 0);
        self.q.push_front(&mut self.s.arena, slot);
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
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn hand_worked() {
        // 10 bytes: a(4) b(4); a hits (bit set); c(4): the hand clears a's bit and moves it
        // on, evicts b; a hits; b misses: the hand clears a again, evicts c.
        let t = [(1, 4), (2, 4), (1, 4), (3, 4), (1, 4), (2, 4), (3, 4)];
        assert_eq!(replay_objects("clock", 10, &t), (2, 5, 20, 0));
    }
}
