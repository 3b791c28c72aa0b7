//! Compressed swap for the session: zram's pool, and zswap in front of a
//! flash swap device (issue 19).
//!
//! **zram** (Documentation/admin-guide/blockdev/zram.rst): a swap device in
//! RAM; a page written to it is compressed and kept in the zsmalloc pool, so
//! the pool is memory taken from the same RAM the swap-out was meant to free.
//! A page that compresses to `1/r` of a page keeps `1/r` of a page: swapping
//! `N` pages at ratio `r` frees `N - ceil(N/r)` pages, never more than
//! `N (1 - 1/r)`. Sizes are kept in thousandths of a page, rounded *up* per
//! page, and the pool occupies whole pages (rounded up again), so rounding can
//! only free less. A page that does not compress (`r` <= 1) keeps a whole
//! page: zram stores incompressible pages uncompressed (`ZRAM_HUGE`).
//! zsmalloc's size-class rounding and metadata are not modelled.
//!
//! **Compression ratio per page.** `[swap.compress] model = "fixed"` (the
//! default): every page at `swap.zram_ratio`, or at its app's `zram_ratio`
//! when the app sets one (what an app's heap compresses to, e.g. measured with
//! `/sys/block/zram0/mm_stat` while only that app swaps). `model =
//! "lognormal"`: each page's compressed fraction `f` is drawn from a
//! log-normal distribution whose mean is `1/ratio` (`ln f ~ N(-ln r - s^2/2,
//! s^2)`, `s` = `sigma`), from a seeded generator, and clamped to
//! `[1/1000, 1]`. Real anonymous memory mixes near-empty pages (zeroed heap)
//! with incompressible ones (JPEG, compressed assets); the log-normal is our
//! choice of a skewed, positive distribution with a given mean, not a
//! measured one.
//!
//! **CPU cost.** The swap device's `write` cost is the compression of a page,
//! its `read` cost the decompression (`class = "compressed"` devices; the
//! per-algorithm figures and their sources are in
//! `experiments/devices/compressed.toml` and docs/devices.md).
//!
//! **zswap** (Documentation/admin-guide/mm/zswap.rst; mm/zswap.c
//! `zswap_store`, `zswap_check_limits`, `shrink_worker`, `zswap_load`): a
//! compressed cache in front of a swap device. A page being swapped out gets
//! its slot on the device, but is compressed into the pool instead of being
//! written. The pool may hold at most `max_pool_percent` (default 20) percent
//! of RAM. When it reaches that limit, `zswap_check_limits` marks the pool
//! full: the page being stored is rejected (written to the device
//! uncompressed), and the shrink worker writes back the pool's *oldest*
//! entries (its LRU, in store order) to their slots on the device
//! (decompressing each) until the pool is at or below
//! `accept_threshold_percent` (default 90) percent of the limit; stores are
//! rejected until then. A load from the pool decompresses the page and frees
//! its entry (exclusive loads). The memory-pressure zswap shrinker
//! (`shrinker_enabled`, off by default) is not modelled.
//!
//! **zswap's per-group limit** (cgroup v2 `memory.zswap.max` and
//! `memory.zswap.writeback`; 6.12's mm/zswap.c `zswap_store`, `shrink_memcg`,
//! `shrink_memcg_cb` and mm/memcontrol.c `obj_cgroup_may_zswap`,
//! `obj_cgroup_charge_zswap`), for the one group whose pages are swapped.
//! Each stored entry charges the group its compressed length in bytes
//! (`entry->length`, zsmalloc's class rounding is not charged). The limit is
//! whole pages (`page_counter_memparse`: bytes / 4096, rounded down); a store
//! may go on while the charged bytes, in whole pages rounded down, are below
//! it. Otherwise (`obj_cgroup_may_zswap` false) `shrink_memcg` walks *one*
//! entry of the group's zswap LRU (oldest first): an entry with its referenced
//! bit set (every entry is stored with it set) has the bit cleared and is
//! rotated to the tail (second chance), and the page being stored goes to the
//! swap device uncompressed; an entry without it is written back to its slot
//! (`zswpwb`) and the page is then stored, even if the group is still over its
//! limit. An empty LRU, or `memory.zswap.writeback` = 0, sends the page to
//! the device. None of these counts as a rejection in zswap's debugfs
//! counters; the model counts them in `memcg_limit_rejected`. A limit of 0
//! sends every page to the device. Cost: O(1) per store and load, amortized
//! (one slot and one generation number per slot, LRU entries of loaded pages
//! pruned lazily).

