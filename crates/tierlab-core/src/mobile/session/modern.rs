//! Today's Android on the session (issue 19): MGLRU as the reclaim, lmkd
//! as the killer, and the PSI stall that drives lmkd.
//!
//! **MGLRU reclaim.** With `reclaim.policy = "mglru"` the session's pages
//! live in an [`Mglru`] (`policy::swap::mglru`, the same code the trace
//! replay runs) instead of the two lists: placement on fault / read, the
//! young bit on every touch, aging, eviction from the oldest generation with
//! tiers and the refault feedback are the policy's. A reclaim round at
//! `priority` asks it for up to `max(32, resident >> priority)` pages (the
//! two-list scan's batch sizes; MGLRU's own `get_nr_to_scan` is not
//! modelled), each a clean file page dropped or an anon page written to
//! swap; without swap space left anon pages are not evictable
//! (`get_swappiness` = 0). Scan time is charged per page the policy
//! examined. When nothing can be freed the round frees nothing and the
//! session's OOM path runs.
//!
//! **PSI** (see [`super::super::lmkd`]): `charge_reclaim` adds the reclaim
//! time the foreground waits for to both some and full stall; swap-in
//! reads and refault reads add to some only.

use super::*;

impl Session {
    /// The session clock now: the start of the current step plus the time
    /// the step has charged so far.
    pub(super) fn now_ms(&self) -> f64 {
        let m = &self.meter;
        self.t_ms + (m.file_ns + m.swap_ns + m.init_ns + m.reclaim_ns) / 1e6
    }

    /// Reclaim time the foreground waits for (already scaled by
    /// `reclaim.stall`): launch time, and some and full PSI stall.
    pub(super) fn charge_reclaim(&mut self, ns: f64) {
        self.meter.reclaim_ns += ns;
        self.psi_some_ns += ns;
        self.psi_full_ns += ns;
    }

    /// Takes resident page `p` off the reclaim's lists (list `l` of the two
    /// lists, or MGLRU's generations), without a shadow.
    pub(super) fn lru_del(&mut self, p: u32, l: usize) {
        match &mut self.mg {
            Some(mg) => mg.remove(p),
            None => self.lists.lists[l].unlink(&mut self.lists.arena, p),
        }
    }

    /// One reclaim round with MGLRU; returns pages freed.
    pub(super) fn shrink_mglru(&mut self, priority: u32, target: u64) -> u64 {
        let before = self.free_pages();
        let resident = self.res_anon + self.res_file;
        let budget = (resident >> priority).max(32);
        let mut written: Vec<u32> = Vec::new();
        let mut freed = 0;
        while freed < budget && self.free_pages() < target {
            let swap_ok = self.swap_ok();
            let mg = self.mg.as_mut().expect("mglru reclaim");
            mg.set_swap(swap_ok);
            let scanned0 = mg.scanned();
            let got = mg.reclaim_one();
            let scanned = mg.scanned() - scanned0;
            self.scan_cost(scanned);
            let Some((p, anon)) = got else { break };
            if anon {
                let slot = self
                    .alloc_slot()
                    .expect("mglru evicts anon only with swap space");
                self.swap_out_page(p, slot, &mut written);
            } else {
                self.drop_file_page(p);
            }
            freed += 1;
        }
        self.write_swap(&mut written);
        self.free_pages().saturating_sub(before)
    }

    /// lmkd wakes up (a PSI event, or a poll after one) at a reclaim round;
    /// returns whether it killed.
    pub(super) fn lmkd_wake(&mut self) -> bool {
        let now = self.now_ms();
        let m = MemState {
            free: self.free_pages(),
            file: self.res_file,
            wmark_min: self.wmark_min,
            wmark_low: self.wmark_low,
            wmark_high: self.wmark_high,
            swap_total: self.slots.len() as u64,
            swap_free: (self.slots.len() - self.slots_used) as u64,
            refaults: self.tot.file_refaults,
            direct_reclaim: self.direct,
        };
        let (some, full) = (self.psi_some_ns / 1e6, self.psi_full_ns / 1e6);
        let table = &self.table;
        let lmkd = self.lmkd.as_mut().expect("lmkd killer");
        let event = lmkd.psi_event(now, some, full);
        let Some(d) = lmkd.wake(now, event, &m, |f, file| table.min_score_adj(f, file)) else {
            return false;
        };
        let heaviest = lmkd.cfg.kill_heaviest_task;
        let procs = self.procs();
        let Some(v) = lmkd_victim(&procs, d.min_score_adj, heaviest, |id| {
            self.apps[id].last_fg
        }) else {
            return false;
        };
        self.kill(v, "lmkd", d.min_score_adj as i64, Some(d.reason));
        if let Some(l) = self.lmkd.as_mut() {
            l.killed();
        }
        true
    }
}
