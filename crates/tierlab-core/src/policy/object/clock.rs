//! CLOCK with object sizes: the hand evicts objects, one at a time, until the missed object
//! fits; an object with its reference count set loses one count and goes round again. Matches
//! libCacheSim's `Clock` with sizes (its default one-bit counter; `bits` as in page mode).

use super::{ListQueue, ListRule, ObjectCache, Store};
use crate::error::{Error, Result};
use crate::policy::classic::clock::ClockConfig;
use crate::policy::list::List;
use crate::policy::{PolicyCtx, PolicyDef};

/// CLOCK's rule over its ring (front = most recently inserted or passed over; the hand is at
/// the back): a hit counts up to `max_freq`.
pub struct ClockRule {
    max_freq: u64,
}

pub type ObjClock = ObjectCache<ListQueue<ClockRule>>;

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
        let rule = ClockRule {
            max_freq: (1u64 << cfg.bits) - 1,
        };
        Ok(ObjectCache::new(ctx.capacity, ListQueue::new(rule)))
    }
}

impl ListRule for ClockRule {
    #[inline]
    fn hit(&mut self, _q: &mut List, s: &mut Store, slot: u32) {
        let o = s.arena.get_mut(slot);
        o.freq = (o.freq + 1).min(self.max_freq);
    }
    #[inline]
    fn victim(&mut self, q: &mut List, s: &mut Store) -> u32 {
        loop {
            let v = q.back().expect("a cache over capacity is not empty");
            let o = s.arena.get_mut(v);
            if o.freq == 0 {
                q.unlink(&mut s.arena, v);
                return v;
            }
            o.freq -= 1;
            q.move_to_front(&mut s.arena, v);
        }
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
