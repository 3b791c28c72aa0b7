//! Ground truth from the real kernel (docs/kernel-check.md): workloads whose
//! page references are known by construction ([`workload`]), and a native
//! driver that issues them inside a memory cgroup while the kernel's own
//! counters are read around it ([`driver`]). The orchestration (cgroup,
//! tracefs, swap and zram set-up and tear-down) is in
//! `python/tierlab/kernel.py`; replaying the same references through
//! tierlab's policies is an ordinary run of the written trace.

#[cfg(target_os = "linux")]
pub mod driver;
pub mod workload;
