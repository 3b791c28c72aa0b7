//! Device presets specific to the Android swap-vs-LMK paper
//! (papers/android-swap-vs-lmk.md): the cards as the paper states them and
//! the Galaxy S2's own storage and CPU of 2011-2012. Today's general presets
//! (`microsd-class6`, `microsd-class10`, `emmc`, `ufs`, `zram`, `emram`) are in
//! `presets.rs`.
//!
//! Conventions as in `presets.rs`: 4 KiB pages, vendor MB/s are 10^6 B/s, a
//! 4 KiB random request costs `1 / IOPS` of which the transfer is `4096 B /
//! sequential bandwidth` and the rest is the random setup.

use super::{storage, Device, DeviceClass, IoCost};

const PAGE_BYTES: f64 = 4096.0;

/// Transfer time of one page at `mb_per_s` (ns).
fn page_ns(mb_per_s: f64) -> f64 {
    PAGE_BYTES / (mb_per_s * 1e6) * 1e9
}

/// A direction from its 4 KiB random IOPS, sequential MB/s and the fixed time
/// of a sequential request.
fn block_io(iops_4k: f64, seq_mb_per_s: f64, seq_setup_ns: f64) -> IoCost {
    let per_page = page_ns(seq_mb_per_s);
    IoCost {
        random_setup_ns: (1e9 / iops_4k - per_page).max(0.0),
        seq_setup_ns,
        per_page_ns: per_page,
        energy_nj_per_page: 0.0,
    }
}

/// The BS-CLOCK paper's Fig. 2: a 4 KiB sequential write request on a
/// microSD card takes 1/0.65 = 1.54x its streaming time (the same constant as
/// `presets.rs` uses for its cards).
const SD_SEQ_WRITE_OVERHEAD: f64 = 1.0 / 0.65 - 1.0;

/// A microSD card read and written at the speed the paper gives for its class.
fn paper_card(name: &str, source: &str, mb_per_s: f64, read_iops: f64, write_iops: f64) -> Device {
    storage(
        name,
        DeviceClass::Block,
        source,
        block_io(read_iops, mb_per_s, 0.0),
        block_io(
            write_iops,
            mb_per_s,
            SD_SEQ_WRITE_OVERHEAD * page_ns(mb_per_s),
        ),
        Some(10_000.0),
        Some(1024),
    )
}

/// The paper-specific presets.
pub fn all() -> Vec<Device> {
    vec![
        paper_card(
            "microsd-class6-paper",
            "the paper's 8 GB class-6 microSD as it states it (Section 5.4: read and write \
             48 Mbit/s = 6 MB/s; Section 1: ~10,000 erase cycles per block); 4 KiB random \
             read 830 IOPS and random write 20 IOPS as the `microsd-class6` preset (Tom's \
             Hardware microSDHC round-up, 2011); 4 MiB erase unit (SD allocation unit)",
            6.0,
            830.0,
            20.0,
        ),
        paper_card(
            "microsd-class10-paper",
            "a class-10 microSD as the paper anticipates it (Section 5.4: 80 Mbit/s = 10 MB/s \
             read and write); 4 KiB random read 1,500 IOPS and write 100 IOPS as the \
             `microsd-class10` preset; 4 MiB erase unit, 10,000 cycles",
            10.0,
            1500.0,
            100.0,
        ),
        storage(
            "emmc-gs2",
            DeviceClass::Block,
            "the Galaxy S2's internal eMMC 4.41 (2011), approximate AndroBench-era figures \
             for phones of that generation: sequential read 40 MB/s, write 15 MB/s, 4 KiB \
             random read 1,100 IOPS, random write 200 IOPS; MLC, 3,000 cycles, 512 KiB \
             erase blocks. Not a measurement of the paper's phone: calibrate in TOML",
            block_io(1100.0, 40.0, 0.0),
            block_io(200.0, 15.0, 0.0),
            Some(3_000.0),
            Some(128),
        ),
        storage(
            "zram-gs2",
            DeviceClass::Compressed,
            "zram with LZO on the Galaxy S2's 1.2 GHz Cortex-A9: the `zram-lzo` preset's \
             670 MB/s compression and 860 MB/s decompression (one Core i7-9700K core at \
             4.9 GHz) scaled down 10x for the A9 (~4x the clock, ~2.5x the work per \
             clock): 67 MB/s and 86 MB/s; the RAM it keeps is the scenario's \
             swap.zram_ratio",
            IoCost {
                random_setup_ns: 0.0,
                seq_setup_ns: 0.0,
                per_page_ns: page_ns(86.0),
                energy_nj_per_page: 0.0,
            },
            IoCost {
                random_setup_ns: 0.0,
                seq_setup_ns: 0.0,
                per_page_ns: page_ns(67.0),
                energy_nj_per_page: 0.0,
            },
            None,
            None,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_cards_move_pages_at_the_papers_speeds() {
        let d = all();
        let c6 = d.iter().find(|d| d.name == "microsd-class6-paper").unwrap();
        // 6 MB/s: 682.7 us per page both ways.
        assert!((c6.read.per_page_ns - 682_666.7).abs() < 1.0);
        assert!((c6.write.per_page_ns - 682_666.7).abs() < 1.0);
        // A 4 KiB random read costs 1/830 s, a random write 1/20 s.
        assert!((c6.read.time_ns(1, false) - 1e9 / 830.0).abs() < 1.0);
        assert!((c6.write.time_ns(1, false) - 5e7).abs() < 1.0);
        let c10 = d
            .iter()
            .find(|d| d.name == "microsd-class10-paper")
            .unwrap();
        assert!(c10.read.time_ns(8, true) < c6.read.time_ns(8, true));
        for dev in &d {
            dev.validate().unwrap();
        }
    }
}
