//! CLOCK-DWF (CLOCK with Dirty bits and Write Frequency; Lee, Bahn, Noh, "CLOCK-
//! DWF: A Write-History-Aware Page Replacement Algorithm for Hybrid PCM and DRAM
//! Memory Architectures", IEEE TC 63(9), 2014), reference [6] of
//! papers/hybrid-dram-pcm-app-aware.md. Its aim is to absorb writes in DRAM and
//! serve reads from PCM:
//!
//! - a read miss fills PCM, a write miss fills DRAM;
//! - PCM is a CLOCK: a read hit sets the page's reference bit; when PCM is full
//!   the hand clears set bits and evicts the first page whose bit is clear to
//!   storage;
//! - a write hit on a PCM page migrates it to DRAM (the write is then served
//!   from DRAM);
//! - DRAM is a CLOCK over write history: each page has a write bit (set by a
//!   write, including the write that brought it in), a write frequency and an
//!   age. When DRAM needs a frame the hand sweeps: a page with its write bit set
//!   has the bit cleared, its frequency incremented and its age reset, and is
//!   skipped; a page that is write-hot (frequency >= `hot_threshold`) and not
//!   expired (age < `expiration` sweeps without a write) has its age incremented
//!   and is skipped; the first other page is the victim and demotes to PCM (into
//!   the frame a migrating page just freed, or after PCM evicts its own victim).
//!
//! The TC paper's numeric thresholds are not in the project's papers; we choose
//! `hot_threshold = 2` (written during at least two sweep periods) and
//! `expiration = 3` sweeps, and test the mechanics they drive. DRAM reads do not
//! touch the write history (the TC paper's first observation: write history
//! alone predicts future writes better than read and write history together).

use super::{hybrid_ctx, Meter, DRAM, PCM};
use crate::error::{Error, Result};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::Event;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockDwfConfig {
    /// DRAM share of memory (the app-aware paper's 0.05, so both compare alike).
    pub dram_ratio: f64,
    /// Write frequency from which a DRAM page is write-hot.
    pub hot_threshold: u32,
    /// Sweeps without a write after which a write-hot page's history expires.
    pub expiration: u32,
}

