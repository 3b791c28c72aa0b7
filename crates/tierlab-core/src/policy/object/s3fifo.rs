//! S3-FIFO with object sizes (Yang et al., SOSP 2023): the page-mode policy
//! (`classic/s3fifo.rs`) with its three FIFOs measured in bytes, as libCacheSim's `S3FIFO` does:
//! S holds `floor(small_ratio * capacity)` bytes, M the rest, the ghost FIFO
//! `floor(ghost_ratio * capacity)` bytes of ids (an id is dropped from it in FIFO order until the
//! newcomer's size fits; an object larger than the ghost is not remembered). An object larger
//! than S is refused outright (libCacheSim's `S3FIFO_can_insert`); one exactly as large as S is
//! refused after the evictions made for it (its `S3FIFO_insert`). Until memory has been full
//! once, a new object that finds S full goes to M.

use super::Store;
use crate::error::Result;
use crate::policy::classic::s3fifo::S3FifoConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use rustc_hash::FxHashMap;

pub struct ObjS3Fifo {
    s: Store,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    threshold: u64,
    /// Front = newest.
    small: List,
    main: List,
    small_used: u64,
    main_used: u64,
    /// Ghost ids, oldest first, with their sizes and generations; `ghost_live` maps a ghost id
    /// to its (generation, size), so that an id removed (ghost hit) and re-added is not dropped
    /// early by its stale queue entry.
    ghost: std::collections::VecDeque<(u32, u64, u64)>,
    ghost_live: FxHashMap<u32, (u64, u64)>,
    ghost_used: u64,
    generation: u64,
    has_evicted: bool,
    moved_to_main: u64,
}

impl PolicyDef for ObjS3Fifo {
    const NAME: &'static str = "s3fifo";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "S3-FIFO (object sizes).";
    type Config = S3FifoConfig;
    fn build(cfg: &S3FifoConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        let cap = ctx.capacity as u64;
        let small_cap = (cap as f64 * cfg.small_ratio) as u64;
        Ok(ObjS3Fifo {
            s: Store::new(ctx.capacity),
            small_cap,
            main_cap: cap - small_cap,
            ghost_cap: (cap as f64 * cfg.ghost_ratio) as u64,
            threshold: cfg.move_to_main_threshold as u64,
            small: List::default(),
            main: List::default(),
            small_used: 0,
            main_used: 0,
            ghost: Default::default(),
            ghost_live: FxHashMap::default(),
            ghost_used: 0,
            generation: 0,
            has_evicted: false,
            moved_to_main: 0,
        })
    }
}

impl ObjS3Fifo {
    /// Remembers `id` of `size` bytes in the ghost FIFO.
    fn ghost_insert(&mut self, id: u32, size: u64) {
        if self.ghost_cap == 0 || size > self.ghost_cap {
            return;
        }
        while self.ghost_used + size > self.ghost_cap {
            let (gid, gsize, gen) = self.ghost.pop_front().expect("ghost over capacity");
            if self.ghost_live.get(&gid) == Some(&(gen, gsize)) {
                self.ghost_live.remove(&gid);
                self.ghost_used -= gsize;
            }
        }
        self.generation += 1;
        self.ghost.push_back((id, size, self.generation));
        self.ghost_live.insert(id, (self.generation, size));
        self.ghost_used += size;
        if self.ghost.len() > 4 * self.ghost_live.len() + 64 {
            let live = &self.ghost_live;
            self.ghost
                .retain(|(id, size, g)| live.get(id) == Some(&(*g, *size)));
        }
    }

    /// Forgets `id` if it is a ghost; returns whether it was.
    fn ghost_remove(&mut self, id: u32) -> bool {
        match self.ghost_live.remove(&id) {
            Some((_, size)) => {
                self.ghost_used -= size;
                true
            }
            None => false,
        }
    }

    fn evict_small<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.small.pop_back(&mut self.s.arena) {
            let o = *self.s.arena.get(v);
            self.small_used -= o.size;
            if o.freq >= self.threshold {
                self.s.arena.get_mut(v).freq = 0;
                self.main.push_front(&mut self.s.arena, v);
                self.main_used += o.size;
                self.moved_to_main += 1;
            } else {
                self.s.evict(v, sink);
                self.ghost_insert(o.f.id, o.size);
                return;
            }
        }
    }

    fn evict_main<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.main.pop_back(&mut self.s.arena) {
            let o = self.s.arena.get_mut(v);
            if o.freq >= 1 {
                o.freq = o.freq.min(3) - 1;
                self.main.push_front(&mut self.s.arena, v);
            } else {
                self.main_used -= o.size;
                self.s.evict(v, sink);
                return;
            }
        }
    }
}

impl Policy for ObjS3Fifo {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r).freq += 1;
            sink.hit(r, 0);
            return;
        }
        let ghost = self.ghost_remove(r.id);
        if r.size() > self.small_cap {
            sink.miss_bypass(r);
            return;
        }
        while self.s.used + r.size() > self.s.cap {
            self.has_evicted = true;
            if self.main_used > self.main_cap || self.small_used == 0 {
                self.evict_main(sink);
            } else {
                self.evict_small(sink);
            }
        }
        let to_main = if ghost {
            true
        } else if r.size() >= self.small_cap {
            sink.miss_bypass(r);
            return;
        } else {
            !self.has_evicted && self.small_used >= self.small_cap
        };
        let slot = self.s.insert(r, 0);
        if to_main {
            self.main.push_front(&mut self.s.arena, slot);
            self.main_used += r.size();
        } else {
            self.small.push_front(&mut self.s.arena, slot);
            self.small_used += r.size();
        }
        sink.miss(r, 0);
    }
    fn grow(&mut self, n: usize) {
        self.s.grow(n);
    }
    fn resident(&self) -> usize {
        self.s.len()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("moved_to_main", self.moved_to_main)]
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn objects_as_large_as_s_are_refused() {
        // 100 bytes: S = 10, M = 90. 11 bytes is over S: refused (though it fits the cache,
        // so not counted too large); 10 bytes is S exactly: refused after the evictions.
        let t = [(1, 11), (2, 10), (1, 11), (3, 9), (3, 9)];
        assert_eq!(replay_objects("s3fifo", 100, &t), (1, 4, 41, 0));
    }
}
