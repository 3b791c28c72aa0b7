//! Device presets of the hybrid DRAM+PCM paper (papers/hybrid-dram-pcm-app-aware.md).
//!
//! Two families over the same Table 1 energies:
//!
//! - `*-ratio`: the paper's Section 4 time ratios, in the paper's unit (the
//!   `*_ns` fields then hold ratio units, not nanoseconds): DRAM read and write
//!   1, PCM read 2, PCM write 50, storage 1000 per page ("DRAM의 읽기 및 쓰기
//!   시간을 1, PCM의 읽기 시간을 2, PCM의 쓰기 시간을 50, 저장장치로 추출되는
//!   시간을 1000의 비율로 가정");
//! - `*-table1`: Table 1's absolute latencies, taking the slow end of each range
//!   as the paper does for its ratios: DRAM read 50 ns, write 50 ns (Table 1:
//!   20-50 ns), PCM read 100 ns (50-100 ns), PCM write 1 us.
//!
//! Energy (Table 1): DRAM read and write ~0.1 nJ/bit, PCM read ~0.1 nJ/bit, PCM
//! write ~1 nJ/bit. The presets charge every page operation (a hit, a fill, each
//! side of a migration) as moving one whole 4 KiB page = 32768 bits, as the
//! paper's page-granular buffer cache does; for other page sizes define devices
//! in TOML. Static power: DRAM "~W/GB" = 1000 mW/GiB, PCM "<<0.1 W" taken as 0.
//! Storage energy is not in Table 1 and is 0 here (the paper counts memory
//! energy only). PCM endurance 10^8 writes (Table 1) feeds the wear estimate.

use super::{Device, DeviceClass, IoCost};

/// Bits in a 4 KiB page.
const PAGE_BITS: f64 = 4096.0 * 8.0;
/// Table 1: DRAM read/write and PCM read energy, nJ per bit.
const NJ_PER_BIT_LOW: f64 = 0.1;
/// Table 1: PCM write energy, nJ per bit.
const NJ_PER_BIT_PCM_WRITE: f64 = 1.0;
/// Table 1: PCM endurance.
const PCM_ENDURANCE: f64 = 1e8;

fn flat(t: f64, energy_nj: f64) -> IoCost {
    IoCost {
        random_setup_ns: 0.0,
        seq_setup_ns: 0.0,
        per_page_ns: t,
        energy_nj_per_page: energy_nj,
    }
}

fn memory(name: &str, source: &str, read: f64, write: f64, read_nj: f64, write_nj: f64) -> Device {
    Device {
        name: name.into(),
        class: DeviceClass::Memory,
        source: source.into(),
        read: flat(read, read_nj),
        write: flat(write, write_nj),
        access_read_ns: read,
        access_write_ns: write,
        access_read_energy_nj: read_nj,
        access_write_energy_nj: write_nj,
        static_mw_per_gib: 0.0,
        endurance_writes: None,
        erase_block_pages: None,
    }
}

/// The hybrid paper's devices.
pub fn all() -> Vec<Device> {
    let dram_nj = NJ_PER_BIT_LOW * PAGE_BITS;
    let pcm_read_nj = NJ_PER_BIT_LOW * PAGE_BITS;
    let pcm_write_nj = NJ_PER_BIT_PCM_WRITE * PAGE_BITS;
    let src = "hybrid-dram-pcm-app-aware paper (KIISE 2015)";
    let dram = |name: &str, t: f64, what: &str| Device {
        static_mw_per_gib: 1000.0,
        ..memory(
            name,
            &format!("{src}: {what}; Table 1 energy 0.1 nJ/bit per 4 KiB page, static ~1 W/GB"),
            t,
            t,
            dram_nj,
            dram_nj,
        )
    };
    let pcm = |name: &str, r: f64, w: f64, what: &str| Device {
        endurance_writes: Some(PCM_ENDURANCE),
        ..memory(
            name,
            &format!(
                "{src}: {what}; Table 1 energy read 0.1, write 1 nJ/bit per 4 KiB page, \
                 endurance 10^8"
            ),
            r,
            w,
            pcm_read_nj,
            pcm_write_nj,
        )
    };
    vec![
        dram(
            "dram-ratio",
            1.0,
            "Section 4 time ratio, DRAM read/write = 1 (ratio units)",
        ),
        pcm(
            "pcm-ratio",
            2.0,
            50.0,
            "Section 4 time ratios, PCM read = 2, write = 50 (ratio units)",
        ),
        Device {
            name: "storage-ratio".into(),
            class: DeviceClass::Block,
            source: format!(
                "{src}: Section 4 time ratio, a page to or from storage = 1000 (ratio units); \
                 energy not given by the paper (0)"
            ),
            read: flat(1000.0, 0.0),
            write: flat(1000.0, 0.0),
            access_read_ns: 0.0,
            access_write_ns: 0.0,
            access_read_energy_nj: 0.0,
            access_write_energy_nj: 0.0,
            static_mw_per_gib: 0.0,
            endurance_writes: None,
            erase_block_pages: None,
        },
        dram(
            "dram-table1",
            50.0,
            "Table 1 latency, read 50 ns, write 20-50 ns (50 taken)",
        ),
        pcm(
            "pcm-table1",
            100.0,
            1000.0,
            "Table 1 latency, read 50-100 ns (100 taken), write ~1 us",
        ),
    ]
}
