//! The launch-cost model and the step loop: foreground changes and
//! ActivityManager's levels, page touches and reads, swap-in, cold and hot
//! launches, script steps (split from `session.rs`).

use super::*;

impl Session {
    /// ActivityManager's levels: foreground, the app's own kind, previous,
    /// then cached slots by recency.
    pub(super) fn update_levels(&mut self) {
        let mut cached: Vec<usize> = Vec::new();
        for i in 0..self.sc.apps.len() {
            if !self.apps[i].alive {
                continue;
            }
            let lvl = if Some(i) == self.fg {
                Some(Level::Foreground)
            } else if let Some(l) = background_level(self.apps[i].kind) {
                Some(l)
            } else if Some(i) == self.previous {
                Some(Level::Previous)
            } else {
                cached.push(i);
                None
            };
            self.apps[i].level = lvl;
        }
        cached.sort_by(|&a, &b| self.apps[b].last_fg.cmp(&self.apps[a].last_fg));
        for (i, slot) in cached.iter().zip(cached_slots(cached.len())) {
            self.apps[*i].level = Some(Level::Cached(slot));
        }
    }

    // ---- launches -------------------------------------------------------------

    pub(super) fn set_foreground(&mut self, app: usize) {
        if self.fg != Some(app) {
            if let Some(f) = self.fg {
                self.previous = Some(f);
            }
        }
        self.fg = Some(app);
        self.fg_seq += 1;
        self.apps[app].last_fg = self.fg_seq;
        self.update_levels();
    }

    /// Brings `n` pages starting at `p0` of `app` in: resident pages are
    /// touched, absent file pages are read (runs of up to the readahead window),
    /// swapped anon pages are read back (with page-cluster readahead).
    pub(super) fn touch_range(&mut self, p0: u32, n: u32) -> Result<()> {
        let mut run_start = NIL;
        let mut run_len = 0u32;
        let mut run_refaults = 0u32;
        let ra = self.sc.launch.file_readahead_pages.max(1);
        for p in p0..p0 + n {
            let m = *self.lists.arena.get(p);
            let app = m.app as usize;
            if !self.apps[app].alive {
                return Ok(());
            }
            match m.loc {
                Loc::Lru(_) => self.touch(p),
                Loc::Absent if !m.anon => {
                    self.alloc_page()?;
                    self.make_resident(p, IF);
                    self.tot.file_pages_read += 1;
                    self.meter.file_pages += 1;
                    if run_len > 0 && run_start + run_len == p && run_len < ra {
                        run_len += 1;
                    } else {
                        self.flush_file_run(run_start, run_len, run_refaults);
                        run_start = p;
                        run_len = 1;
                        run_refaults = 0;
                    }
                    if m.shadow {
                        self.tot.file_refaults += 1;
                        run_refaults += 1;
                    }
                }
                Loc::Absent => {}
                Loc::Swapped(s) => self.swap_in(s, p)?,
            }
        }
        self.flush_file_run(run_start, run_len, run_refaults);
        Ok(())
    }

    /// Charges one file read of `len` pages, `refaults` of them refaults
    /// (their share of the time is a memory stall for PSI).
    pub(super) fn flush_file_run(&mut self, start: u32, len: u32, refaults: u32) {
        if len == 0 {
            return;
        }
        let seq = start == self.last_file_read_end;
        let t = self.file_store.read.time_ns(len as u64, seq);
        self.last_file_read_end = start + len;
        self.meter.file_ns += t;
        self.psi_some_ns += t * refaults as f64 / len as f64;
    }

    /// Swap-in of the page in slot `s` (page `p`), reading the aligned window
    /// of `2^page_cluster` slots in one request.
    pub(super) fn swap_in(&mut self, s: u32, p: u32) -> Result<()> {
        let dev = self.swap.clone().expect("swapped pages need a swap device");
        let w = 1u32 << self.sc.swap.page_cluster;
        let start = s & !(w - 1);
        let end = (start + w).min(self.slots.len() as u32);
        let mut batch: Vec<(u32, u32)> = Vec::new();
        for q in start..end {
            let page = self.slots[q as usize];
            if page != NIL {
                batch.push((q, page));
            }
        }
        let t = if self.store.kind == StoreKind::Zswap {
            // Pages in the pool are decompressed (and leave it); the rest
            // come from the device in one request.
            let mut cpu = 0.0;
            let mut on_dev = 0u64;
            for &(q, _) in &batch {
                if self.store.release(q, true, &mut cpu) == Stored::Device {
                    on_dev += 1;
                }
            }
            let mut t = cpu;
            if on_dev > 0 {
                t += dev.read.time_ns(on_dev, start == self.last_swap_read_end);
                self.last_swap_read_end = end;
                self.tot.swap_read_requests += 1;
            }
            t
        } else {
            let t = dev
                .read
                .time_ns(batch.len() as u64, start == self.last_swap_read_end);
            self.last_swap_read_end = end;
            self.tot.swap_read_requests += 1;
            t
        };
        self.meter.swap_pages += batch.len() as u64;
        self.tot.swap_read_ms += t / 1e6;
        self.meter.swap_ns += t;
        self.psi_some_ns += t;
        self.meter.swapped_any = true;
        for (q, page) in batch {
            self.alloc_page()?;
            // Reclaim may have killed the owner meanwhile.
            if self.slots[q as usize] != page {
                continue;
            }
            self.free_slot(q);
            let app = self.lists.arena.get(page).app as usize;
            {
                let a = &mut self.apps[app];
                a.swapped -= 1;
                a.sum.swapped_in += 1;
            }
            self.lists.arena.get_mut(page).loc = Loc::Absent;
            if page == p {
                self.make_resident(page, AA);
                self.tot.swap_pages_in += 1;
            } else {
                self.make_resident(page, IA);
                self.lists.arena.get_mut(page).young = false;
                self.tot.swap_readahead_pages += 1;
            }
        }
        Ok(())
    }