use crate::device::Device;
use crate::error::{Error, Result};
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Bytes in a page (`PAGE_SIZE`): zswap's entry lengths and the group's
/// limit are in bytes.
const PAGE_BYTES: u64 = 4096;

/// Thousandths of a page that a page of ratio `r` keeps in RAM (rounded up,
/// at most a whole page).
pub fn milli_of_ratio(r: f64) -> u16 {
    if r.is_nan() || r <= 1.0 {
        return 1000;
    }
    ((1000.0 / r).ceil() as u16).clamp(1, 1000)
}

/// How each swapped page's compressed size is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RatioModel {
    /// Every page at the ratio (the scenario's or its app's).
    #[default]
    Fixed,
    /// Per-page compressed fraction from a seeded log-normal with mean
    /// `1/ratio`.
    Lognormal,
}

/// `[swap.compress]`: per-page compression ratios.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompressConfig {
    pub model: RatioModel,
    /// Standard deviation of `ln f` for `lognormal` (default 0.5).
    pub sigma: f64,
    pub seed: u64,
}

impl Default for CompressConfig {
    fn default() -> Self {
        CompressConfig {
            model: RatioModel::Fixed,
            sigma: 0.5,
            seed: 1,
        }
    }
}

/// `[swap.zswap]`: zswap in front of `swap.device`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZswapConfig {
    pub enabled: bool,
    /// The compressor's cost model: a `class = "compressed"` device (write =
    /// compress, read = decompress). Default `zram` (lz4).
    pub compressor: String,
    /// `/sys/module/zswap/parameters/max_pool_percent` (default 20).
    pub max_pool_percent: u32,
    /// `/sys/module/zswap/parameters/accept_threshold_percent` (default 90).
    pub accept_threshold_percent: u32,
    /// The swapping group's `memory.zswap.max` in bytes (cgroup v2); `None`
    /// (the default) is `max`, no per-group limit.
    pub memcg_zswap_max_bytes: Option<u64>,
    /// The group's `memory.zswap.writeback` (default true): whether entries
    /// may be written back to the swap device at the group's limit.
    pub memcg_zswap_writeback: bool,
}

impl Default for ZswapConfig {
    fn default() -> Self {
        ZswapConfig {
            enabled: false,
            compressor: "zram".into(),
            max_pool_percent: 20,
            accept_threshold_percent: 90,
            memcg_zswap_max_bytes: None,
            memcg_zswap_writeback: true,
        }
    }
}

impl CompressConfig {
    pub fn validate(&self) -> Result<()> {
        if !(self.sigma.is_finite() && self.sigma >= 0.0) {
            return Err(Error::config(format!(
                "swap.compress.sigma must be a finite number >= 0, got {}",
                self.sigma
            )));
        }
        Ok(())
    }
}

impl ZswapConfig {
    pub fn validate(&self) -> Result<()> {
        if !(1..=100).contains(&self.max_pool_percent) {
            return Err(Error::config(format!(
                "swap.zswap.max_pool_percent must be in 1..=100, got {}",
                self.max_pool_percent
            )));
        }
        if !(1..=100).contains(&self.accept_threshold_percent) {
            return Err(Error::config(format!(
                "swap.zswap.accept_threshold_percent must be in 1..=100, got {}",
                self.accept_threshold_percent
            )));
        }
        Ok(())
    }
}

