//! The parameters every tiered policy shares ([`TierParams`]; their meaning is in the module
//! docs of `machine.rs`), and `tier_config!`, which gives each policy a typed config holding them
//! beside its own keys.

/// The parameters every tiered policy shares (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TierParams {
    pub fast_share: f64,
    pub fast_pages: usize,
    pub fast_ns: f64,
    pub slow_ns: f64,
    pub migrate_gbps: f64,
    pub remap_ns: f64,
    pub hint_fault_ns: f64,
    pub demote_watermark: f64,
    pub alloc_watermark: f64,
    pub slow_reserve: f64,
    pub shadow_reclaim_batch: usize,
    pub scan_period: u64,
    pub measure_from: u64,
    pub sample_every: u64,
    pub inactive_ratio: usize,
    pub reclaim_oldest: bool,
}

/// Defines a policy config with the shared tier parameters plus its own.
macro_rules! tier_config {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident : $t:ty = $d:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            /// Fast-tier share of `PolicyCtx::capacity` (paper: 16 GB + 16 GB).
            pub fast_share: f64,
            /// Fast-tier pages; overrides `fast_share` when non-zero.
            pub fast_pages: usize,
            /// App time of one access to a fast-tier page (ns): local DRAM,
            /// a 4 KiB page copied at ~10 GB/s plus ~90 ns load latency.
            pub fast_ns: f64,
            /// App time of one access to a slow-tier page (ns): the paper's
            /// CXL emulation is the remote socket's DRAM (POND), ~6 GB/s per
            /// thread plus ~150 ns latency.
            pub slow_ns: f64,
            /// Page migration bandwidth (GB/s), including unmap and remap.
            pub migrate_gbps: f64,
            /// Time of a remap demotion (PTE update and TLB flush, ns).
            pub remap_ns: f64,
            /// App time of a NUMA hint fault (ns).
            pub hint_fault_ns: f64,
            /// kswapd keeps this share of the fast tier free (demote_scale_factor/10000).
            pub demote_watermark: f64,
            /// First touches go to the fast tier while more than this share is free.
            pub alloc_watermark: f64,
            /// Slow-tier share kept free; below it shadows are reclaimed.
            pub slow_reserve: f64,
            /// Shadows reclaimed per shortage (NOMAD reclaims 10 and retries).
            pub shadow_reclaim_batch: usize,
            /// Accesses per full pass of the NUMA hint scanner over the pages.
            pub scan_period: u64,
            /// First access (trace position) counted in the bandwidth figures
            /// (the timed rounds after the warm-up).
            pub measure_from: u64,
            /// Accesses between samples of the shadow counters (0: none).
            pub sample_every: u64,
            /// Fast-tier active:inactive LRU size ratio (Linux
            /// `inactive_list_is_low`: int_sqrt(10 x node GB), 12 for 16 GB;
            /// 0: computed from the fast tier's size).
            pub inactive_ratio: usize,
            /// Reclaim shadows oldest first instead of in shadow-index order.
            pub reclaim_oldest: bool,
            $( $(#[$fm])* pub $f: $t, )*
        }
        impl Default for $name {
            fn default() -> Self {
                let t = $crate::policy::tiered::params::TierParams::default();
                $name {
                    fast_share: t.fast_share,
                    fast_pages: t.fast_pages,
                    fast_ns: t.fast_ns,
                    slow_ns: t.slow_ns,
                    migrate_gbps: t.migrate_gbps,
                    remap_ns: t.remap_ns,
                    hint_fault_ns: t.hint_fault_ns,
                    demote_watermark: t.demote_watermark,
                    alloc_watermark: t.alloc_watermark,
                    slow_reserve: t.slow_reserve,
                    shadow_reclaim_batch: t.shadow_reclaim_batch,
                    scan_period: t.scan_period,
                    measure_from: t.measure_from,
                    sample_every: t.sample_every,
                    inactive_ratio: t.inactive_ratio,
                    reclaim_oldest: t.reclaim_oldest,
                    $($f: $d,)*
                }
            }
        }
        impl $name {
            pub fn tier(&self) -> $crate::policy::tiered::params::TierParams {
                $crate::policy::tiered::params::TierParams {
                    fast_share: self.fast_share,
                    fast_pages: self.fast_pages,
                    fast_ns: self.fast_ns,
                    slow_ns: self.slow_ns,
                    migrate_gbps: self.migrate_gbps,
                    remap_ns: self.remap_ns,
                    hint_fault_ns: self.hint_fault_ns,
                    demote_watermark: self.demote_watermark,
                    alloc_watermark: self.alloc_watermark,
                    slow_reserve: self.slow_reserve,
                    shadow_reclaim_batch: self.shadow_reclaim_batch,
                    scan_period: self.scan_period,
                    measure_from: self.measure_from,
                    sample_every: self.sample_every,
                    inactive_ratio: self.inactive_ratio,
                    reclaim_oldest: self.reclaim_oldest,
                }
            }
        }
    };
}
pub(crate) use tier_config;

impl Default for TierParams {
    fn default() -> Self {
        TierParams {
            fast_share: 0.5,
            fast_pages: 0,
            fast_ns: 500.0,
            slow_ns: 830.0,
            migrate_gbps: 2.0,
            remap_ns: 500.0,
            hint_fault_ns: 1500.0,
            demote_watermark: 0.1,
            alloc_watermark: 0.01,
            slow_reserve: 0.01,
            shadow_reclaim_batch: 10,
            // A chosen default: at the paper's 1/256 scale (13.8 K-page working
            // set, 115 K accesses per timed round) the scanner passes over the
            // pages about three times per round.
            scan_period: 32_768,
            measure_from: 0,
            sample_every: 0,
            inactive_ratio: 0,
            reclaim_oldest: false,
        }
    }
}
