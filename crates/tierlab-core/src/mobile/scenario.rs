//! The scenario a session runs: the phone, its apps, the killer and swap
//! settings, the launch-cost model, and the usage script (given as steps in
//! the TOML, read from a CSV file, or generated from a seeded model).
//!
//! Every parameter has a default; a scenario file names only what it changes.
//! Unknown keys are rejected with the key's name.

use super::compressed::{CompressConfig, ZswapConfig};
use super::lmk::{AdjScheme, Level, MinfreeTable};
use super::lmkd::LmkdConfig;
use crate::error::{Error, Location, Result};
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The whole scenario (a TOML document).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    pub phone: Phone,
    pub lmk: LmkConfig,
    /// lmkd's properties, used when `lmk.killer = "lmkd"`.
    pub lmkd: LmkdConfig,
    pub swap: SwapConfig,
    pub reclaim: ReclaimConfig,
    pub launch: LaunchModel,
    #[serde(rename = "app")]
    pub apps: Vec<AppSpec>,
    pub script: ScriptSpec,
}

/// The phone. Defaults: the paper's Samsung Galaxy S2 (GT-I9100, 1 GB RAM,
/// 480x800 display, Section 5.1). The kernel reports `MemTotal` of about
/// 835 MB on it: the paper's Figure 1 reads 818.7 MB used + 16.8 MB free.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Phone {
    /// Memory managed by the kernel (`MemTotal`), MB.
    pub memory_mb: f64,
    /// Memory held by the kernel, system_server and persistent processes that
    /// the session does not model as apps (never reclaimed or killed), MB.
    /// Default 380 MB: chosen so that the free memory left for apps matches
    /// the paper's Figure 1 (about six to seven large apps fit before the
    /// first kill).
    pub system_mb: f64,
    pub display: [i64; 2],
    /// Page size in bytes.
    pub page_size: u64,
    /// `vm.min_free_kbytes`; 0 = the kernel's default `sqrt(lowmem_kb * 16)`
    /// (clamped to 128..65536). Watermarks: low = min * 5/4, high = min * 3/2.
    pub min_free_kbytes: u64,
    /// Android's `vm.extra_free_kbytes` added to the low and high watermarks.
    pub extra_free_kbytes: u64,
    /// Device holding the apps' files (APK, odex, libraries).
    pub file_store: String,
    /// The framework's shared file pages (framework jars, libraries, fonts)
    /// held by the system processes: file-backed, reclaimable, and touched
    /// at every launch (fraction `system_file_touch`). Default 120 MB.
    pub system_file_mb: f64,
    pub system_file_touch: f64,
}

impl Default for Phone {
    fn default() -> Self {
        Phone {
            memory_mb: 835.0,
            system_mb: 380.0,
            display: [480, 800],
            page_size: 4096,
            min_free_kbytes: 0,
            extra_free_kbytes: 0,
            file_store: "emmc-gs2".into(),
            system_file_mb: 120.0,
            system_file_touch: 0.5,
        }
    }
}

/// Which low-memory killer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Killer {
    /// The in-kernel lowmemorykiller driver (the paper's): a shrinker that
    /// kills by the minfree table at every reclaim round.
    #[default]
    Kernel,
    /// The user-space lmkd in PSI mode ([`super::lmkd`]), with its minfree
    /// fallback (`lmkd.use_minfree_levels`).
    Lmkd,
}

/// Which page reclaim the session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimPolicy {
    /// The compact two-list reclaim of [`super::reclaim`] (the paper's kernel).
    #[default]
    TwoList,
    /// The multi-generational LRU (`policy::swap::mglru`, Linux 6.1+).
    Mglru,
}

/// The low-memory killer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LmkConfig {
    pub enabled: bool,
    /// `kernel` (default) or `lmkd`.
    pub killer: Killer,
    pub scheme: AdjScheme,
    /// Which ProcessList tables to interpolate (ignored when `minfree_kb` is set).
    pub table: MinfreeTable,
    /// `updateOomLevels`' memory range for the interpolation (MB).
    pub mem_lo_mb: i64,
    pub mem_hi_mb: i64,
    /// Explicit minfree levels in KB (overrides the interpolation).
    pub minfree_kb: Option<Vec<i64>>,
    /// The adj column, in the scheme's units. Default: ProcessList's
    /// `mOomAdj` = foreground, visible, perceptible, backup, cached-min,
    /// cached-max (0,1,2,3,9,15 in oom_adj; 0,100,200,300,900,999 modern).
    pub adj: Option<Vec<i32>>,
    /// `config_lowMemoryKillerMinFreeKbytesAbsolute` / `...Adjust`.
    pub minfree_abs_kb: i64,
    pub minfree_adj_kb: i64,
}

