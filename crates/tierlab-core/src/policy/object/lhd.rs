//! LHD with object sizes (policy/classic/lhd.rs): the same ranking, each object's hit density
//! divided by its size in bytes, evicting until the missed object fits; the explorer budget is 1%
//! of the cache's bytes. Agrees with libCacheSim's `LHD` in distribution (tests/libcachesim_sampled.rs).

use super::{ObjectCache, Queue, Store};
use crate::error::Result;
use crate::policy::classic::lhd::{LhdConfig, LhdCore};
use crate::policy::{PolicyCtx, PolicyDef};
use crate::sim::PageRef;

/// LHD's ranking over the resident objects' slots.
pub struct LhdQueue(LhdCore);

pub type ObjLhd = ObjectCache<LhdQueue>;

impl PolicyDef for ObjLhd {
    const NAME: &'static str = "lhd";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least hit density (object sizes).";
    type Config = LhdConfig;
    fn build(cfg: &LhdConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        Ok(ObjectCache::new(
            ctx.capacity,
            LhdQueue(LhdCore::new(cfg, ctx.capacity, false)),
        ))
    }
}

impl Queue for LhdQueue {
    fn hit(&mut self, _s: &mut Store, slot: u32, r: &PageRef) {
        self.0.update(slot, r.size() as f32);
    }
    fn victim(&mut self, _s: &mut Store) -> u32 {
        self.0.evict()
    }
    fn inserted(&mut self, _s: &mut Store, slot: u32, r: &PageRef) {
        self.0.update(slot, r.size() as f32);
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn hand_worked() {
        // 10 bytes, whole-cache scans, prior densities 17/size for new objects: a(2) b(6);
        // c(4) must evict one: a has 17/2, b 17/6: b goes (LRU would evict a); a hits.
        let t = [(1, 2), (2, 6), (3, 4), (1, 2)];
        assert_eq!(replay_objects("lhd", 10, &t), (1, 3, 12, 0));
        assert_eq!(replay_objects("lru", 10, &t).0, 0);
        let t = [(1, 2), (2, 6), (3, 4), (2, 6)];
        assert_eq!(replay_objects("lhd", 10, &t), (0, 4, 18, 0));
        assert_eq!(replay_objects("lru", 10, &t), (1, 3, 12, 0));
    }
}