/// What the backing store does with swapped pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// A block device: every page is written to it.
    Device,
    /// zram: every page is compressed into RAM.
    Zram,
    /// zswap over a block device.
    Zswap,
}

/// Where a swapped page's data is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// In RAM, compressed (zram, or the zswap pool).
    Ram,
    /// On the swap device.
    Device,
}

/// zswap's counters (`/sys/kernel/debug/zswap`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ZswapStats {
    /// Pages stored compressed.
    pub stored: u64,
    /// Stores rejected because the pool was full (`pool_limit_hit` and the
    /// stores refused until the accept threshold).
    pub rejected: u64,
    /// Entries written back to the device (`zswpwb`): by the shrink worker at
    /// the global limit and by `shrink_memcg` at the group's.
    pub written_back: u64,
    /// Pages sent straight to the device at the group's `memory.zswap.max`
    /// (no debugfs counter in the kernel: `pswpout - zswpwb` there).
    pub memcg_limit_rejected: u64,
    /// Loads served from the pool.
    pub pool_loads: u64,
}

/// The compressed part of swap: per-slot sizes, the pool, zswap's LRU.
pub struct CompressedStore {
    pub kind: StoreKind,
    /// Thousandths of a page each slot keeps in RAM (0: not in RAM).
    milli: Vec<u16>,
    pool_milli: u64,
    model: RatioModel,
    lognormal_sigma: f64,
    rng: rand_pcg::Pcg64,
    /// zswap: (slot, generation) in LRU order (oldest first), lazily pruned:
    /// an element whose slot was released, or stored again since (another
    /// generation), is skipped.
    lru: VecDeque<(u32, u32)>,
    /// Per slot: the generation of its current entry, and its referenced bit.
    generation: Vec<u32>,
    referenced: Vec<bool>,
    /// Per slot: the bytes its entry charges the group (`entry->length`).
    charged: Vec<u16>,
    /// The group's charged bytes (`MEMCG_ZSWAP_B`) and its limit in pages.
    memcg_bytes: u64,
    memcg_max_pages: Option<u64>,
    memcg_writeback: bool,
    /// zswap's limits in pages and its `zswap_pool_reached_full`.
    max_pages: u64,
    accept_pages: u64,
    reached_full: bool,
    pub compressor: Option<Device>,
    pub stats: ZswapStats,
}

impl CompressedStore {
    /// A store of `slots` slots; `total_pages` is MemTotal (zswap's limit
    /// is a percentage of it).
    pub fn new(
        kind: StoreKind,
        slots: usize,
        total_pages: u64,
        compress: &CompressConfig,
        zswap: &ZswapConfig,
        compressor: Option<Device>,
    ) -> Self {
        let max_pages = total_pages * zswap.max_pool_percent as u64 / 100;
        CompressedStore {
            kind,
            milli: vec![0; slots],
            pool_milli: 0,
            model: compress.model,
            lognormal_sigma: compress.sigma,
            rng: rand_pcg::Pcg64::seed_from_u64(compress.seed),
            lru: VecDeque::new(),
            generation: vec![0; slots],
            referenced: vec![false; slots],
            charged: vec![0; slots],
            memcg_bytes: 0,
            memcg_max_pages: zswap.memcg_zswap_max_bytes.map(|b| b / PAGE_BYTES),
            memcg_writeback: zswap.memcg_zswap_writeback,
            max_pages,
            accept_pages: max_pages * zswap.accept_threshold_percent as u64 / 100,
            reached_full: false,
            compressor,
            stats: ZswapStats::default(),
        }
    }

    /// Whole pages of RAM the compressed pool occupies.
    pub fn pool_pages(&self) -> u64 {
        self.pool_milli.div_ceil(1000)
    }

    /// Bytes the pool's entries charge the group (memory.stat `zswap`).
    pub fn memcg_bytes(&self) -> u64 {
        self.memcg_bytes
    }

    /// Thousandths of a page the pool holds.
    pub fn pool_milli(&self) -> u64 {
        self.pool_milli
    }