    /// Grows the app's anon memory to `upto` pages, building each page.
    pub(super) fn grow_anon(&mut self, app: usize, upto: u32, charge: bool) -> Result<()> {
        while self.apps[app].alive && self.apps[app].allocated < upto {
            self.alloc_page()?;
            if !self.apps[app].alive {
                break;
            }
            let p = self.apps[app].anon0 + self.apps[app].allocated;
            self.apps[app].allocated += 1;
            self.make_resident(p, AA);
            if charge {
                self.meter.anon_pages += 1;
                self.meter.init_ns += self.sc.launch.anon_init_us_per_page * 1e3;
            }
        }
        Ok(())
    }

    pub(super) fn touch_system(&mut self) -> Result<()> {
        let (f0, nf) = (self.apps[self.sys].file0, self.apps[self.sys].n_file);
        let n = (nf as f64 * self.sc.phone.system_file_touch).round() as u32;
        self.touch_range(f0, n)
    }

    pub(super) fn cold_start(&mut self, app: usize) -> Result<()> {
        self.apps[app].alive = true;
        self.apps[app].exited = false;
        self.set_foreground(app);
        self.touch_system()?;
        let (f0, nf) = (self.apps[app].file0, self.launch_file_pages(app));
        self.touch_range(f0, nf)?;
        let upto = (self.apps[app].n_anon as f64 * self.sc.apps[app].launch_anon).round() as u32;
        self.grow_anon(app, upto, true)
    }

    pub(super) fn launch(&mut self, app: usize) -> Result<()> {
        self.meter = Meter::default();
        let lm = self.sc.launch.clone();
        let a = &self.apps[app];
        let (kind, start_ms, killed_by) = if a.alive {
            (LaunchKind::Hot, lm.hot_start_ms, None)
        } else if !a.launched_once {
            (LaunchKind::First, lm.process_start_ms, None)
        } else if let Some(k) = a.killed_by {
            (LaunchKind::Cold, lm.process_start_ms, Some(k.to_string()))
        } else {
            (LaunchKind::Restart, lm.process_start_ms, None)
        };
        if kind == LaunchKind::Hot {
            self.set_foreground(app);
            self.touch_system()?;
            let spec = &self.sc.apps[app];
            let a = &self.apps[app];
            let na = (a.allocated as f64 * spec.relaunch_anon).round() as u32;
            let nf = (a.n_file as f64 * spec.relaunch_file).round() as u32;
            let (a0, f0) = (a.anon0, a.file0);
            self.touch_range(a0, na)?;
            self.touch_range(f0, nf)?;
        } else {
            self.apps[app].killed_by = None;
            self.cold_start(app)?;
        }
        self.apps[app].launched_once = true;
        self.apps[app].sum.launches += 1;
        let kind = if kind == LaunchKind::Hot && self.meter.swapped_any {
            LaunchKind::Swap
        } else {
            kind
        };
        let m = &self.meter;
        let time_ms = start_ms + (m.file_ns + m.swap_ns + m.init_ns + m.reclaim_ns) / 1e6;
        let rec = LaunchRecord {
            step: self.step,
            t_ms: self.t_ms,
            app: self.names[app].clone(),
            kind,
            time_ms,
            start_ms,
            file_read_ms: m.file_ns / 1e6,
            swap_read_ms: m.swap_ns / 1e6,
            anon_init_ms: m.init_ns / 1e6,
            reclaim_ms: m.reclaim_ns / 1e6,
            file_pages_read: m.file_pages,
            swap_pages_in: m.swap_pages,
            anon_pages_built: m.anon_pages,
            killed_by,
        };
        self.t_ms += time_ms;
        self.out_launches.push(rec);
        Ok(())
    }

    /// Applies one script step.
    pub fn apply(&mut self, st: &Step) -> Result<()> {
        match st.op {
            StepOp::Launch => {
                let app = st.app.expect("launch steps name an app");
                self.launch(app)?;
                self.sample(&format!("launch {}", self.names[app]));
            }
            StepOp::Use => {
                if let Some(app) = self.fg {
                    self.meter = Meter::default();
                    let full = self.apps[app].n_anon;
                    self.grow_anon(app, full, false)?;
                    if self.apps[app].alive {
                        let a = &self.apps[app];
                        let (a0, na) = (a.anon0, a.allocated);
                        let nf = (a.n_file as f64 * self.sc.apps[app].relaunch_file).round() as u32;
                        let f0 = a.file0;
                        self.touch_range(a0, na)?;
                        self.touch_range(f0, nf)?;
                    }
                }
                self.t_ms += st.seconds * 1e3;
                self.sample("use");
            }
            StepOp::Background => {
                let home = (0..self.sc.apps.len()).find(|&i| self.apps[i].kind == AppKind::Home);
                match home {
                    Some(h) if Some(h) != self.fg => {
                        self.launch(h)?;
                    }
                    _ => {
                        if let Some(f) = self.fg.take() {
                            self.previous = Some(f);
                            self.update_levels();
                        }
                    }
                }
                self.t_ms += st.seconds * 1e3;
                self.sample("background");
            }
            StepOp::Idle => {
                self.t_ms += st.seconds * 1e3;
                self.sample("idle");
            }
            StepOp::Exit => {
                let app = st.app.expect("exit steps name an app");
                if self.apps[app].alive {
                    self.exit_process(app);
                    self.apps[app].exited = true;
                    self.apps[app].killed_by = None;
                    self.update_levels();
                }
                self.sample(&format!("exit {}", self.names[app]));
            }
        }
        Ok(())
    }
}
