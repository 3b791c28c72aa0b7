//! Device cost models (DESIGN.md, "Devices and systems").
//!
//! A device gives the time and energy of moving `n` pages in one request:
//! `t = setup + n * per_page`, with separate setups for a request that continues
//! the previous request of the same direction on that device (sequential) and
//! one that does not (random). Memory devices also give the cost of one CPU
//! access to a resident page (a hit), which is what the hybrid-memory and tiered
//! papers charge per reference. Energy is per page moved and per access, plus
//! static power; endurance (writes per cell) feeds wear estimates.

pub mod presets;
pub mod presets_flash;
pub mod presets_hybrid;
pub mod presets_mobile;
pub mod presets_swap;
pub mod presets_tiered;
pub mod replay;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Cost of one request of `n` pages in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct IoCost {
    /// Fixed time of a request that does not continue the previous one (ns).
    pub random_setup_ns: f64,
    /// Fixed time of a request that starts where the previous one ended (ns).
    pub seq_setup_ns: f64,
    /// Transfer time per page (ns).
    pub per_page_ns: f64,
    /// Energy per page moved (nJ).
    #[serde(default)]
    pub energy_nj_per_page: f64,
}

impl IoCost {
    #[inline]
    pub fn time_ns(&self, pages: u64, sequential: bool) -> f64 {
        let setup = if sequential {
            self.seq_setup_ns
        } else {
            self.random_setup_ns
        };
        setup + pages as f64 * self.per_page_ns
    }
}

/// What a device is used as; it decides which fields matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceClass {
    /// Byte-addressable memory (DRAM, PCM, MRAM, CXL DRAM): hits cost `access_*`.
    Memory,
    /// Block storage (flash cards, eMMC, UFS, SSD).
    Block,
    /// Compressed RAM swap (zram): the "I/O" cost is compression CPU time.
    Compressed,
}

/// A device model. All times in nanoseconds, energies in nanojoules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub name: String,
    pub class: DeviceClass,
    /// Where the numbers come from (paper, datasheet, measurement).
    pub source: String,
    pub read: IoCost,
    pub write: IoCost,
    /// One CPU read of a resident page (memory devices; 0 for storage).
    #[serde(default)]
    pub access_read_ns: f64,
    /// One CPU write of a resident page.
    #[serde(default)]
    pub access_write_ns: f64,
    #[serde(default)]
    pub access_read_energy_nj: f64,
    #[serde(default)]
    pub access_write_energy_nj: f64,
    /// Static (idle/refresh) power per GiB of capacity, in milliwatts.
    #[serde(default)]
    pub static_mw_per_gib: f64,
    /// Writes a cell endures before wearing out (None: not a wear concern).
    #[serde(default)]
    pub endurance_writes: Option<f64>,
    /// Pages per erase block (flash), for wear in erase blocks.
    #[serde(default)]
    pub erase_block_pages: Option<u32>,
}

/// A set of named devices: the built-in presets plus any user-defined ones.
#[derive(Debug, Clone)]
pub struct DeviceCatalog {
    devices: BTreeMap<String, Device>,
}