    /// Where slot `s`'s data is (for a slot in use).
    pub fn location(&self, s: u32) -> Stored {
        if self.milli[s as usize] > 0 {
            Stored::Ram
        } else {
            Stored::Device
        }
    }

    /// The compressed size of the next page at mean ratio `ratio`.
    fn draw(&mut self, ratio: f64) -> u16 {
        match self.model {
            RatioModel::Fixed => milli_of_ratio(ratio),
            RatioModel::Lognormal => {
                let s = self.lognormal_sigma;
                let mu = -ratio.max(1.0).ln() - s * s / 2.0;
                let f = LogNormal::new(mu, s)
                    .map(|d| d.sample(&mut self.rng))
                    .unwrap_or((-ratio.max(1.0).ln()).exp());
                ((f * 1000.0).ceil() as u16).clamp(1, 1000)
            }
        }
    }

    fn put(&mut self, s: u32, m: u16) {
        debug_assert_eq!(self.milli[s as usize], 0);
        self.milli[s as usize] = m;
        self.pool_milli += m as u64;
    }

    fn take(&mut self, s: u32) -> u16 {
        let m = std::mem::take(&mut self.milli[s as usize]);
        self.pool_milli -= m as u64;
        self.memcg_bytes -= std::mem::take(&mut self.charged[s as usize]) as u64;
        m
    }

    /// `zswap_check_limits`: true while stores must be rejected.
    fn check_limits(&mut self) -> bool {
        let cur = self.pool_pages();
        if cur >= self.max_pages {
            self.reached_full = true;
        } else if self.reached_full && cur <= self.accept_pages {
            self.reached_full = false;
        }
        self.reached_full
    }

    /// A page (of mean ratio `ratio`) swapped out to slot `s`. Pushes the
    /// slots whose pages must now be written to the swap device: `s` itself
    /// for a plain device, for zram (the device's write cost is the
    /// compression) and for a rejected zswap store, and the entries zswap's
    /// shrink worker wrote back (oldest first). `cpu_ns` gets zswap's
    /// compression and write-back decompression time.
    pub fn store(&mut self, s: u32, ratio: f64, cpu_ns: &mut f64, to_device: &mut Vec<u32>) {
        match self.kind {
            StoreKind::Device => to_device.push(s),
            StoreKind::Zram => {
                // The compression is charged as the zram device's write.
                let m = self.draw(ratio);
                self.put(s, m);
                to_device.push(s);
            }
            StoreKind::Zswap => {
                let m = self.draw(ratio);
                let len = (m as u64 * PAGE_BYTES).div_ceil(1000) as u16;
                self.zswap_store(s, m, len, cpu_ns, to_device);
            }
        }
    }

    /// A zswap store of slot `s` whose page compresses to `len` bytes (the
    /// compressor's output for the page's contents, 1..=4096): as
    /// [`CompressedStore::store`] for a zswap store, with the entry's size
    /// given instead of drawn.
    pub fn store_compressed(
        &mut self,
        s: u32,
        len: u16,
        cpu_ns: &mut f64,
        to_device: &mut Vec<u32>,
    ) {
        debug_assert_eq!(self.kind, StoreKind::Zswap);
        let len = len.clamp(1, PAGE_BYTES as u16);
        let m = ((len as u64 * 1000).div_ceil(PAGE_BYTES) as u16).clamp(1, 1000);
        self.zswap_store(s, m, len, cpu_ns, to_device);
    }

