//! Built-in device presets. Each cites where its numbers come from; the
//! derivations (bandwidth and IOPS to per-page and per-request times) are the
//! helper functions below, so every number can be traced to its source.
//! docs/devices.md tabulates them.
//!
//! Conventions:
//! - Pages are 4 KiB; vendor MB/s are 10^6 bytes per second.
//! - A block device's 4 KiB random I/O time is `1 / IOPS`; the transfer part
//!   of it is `4096 B / sequential bandwidth`, and the rest is the random
//!   setup. Vendor IOPS are measured at whatever queue depth the vendor chose
//!   (high for eMMC and UFS, QD1 for the NVMe preset); the model charges
//!   requests one after another, so these are the device's cost per request
//!   in a busy stream, not an idle device's latency.
//! - Memory devices move a page at the device's page-copy bandwidth and serve
//!   a CPU access to a resident page in `access_*_ns`; access energies are per
//!   64-byte line.
//! - A field left at 0 (energy, static power) is not modeled for lack of a
//!   published figure; define the device in TOML to add one.

use super::{storage, Device, DeviceClass, IoCost};

/// Bytes per page.
const PAGE_BYTES: f64 = 4096.0;
/// Bits per page and per 64-byte cache line, for per-bit energies.
const PAGE_BITS: f64 = PAGE_BYTES * 8.0;
const LINE_BITS: f64 = 512.0;
/// 64-byte lines per page.
const LINES_PER_PAGE: f64 = PAGE_BYTES / 64.0;

fn io(
    random_setup_ns: f64,
    seq_setup_ns: f64,
    per_page_ns: f64,
    energy_nj_per_page: f64,
) -> IoCost {
    IoCost {
        random_setup_ns,
        seq_setup_ns,
        per_page_ns,
        energy_nj_per_page,
    }
}

/// Nanoseconds to move one page at `mb_per_s` (10^6 B/s).
fn page_ns(mb_per_s: f64) -> f64 {
    PAGE_BYTES / (mb_per_s * 1e6) * 1e9
}

/// A block device direction from its 4 KiB random IOPS and sequential MB/s:
/// random setup = 1/IOPS - transfer, sequential setup as given.
fn block_io(iops_4k: f64, seq_mb_per_s: f64, seq_setup_ns: f64) -> IoCost {
    let per_page = page_ns(seq_mb_per_s);
    let random = 1e9 / iops_4k;
    io((random - per_page).max(0.0), seq_setup_ns, per_page, 0.0)
}

/// DRAM with `ns` read and write latency: 0.1 nJ/bit read and write (hybrid
/// paper Table 1), a page copy in `DRAM_PAGE_NS`, 125 mW/GiB static power.
fn dram(name: &str, source: &str, ns: f64) -> Device {
    let e_page = 0.1 * PAGE_BITS;
    let e_line = 0.1 * LINE_BITS;
    memory(
        name,
        source,
        io(ns, ns, DRAM_PAGE_NS, e_page),
        io(ns, ns, DRAM_PAGE_NS, e_page),
        (ns, ns),
        (e_line, e_line),
        1000.0 / 8.0,
        None,
    )
}

/// A block device with no endurance limit or erase unit, from the 4 KiB random
/// IOPS and sequential MB/s of its reads and its writes (`block_io`).
fn block_storage(name: &str, source: &str, read: (f64, f64), write: (f64, f64)) -> Device {
    storage(
        name,
        DeviceClass::Block,
        source,
        block_io(read.0, read.1, 0.0),
        block_io(write.0, write.1, 0.0),
        None,
        None,
    )
}

/// A compressed swap store (zram): a page read is a decompression at
/// `decompress_mb_per_s`, a write a compression at `compress_mb_per_s`; no
/// device I/O or per-request overhead.
fn compressor(
    name: &str,
    source: &str,
    decompress_mb_per_s: f64,
    compress_mb_per_s: f64,
) -> Device {
    storage(
        name,
        DeviceClass::Compressed,
        source,
        io(0.0, 0.0, page_ns(decompress_mb_per_s), 0.0),
        io(0.0, 0.0, page_ns(compress_mb_per_s), 0.0),
        None,
        None,
    )
}

/// Extra fixed time of a 4 KiB sequential write request on a class-10
/// microSD card, as a fraction of its transfer time: the BS-CLOCK paper's
/// Fig. 2 (papers/bs-clock-flash-buffer.md) measured 35% less time writing
/// 64 MB as 1 MB requests than as 4 KB requests on a Samsung class-10 card,
/// i.e. 4 KB requests take 1/0.65 = 1.54x the streaming time.
const SD_SEQ_WRITE_OVERHEAD: f64 = 1.0 / 0.65 - 1.0;

/// DRAM page copy time: a 4 KiB copy at one DDR4-2666 channel's 21.3 GB/s
/// peak (JEDEC JESD79-4), rounded to 200 ns.
const DRAM_PAGE_NS: f64 = 200.0;

