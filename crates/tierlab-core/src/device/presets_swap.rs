//! Devices of the eMRAM swap paper (papers/emram-swap-four-area-clock.md):
//! a smartphone whose file system stays on flash (UFS) and whose swap area is
//! eMRAM. The paper gives no device figures, only that eMRAM writes much faster
//! than flash; the numbers below come from the sources cited in each preset.

use super::{Device, DeviceClass, IoCost};

/// eMRAM swap: one 4 KiB page = 128 accesses of 32 bytes at Samsung's
/// reported 30 ns read / 50 ns write per access (mram-info.com, "Samsung
/// progressing towards 14 nm eMRAM", 2021: "30-50 ns read and write speeds"),
/// plus 1 us of swap-path software per request (fault handling, swap-slot
/// lookup). Write energy ~25 pJ/bit (REFERENCE.md, Samsung 14 nm); endurance
/// 10^14 writes.
pub const EMRAM_SWAP: &str = "emram-swap";
/// The paper's flash file store: UFS 3.1 (the Pixel 8 of the paper's
/// introduction), QD1 4 KiB random read ~60 us and write ~50 us (AndroBench
/// single-thread random I/O of UFS 3.1 phones, 60-80 MB/s), ~2 GB/s sequential.
pub const FLASH_UFS31: &str = "flash-ufs31";

const EMRAM_READ_PAGE_NS: f64 = 128.0 * 30.0;
const EMRAM_WRITE_PAGE_NS: f64 = 128.0 * 50.0;
const EMRAM_SETUP_NS: f64 = 1_000.0;
const UFS_READ_SETUP_NS: f64 = 60_000.0;
const UFS_WRITE_SETUP_NS: f64 = 50_000.0;
const UFS_SEQ_SETUP_NS: f64 = 10_000.0;
const UFS_READ_PAGE_NS: f64 = 2_000.0;
const UFS_WRITE_PAGE_NS: f64 = 4_000.0;

/// (file read, swap read, swap write) time of one random page on the paper's
/// devices, in ns: the default cost weights of the four-area policy.
pub fn paper_costs_ns() -> (f64, f64, f64) {
    (
        UFS_READ_SETUP_NS + UFS_READ_PAGE_NS,
        EMRAM_SETUP_NS + EMRAM_READ_PAGE_NS,
        EMRAM_SETUP_NS + EMRAM_WRITE_PAGE_NS,
    )
}

pub fn all() -> Vec<Device> {
    vec![
        Device {
            name: EMRAM_SWAP.into(),
            class: DeviceClass::Memory,
            source: "Samsung eMRAM: 30-50 ns read/write per access (mram-info.com 2021); a 4 KiB \
                     page as 128 x 32 B accesses (3.84 us read, 6.4 us write) + 1 us swap-path \
                     software; ~25 pJ/bit write; endurance 1e14"
                .into(),
            read: IoCost {
                random_setup_ns: EMRAM_SETUP_NS,
                seq_setup_ns: EMRAM_SETUP_NS,
                per_page_ns: EMRAM_READ_PAGE_NS,
                energy_nj_per_page: 4096.0 * 8.0 * 0.005,
            },
            write: IoCost {
                random_setup_ns: EMRAM_SETUP_NS,
                seq_setup_ns: EMRAM_SETUP_NS,
                per_page_ns: EMRAM_WRITE_PAGE_NS,
                energy_nj_per_page: 4096.0 * 8.0 * 0.025,
            },
            access_read_ns: 30.0,
            access_write_ns: 50.0,
            access_read_energy_nj: 0.0,
            access_write_energy_nj: 0.0,
            static_mw_per_gib: 0.0,
            endurance_writes: Some(1e14),
            erase_block_pages: None,
        },
        Device {
            name: FLASH_UFS31.into(),
            class: DeviceClass::Block,
            source: "UFS 3.1 smartphone flash (Pixel 8 class): ~60 us QD1 4 KiB random read, \
                     ~50 us random write (write booster), ~2 GB/s sequential read, 1 GB/s write"
                .into(),
            read: IoCost {
                random_setup_ns: UFS_READ_SETUP_NS,
                seq_setup_ns: UFS_SEQ_SETUP_NS,
                per_page_ns: UFS_READ_PAGE_NS,
                energy_nj_per_page: 10_000.0,
            },
            write: IoCost {
                random_setup_ns: UFS_WRITE_SETUP_NS,
                seq_setup_ns: UFS_SEQ_SETUP_NS,
                per_page_ns: UFS_WRITE_PAGE_NS,
                energy_nj_per_page: 20_000.0,
            },
            access_read_ns: 0.0,
            access_write_ns: 0.0,
            access_read_energy_nj: 0.0,
            access_write_energy_nj: 0.0,
            static_mw_per_gib: 0.0,
            endurance_writes: Some(3000.0),
            erase_block_pages: Some(1024),
        },
    ]
}