impl Default for DeviceCatalog {
    fn default() -> Self {
        let mut devices = BTreeMap::new();
        for d in presets::all() {
            devices.insert(d.name.clone(), d);
        }
        DeviceCatalog { devices }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceFile {
    #[serde(default)]
    device: Vec<Device>,
}

impl DeviceCatalog {
    pub fn get(&self, name: &str) -> Result<&Device> {
        self.devices.get(name).ok_or_else(|| {
            Error::config(format!(
                "unknown device '{name}'; known devices: {}",
                self.devices.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Device> {
        self.devices.values()
    }

    /// Adds (or replaces) a device.
    pub fn insert(&mut self, d: Device) {
        self.devices.insert(d.name.clone(), d);
    }

    /// Adds the devices of a TOML text made of `[[device]]` tables.
    pub fn load_toml_str(&mut self, text: &str, origin: &str) -> Result<()> {
        let file: DeviceFile =
            toml::from_str(text).map_err(|e| Error::config(format!("{origin}: {e}")))?;
        for d in file.device {
            d.validate()
                .map_err(|m| Error::config(format!("{origin}: device '{}': {m}", d.name)))?;
            self.insert(d);
        }
        Ok(())
    }

    pub fn load_toml_file(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        self.load_toml_str(&text, &path.display().to_string())
    }
}

impl Device {
    /// Checks that every number is finite and non-negative.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let nums = [
            ("read.random_setup_ns", self.read.random_setup_ns),
            ("read.seq_setup_ns", self.read.seq_setup_ns),
            ("read.per_page_ns", self.read.per_page_ns),
            ("read.energy_nj_per_page", self.read.energy_nj_per_page),
            ("write.random_setup_ns", self.write.random_setup_ns),
            ("write.seq_setup_ns", self.write.seq_setup_ns),
            ("write.per_page_ns", self.write.per_page_ns),
            ("write.energy_nj_per_page", self.write.energy_nj_per_page),
            ("access_read_ns", self.access_read_ns),
            ("access_write_ns", self.access_write_ns),
            ("access_read_energy_nj", self.access_read_energy_nj),
            ("access_write_energy_nj", self.access_write_energy_nj),
            ("static_mw_per_gib", self.static_mw_per_gib),
        ];
        for (k, v) in nums {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{k} must be a finite number >= 0, got {v}"));
            }
        }
        if let Some(e) = self.endurance_writes {
            if !e.is_finite() || e <= 0.0 {
                return Err(format!("endurance_writes must be > 0, got {e}"));
            }
        }
        if self.erase_block_pages == Some(0) {
            return Err("erase_block_pages must be >= 1".into());
        }
        Ok(())
    }
}

/// The memory tiers and backing stores a policy runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    /// Memory tiers, fastest first (device names).
    #[serde(default = "default_tiers")]
    pub tiers: Vec<String>,
    /// Where File pages live.
    #[serde(default = "default_file_store")]
    pub file_store: String,
    /// Where dirty Anon pages go; `None` means anon pages cannot be evicted.
    #[serde(default = "default_swap")]
    pub swap: Option<String>,
    /// Whether a write miss on a File page first reads the page from the file
    /// store. Default false: block traces write whole pages, so a buffer cache
    /// allocates the page without reading it (as the flash-buffer papers do).
    #[serde(default)]
    pub write_miss_fetch: bool,
}

fn default_tiers() -> Vec<String> {
    vec!["dram".into()]
}
fn default_file_store() -> String {
    "nvme".into()
}
fn default_swap() -> Option<String> {
    Some("nvme".into())
}

impl Default for SystemSpec {
    fn default() -> Self {
        SystemSpec {
            tiers: default_tiers(),
            file_store: default_file_store(),
            swap: default_swap(),
            write_miss_fetch: false,
        }
    }
}

/// A resolved system: devices looked up.
#[derive(Debug, Clone)]
pub struct System {
    pub tiers: Vec<Device>,
    pub file_store: Device,
    pub swap: Option<Device>,
    pub write_miss_fetch: bool,
}

impl System {
    pub fn resolve(spec: &SystemSpec, catalog: &DeviceCatalog) -> Result<System> {
        if spec.tiers.is_empty() {
            return Err(Error::config(
                "system.tiers: at least one memory tier is needed",
            ));
        }
        if spec.tiers.len() > crate::sim::MAX_TIERS {
            return Err(Error::config(format!(
                "system.tiers: at most {} tiers are supported, got {}",
                crate::sim::MAX_TIERS,
                spec.tiers.len()
            )));
        }
        Ok(System {
            tiers: spec
                .tiers
                .iter()
                .map(|t| catalog.get(t).cloned())
                .collect::<Result<_>>()?,
            file_store: catalog.get(&spec.file_store)?.clone(),
            swap: spec
                .swap
                .as_deref()
                .map(|s| catalog.get(s).cloned())
                .transpose()?,
            write_miss_fetch: spec.write_miss_fetch,
        })
    }
}

/// A storage device (no CPU-side access costs): the constructor every preset file uses.
fn storage(
    name: &str,
    class: DeviceClass,
    source: &str,
    read: IoCost,
    write: IoCost,
    endurance_writes: Option<f64>,
    erase_block_pages: Option<u32>,
) -> Device {
    Device {
        name: name.into(),
        class,
        source: source.into(),
        read,
        write,
        access_read_ns: 0.0,
        access_write_ns: 0.0,
        access_read_energy_nj: 0.0,
        access_write_energy_nj: 0.0,
        static_mw_per_gib: 0.0,
        endurance_writes,
        erase_block_pages,
    }
}
