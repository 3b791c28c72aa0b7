//! Page placement, reclaim (the compact two-list scan), swap slots and
//! writes, and the killers (split from `session.rs`).

use super::*;

impl Session {
    // ---- page placement -------------------------------------------------

    pub(super) fn make_resident(&mut self, p: u32, list: usize) {
        let (app, anon) = {
            let m = self.lists.arena.get(p);
            (m.app as usize, m.anon)
        };
        debug_assert!(!matches!(self.lists.arena.get(p).loc, Loc::Lru(_)));
        {
            let m = self.lists.arena.get_mut(p);
            m.loc = Loc::Lru(list as u8);
            m.young = true;
            m.pgref = false;
            m.shadow = false;
        }
        match &mut self.mg {
            // MGLRU placement: a fault (AA) is active; a page-cache read
            // (IF) or swap readahead (IA) joins the oldest generation, the
            // read-ahead one without its young bit.
            Some(mg) => mg.insert(p, anon, list == AA, list != IA),
            None => self.lists.lists[list].push_front(&mut self.lists.arena, p),
        }
        let a = &mut self.apps[app];
        if anon {
            self.res_anon += 1;
            a.anon_res += 1;
        } else {
            self.res_file += 1;
            a.file_res += 1;
        }
        let held = (a.anon_res + a.file_res + a.swapped) as u64;
        a.sum.peak_pages = a.sum.peak_pages.max(held);
    }

    /// Marks a resident page accessed: the PTE young bit; a file page read
    /// through the page cache also goes through `mark_page_accessed`
    /// (inactive+referenced -> active, else referenced).
    pub(super) fn touch(&mut self, p: u32) {
        let m = *self.lists.arena.get(p);
        let Loc::Lru(l) = m.loc else { return };
        if let Some(mg) = &mut self.mg {
            mg.touch(p);
            return;
        }
        let mm = self.lists.arena.get_mut(p);
        mm.young = true;
        if !m.anon && l as usize == IF {
            if m.pgref {
                mm.pgref = false;
                self.lists.move_between(p, IF, AF);
            } else {
                mm.pgref = true;
            }
        }
    }

    // ---- allocation and reclaim ----------------------------------------

    /// Makes sure one page is free, reclaiming and killing as the kernel would.
    pub(super) fn alloc_page(&mut self) -> Result<()> {
        if self.free_pages() < self.wmark_low {
            self.reclaim(self.wmark_high);
        }
        while self.free_pages() == 0 {
            self.direct = true;
            self.reclaim(1);
            self.direct = false;
            if self.free_pages() > 0 {
                break;
            }
            if !self.oom_kill() {
                return Err(Error::config(format!(
                    "step {}: out of memory with nothing left to kill (the apps' footprints exceed \
                     the phone's memory and swap)",
                    self.step
                )));
            }
        }
        Ok(())
    }

