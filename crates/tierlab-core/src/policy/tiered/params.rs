//! The parameters every tiered policy shares ([`TierParams`]; their meaning is in the module
//! docs of `machine.rs`), and `tier_config!`, which gives each policy a typed config holding them
//! beside its own keys. Both are made from one list of the shared parameters (`tier_params!`):
//! the config keys stay flat in TOML, so each config repeats them rather than nesting
//! [`TierParams`] (serde's `flatten` cannot be combined with `deny_unknown_fields`).

/// The list of the shared tier parameters (doc, type, default), handed to the rule that makes
/// [`TierParams`] (`@with struct`) or a policy's config (`@with config`, via `tier_config!`).
macro_rules! tier_params {
    (@with $($rest:tt)*) => {
        $crate::policy::tiered::params::tier_params! { @apply [
            /// Fast-tier share of `PolicyCtx::capacity` (paper: 16 GB + 16 GB).
            fast_share: f64 = 0.5,
            /// Fast-tier pages; overrides `fast_share` when non-zero.
            fast_pages: usize = 0,
            /// App time of one access to a fast-tier page (ns): local DRAM,
            /// a 4 KiB page copied at ~10 GB/s plus ~90 ns load latency.
            fast_ns: f64 = 500.0,
            /// App time of one access to a slow-tier page (ns): the paper's
            /// CXL emulation is the remote socket's DRAM (POND), ~6 GB/s per
            /// thread plus ~150 ns latency.
            slow_ns: f64 = 830.0,
            /// Page migration bandwidth (GB/s), including unmap and remap.
            migrate_gbps: f64 = 2.0,
            /// Time of a remap demotion (PTE update and TLB flush, ns).
            remap_ns: f64 = 500.0,
            /// App time of a NUMA hint fault (ns).
            hint_fault_ns: f64 = 1500.0,
            /// kswapd keeps this share of the fast tier free (demote_scale_factor/10000).
            demote_watermark: f64 = 0.1,
            /// First touches go to the fast tier while more than this share is free.
            alloc_watermark: f64 = 0.01,
            /// Slow-tier share kept free; below it shadows are reclaimed.
            slow_reserve: f64 = 0.01,
            /// Shadows reclaimed per shortage (NOMAD reclaims 10 and retries).
            shadow_reclaim_batch: usize = 10,
            /// Accesses per full pass of the NUMA hint scanner over the pages.
            /// A chosen default: at the paper's 1/256 scale (13.8 K-page working
            /// set, 115 K accesses per timed round) the scanner passes over the
            /// pages about three times per round.
            scan_period: u64 = 32_768,
            /// First access (trace position) counted in the bandwidth figures
            /// (the timed rounds after the warm-up).
            measure_from: u64 = 0,
            /// Accesses between samples of the shadow counters (0: none).
            sample_every: u64 = 0,
            /// Fast-tier active:inactive LRU size ratio (Linux
            /// `inactive_list_is_low`: int_sqrt(10 x node GB), 12 for 16 GB;
            /// 0: computed from the fast tier's size).
            inactive_ratio: usize = 0,
            /// Reclaim shadows oldest first instead of in shadow-index order.
            reclaim_oldest: bool = false,
        ] $($rest)* }
    };
    (@apply [$($(#[$tm:meta])* $tf:ident : $tt:ty = $td:expr),* $(,)?] struct) => {
        /// The parameters every tiered policy shares (see the module docs).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct TierParams {
            $($(#[$tm])* pub $tf: $tt,)*
        }
        impl Default for TierParams {
            fn default() -> Self {
                TierParams { $($tf: $td,)* }
            }
        }
    };
    (@apply [$($(#[$tm:meta])* $tf:ident : $tt:ty = $td:expr),* $(,)?]
     config $(#[$m:meta])* $name:ident {
         $($(#[$fm:meta])* $f:ident : $t:ty = $d:expr),* $(,)?
     }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $($(#[$tm])* pub $tf: $tt,)*
            $($(#[$fm])* pub $f: $t,)*
        }
        impl Default for $name {
            fn default() -> Self {
                Self::with_tier($crate::policy::tiered::params::TierParams::default())
            }
        }
        impl $name {
            /// This config with the tier parameters `t` and its own keys' defaults.
            pub fn with_tier(t: $crate::policy::tiered::params::TierParams) -> Self {
                $name { $($tf: t.$tf,)* $($f: $d,)* }
            }
            pub fn tier(&self) -> $crate::policy::tiered::params::TierParams {
                $crate::policy::tiered::params::TierParams { $($tf: self.$tf,)* }
            }
        }
    };
}
pub(crate) use tier_params;

/// Defines a policy config with the shared tier parameters plus its own.
macro_rules! tier_config {
    ($($def:tt)*) => {
        $crate::policy::tiered::params::tier_params! { @with config $($def)* }
    };
}
pub(crate) use tier_config;

tier_params! { @with struct }
