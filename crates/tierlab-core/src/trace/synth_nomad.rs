//! The NOMAD microbenchmark as a trace generator (NOMAD, OSDI 2024, section 5;
//! the selective-shadow-paging paper, section 4.2, runs it with a 13.5 GB
//! working set and a 27 GB resident set on 16 GB + 16 GB).
//!
//! What NOMAD's scripts do (github lingfenghsiang/Nomad,
//! `src/testing_scripts/microbenchmark`): YCSB's zipfian generator draws keys
//! (`workloada-13.5G`: 3.6 M records, 30 M operations, one 4 KiB page per
//! key); `write_binary_data.py` renumbers the keys into page indices, either
//! hottest first (`generate_hosttest`: by descending access count) or in order
//! of first appearance (`generate_first_touch`); the run pattern's pages are
//! offset past the warm-up region (`-o offset`), so the resident set is the
//! warm-up region plus the working set. The program writes every page, then
//! runs timed rounds over the working set, reading (`-work=2`) or writing
//! (`-work=0`) whole pages.
//!
//! YCSB's `zipfian` request distribution is its `ScrambledZipfianGenerator`:
//! a zipfian rank over `ITEM_COUNT` = 10^10 items, hashed with 64-bit FNV
//! (`Utils.fnvhash64`) modulo the record count. Popularity over the records is
//! therefore a skewed part (the ranks below the record count, hashed onto
//! records) plus a nearly uniform part (all the other ranks). At the paper's
//! size (3.6 M records) about 64% of the draws fall in the skewed part. Scaled
//! down, `items` keeps that share: items = working_set ^ (ln 10^10 / ln 3.6 M),
//! so that ln(working_set) / ln(items) is the paper's.
//!
//! This generator emits, as page accesses in order:
//! 1. warm-up: one write of every page of the resident set, in index order:
//!    pages `0 .. resident - working` (the warm-up region, cold afterwards),
//!    then the working set `resident - working .. resident`;
//! 2. `rounds` timed rounds of `ops_per_round` zipfian draws over the working
//!    set (YCSB's constant 0.99), as reads, writes, or reads and writes with
//!    equal probability (`mixed`, YCSB workload A's 50/50).
//!
//! Layouts: `hottest` numbers records by decreasing popularity (the expected
//! share of draws of each record, summed over the ranks hashed onto it; the
//! scripts sort by counted draws, the noise-free version of the same order);
//! `first_touch` numbers records in order of their first draw in the timed
//! rounds (records never drawn are never accessed). Sizes scale with
//! [`NomadBench::paper`]: pages = bytes / 4 KiB / `scale`, keeping the paper's
//! ratios. The stream is a pure function of the parameters: `rand_pcg::Pcg64`
//! seeded with `seed`, `rand_distr::Zipf`.

use crate::error::{Error, Result};
use crate::trace::{Access, Kind, Op, Record, TraceReader};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Timed-round access mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Read,
    Write,
    Mixed,
}

/// Page numbering of the working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    Hottest,
    FirstTouch,
}

/// Parameters of the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NomadBench {
    /// Working-set pages (accessed in the timed rounds).
    pub working_set: u64,
    /// Resident-set pages (all written during the warm-up), >= working_set.
    pub resident_set: u64,
    pub rounds: u32,
    /// Zipfian draws per round (NOMAD: 30 M operations on 3.6 M records).
    pub ops_per_round: u64,
    pub mode: Mode,
    pub layout: Layout,
    /// Zipf exponent (YCSB's zipfian constant).
    pub theta: f64,
    /// Zipfian items hashed onto the working set (YCSB: 10^10; 0: the scaled
    /// value, see the module docs). At most 2^27 (the hottest layout sums
    /// over them).
    pub items: u64,
    pub seed: u64,
    pub page_size: u32,
}

/// Bytes per GiB.
const GIB: f64 = (1u64 << 30) as f64;

impl Default for NomadBench {
    fn default() -> Self {
        NomadBench::paper(256.0, Mode::Mixed)
    }
}

impl NomadBench {
    /// The paper's setup (13.5 GB working set, 27 GB resident) scaled down by
    /// `scale`; 4 rounds of 30/3.6 draws per working-set page.
    pub fn paper(scale: f64, mode: Mode) -> Self {
        let pages = |gib: f64| (gib * GIB / 4096.0 / scale).round() as u64;
        let ws = pages(13.5);
        NomadBench {
            working_set: ws,
            resident_set: pages(27.0),
            rounds: 4,
            ops_per_round: (ws as f64 * 30.0 / 3.6).round() as u64,
            mode,
            layout: Layout::Hottest,
            theta: 0.99,
            items: 0,
            seed: 42,
            page_size: 4096,
        }
    }

    /// Pages per tier of the paper's testbed (16 GB per node) at `scale`.
    pub fn paper_tier_pages(scale: f64) -> u64 {
        (16.0 * GIB / 4096.0 / scale).round() as u64
    }