impl Default for LmkConfig {
    fn default() -> Self {
        LmkConfig {
            enabled: true,
            killer: Killer::Kernel,
            scheme: AdjScheme::Kitkat,
            table: MinfreeTable::Kitkat,
            mem_lo_mb: 350,
            mem_hi_mb: 700,
            minfree_kb: None,
            adj: None,
            minfree_abs_kb: -1,
            minfree_adj_kb: 0,
        }
    }
}

/// How swappiness steers reclaim between anonymous and file pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwappinessMode {
    /// Linux 2.6 `refill_inactive_zone` as the paper's Section 3.2 states it:
    /// `swap_tendency = mapped_ratio / 2 + distress + swappiness`, with
    /// `distress = 100 >> priority`; mapped pages are deactivated (and so can
    /// be swapped) only when it reaches 100. With swappiness 60 and no
    /// distress, swap-out starts once 80% of memory is mapped.
    SwapTendency,
    /// Linux 3.x `get_scan_count`: anon and file lists are scanned in the
    /// ratio `ap : fp`, `ap = (swappiness + 1) * (scanned_anon + 1) /
    /// (rotated_anon + 1)`, `fp = (201 - swappiness) * (scanned_file + 1) /
    /// (rotated_file + 1)`; only anon when file + free <= the high watermark.
    ScanCount,
}

/// The swap device and policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwapConfig {
    /// Swap device name (a preset or a user device); `None` = no swap (the
    /// stock Android configuration).
    pub device: Option<String>,
    /// Swap area size, MB. The paper used a whole 8 GB card.
    pub size_mb: f64,
    /// `vm.swappiness` (default 60, Section 3.2).
    pub swappiness: u32,
    pub mode: SwappinessMode,
    /// `vm.page-cluster`: swap-in reads the aligned window of `2^page_cluster`
    /// slots around a faulting slot (default 3; Android uses 0 with zram).
    pub page_cluster: u32,
    /// Compression ratio of a compressed (zram) device, and of zswap: a
    /// swapped page keeps `1 / ratio` of a page of RAM (the mean ratio with
    /// `compress.model = "lognormal"`; an app's `zram_ratio` overrides it).
    pub zram_ratio: f64,
    /// Per-page compression ratios (`[swap.compress]`).
    pub compress: CompressConfig,
    /// zswap in front of `device` (`[swap.zswap]`).
    pub zswap: ZswapConfig,
}

impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig {
            device: None,
            size_mb: 1024.0,
            swappiness: 60,
            mode: SwappinessMode::SwapTendency,
            page_cluster: 3,
            zram_ratio: 3.0,
            compress: CompressConfig::default(),
            zswap: ZswapConfig::default(),
        }
    }
}

/// Costs of the reclaim machinery itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReclaimConfig {
    /// CPU time per page scanned by reclaim (ns). Default 1 us, a 1 GHz ARM
    /// core walking rmap for one page.
    pub scan_ns_per_page: f64,
    /// Fraction of reclaim time (scanning, swap writes, kills) the
    /// foreground app waits for. 1.0: reclaim is synchronous with the
    /// allocation; 0: it is hidden entirely (kswapd on the other core, the
    /// card idle when the app reads). Default 0.2, calibrated on the paper's
    /// Figure 2 (swap relaunch 4.17x): on the dual-core Galaxy S2 kswapd runs
    /// beside the app, and the block layer (CFQ) serves the app's synchronous
    /// swap-in reads before kswapd's asynchronous writes, so the app waits for
    /// the writes in flight, not for all of them.
    pub stall: f64,
    /// Time to kill a process and return its memory (ms).
    pub kill_ms: f64,
    /// `two_list` (default) or `mglru`.
    pub policy: ReclaimPolicy,
    /// MGLRU's `vm.swappiness` (0..=200); `None`: `swap.swappiness`.
    pub mglru_swappiness: Option<u32>,
}

impl Default for ReclaimConfig {
    fn default() -> Self {
        ReclaimConfig {
            scan_ns_per_page: 1000.0,
            stall: 0.2,
            kill_ms: 5.0,
            policy: ReclaimPolicy::TwoList,
            mglru_swappiness: None,
        }
    }
}