    /// `zswap_store`: the group's limit, then the global one, then the entry.
    fn zswap_store(
        &mut self,
        s: u32,
        m: u16,
        len: u16,
        cpu_ns: &mut f64,
        to_device: &mut Vec<u32>,
    ) {
        let dev = self.compressor.clone().expect("zswap has a compressor");
        if !self.memcg_may_zswap() && !self.shrink_memcg(cpu_ns, to_device, &dev) {
            self.stats.memcg_limit_rejected += 1;
            to_device.push(s);
            return;
        }
        if self.check_limits() {
            self.stats.rejected += 1;
            self.shrink(cpu_ns, to_device, &dev);
            to_device.push(s);
            return;
        }
        *cpu_ns += dev.write.time_ns(1, false);
        self.put(s, m);
        let i = s as usize;
        self.charged[i] = len;
        self.memcg_bytes += len as u64;
        self.generation[i] = self.generation[i].wrapping_add(1);
        self.referenced[i] = true;
        self.lru.push_back((s, self.generation[i]));
        self.stats.stored += 1;
    }

    /// `obj_cgroup_may_zswap`: the group's charged bytes, in whole pages
    /// rounded down, are below its limit (always, without a limit).
    fn memcg_may_zswap(&self) -> bool {
        match self.memcg_max_pages {
            None => true,
            Some(0) => false,
            Some(max) => self.memcg_bytes / PAGE_BYTES < max,
        }
    }

    /// `shrink_memcg` with `shrink_memcg_cb`: one entry of the group's LRU,
    /// oldest first: a referenced one gets a second chance (bit cleared,
    /// rotated to the tail), an unreferenced one is written back. True when
    /// an entry was written back (the store may go on).
    fn shrink_memcg(&mut self, cpu_ns: &mut f64, to_device: &mut Vec<u32>, dev: &Device) -> bool {
        if !self.memcg_writeback {
            return false;
        }
        while let Some((s, g)) = self.lru.pop_front() {
            let i = s as usize;
            if self.milli[i] == 0 || self.generation[i] != g {
                continue; // loaded, freed or stored again since
            }
            if self.referenced[i] {
                self.referenced[i] = false;
                self.lru.push_back((s, g));
                return false;
            }
            self.take(s);
            *cpu_ns += dev.read.time_ns(1, false);
            self.stats.written_back += 1;
            to_device.push(s);
            return true;
        }
        false
    }

    /// `shrink_worker`: writes back the oldest entries until the pool is at
    /// or below the accept threshold.
    fn shrink(&mut self, cpu_ns: &mut f64, to_device: &mut Vec<u32>, dev: &Device) {
        while self.pool_pages() > self.accept_pages {
            let Some((s, g)) = self.lru.pop_front() else {
                break;
            };
            if self.milli[s as usize] == 0 || self.generation[s as usize] != g {
                continue; // loaded, freed or stored again since
            }
            self.take(s);
            *cpu_ns += dev.read.time_ns(1, false);
            self.stats.written_back += 1;
            to_device.push(s);
        }
        if self.pool_pages() <= self.accept_pages {
            self.reached_full = false;
        }
    }

    /// Slot `s` is read back (or freed): its RAM copy, if any, goes. Returns
    /// whether the data was in RAM and adds the decompression time (for a
    /// read, `decompress` true) to `cpu_ns`.
    pub fn release(&mut self, s: u32, decompress: bool, cpu_ns: &mut f64) -> Stored {
        if self.milli[s as usize] == 0 {
            return Stored::Device;
        }
        self.take(s);
        if decompress && self.kind == StoreKind::Zswap {
            let dev = self.compressor.as_ref().expect("zswap has a compressor");
            *cpu_ns += dev.read.time_ns(1, false);
            self.stats.pool_loads += 1;
        }
        Stored::Ram
    }
}

/// What zswap did with a run's swap requests ([`zswap_replay`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ZswapReplay {
    pub stats: ZswapStats,
    /// Pages written to the swap device: stores sent there plus write-backs.
    pub device_writes: u64,
    /// Swap-ins read from the device (not loaded from the pool).
    pub device_reads: u64,
}

