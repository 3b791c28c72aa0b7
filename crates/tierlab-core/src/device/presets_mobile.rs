//! Device presets specific to the Android swap-vs-LMK paper
//! (papers/android-swap-vs-lmk.md): the Galaxy S2's storage of 2011-2012 and
//! the cards the paper names. General presets (microSD, eMMC, UFS, zram,
//! eMRAM of today) are in `presets.rs`.
//!
//! Time per request `t = setup + n * per_page` (see `IoCost`); 4 KiB pages.
//! The figures are approximations from the paper and from public benchmark
//! reports of the era, stated in each `source`; calibrate them with a device
//! TOML when you have a measurement.

use super::{Device, DeviceClass, IoCost};

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

fn block(
    name: &str,
    source: &str,
    read: IoCost,
    write: IoCost,
    endurance: f64,
    erase_pages: u32,
) -> Device {
    Device {
        name: name.into(),
        class: DeviceClass::Block,
        source: source.into(),
        read,
        write,
        access_read_ns: 0.0,
        access_write_ns: 0.0,
        access_read_energy_nj: 0.0,
        access_write_energy_nj: 0.0,
        static_mw_per_gib: 0.0,
        endurance_writes: Some(endurance),
        erase_block_pages: Some(erase_pages),
    }
}

/// The paper-specific presets.
pub fn all() -> Vec<Device> {
    vec![
        block(
            "microsd_c6_gs2",
            "the paper's 8 GB class-6 microSD (Section 5.1; 48 Mbit/s = 6 MB/s, Section 5.4): \
             6 MB/s sequential write (class 6 minimum), ~10 MB/s sequential read, ~2 ms per \
             random 4 KiB read and ~25 ms per random 4 KiB write as 2012 cards measured \
             (REFERENCE.md: random 4 KiB writes 100-1000x slower than sequential); 4 MiB \
             erase blocks, 10,000 erase cycles (Section 1)",
            io(1_600_000.0, 200_000.0, 400_000.0, 0.0),
            io(25_000_000.0, 1_000_000.0, 680_000.0, 0.0),
            10_000.0,
            1024,
        ),
        block(
            "microsd_c10_2012",
            "a 2012 class-10 microSD as the paper anticipates (Section 5.4: 80 Mbit/s = 10 MB/s): \
             10 MB/s sequential write, ~16 MB/s sequential read, ~1 ms per random 4 KiB read, \
             ~15 ms per random 4 KiB write; 4 MiB erase blocks, 10,000 cycles",
            io(1_000_000.0, 150_000.0, 250_000.0, 0.0),
            io(15_000_000.0, 700_000.0, 410_000.0, 0.0),
            10_000.0,
            1024,
        ),
        block(
            "emmc_gs2",
            "Galaxy S2 (GT-I9100) internal eMMC 4.41 as benchmark reports of 2011-2012 give it: \
             ~40 MB/s sequential read, ~15 MB/s sequential write, ~0.8 ms per random 4 KiB \
             read, ~5 ms per random 4 KiB write; 512 KiB erase blocks, 3,000 cycles (MLC)",
            io(800_000.0, 50_000.0, 100_000.0, 0.0),
            io(5_000_000.0, 200_000.0, 270_000.0, 0.0),
            3_000.0,
            128,
        ),
        Device {
            name: "zram_gs2".into(),
            class: DeviceClass::Compressed,
            source: "zram with LZO on the Galaxy S2's 1.2 GHz Cortex-A9: ~100 MB/s compression \
                     (~40 us per 4 KiB page) and ~330 MB/s decompression (~12 us per page); \
                     the RAM it keeps is set by the scenario's swap.zram_ratio"
                .into(),
            read: io(2_000.0, 2_000.0, 12_000.0, 0.0),
            write: io(2_000.0, 2_000.0, 40_000.0, 0.0),
            access_read_ns: 0.0,
            access_write_ns: 0.0,
            access_read_energy_nj: 0.0,
            access_write_energy_nj: 0.0,
            static_mw_per_gib: 0.0,
            endurance_writes: None,
            erase_block_pages: None,
        },
    ]
}