impl Default for ClockDwfConfig {
    fn default() -> Self {
        ClockDwfConfig {
            dram_ratio: super::PAPER_DRAM_RATIO,
            hot_threshold: 2,
            expiration: 3,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct DFrame {
    f: Frame,
    wbit: bool,
    freq: u32,
    age: u32,
}

#[derive(Debug, Clone, Copy)]
struct PFrame {
    f: Frame,
    refb: bool,
}

/// State of a DRAM page, as tests inspect it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DwfState {
    pub page: u64,
    pub wbit: bool,
    pub freq: u32,
    pub age: u32,
}

const PCM_BIT: u32 = 1 << 31;

pub struct ClockDwf {
    dram_cap: usize,
    pcm_cap: usize,
    hot_threshold: u32,
    expiration: u32,
    dram: Vec<DFrame>,
    dram_hand: usize,
    pcm: Vec<Option<PFrame>>,
    pcm_free: Vec<u32>,
    pcm_len: usize,
    pcm_hand: usize,
    /// Page id -> DRAM slot, or PCM slot | PCM_BIT, or NIL.
    loc: Vec<u32>,
    meter: Meter,
    skips_dirty: u64,
    skips_hot: u64,
}

impl PolicyDef for ClockDwf {
    const NAME: &'static str = "clock-dwf";
    const FAMILY: &'static str = "hybrid";
    const MIN_TIERS: usize = 2;
    const SUMMARY: &'static str =
        "CLOCK-DWF: reads fill PCM, writes fill DRAM, PCM write hits migrate to \
         DRAM, DRAM victims by write history (Lee, Bahn, Noh, IEEE TC 2014).";
    type Config = ClockDwfConfig;
    fn build(cfg: &ClockDwfConfig, ctx: &PolicyCtx) -> Result<Self> {
        let (dram_cap, pcm_cap) = hybrid_ctx(Self::NAME, ctx, cfg.dram_ratio)?;
        if cfg.hot_threshold == 0 {
            return Err(Error::config(
                "policy 'clock-dwf': hot_threshold must be >= 1",
            ));
        }
        Ok(ClockDwf {
            dram_cap,
            pcm_cap,
            hot_threshold: cfg.hot_threshold,
            expiration: cfg.expiration,
            dram: Vec::with_capacity(dram_cap),
            dram_hand: 0,
            pcm: Vec::with_capacity(pcm_cap),
            pcm_free: Vec::new(),
            pcm_len: 0,
            pcm_hand: 0,
            loc: Vec::new(),
            meter: Meter::default(),
            skips_dirty: 0,
            skips_hot: 0,
        })
    }
}

impl ClockDwf {
    pub fn meter(&self) -> &Meter {
        &self.meter
    }
    /// DRAM pages in frame order.
    pub fn dram_state(&self) -> Vec<DwfState> {
        self.dram
            .iter()
            .map(|d| DwfState {
                page: d.f.page,
                wbit: d.wbit,
                freq: d.freq,
                age: d.age,
            })
            .collect()
    }
    /// PCM pages (page, reference bit) in frame order.
    pub fn pcm_state(&self) -> Vec<(u64, bool)> {
        self.pcm
            .iter()
            .flatten()
            .map(|p| (p.f.page, p.refb))
            .collect()
    }

    /// Sweeps DRAM's hand to a victim and returns its frame index.
    fn dram_victim(&mut self) -> usize {
        loop {
            let h = self.dram_hand;
            self.dram_hand = (h + 1) % self.dram.len();
            let d = &mut self.dram[h];
            if d.wbit {
                d.wbit = false;
                d.freq = d.freq.saturating_add(1);
                d.age = 0;
                self.skips_dirty += 1;
            } else if d.freq >= self.hot_threshold && d.age < self.expiration {
                d.age += 1;
                self.skips_hot += 1;
            } else {
                return h;
            }
        }
    }

    /// Sweeps PCM's hand (PCM full) to a victim and evicts it to storage;
    /// returns the freed frame.
    fn evict_pcm<S: Sink>(&mut self, sink: &mut S) -> u32 {
        loop {
            let h = self.pcm_hand;
            self.pcm_hand = (h + 1) % self.pcm.len();
            if let Some(p) = self.pcm[h].as_mut() {
                if p.refb {
                    p.refb = false;
                    continue;
                }
                let f = p.f;
                self.pcm[h] = None;
                self.pcm_len -= 1;
                self.loc[f.id as usize] = NIL;
                self.meter.evict(sink, f.out(PCM));
                return h as u32;
            }
        }
    }

    /// Puts a page in a free PCM frame (`frame`, or any free one).
    fn pcm_put(&mut self, f: Frame, frame: Option<u32>) {
        let s = match frame.or_else(|| self.pcm_free.pop()) {
            Some(s) => s,
            None => {
                self.pcm.push(None);
                (self.pcm.len() - 1) as u32
            }
        };
        self.pcm[s as usize] = Some(PFrame { f, refb: false });
        self.pcm_len += 1;
        self.loc[f.id as usize] = s | PCM_BIT;
    }

    /// Frees a DRAM frame for an incoming page: DRAM's victim demotes to PCM
    /// (into `pcm_frame` when given, else into a free PCM frame, evicting PCM's
    /// victim first when PCM is full). Returns the DRAM frame to fill.
    fn free_dram<S: Sink>(&mut self, pcm_frame: Option<u32>, sink: &mut S) -> usize {
        let h = self.dram_victim();
        let v = self.dram[h].f;
        if self.pcm_cap == 0 {
            self.loc[v.id as usize] = NIL;
            self.meter.evict(sink, v.out(DRAM));
            return h;
        }
        let frame = match pcm_frame {
            Some(f) => Some(f),
            None if self.pcm_len == self.pcm_cap => Some(self.evict_pcm(sink)),
            None => None,
        };
        self.pcm_put(v, frame);
        self.meter.migrate(sink, v.id, v.page, DRAM, PCM);
        h
    }

    /// Puts a page in DRAM (making room if full); `pcm_frame` is the PCM frame
    /// the page itself just left, if it migrates up.
    fn dram_put<S: Sink>(&mut self, f: Frame, pcm_frame: Option<u32>, sink: &mut S) {
        let d = DFrame {
            f,
            wbit: true,
            freq: 0,
            age: 0,
        };
        let h = if self.dram.len() < self.dram_cap {
            self.dram.push(d);
            self.dram.len() - 1
        } else {
            let h = self.free_dram(pcm_frame, sink);
            self.dram[h] = d;
            h
        };
        self.loc[f.id as usize] = h as u32;
    }
}

impl Policy for ClockDwf {
    /// The location of the reference 16 ahead, and the DRAM or PCM frame of the one 6 ahead.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.loc, far as usize);
        match self.loc.get(near as usize) {
            Some(&l) if l != NIL && l & PCM_BIT == 0 => prefetch(&self.dram, l as usize),
            Some(&l) if l != NIL => prefetch(&self.pcm, (l & !PCM_BIT) as usize),
            _ => {}
        }
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.meter.begin(r);
        let l = self.loc[r.id as usize];
        if l != NIL {
            if l & PCM_BIT == 0 {
                let d = &mut self.dram[l as usize];
                if r.is_write() {
                    d.wbit = true;
                    d.f.dirty = true;
                }
                self.meter.hit(sink, r, DRAM);
                return;
            }
            let s = l & !PCM_BIT;
            if !r.is_write() || self.dram_cap == 0 {
                let p = self.pcm[s as usize]
                    .as_mut()
                    .expect("PCM frame of a resident page");
                p.refb = true;
                p.f.dirty |= r.is_write();
                self.meter.hit(sink, r, PCM);
                return;
            }
            // A write hit in PCM: the page moves to DRAM.
            let mut f = self.pcm[s as usize]
                .take()
                .expect("PCM frame of a resident page")
                .f;
            self.pcm_len -= 1;
            f.dirty = true;
            let free_frame = if self.dram.len() < self.dram_cap {
                self.pcm_free.push(s);
                None
            } else {
                Some(s)
            };
            self.dram_put(f, free_frame, sink);
            self.meter.migrate(sink, r.id, r.page(), PCM, DRAM);
            self.meter.hit(sink, r, DRAM);
            return;
        }
        if self.dram_cap + self.pcm_cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let to_dram = (r.is_write() && self.dram_cap > 0) || self.pcm_cap == 0;
        if to_dram {
            self.dram_put(Frame::of(r), None, sink);
            self.meter.miss(sink, r, DRAM);
        } else {
            let frame = (self.pcm_len == self.pcm_cap).then(|| self.evict_pcm(sink));
            self.pcm_put(Frame::of(r), frame);
            self.meter.miss(sink, r, PCM);
        }
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.meter.event(e);
    }

    fn grow(&mut self, n: usize) {
        if self.loc.len() < n {
            self.loc.resize(n, NIL);
        }
        self.meter.grow(n);
    }

    fn resident(&self) -> usize {
        self.dram.len() + self.pcm_len
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.meter.counters();
        c.push(("dwf_skips_dirty", self.skips_dirty));
        c.push(("dwf_skips_hot", self.skips_hot));
        c
    }
}
