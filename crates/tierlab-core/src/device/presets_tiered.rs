//! Device presets for the tiered-memory papers: the selective-shadow-paging
//! paper's testbed (section 4.1: a two-socket server, a QEMU/KVM guest with two
//! 16 GB nodes, node 1 CPU-less and backed by the other socket's DRAM to
//! emulate CXL memory, as POND does).
//!
//! The access costs are per 4 KiB page touched, because the NOMAD
//! microbenchmark copies whole pages in and out: local DRAM at ~10 GB/s per
//! thread plus ~90 ns load latency (~500 ns), remote-socket DRAM at ~6 GB/s
//! plus ~150 ns (~830 ns). They equal the tiered policies' `fast_ns` /
//! `slow_ns` defaults (policy/tiered/machine.rs), so the engine's tier time and
//! the policies' modeled time agree. Page copies (migrations) at ~2 GB/s
//! including unmap and remap (`migrate_gbps`).

use super::{Device, DeviceClass, IoCost};

fn copy(ns: f64) -> IoCost {
    IoCost {
        random_setup_ns: 0.0,
        seq_setup_ns: 0.0,
        per_page_ns: ns,
        energy_nj_per_page: 0.0,
    }
}

fn mem(name: &str, source: &str, access_ns: f64) -> Device {
    Device {
        name: name.into(),
        class: DeviceClass::Memory,
        source: source.into(),
        // Half of a 2 GB/s page migration on each side.
        read: copy(1024.0),
        write: copy(1024.0),
        access_read_ns: access_ns,
        access_write_ns: access_ns,
        access_read_energy_nj: 0.0,
        access_write_energy_nj: 0.0,
        static_mw_per_gib: 0.0,
        endurance_writes: None,
        erase_block_pages: None,
    }
}

/// The tiered presets.
pub fn all() -> Vec<Device> {
    vec![
        mem(
            "nomad-local-dram",
            "SSP paper 4.1 testbed, node 0 (local DRAM): 4 KiB page touch ~500 ns \
             (~10 GB/s per thread + ~90 ns latency); migration 2 GB/s",
            500.0,
        ),
        mem(
            "nomad-remote-dram",
            "SSP paper 4.1 testbed, node 1 (remote-socket DRAM emulating CXL, POND): 4 KiB \
             page touch ~830 ns (~6 GB/s per thread + ~150 ns latency); migration 2 GB/s",
            830.0,
        ),
    ]
}
