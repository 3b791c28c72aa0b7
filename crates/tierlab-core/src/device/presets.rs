//! Built-in device presets. Each cites where its numbers come from.

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

/// Every preset.
pub fn all() -> Vec<Device> {
    vec![
        Device {
            name: "dram".into(),
            class: DeviceClass::Memory,
            source: "DDR4 DRAM: ~50 ns load latency (hybrid-dram-pcm paper Table 1: read 50 ns, \
                     write 20-50 ns; 0.1 nJ/bit); a 4 KiB page copy at ~20 GB/s"
                .into(),
            read: io(50.0, 50.0, 200.0, 0.1 * 4096.0 * 8.0 / 64.0),
            write: io(50.0, 50.0, 200.0, 0.1 * 4096.0 * 8.0 / 64.0),
            access_read_ns: 50.0,
            access_write_ns: 50.0,
            access_read_energy_nj: 0.1 * 512.0,
            access_write_energy_nj: 0.1 * 512.0,
            static_mw_per_gib: 1000.0 / 8.0,
            endurance_writes: None,
            erase_block_pages: None,
        },
        Device {
            name: "nvme".into(),
            class: DeviceClass::Block,
            source: "datacenter NVMe SSD: ~80 us 4 KiB random read, ~20 us write to SLC cache, \
                     ~3 GB/s sequential"
                .into(),
            read: io(80_000.0, 10_000.0, 1_300.0, 20_000.0),
            write: io(20_000.0, 10_000.0, 1_300.0, 40_000.0),
            access_read_ns: 0.0,
            access_write_ns: 0.0,
            access_read_energy_nj: 0.0,
            access_write_energy_nj: 0.0,
            static_mw_per_gib: 0.0,
            endurance_writes: Some(3000.0),
            erase_block_pages: Some(256),
        },
    ]
    .into_iter()
    .chain(super::presets_flash::all())
    .collect()
}
