//! MGLRU's refault feedback: the PID controller of mm/vmscan.c
//! (`struct ctrl_pos`, `read_ctrl_pos`, `reset_ctrl_pos`,
//! `positive_ctrl_err`, `get_tier_idx`, `get_type_to_scan`), split from
//! `mglru.rs` (see its module documentation for the mechanism).

use super::{Mglru, MAX_NR_TIERS, MAX_SWAPPINESS, MIN_LRU_BATCH};

/// `struct ctrl_pos`: refaults and pages evicted or protected (the
/// averages plus the current generation's counts), and the gain.
#[derive(Debug, Clone, Copy)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// `positive_ctrl_err`: true if the PV has few refaults or a refault rate
/// (weighted by the gains) no higher than the SP's.
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted * (sp.total + MIN_LRU_BATCH) * sp.gain
            <= (sp.refaulted + 1) * pv.total * pv.gain
}

impl Mglru {
    /// `read_ctrl_pos`; `tier` = MAX_NR_TIERS sums every tier.
    pub(super) fn read_ctrl_pos(&self, t: usize, tier: usize, gain: u64) -> CtrlPos {
        let mut pos = CtrlPos {
            refaulted: 0,
            total: 0,
            gain,
        };
        for i in tier % MAX_NR_TIERS..=tier.min(MAX_NR_TIERS - 1) {
            pos.refaulted += self.avg_refaulted[t][i] + self.refaulted[t][i];
            pos.total += self.avg_total[t][i] + self.protected[t][i] + self.evicted[t][i];
        }
        pos
    }

    /// `reset_ctrl_pos(lruvec, type, carryover = true)` with one history
    /// generation: fold the counts into the averages and clear them.
    pub(super) fn reset_ctrl_pos(&mut self, t: usize) {
        for tier in 0..MAX_NR_TIERS {
            self.avg_refaulted[t][tier] =
                (self.avg_refaulted[t][tier] + self.refaulted[t][tier]) / 2;
            self.avg_total[t][tier] =
                (self.avg_total[t][tier] + self.protected[t][tier] + self.evicted[t][tier]) / 2;
            self.refaulted[t][tier] = 0;
            self.evicted[t][tier] = 0;
            self.protected[t][tier] = 0;
        }
    }

    /// `get_tier_idx`: gains 2 (SP, tier 0) : 3 (PV); 1 : 2 with
    /// `version = "6.1"`.
    pub(super) fn get_tier_idx(&self, t: usize) -> usize {
        let (g_sp, g_pv) = if self.v6_1 { (1, 2) } else { (2, 3) };
        let sp = self.read_ctrl_pos(t, 0, g_sp);
        self.last_tier(t, &sp, g_pv)
    }

    /// The tier before the first of type `t`'s tiers 1-3 (gain `gain`)
    /// whose refault rate is above the SP's.
    fn last_tier(&self, t: usize, sp: &CtrlPos, gain: u64) -> usize {
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(t, tier, gain);
            if !positive_ctrl_err(sp, &pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// `get_type_to_scan`: 1 = file.
    pub(super) fn get_type_to_scan(&self) -> usize {
        let swappiness = self.swappiness();
        if swappiness <= 1 {
            return 1;
        }
        if swappiness >= MAX_SWAPPINESS {
            return 0;
        }
        let sp = self.read_ctrl_pos(0, MAX_NR_TIERS, swappiness);
        let pv = self.read_ctrl_pos(1, MAX_NR_TIERS, MAX_SWAPPINESS - swappiness);
        positive_ctrl_err(&sp, &pv) as usize
    }

    /// The type `isolate_folios` scans first (1 = file) and, when the
    /// controller chose it under `version = "6.1"`, its tier cut-off (else
    /// `get_tier_idx` gives it). 6.1-6.13: anon whenever its `min_seq` is
    /// behind file's (and swappiness is not 0); otherwise `get_type_to_scan`
    /// compares the first tiers only (anon gain `swappiness`, file `200 -
    /// swappiness`), and the chosen type's tiers 1-3 against the other
    /// type's first tier give the cut-off.
    pub(super) fn isolate_type(&self) -> (usize, Option<usize>) {
        if !self.v6_1 {
            return (self.get_type_to_scan(), None);
        }
        let swappiness = self.swappiness();
        if swappiness > 0 && self.min_seq[0] < self.min_seq[1] {
            return (0, None);
        }
        if swappiness <= 1 {
            return (1, None);
        }
        if swappiness >= MAX_SWAPPINESS {
            return (0, None);
        }
        let gain = [swappiness, MAX_SWAPPINESS - swappiness];
        let sp = self.read_ctrl_pos(0, 0, gain[0]);
        let pv = self.read_ctrl_pos(1, 0, gain[1]);
        let t = positive_ctrl_err(&sp, &pv) as usize;
        let sp = self.read_ctrl_pos(1 - t, 0, gain[1 - t]);
        (t, Some(self.last_tier(t, &sp, gain[t])))
    }

    /// The tier cut-off for scanning type `t` when `isolate_type` gave
    /// `pick`: the controller's for the type it chose, else `get_tier_idx`;
    /// None for anon when anon cannot be evicted.
    pub(super) fn scan_tier(&self, t: usize, pick: (usize, Option<usize>)) -> Option<usize> {
        if t == 0 && !self.anon_evictable() {
            return None;
        }
        Some(match pick {
            (first, Some(tier)) if t == first => tier,
            _ => self.get_tier_idx(t),
        })
    }
}