/// A run's swap requests (its after-cache trace, in order) through zswap:
/// each page written to swap is a store of its slot whose page compresses to
/// `len` bytes, each page read from swap a load of its slot (exclusive: the
/// entry goes). `total_pages` is MemTotal (the global pool limit). Cost:
/// O(requests + slots).
pub fn zswap_replay(
    log: &[crate::sim::accounting::DeviceRequest],
    len: u16,
    total_pages: u64,
    zswap: &ZswapConfig,
    compressor: Device,
) -> Result<ZswapReplay> {
    use crate::sim::accounting::Store;
    use crate::trace::Op;
    let swap = || log.iter().filter(|r| r.store == Store::Swap);
    let slots = swap().map(|r| r.first + r.pages as u64).max().unwrap_or(0);
    if slots > u32::MAX as u64 {
        return Err(Error::config(format!(
            "zswap replay: swap slot {slots} is beyond the model's {} slots",
            u32::MAX
        )));
    }
    let mut z = CompressedStore::new(
        StoreKind::Zswap,
        slots as usize,
        total_pages,
        &CompressConfig::default(),
        zswap,
        Some(compressor),
    );
    let (mut cpu, mut to_device) = (0.0, Vec::new());
    let mut out = ZswapReplay::default();
    for r in swap() {
        for s in r.first..r.first + r.pages as u64 {
            match r.op {
                Op::Write => z.store_compressed(s as u32, len, &mut cpu, &mut to_device),
                Op::Read => {
                    if z.release(s as u32, true, &mut cpu) == Stored::Device {
                        out.device_reads += 1;
                    }
                }
            }
        }
    }
    out.device_writes = to_device.len() as u64;
    out.stats = z.stats;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zswap_store(total: u64, pct: u32, accept: u32) -> CompressedStore {
        let z = ZswapConfig {
            enabled: true,
            max_pool_percent: pct,
            accept_threshold_percent: accept,
            ..Default::default()
        };
        let dev = crate::device::DeviceCatalog::default()
            .get("zram")
            .unwrap()
            .clone();
        CompressedStore::new(
            StoreKind::Zswap,
            100,
            total,
            &CompressConfig::default(),
            &z,
            Some(dev),
        )
    }

    #[test]
    fn ratio_rounds_up_per_page() {
        assert_eq!(milli_of_ratio(4.0), 250);
        assert_eq!(milli_of_ratio(3.0), 334);
        assert_eq!(milli_of_ratio(1.0), 1000);
        assert_eq!(milli_of_ratio(0.5), 1000);
        assert_eq!(milli_of_ratio(f64::NAN), 1000);
    }

    #[test]
    fn zswap_rejects_at_the_limit_and_writes_back_oldest_first() {
        // 1000 pages of RAM, 1% pool = 10 pages, accept at 50% = 5 pages.
        // Ratio 2: each entry is half a page; the pool occupies whole pages
        // (rounded up), so 19 entries (9.5 pages) already take 10.
        let mut z = zswap_store(1000, 1, 50);
        let mut cpu = 0.0;
        let mut dev = Vec::new();
        for s in 0..19 {
            z.store(s, 2.0, &mut cpu, &mut dev);
        }
        assert!(dev.is_empty());
        assert_eq!(z.pool_pages(), 10);
        // Slot 3 is loaded back: its entry goes, the order of the rest stays.
        assert_eq!(z.release(3, true, &mut cpu), Stored::Ram);
        assert_eq!(z.pool_milli(), 9000);
        // 9 pages < 10: accepted, the pool is at 10 pages again.
        z.store(19, 2.0, &mut cpu, &mut dev);
        assert!(dev.is_empty());
        // Full: the next store is rejected and the oldest entries (0, 1, 2,
        // then 4.. skipping the loaded 3) are written back until 5 pages.
        z.store(20, 2.0, &mut cpu, &mut dev);
        assert_eq!(dev, vec![0, 1, 2, 4, 5, 6, 7, 8, 9, 20]);
        assert_eq!(z.pool_pages(), 5);
        assert_eq!(z.stats.rejected, 1);
        assert_eq!(z.stats.written_back, 9);
        assert_eq!(z.location(0), Stored::Device);
        assert_eq!(z.location(10), Stored::Ram);
        // At the accept threshold again: the next store is accepted.
        dev.clear();
        z.store(21, 2.0, &mut cpu, &mut dev);
        assert!(dev.is_empty());
        assert_eq!(z.location(21), Stored::Ram);
    }

    #[test]
    fn zswap_writes_back_a_slot_stored_again_at_its_new_place_in_the_lru() {
        // As above: 10 pages, accept at 5, entries of half a page. Slot 0 is
        // loaded and stored again after 1..=18, so it is the newest entry:
        // the shrink worker writes back 1..=9 (half the pool), not 0 first.
        let mut z = zswap_store(1000, 1, 50);
        let (mut cpu, mut dev) = (0.0, Vec::new());
        for s in 0..19 {
            z.store(s, 2.0, &mut cpu, &mut dev);
        }
        assert_eq!(z.release(0, true, &mut cpu), Stored::Ram);
        z.store(0, 2.0, &mut cpu, &mut dev);
        assert!(dev.is_empty());
        z.store(19, 2.0, &mut cpu, &mut dev);
        assert_eq!(dev, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 19]);
        assert_eq!(z.location(0), Stored::Ram);
        assert_eq!(z.stats.written_back, 9);
    }

    /// A zswap store with a large global pool and the group's limit.
    fn memcg_store(max_bytes: u64, writeback: bool) -> CompressedStore {
        let mut z = zswap_store(1 << 20, 20, 90);
        z.memcg_max_pages = Some(max_bytes / PAGE_BYTES);
        z.memcg_writeback = writeback;
        z
    }

    #[test]
    fn memcg_limit_gives_second_chance_then_writes_back_one_entry_per_store() {
        // memory.zswap.max = 8192 B (2 pages); every page compresses to 1000 B.
        // Stores go on while floor(charged / 4096) < 2: 9 entries (9000 B).
        let mut z = memcg_store(8192, true);
        let (mut cpu, mut dev) = (0.0, Vec::new());
        for s in 0..9 {
            z.store_compressed(s, 1000, &mut cpu, &mut dev);
        }
        assert!(dev.is_empty());
        assert_eq!(z.memcg_bytes(), 9000);
        // Over the limit: each store walks one entry. All 9 are referenced,
        // so the next 9 stores clear their bits (0..8, rotated to the tail)
        // and go to the device themselves.
        for s in 9..18 {
            z.store_compressed(s, 1000, &mut cpu, &mut dev);
        }
        assert_eq!(dev, (9..18).collect::<Vec<_>>());
        assert_eq!(z.stats.memcg_limit_rejected, 9);
        assert_eq!(z.stats.written_back, 0);
        // Slot 0 is at the head without its bit: written back, 18 stored
        // (the group is at 9000 B again, still over: one write-back a store).
        dev.clear();
        z.store_compressed(18, 1000, &mut cpu, &mut dev);
        assert_eq!(dev, vec![0]);
        assert_eq!(
            (z.location(0), z.location(18)),
            (Stored::Device, Stored::Ram)
        );
        // A load frees slot 2's entry: 8000 B is 1 page < 2, stored outright.
        assert_eq!(z.release(2, true, &mut cpu), Stored::Ram);
        z.store_compressed(19, 1000, &mut cpu, &mut dev);
        assert_eq!(dev, vec![0]);
        // Over again: slot 1 is written back; then the loaded slot 2 is
        // skipped and slot 3 goes.
        z.store_compressed(20, 1000, &mut cpu, &mut dev);
        z.store_compressed(21, 1000, &mut cpu, &mut dev);
        assert_eq!(dev, vec![0, 1, 3]);
        assert_eq!(z.stats.stored, 9 + 4);
        assert_eq!(z.stats.written_back, 3);
        assert_eq!(z.stats.memcg_limit_rejected, 9);
        assert_eq!(z.stats.rejected, 0);
        assert_eq!(z.stats.pool_loads, 1);
        assert_eq!(z.memcg_bytes(), 9000);
        // The pool keeps each entry in thousandths of a page, rounded up.
        assert_eq!(z.pool_milli(), 9 * 245);
    }

    #[test]
    fn memcg_limit_without_writeback_or_at_zero_sends_pages_to_the_device() {
        // memory.zswap.max = 4096 B (1 page), memory.zswap.writeback = 0,
        // pages of 2048 B: two stores fill the page, the third goes to the
        // device, nothing is written back; after a load one fits again.
        let mut z = memcg_store(4096, false);
        let (mut cpu, mut dev) = (0.0, Vec::new());
        for s in 0..3 {
            z.store_compressed(s, 2048, &mut cpu, &mut dev);
        }
        assert_eq!(dev, vec![2]);
        assert_eq!((z.stats.stored, z.stats.written_back), (2, 0));
        assert_eq!(z.stats.memcg_limit_rejected, 1);
        z.release(0, true, &mut cpu);
        z.store_compressed(3, 2048, &mut cpu, &mut dev);
        assert_eq!(dev, vec![2]);
        assert_eq!(z.location(3), Stored::Ram);
        // A limit below a page (0 pages): nothing is stored.
        let mut z = memcg_store(4095, true);
        for s in 0..3 {
            z.store_compressed(s, 100, &mut cpu, &mut dev);
        }
        assert_eq!((z.stats.stored, z.stats.memcg_limit_rejected), (0, 3));
    }

    #[test]
    fn replay_of_swap_requests_stores_loads_and_sends_the_rest_to_the_device() {
        use crate::sim::accounting::{DeviceRequest, Store};
        use crate::trace::Op;
        let req = |store, op, first, pages| DeviceRequest {
            store,
            op,
            first,
            pages,
        };
        // memory.zswap.max 4096 B, 2048 B a page: slots 0 and 1 stored, 2
        // sends 0 round its second chance and goes to the device; a file
        // write is not swap; slot 1 is loaded, slot 2 read from the device;
        // 3 is stored into the room 1 left; 4 writes back 0 (its bit is clear).
        let log = [
            req(Store::Swap, Op::Write, 0, 3),
            req(Store::File, Op::Write, 0, 8),
            req(Store::Swap, Op::Read, 1, 1),
            req(Store::Swap, Op::Read, 2, 1),
            req(Store::Swap, Op::Write, 3, 2),
        ];
        let cfg = ZswapConfig {
            enabled: true,
            memcg_zswap_max_bytes: Some(4096),
            ..Default::default()
        };
        let dev = crate::device::DeviceCatalog::default()
            .get("zram")
            .unwrap()
            .clone();
        let r = zswap_replay(&log, 2048, 1 << 20, &cfg, dev).unwrap();
        assert_eq!(r.stats.stored, 4);
        assert_eq!(r.stats.memcg_limit_rejected, 1);
        assert_eq!(r.stats.written_back, 1);
        assert_eq!(r.stats.pool_loads, 1);
        assert_eq!((r.device_writes, r.device_reads), (2, 1));
    }

    #[test]
    fn lognormal_sizes_have_the_mean_ratio_and_stay_in_a_page() {
        let c = CompressConfig {
            model: RatioModel::Lognormal,
            sigma: 0.5,
            seed: 7,
        };
        let mut z = CompressedStore::new(
            StoreKind::Zram,
            20_000,
            1 << 20,
            &c,
            &ZswapConfig::default(),
            None,
        );
        let mut cpu = 0.0;
        let mut dev = Vec::new();
        for s in 0..20_000 {
            z.store(s, 3.0, &mut cpu, &mut dev);
        }
        let mean = z.pool_milli() as f64 / 20_000.0 / 1000.0;
        // Mean fraction 1/3 (+ rounding up, - clamping at a page).
        assert!((mean - 1.0 / 3.0).abs() < 0.01, "mean fraction {mean}");
        assert!(z.milli.iter().all(|&m| (1..=1000).contains(&m)));
        assert!(z.milli.iter().any(|&m| m > 500) && z.milli.iter().any(|&m| m < 200));
    }
}