    /// Zipfian items: `items`, or the scaled value.
    pub fn zipf_items(&self) -> u64 {
        if self.items > 0 {
            return self.items;
        }
        let e = (1e10f64).ln() / (3.6e6f64).ln();
        ((self.working_set.max(2) as f64).powf(e).round() as u64).max(self.working_set)
    }

    /// Accesses of the warm-up (the first measured access is at this position).
    pub fn warmup_len(&self) -> u64 {
        self.resident_set
    }

    pub fn total_len(&self) -> u64 {
        self.resident_set + self.rounds as u64 * self.ops_per_round
    }

    pub fn validate(&self) -> Result<()> {
        if self.working_set == 0 || self.working_set > self.resident_set {
            return Err(Error::config(format!(
                "nomad benchmark: working_set must be in 1..=resident_set ({}), got {}",
                self.resident_set, self.working_set
            )));
        }
        if !(self.theta.is_finite() && self.theta > 0.0) {
            return Err(Error::config(format!(
                "nomad benchmark: theta must be > 0, got {}",
                self.theta
            )));
        }
        let items = self.zipf_items();
        if items < self.working_set || items > 1 << 27 {
            return Err(Error::config(format!(
                "nomad benchmark: items must be in working_set..=2^27, got {items}"
            )));
        }
        if self.page_size == 0 {
            return Err(Error::config("nomad benchmark: page_size must be >= 1"));
        }
        Ok(())
    }

    pub fn reader(&self) -> Result<NomadBenchReader> {
        NomadBenchReader::new(self.clone())
    }
}

/// YCSB `Utils.fnvhash64`: 64-bit FNV-1a over the 8 bytes of `v`, low byte
/// first, made non-negative as Java's `Math.abs` does.
pub fn fnvhash64(mut v: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(1_099_511_628_211);
        v >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// Streams the benchmark's accesses.
pub struct NomadBenchReader {
    b: NomadBench,
    pos: u64,
    rng: Pcg64,
    zipf: Zipf<f64>,
    /// hottest: record -> working-set index; first_touch: record -> index + 1
    /// (0: not yet assigned).
    map: Vec<u32>,
    next_index: u32,
}

impl NomadBenchReader {
    pub fn new(b: NomadBench) -> Result<Self> {
        b.validate()?;
        let items = b.zipf_items();
        let zipf = Zipf::new(items as f64, b.theta)
            .map_err(|e| Error::config(format!("nomad benchmark: zipf: {e}")))?;
        let ws = b.working_set as usize;
        let map = match b.layout {
            Layout::FirstTouch => vec![0; ws],
            Layout::Hottest => {
                let mut mass = vec![0.0f64; ws];
                for rank in 0..items {
                    mass[(fnvhash64(rank) % b.working_set) as usize] +=
                        1.0 / ((rank + 1) as f64).powf(b.theta);
                }
                let mut order: Vec<u32> = (0..ws as u32).collect();
                order.sort_by(|&x, &y| {
                    mass[y as usize]
                        .total_cmp(&mass[x as usize])
                        .then(x.cmp(&y))
                });
                let mut map = vec![0; ws];
                for (index, &rec) in order.iter().enumerate() {
                    map[rec as usize] = index as u32;
                }
                map
            }
        };
        Ok(NomadBenchReader {
            rng: Pcg64::seed_from_u64(b.seed),
            b,
            pos: 0,
            zipf,
            map,
            next_index: 0,
        })
    }

    fn next_access(&mut self) -> Access {
        let b = &self.b;
        let cold = b.resident_set - b.working_set;
        let pos = self.pos;
        self.pos += 1;
        if pos < b.resident_set {
            return Access::page(pos, pos, Op::Write, Kind::Anon);
        }
        let rank = self.zipf.sample(&mut self.rng) as u64 - 1;
        let record = (fnvhash64(rank) % b.working_set) as usize;
        let index = match b.layout {
            Layout::Hottest => self.map[record] as u64,
            Layout::FirstTouch => {
                let slot = &mut self.map[record];
                if *slot == 0 {
                    self.next_index += 1;
                    *slot = self.next_index;
                }
                (*slot - 1) as u64
            }
        };
        let op = match b.mode {
            Mode::Read => Op::Read,
            Mode::Write => Op::Write,
            Mode::Mixed => {
                if self.rng.random::<bool>() {
                    Op::Write
                } else {
                    Op::Read
                }
            }
        };
        Access::page(pos, cold + index, op, Kind::Anon)
    }
}

impl TraceReader for NomadBenchReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let total = self.b.total_len();
        let n = (total - self.pos).min(max as u64);
        for _ in 0..n {
            let a = self.next_access();
            out.push(Record::Access(a));
        }
        Ok(self.pos < total)
    }

    fn page_size(&self) -> u32 {
        self.b.page_size
    }

    fn format(&self) -> &'static str {
        "nomad-bench"
    }
}