/// The launch-cost model (all calibratable).
///
/// - cold start (first launch, or after a kill): `process_start_ms` (zygote
///   fork, bind application, create the activity) + the launch file set read
///   from the file store where not in the page cache + the launch anon set
///   allocated and built at `anon_init_us_per_page` of CPU each + reclaim
///   stalls;
/// - a still-running process: `hot_start_ms` (resume the activity) + the
///   touched-on-relaunch set: anon pages swapped out are read back from swap,
///   file pages no longer cached are read from the file store + stalls.
///
/// Defaults are calibrated to the paper's Galaxy S2 (Section 5.4, Figure 2):
/// a hot start of 300 ms (ActivityManager's "Displayed" time of a resumed
/// activity), a process start of 250 ms (zygote fork, bindApplication,
/// Application and Activity creation), and a 1.2 GHz Cortex-A9 rebuilding
/// Dalvik heap state (class loading, layout inflation, bitmap decoding) at
/// 80 us per 4 KiB page (~50 MB/s). With the apps' relaunch fractions (15% of
/// anon, 40% of file pages touched) and `reclaim.stall = 0.2` these put the
/// paper's scenario at 2.7x (LMK) and 4.3x (class-6 swap) of a hot relaunch;
/// see the paper module.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LaunchModel {
    pub process_start_ms: f64,
    pub hot_start_ms: f64,
    pub anon_init_us_per_page: f64,
    /// File readahead window (pages) for launch reads.
    pub file_readahead_pages: u32,
    /// Whether the page cache holds every app's launch file set when the
    /// session starts (the apps were installed and opened before; false =
    /// the first launch reads them from storage).
    pub file_cache_warm: bool,
}

impl Default for LaunchModel {
    fn default() -> Self {
        LaunchModel {
            process_start_ms: 250.0,
            hot_start_ms: 300.0,
            anon_init_us_per_page: 80.0,
            file_readahead_pages: 32,
            file_cache_warm: true,
        }
    }
}

/// What kind of process an app is; decides its level when not foreground.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    /// An ordinary app: previous, then cached when in the background.
    #[default]
    App,
    /// The launcher: `home` level when not in the foreground.
    Home,
    /// A background service (`service` level).
    Service,
    /// Something the user notices (music playback: `perceptible`).
    Perceptible,
    /// A persistent system app (`persistent` level; never LMK-killed).
    Persistent,
}

/// One app's memory footprint.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppSpec {
    pub name: String,
    pub kind: AppKind,
    /// Anonymous memory (heap, stacks, graphics buffers) when fully used, MB.
    pub anon_mb: f64,
    /// File-backed memory (code, resources) it maps, MB.
    pub file_mb: f64,
    /// Fraction of `anon_mb` built during a cold launch (the rest grows while
    /// it is used).
    pub launch_anon: f64,
    /// Fraction of `file_mb` read during a cold launch.
    pub launch_file: f64,
    /// Fractions touched when a running process comes back to the foreground
    /// (prefixes of its anon and file ranges). Defaults 0.15 and 0.4: Kim &
    /// Bahn (IEEE Access 2019) found the hot 15% of swapped data makes 80% of
    /// swap-in I/O and half of it is never reused (REFERENCE.md); 40% of the
    /// code and resources is our choice (calibrated on Figure 2's hot times).
    pub relaunch_anon: f64,
    pub relaunch_file: f64,
    /// Whether the app is running when the session starts (home, services).
    pub start_running: bool,
    /// The compression ratio of this app's anonymous pages in zram/zswap
    /// (default: `swap.zram_ratio`).
    pub zram_ratio: Option<f64>,
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec {
            name: String::new(),
            kind: AppKind::App,
            anon_mb: 40.0,
            file_mb: 20.0,
            launch_anon: 0.7,
            launch_file: 0.8,
            relaunch_anon: 0.15,
            relaunch_file: 0.4,
            start_running: false,
            zram_ratio: None,
        }
    }
}

/// One step of a usage script.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum StepOp {
    /// Bring the app to the foreground (launching or relaunching it).
    Launch,
    /// The foreground app is used for `seconds` (its working set is touched
    /// and its anon memory grows to its full footprint).
    Use,
    /// Press home: the foreground app goes to the background.
    Background,
    /// Nothing happens for `seconds`.
    Idle,
    /// The user closes the app (its process exits).
    Exit,
}