    pub(super) fn procs(&self) -> Vec<ProcInfo> {
        self.apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.alive)
            .map(|(i, a)| {
                let score_adj = if i == self.sys {
                    OOM_SCORE_ADJ_MIN
                } else {
                    self.scheme.score_adj(a.level.unwrap_or(Level::Foreground))
                };
                let rss = (a.anon_res + a.file_res) as u64;
                ProcInfo {
                    id: i,
                    score_adj,
                    rss,
                    swap: a.swapped as u64,
                    pgtables: pgtable_pages(rss + a.swapped as u64),
                }
            })
            .collect()
    }

    /// kswapd/direct reclaim up to `target` free pages: priority rounds 12..0,
    /// each calling the LMK shrinker then scanning the LRU lists.
    pub(super) fn reclaim(&mut self, target: u64) {
        let mut priority: u32 = 12;
        loop {
            if self.free_pages() >= target {
                return;
            }
            self.tot.reclaim_rounds += 1;
            if self.sc.lmk.enabled && self.lmkd.is_some() {
                if self.lmkd_wake() {
                    continue;
                }
            } else if self.sc.lmk.enabled {
                if let Some(min_adj) = self.table.min_score_adj(self.free_pages(), self.res_file) {
                    let procs = self.procs();
                    if let Some(v) = lmk_victim(&procs, min_adj) {
                        self.kill(v, "lmk", min_adj as i64, None);
                        continue;
                    }
                }
            }
            let freed = self.shrink(priority, target);
            if priority == 0 {
                if freed == 0 {
                    return;
                }
            } else {
                priority -= 1;
            }
        }
    }

    pub(super) fn swap_ok(&self) -> bool {
        self.swap.is_some() && self.slots_used < self.slots.len()
    }

    /// One pass of `shrink_zone` at `priority`; returns pages freed.
    pub(super) fn shrink(&mut self, priority: u32, target: u64) -> u64 {
        if self.mg.is_some() {
            return self.shrink_mglru(priority, target);
        }
        let before = self.free_pages();
        let swap_ok = self.swap_ok();
        let mut nr = [0u64; 4];
        let mut reclaim_mapped = true;
        let size = |s: &Self, l: usize| s.lists.lists[l].len() as u64;
        match self.sc.swap.mode {
            SwappinessMode::ScanCount => {
                let anon = size(self, IA) + size(self, AA);
                let file = size(self, IF) + size(self, AF);
                let (fa, ff) = if !swap_ok {
                    (0u64, 1u64)
                } else if file + self.free_pages() <= self.wmark_high {
                    (1, 0)
                } else {
                    scan_weights(
                        self.sc.swap.swappiness,
                        self.recent_scanned,
                        self.recent_rotated,
                    )
                };
                let _ = anon;
                let denom = fa + ff + 1;
                for l in [IA, AA, IF, AF] {
                    let frac = if l == IA || l == AA { fa } else { ff };
                    let mut scan = size(self, l) >> priority;
                    if priority > 0 || !swap_ok {
                        scan = scan * frac / denom;
                    }
                    if scan == 0 && frac > 0 && size(self, l) > 0 && priority <= 2 {
                        scan = size(self, l).min(32);
                    }
                    nr[l] = scan;
                }
            }
            SwappinessMode::SwapTendency => {
                // 2.6 refill_inactive_zone: mapped pages are pages of live
                // processes: the unmodeled system part (its processes' memory
                // is mapped), anon pages, and the file pages they map.
                let mapped = self.system
                    + self.res_anon
                    + self
                        .apps
                        .iter()
                        .filter(|a| a.alive)
                        .map(|a| a.file_res as u64)
                        .sum::<u64>();
                let mapped_ratio = mapped * 100 / self.total;
                reclaim_mapped =
                    swap_tendency(mapped_ratio, priority, self.sc.swap.swappiness) >= 100;
                for l in [IA, AA, IF, AF] {
                    let mut scan = size(self, l) >> priority;
                    if scan == 0 && size(self, l) > 0 && priority <= 2 {
                        scan = size(self, l).min(32);
                    }
                    nr[l] = scan;
                }
                if !swap_ok {
                    nr[IA] = 0;
                    nr[AA] = 0;
                }
            }
        }
        let old = self.sc.swap.mode == SwappinessMode::SwapTendency;
        while nr.iter().any(|&n| n > 0) {
            for l in [IA, AA, IF, AF] {
                if nr[l] == 0 {
                    continue;
                }
                let n = nr[l].min(32);
                nr[l] -= n;
                let file = l == IF || l == AF;
                if l == AA || l == AF {
                    // 3.x shrinks an active list only when its inactive list
                    // is low; 2.6 refilled the inactive list every round.
                    if old || self.lists.inactive_is_low(file, self.total, self.ps) {
                        self.shrink_active(l, n, reclaim_mapped, old);
                    }
                } else {
                    self.shrink_inactive(l, n);
                }
            }
            if self.free_pages() >= target {
                break;
            }
        }
        if !old && swap_ok && self.lists.inactive_is_low(false, self.total, self.ps) {
            self.shrink_active(AA, 32, true, false);
        }
        self.free_pages().saturating_sub(before)
    }

    pub(super) fn is_mapped(&self, p: u32) -> bool {
        let m = self.lists.arena.get(p);
        self.apps[m.app as usize].alive
    }

    /// The tail page of list `l` and its state, counted as scanned (`file`: by
    /// the file LRU's counters); None when the list is empty.
    fn scan_tail(&mut self, l: usize, file: bool) -> Option<(u32, PageMeta)> {
        let p = self.lists.lists[l].back()?;
        self.scan_cost(1);
        self.recent_scanned[file as usize] += 1;
        Some((p, *self.lists.arena.get(p)))
    }

    /// `shrink_active_list`: deactivate up to `n` pages from the active tail.
    pub(super) fn shrink_active(&mut self, l: usize, n: u64, reclaim_mapped: bool, old: bool) {
        let file = l == AF;
        let inactive = if file { IF } else { IA };
        for _ in 0..n {
            let Some((p, m)) = self.scan_tail(l, file) else {
                break;
            };
            if old {
                // 2.6: a mapped page stays active unless reclaim_mapped, and
                // a referenced page is rotated.
                if (self.is_mapped(p) && !reclaim_mapped) || m.young {
                    self.lists.arena.get_mut(p).young = false;
                    self.lists.lists[l].move_to_front(&mut self.lists.arena, p);
                    self.recent_rotated[file as usize] += 1;
                    continue;
                }
            } else if m.young {
                self.recent_rotated[file as usize] += 1;
            }
            let mm = self.lists.arena.get_mut(p);
            mm.young = false;
            self.lists.move_between(p, l, inactive);
        }
    }

    /// `shrink_inactive_list` + `page_check_references`: up to `n` pages from
    /// the inactive tail are activated (referenced anon, or file referenced
    /// twice), rotated (file referenced once) or reclaimed.
    pub(super) fn shrink_inactive(&mut self, l: usize, n: u64) {
        let file = l == IF;
        let mut written: Vec<u32> = Vec::new();
        for _ in 0..n {
            let Some((p, m)) = self.scan_tail(l, file) else {
                break;
            };
            if m.young {
                let mm = self.lists.arena.get_mut(p);
                mm.young = false;
                if m.anon || m.pgref {
                    mm.pgref = false;
                    self.lists.move_between(p, l, if file { AF } else { AA });
                    self.recent_rotated[file as usize] += 1;
                } else {
                    mm.pgref = true;
                    self.lists.lists[l].move_to_front(&mut self.lists.arena, p);
                }
                continue;
            }
            if file {
                self.lists.lists[l].unlink(&mut self.lists.arena, p);
                self.drop_file_page(p);
            } else if let Some(slot) = self.alloc_slot() {
                self.lists.lists[l].unlink(&mut self.lists.arena, p);
                self.swap_out_page(p, slot, &mut written);
            } else {
                self.lists.move_between(p, l, AA);
            }
        }
        self.write_swap(&mut written);
    }

    pub(super) fn scan_cost(&mut self, pages: u64) {
        self.tot.pages_scanned += pages;
        self.charge_reclaim(
            pages as f64 * self.sc.reclaim.scan_ns_per_page * self.sc.reclaim.stall,
        );
    }

    /// Reclaim drops clean file page `p` (already off its list); a later
    /// read of it is a refault.
    pub(super) fn drop_file_page(&mut self, p: u32) {
        let app = self.lists.arena.get(p).app as usize;
        let m = self.lists.arena.get_mut(p);
        m.loc = Loc::Absent;
        m.shadow = true;
        self.res_file -= 1;
        self.apps[app].file_res -= 1;
        self.tot.file_pages_dropped += 1;
    }

    /// Anon page `p` (already off its list) goes to swap slot `slot`: into
    /// the compressed store, and `written` gets the slots to write to the
    /// swap device (the page itself unless zswap kept it, and anything
    /// zswap wrote back).
    pub(super) fn swap_out_page(&mut self, p: u32, slot: u32, written: &mut Vec<u32>) {
        let app = self.lists.arena.get(p).app as usize;
        self.lists.arena.get_mut(p).loc = Loc::Swapped(slot);
        self.slots[slot as usize] = p;
        self.res_anon -= 1;
        let ratio = self
            .sc
            .apps
            .get(app)
            .and_then(|a| a.zram_ratio)
            .unwrap_or(self.sc.swap.zram_ratio);
        let mut cpu = 0.0;
        self.store.store(slot, ratio, &mut cpu, written);
        if cpu > 0.0 {
            self.charge_reclaim(cpu * self.sc.reclaim.stall);
        }
        self.tot.compressed_pool_peak_pages = self
            .tot
            .compressed_pool_peak_pages
            .max(self.store.pool_pages());
        let a = &mut self.apps[app];
        a.anon_res -= 1;
        a.swapped += 1;
        a.sum.swapped_out += 1;
    }

    /// Next-fit swap slot allocation (the kernel's cluster allocator hands out
    /// consecutive slots while it can).
    pub(super) fn alloc_slot(&mut self) -> Option<u32> {
        if !self.swap_ok() {
            return None;
        }
        let n = self.slots.len();
        for k in 0..n {
            let s = (self.slot_cursor + k) % n;
            if self.slots[s] == NIL {
                self.slot_cursor = (s + 1) % n;
                self.slots_used += 1;
                return Some(s as u32);
            }
        }
        None
    }

    pub(super) fn free_slot(&mut self, s: u32) {
        debug_assert_ne!(self.slots[s as usize], NIL);
        self.slots[s as usize] = NIL;
        self.slots_used -= 1;
        self.store.release(s, false, &mut 0.0);
    }

    /// Charges the swap writes of one reclaim batch: one request per run of
    /// consecutive slots, sequential when it continues the previous write.
    pub(super) fn write_swap(&mut self, slots: &mut Vec<u32>) {
        if slots.is_empty() {
            return;
        }
        let dev = self.swap.clone().expect("swap writes need a swap device");
        slots.sort_unstable();
        let mut i = 0;
        while i < slots.len() {
            let mut j = i + 1;
            while j < slots.len() && slots[j] == slots[j - 1] + 1 {
                j += 1;
            }
            let n = (j - i) as u64;
            let seq = slots[i] == self.last_swap_write_end;
            let t = dev.write.time_ns(n, seq);
            self.last_swap_write_end = slots[j - 1] + 1;
            self.tot.swap_write_requests += 1;
            self.tot.swap_pages_out += n;
            self.tot.swap_write_ms += t / 1e6;
            self.charge_reclaim(t * self.sc.reclaim.stall);
            i = j;
        }
        slots.clear();
    }

    // ---- killing ----------------------------------------------------------

    pub(super) fn kill(
        &mut self,
        v: usize,
        killer: &'static str,
        threshold: i64,
        reason: Option<KillReason>,
    ) {
        let free_before = self.free_pages();
        let file_before = self.res_file;
        let a = &self.apps[v];
        let score_adj = self.scheme.score_adj(a.level.unwrap_or(Level::Foreground));
        let rss = (a.anon_res + a.file_res) as u64;
        let swap = a.swapped as u64;
        self.exit_process(v);
        let a = &mut self.apps[v];
        a.killed_by = Some(killer);
        if killer != "oom" {
            a.sum.lmk_kills += 1;
            self.tot.lmk_kills += 1;
        } else {
            a.sum.oom_kills += 1;
            self.tot.oom_kills += 1;
        }
        self.charge_reclaim(self.sc.reclaim.kill_ms * 1e6 * self.sc.reclaim.stall);
        self.out_kills.push(KillRecord {
            step: self.step,
            t_ms: self.t_ms,
            app: self.names[v].clone(),
            killer: killer.into(),
            score_adj,
            rss_pages: rss,
            swap_pages: swap,
            free_pages_before: free_before,
            file_pages_before: file_before,
            free_pages_after: self.free_pages(),
            threshold,
            reason,
        });
        self.sample(&format!("{killer} kill {}", self.names[v]));
        self.update_levels();
    }

    pub(super) fn oom_kill(&mut self) -> bool {
        let total = self.total + self.slots.len() as u64;
        let procs = self.procs();
        match oom_victim(&procs, total) {
            Some(v) => {
                let p = procs
                    .iter()
                    .find(|p| p.id == v)
                    .expect("victim is a process");
                let badness = oom_badness(p, total) as i64;
                self.kill(v, "oom", badness, None);
                true
            }
            None => false,
        }
    }

    /// The process ends: its anon pages and swap slots are freed; its file
    /// pages stay in the page cache (unmapped).
    pub(super) fn exit_process(&mut self, v: usize) {
        let (a0, n) = (self.apps[v].anon0, self.apps[v].allocated);
        for p in a0..a0 + n {
            match self.lists.arena.get(p).loc {
                Loc::Lru(l) => {
                    self.lru_del(p, l as usize);
                    self.res_anon -= 1;
                }
                Loc::Swapped(s) => self.free_slot(s),
                Loc::Absent => {}
            }
            self.lists.arena.get_mut(p).loc = Loc::Absent;
        }
        let a = &mut self.apps[v];
        a.alive = false;
        a.allocated = 0;
        a.anon_res = 0;
        a.swapped = 0;
        a.level = None;
        if self.fg == Some(v) {
            self.fg = None;
        }
        if self.previous == Some(v) {
            self.previous = None;
        }
    }
}