#[allow(clippy::too_many_arguments)]
fn memory(
    name: &str,
    source: &str,
    read: IoCost,
    write: IoCost,
    access: (f64, f64),
    access_energy: (f64, f64),
    static_mw_per_gib: f64,
    endurance_writes: Option<f64>,
) -> Device {
    Device {
        name: name.into(),
        class: DeviceClass::Memory,
        source: source.into(),
        read,
        write,
        access_read_ns: access.0,
        access_write_ns: access.1,
        access_read_energy_nj: access_energy.0,
        access_write_energy_nj: access_energy.1,
        static_mw_per_gib,
        endurance_writes,
        erase_block_pages: None,
    }
}

/// Every preset.
pub fn all() -> Vec<Device> {
    // PCM energies: 0.1 nJ/bit read and 1 nJ/bit write, hybrid paper Table 1.
    // STT-MRAM cell write energy, Samsung 14 nm eMRAM (REFERENCE.md).
    let mram_write_pj_bit = 25.0;
    vec![
        dram(
            "dram",
            "hybrid-dram-pcm paper (papers/hybrid-dram-pcm-app-aware.md) Table 1: DRAM read \
             50 ns, write 20-50 ns (50 used), 0.1 nJ/bit read and write; page copy 200 ns \
             (4 KiB at a DDR4-2666 channel's 21.3 GB/s, JESD79-4); static power 125 mW/GiB \
             is an estimate (about 1 W of background and refresh power per 8 GiB DDR4 \
             module), not from a paper",
            50.0,
        ),
        dram(
            "cxl-dram",
            "CXL-attached DRAM: 2x the dram preset's latency (REFERENCE.md: +70-90 ns over \
             local DRAM, about 2x; Sun et al., 'Demystifying CXL Memory with Genuine \
             CXL-Ready Systems and Devices', MICRO 2023; expanders measured at 2-5x in \
             'Exploring and Evaluating Real-world CXL', arXiv 2405.14209); page bandwidth \
             and energy as local DRAM (a CXL x16 link carries about 64 GB/s, more than one \
             DDR4 channel)",
            100.0,
        ),
        memory(
            "pcm",
            "hybrid-dram-pcm paper Table 1: PCM read 50-100 ns (100 used), write ~1 us, \
             0.1 nJ/bit read, 1 nJ/bit write, endurance 10^8 writes (section 2); page \
             transfers use the paper's time ratios (section 4: DRAM 1, PCM read 2, PCM \
             write 50) on the dram preset's 200 ns page copy: 400 ns read, 10 us write; \
             non-volatile, no refresh power",
            io(100.0, 100.0, 2.0 * DRAM_PAGE_NS, 0.1 * PAGE_BITS),
            io(1000.0, 1000.0, 50.0 * DRAM_PAGE_NS, 1.0 * PAGE_BITS),
            (100.0, 1000.0),
            (0.1 * LINE_BITS, 1.0 * LINE_BITS),
            0.0,
            Some(1e8),
        ),
        memory(
            "emram",
            "embedded STT-MRAM (eMRAM) as in the eMRAM swap paper \
             (papers/emram-swap-four-area-clock.md): Samsung 28 nm FD-SOI eMRAM read and \
             write 30-50 ns (Samsung Foundry Forum 2021, as reported by mram-info.com; \
             30 ns read, 50 ns write used), 25 pJ/bit write and endurance ~10^14 for \
             Samsung 14 nm eMRAM (REFERENCE.md); a page moves as 64 line accesses without \
             overlap (1.92 us read, 3.2 us write; our choice, an embedded macro has few \
             banks); read energy not published (0)",
            io(30.0, 30.0, LINES_PER_PAGE * 30.0, 0.0),
            io(
                50.0,
                50.0,
                LINES_PER_PAGE * 50.0,
                mram_write_pj_bit * PAGE_BITS / 1000.0,
            ),
            (30.0, 50.0),
            (0.0, mram_write_pj_bit * LINE_BITS / 1000.0),
            0.0,
            Some(1e14),
        ),
        memory(
            "stt-mram",
            "stand-alone STT-MRAM main memory behind a DDR4 interface (e.g. Everspin's \
             1 Gb ST-DDR4 part): reads as the dram preset (50 ns, 200 ns per page); writes \
             add the STT-RAM cell write time, 2-20 ns (20 used; Meena et al., 'Overview of \
             emerging nonvolatile memory technologies', Nanoscale Res. Lett. 2014, Table 2), \
             so 70 ns per access and 280 ns per page; endurance >10^16 (same table); write \
             energy 25 pJ/bit as the emram preset (same MTJ cell); read energy not \
             published (0); non-volatile, no refresh power",
            io(50.0, 50.0, DRAM_PAGE_NS, 0.0),
            io(
                70.0,
                70.0,
                DRAM_PAGE_NS * 70.0 / 50.0,
                mram_write_pj_bit * PAGE_BITS / 1000.0,
            ),
            (50.0, 70.0),
            (0.0, mram_write_pj_bit * LINE_BITS / 1000.0),
            0.0,
            Some(1e16),
        ),
        storage(
            "microsd-class6",
            DeviceClass::Block,
            "microSD speed class 6 (no A1 rating): sequential write 6 MB/s, the SD \
             Association's class 6 minimum; sequential read 18 MB/s (two class-4 microSDHC \
             cards measured at 18.9 MB/s average read, 'Benchmarking microSD', \
             silicone.homelinux.org 2011); 4 KiB random read 3.4 MB/s (830 IOPS), the best \
             class-6 cards in Tom's Hardware's 'Round-Up: 15 microSDHC Cards' (2011); 4 KiB \
             random write 20 IOPS (80 KB/s): the same round-up measured most cards at a few \
             tens of KB/s ('zero-point-zero-something MB/s'); a 4 KiB sequential write \
             request costs 1.54x its transfer time (BS-CLOCK paper Fig. 2, class-10 card, \
             assumed for class 6); erase unit = the SD allocation unit, 4 MiB",
            block_io(3.4e6 / PAGE_BYTES, 18.0, 0.0),
            block_io(20.0, 6.0, SD_SEQ_WRITE_OVERHEAD * page_ns(6.0)),
            None,
            Some(1024),
        ),
        storage(
            "microsd-class10",
            DeviceClass::Block,
            "microSD speed class 10 (no A1 rating): sequential write 10 MB/s, the SD \
             Association's class 10 minimum; sequential read 30 MB/s (the rated read of \
             class-10 microSDHC cards such as SanDisk Ultra and ADATA Premier); 4 KiB random \
             read 1,500 IOPS (Samsung's figure for a typical microSD card in its eMMC 5.1 \
             announcement, Feb. 2015); 4 KiB random write 100 IOPS (0.4 MB/s: between the \
             few KB/s of most cards and the ~1 MB/s of the best in Tom's Hardware's \
             microSDHC round-up, 2011, and below the A1 minimum of 500 IOPS that class-10 \
             cards do not promise); a 4 KiB sequential write request costs 1.54x its \
             transfer time (BS-CLOCK paper Fig. 2: 35% less time for 1 MB than for 4 KB \
             requests, Samsung class-10 card); erase unit = the SD allocation unit, 4 MiB",
            block_io(1500.0, 30.0, 0.0),
            block_io(100.0, 10.0, SD_SEQ_WRITE_OVERHEAD * page_ns(10.0)),
            None,
            Some(1024),
        ),
        block_storage(
            "emmc",
            "eMMC 5.1: Samsung 64 GB eMMC 5.1 (announcement, Feb. 2015): sequential read \
             250 MB/s, write 125 MB/s, 4 KiB random read 11,000 IOPS, write 13,000 IOPS",
            (11_000.0, 250.0),
            (13_000.0, 125.0),
        ),
        block_storage(
            "ufs",
            "UFS 3.1: Samsung 512 GB eUFS 3.1 (mass-production announcement, Mar. 2020): \
             sequential read 2,100 MB/s, write 1,200 MB/s, 4 KiB random read 100,000 IOPS, \
             write 70,000 IOPS",
            (100_000.0, 2100.0),
            (70_000.0, 1200.0),
        ),
        storage(
            "nvme",
            DeviceClass::Block,
            "NVMe SSD: Samsung 980 1 TB (PCIe 3.0 x4) datasheet: sequential read 3,500 MB/s, \
             write 3,000 MB/s, 4 KiB random read 17,000 IOPS and write 54,000 IOPS at QD1 \
             (59 us and 19 us per request); endurance 600 drive writes (600 TBW warranty \
             on 1 TB)",
            block_io(17_000.0, 3500.0, 0.0),
            block_io(54_000.0, 3000.0, 0.0),
            Some(600.0),
            None,
        ),
        compressor(
            "zram",
            "zram with lz4: a page write is an lz4 compression at 780 MB/s and a read an \
             lz4 decompression at 4,970 MB/s (lz4 README benchmark, lzbench, Silesia \
             corpus, one core of a Core i7-9700K at 4.9 GHz, ratio 2.1); no device I/O, \
             per-request overhead not modeled; mobile cores are slower, scale in TOML",
            4970.0,
            780.0,
        ),
        compressor(
            "zram-lzo",
            "zram with lzo: compression at 670 MB/s, decompression at 860 MB/s (lz4 README \
             benchmark, LZO 2.09, lzbench, Silesia corpus, Core i7-9700K)",
            860.0,
            670.0,
        ),
    ]
    .into_iter()
    .chain(super::presets_mobile::all())
    .chain(super::presets_swap::all())
    .chain(super::presets_tiered::all())
    .chain(super::presets_hybrid::all())
    .chain(super::presets_flash::all())
    .collect()
}