/// A step: operation, app index (for launch/exit), seconds (use/idle).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub op: StepOp,
    pub app: Option<usize>,
    pub seconds: f64,
}

/// A step as written in the TOML (`{op = "launch", app = "naver"}`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepText {
    pub op: String,
    #[serde(default)]
    pub app: Option<String>,
    #[serde(default)]
    pub seconds: f64,
}

/// The usage script: inline steps, a CSV file (`op,app,seconds` per line,
/// `#` comments), or a seeded model.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptSpec {
    pub steps: Vec<StepText>,
    pub csv: Option<PathBuf>,
    pub model: Option<UsageModel>,
}

/// A generated session: `switches` times, pick an app by a Zipf law over the
/// apps' order (rank^-zipf), launch it, use it for an exponentially
/// distributed time, and with probability `home_prob` go home and idle.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UsageModel {
    pub seed: u64,
    pub switches: usize,
    pub zipf: f64,
    pub mean_use_s: f64,
    pub home_prob: f64,
    pub mean_idle_s: f64,
}

impl Default for UsageModel {
    fn default() -> Self {
        UsageModel {
            seed: 1,
            switches: 50,
            zipf: 0.8,
            mean_use_s: 30.0,
            home_prob: 0.3,
            mean_idle_s: 60.0,
        }
    }
}

