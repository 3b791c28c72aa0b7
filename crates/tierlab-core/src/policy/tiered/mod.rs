//! Tiered memory: tier 0 = fast DRAM, tier 1 = slow CXL DRAM / NVM. The
//! policies share a two-tier machine (`machine.rs`: frames per tier, page
//! flags, kswapd demotion, the NUMA hint scanner and a time model) and differ
//! in how they promote: TPP (synchronous, two-touch), NOMAD (asynchronous
//! transactional copy keeping a shadow), SSP (NOMAD with selective shadows)
//! and a Memtis-style histogram policy.

pub mod machine;
pub mod memtis;
pub mod nomad;
pub mod params;
pub mod ssp;
pub mod tpp;