fn nonneg(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

fn parse_op(s: &str) -> Option<StepOp> {
    Some(match s.trim().to_ascii_lowercase().as_str() {
        "launch" | "foreground" | "switch" => StepOp::Launch,
        "use" => StepOp::Use,
        "background" | "home" => StepOp::Background,
        "idle" => StepOp::Idle,
        "exit" | "close" => StepOp::Exit,
        _ => return None,
    })
}

const OPS: &str = "launch, use, background, idle, exit";

impl Scenario {
    /// Parses a scenario TOML; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::config(format!("{origin}: {e}")))
    }

    pub fn from_toml_file(path: &Path) -> Result<Self> {
        Self::from_toml_file_with(path, &toml::Table::new())
    }

    /// Reads a scenario file with `overrides` merged over it (tables merge
    /// key by key, other values replace), e.g. `{swap = {device = "zram"}}`
    /// for a sweep. A relative `script.csv` is relative to the file.
    pub fn from_toml_file_with(path: &Path, overrides: &toml::Table) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut s = Self::from_toml_str_with(&text, &path.display().to_string(), overrides)?;
        s.resolve_paths(path.parent());
        Ok(s)
    }

    /// Parses a scenario TOML text with `overrides` merged over it.
    pub fn from_toml_str_with(text: &str, origin: &str, overrides: &toml::Table) -> Result<Self> {
        let mut base: toml::Table =
            toml::from_str(text).map_err(|e| Error::config(format!("{origin}: {e}")))?;
        merge_tables(&mut base, overrides);
        Scenario::deserialize(toml::Value::Table(base))
            .map_err(|e| Error::config(format!("{origin}: {e}")))
    }

    /// Makes a relative `script.csv` relative to `dir`.
    pub fn resolve_paths(&mut self, dir: Option<&Path>) {
        if let (Some(csv), Some(dir)) = (&self.script.csv, dir) {
            if csv.is_relative() {
                self.script.csv = Some(dir.join(csv));
            }
        }
    }

    pub fn app_index(&self, name: &str) -> Option<usize> {
        self.apps.iter().position(|a| a.name == name)
    }

    /// Checks the numbers and names.
    pub fn validate(&self) -> Result<()> {
        if self.apps.is_empty() {
            return Err(Error::config("scenario: at least one [[app]] is needed"));
        }
        let p = &self.phone;
        // Pages of memory are simulated one by one: a phone beyond 1 TiB is a typo, refused
        // before anything is allocated for it.
        const MAX_MEMORY_MB: f64 = (1u64 << 20) as f64;
        if p.memory_mb > MAX_MEMORY_MB {
            return Err(Error::config(format!(
                "phone.memory_mb = {} is beyond what a phone has: give at most {MAX_MEMORY_MB} \
                 (1 TiB)",
                p.memory_mb
            )));
        }
        if !nonneg(p.system_mb) || !nonneg(p.memory_mb) || p.system_mb >= p.memory_mb {
            return Err(Error::config(format!(
                "phone: need memory_mb > system_mb >= 0, got memory_mb = {} and system_mb = {}",
                p.memory_mb, p.system_mb
            )));
        }
        if p.page_size == 0 || !p.page_size.is_power_of_two() {
            return Err(Error::config(format!(
                "phone.page_size must be a power of two, got {}",
                p.page_size
            )));
        }
        for (i, a) in self.apps.iter().enumerate() {
            if a.name.is_empty() {
                return Err(Error::config(format!("app[{i}]: name is required")));
            }
            if self.apps[..i].iter().any(|b| b.name == a.name) {
                return Err(Error::config(format!("app '{}' is defined twice", a.name)));
            }
            for (k, v) in [("anon_mb", a.anon_mb), ("file_mb", a.file_mb)] {
                if !nonneg(v) {
                    return Err(Error::config(format!(
                        "app '{}': {k} must be >= 0, got {v}",
                        a.name
                    )));
                }
            }
            for (k, v) in [
                ("launch_anon", a.launch_anon),
                ("launch_file", a.launch_file),
                ("relaunch_anon", a.relaunch_anon),
                ("relaunch_file", a.relaunch_file),
            ] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(Error::config(format!(
                        "app '{}': {k} must be in [0, 1], got {v}",
                        a.name
                    )));
                }
            }
            if let Some(r) = a.zram_ratio.filter(|r| !(r.is_finite() && *r >= 1.0)) {
                return Err(Error::config(format!(
                    "app '{}': zram_ratio must be >= 1, got {r}",
                    a.name
                )));
            }
        }
        let l = &self.launch;
        let r = &self.reclaim;
        for (k, v) in [
            ("launch.process_start_ms", l.process_start_ms),
            ("launch.hot_start_ms", l.hot_start_ms),
            ("launch.anon_init_us_per_page", l.anon_init_us_per_page),
            ("reclaim.scan_ns_per_page", r.scan_ns_per_page),
            ("reclaim.kill_ms", r.kill_ms),
            ("swap.size_mb", self.swap.size_mb),
            ("phone.system_file_mb", p.system_file_mb),
        ] {
            if !nonneg(v) {
                return Err(Error::config(format!(
                    "{k} must be a finite number >= 0, got {v}"
                )));
            }
        }
        if !(0.0..=1.0).contains(&p.system_file_touch) {
            return Err(Error::config(format!(
                "phone.system_file_touch must be in [0, 1], got {}",
                p.system_file_touch
            )));
        }
        if self.lmk.mem_hi_mb <= self.lmk.mem_lo_mb {
            return Err(Error::config(format!(
                "lmk: mem_hi_mb ({}) must be greater than mem_lo_mb ({})",
                self.lmk.mem_hi_mb, self.lmk.mem_lo_mb
            )));
        }
        let s = &self.swap;
        if s.swappiness > 100 {
            return Err(Error::config(format!(
                "swap.swappiness must be 0..=100, got {}",
                s.swappiness
            )));
        }
        if !(s.zram_ratio.is_finite() && s.zram_ratio >= 1.0) {
            return Err(Error::config(format!(
                "swap.zram_ratio must be >= 1, got {}",
                s.zram_ratio
            )));
        }
        if s.page_cluster > 6 {
            return Err(Error::config(format!(
                "swap.page_cluster must be 0..=6, got {}",
                s.page_cluster
            )));
        }
        s.compress.validate()?;
        s.zswap.validate()?;
        self.lmkd.validate()?;
        if let Some(sw) = self.reclaim.mglru_swappiness.filter(|&v| v > 200) {
            return Err(Error::config(format!(
                "reclaim.mglru_swappiness must be 0..=200, got {sw}"
            )));
        }
        if !(self.reclaim.stall >= 0.0 && self.reclaim.stall <= 1.0) {
            return Err(Error::config(format!(
                "reclaim.stall must be in [0, 1], got {}",
                self.reclaim.stall
            )));
        }
        Ok(())
    }

    /// The script as resolved steps.
    pub fn steps(&self) -> Result<Vec<Step>> {
        let given = [
            !self.script.steps.is_empty(),
            self.script.csv.is_some(),
            self.script.model.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            return Err(Error::config(
                "script: give exactly one of script.steps, script.csv or [script.model]",
            ));
        }
        if let Some(m) = &self.script.model {
            return Ok(self.generate(m));
        }
        if let Some(csv) = &self.script.csv {
            let text = std::fs::read_to_string(csv).map_err(|e| Error::io(csv, e))?;
            return self.parse_csv(&text, &csv.display().to_string());
        }
        self.script
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                self.resolve(&s.op, s.app.as_deref(), s.seconds)
                    .map_err(|m| Error::config(format!("script.steps[{i}]: {m}")))
            })
            .collect()
    }

    fn resolve(
        &self,
        op: &str,
        app: Option<&str>,
        seconds: f64,
    ) -> std::result::Result<Step, String> {
        let op = parse_op(op).ok_or_else(|| format!("unknown op '{op}'; expected one of {OPS}"))?;
        if !nonneg(seconds) {
            return Err(format!(
                "seconds must be a finite number >= 0, got {seconds}"
            ));
        }
        let app = match (op, app.filter(|a| !a.is_empty())) {
            (StepOp::Launch | StepOp::Exit, None) => return Err("this op needs an app".into()),
            (_, None) => None,
            (_, Some(name)) => Some(self.app_index(name).ok_or_else(|| {
                format!(
                    "unknown app '{name}'; apps: {}",
                    self.apps
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?),
        };
        Ok(Step { op, app, seconds })
    }

    /// `op,app,seconds` lines; blank lines and `#` comments are skipped; a
    /// first line starting with `op` is a header.
    pub fn parse_csv(&self, text: &str, origin: &str) -> Result<Vec<Step>> {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || (n == 0 && line.starts_with("op")) {
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let loc = Location::Line(n as u64 + 1);
            if f.len() > 3 {
                return Err(Error::input(
                    origin,
                    loc,
                    format!("expected op,app,seconds; got {} fields", f.len()),
                ));
            }
            let seconds = match f.get(2).filter(|s| !s.is_empty()) {
                None => 0.0,
                Some(s) => s.parse::<f64>().map_err(|_| {
                    Error::input(
                        origin,
                        loc.clone(),
                        format!("seconds: expected a number, got '{s}'"),
                    )
                })?,
            };
            let step = self
                .resolve(f[0], f.get(1).copied(), seconds)
                .map_err(|m| Error::input(origin, loc, m))?;
            out.push(step);
        }
        Ok(out)
    }

    /// Generates a session from the usage model (deterministic per seed).
    pub fn generate(&self, m: &UsageModel) -> Vec<Step> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(m.seed);
        let candidates: Vec<usize> = (0..self.apps.len())
            .filter(|&i| matches!(self.apps[i].kind, AppKind::App))
            .collect();
        let weights: Vec<f64> = (0..candidates.len())
            .map(|r| 1.0 / ((r + 1) as f64).powf(m.zipf))
            .collect();
        let total: f64 = weights.iter().sum();
        let expo = |rng: &mut rand_pcg::Pcg64, mean: f64| -> f64 {
            let u: f64 = rng.random::<f64>();
            -mean * (1.0 - u).ln()
        };
        let mut steps = Vec::new();
        if candidates.is_empty() {
            return steps;
        }
        for _ in 0..m.switches {
            let mut x = rng.random::<f64>() * total;
            let mut pick = candidates[candidates.len() - 1];
            for (k, w) in weights.iter().enumerate() {
                if x < *w {
                    pick = candidates[k];
                    break;
                }
                x -= w;
            }
            steps.push(Step {
                op: StepOp::Launch,
                app: Some(pick),
                seconds: 0.0,
            });
            steps.push(Step {
                op: StepOp::Use,
                app: None,
                seconds: expo(&mut rng, m.mean_use_s),
            });
            if rng.random::<f64>() < m.home_prob {
                steps.push(Step {
                    op: StepOp::Background,
                    app: None,
                    seconds: 0.0,
                });
                steps.push(Step {
                    op: StepOp::Idle,
                    app: None,
                    seconds: expo(&mut rng, m.mean_idle_s),
                });
            }
        }
        steps
    }
}

/// Merges `over` into `base`: tables recursively, anything else replaced.
pub fn merge_tables(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The level of an app that is not in the foreground, by its kind.
pub fn background_level(kind: AppKind) -> Option<Level> {
    match kind {
        AppKind::App => None,
        AppKind::Home => Some(Level::Home),
        AppKind::Service => Some(Level::Service),
        AppKind::Perceptible => Some(Level::Perceptible),
        AppKind::Persistent => Some(Level::Persistent),
    }
}
