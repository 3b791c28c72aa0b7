//! A seeded generator of multi-app mobile sessions: one foreground app and
//! background apps whose pushes interleave with it, with the structure the
//! hybrid-memory paper describes (papers/hybrid-dram-pcm-app-aware.md,
//! Sections 3 and 4).
//!
//! What the paper says about its traces, and how the generator follows it:
//! - trace 1: Chrome in the foreground, Hangouts and Gmail producing pushes in
//!   the background, foreground:background page requests about 15:1
//!   ([`SessionConfig::browser_session`], `bg_share = 1/16`);
//! - trace 2: many apps switched between foreground and background, about 3:1,
//!   with requests concentrated on few pages ([`SessionConfig::switching_session`],
//!   `bg_share = 0.25`, the foreground moves round-robin every `switch_every`
//!   references);
//! - background apps make few requests, mostly for push services (messages
//!   received, media played): they come in bursts (`burst_mean` references per
//!   push) that write the app's database and read a little.
//!
//! Each app has its own page space with three parts:
//! - a re-read working set (code, resources, caches) of `hot_pages` pages,
//!   referenced with Zipf(`hot_alpha`) popularity (reads);
//! - a database/journal set of `write_pages` pages rewritten with
//!   Zipf(`write_alpha`) popularity (writes; SQLite dominates Android writes);
//! - streamed content: runs of consecutive pages (mean `stream_mean`), new
//!   content except that a run revisits one of the app's last 16 runs with
//!   probability `revisit` (going back to a page already seen). In the
//!   foreground streams are reads (loading pages, media); in the background they
//!   are writes (downloads, attachments).
//!
//! `fg_mix` and `bg_mix` give the shares of hot reads, database writes and
//! stream references among the app's references in the foreground and in the
//! background (a stream run starts with weight `mix[2] / stream_mean`).
//! Every reference is a single 4 KiB File page; time advances by
//! `ref_interval_ns` per reference. The foreground app gets a `Foreground` event
//! at the start and at each switch (after a `Background` event for the previous
//! one), so the trace carries its own app states. The generator is streaming and
//! deterministic for a given configuration (PCG64 seeded by `seed`).

use crate::error::{Error, Result};
use crate::trace::{Access, Event, EventKind, Op, Record, TraceReader, DEFAULT_PAGE_SIZE};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Geometric, Zipf};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// One app's behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppProfile {
    pub name: String,
    pub hot_pages: u32,
    pub hot_alpha: f64,
    pub write_pages: u32,
    pub write_alpha: f64,
    /// P(hot read), P(write), P(stream) in the foreground.
    pub fg_mix: [f64; 3],
    /// The same in the background.
    pub bg_mix: [f64; 3],
    pub stream_mean: f64,
    pub revisit: f64,
}

impl Default for AppProfile {
    fn default() -> Self {
        AppProfile {
            name: "app".into(),
            hot_pages: 2000,
            hot_alpha: 0.9,
            write_pages: 200,
            write_alpha: 1.0,
            fg_mix: [0.55, 0.15, 0.30],
            bg_mix: [0.35, 0.55, 0.10],
            stream_mean: 24.0,
            revisit: 0.3,
        }
    }
}

/// A session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionConfig {
    pub seed: u64,
    /// Page references to generate.
    pub refs: u64,
    pub apps: Vec<AppProfile>,
    /// Share of references made by background apps.
    pub bg_share: f64,
    /// Mean references of one background burst (one push).
    pub burst_mean: f64,
    /// References between foreground switches (0: the first app stays in the
    /// foreground).
    pub switch_every: u64,
    pub ref_interval_ns: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig::browser_session(1, 400_000)
    }
}

fn app(name: &str, hot: u32, writes: u32) -> AppProfile {
    AppProfile {
        name: name.into(),
        hot_pages: hot,
        write_pages: writes,
        ..AppProfile::default()
    }
}

impl SessionConfig {
    /// Like the paper's trace 1: a browser in the foreground, a messenger and a
    /// mail app pushing in the background, 15:1.
    pub fn browser_session(seed: u64, refs: u64) -> Self {
        SessionConfig {
            seed,
            refs,
            apps: vec![
                AppProfile {
                    hot_alpha: 0.8,
                    write_alpha: 0.9,
                    fg_mix: [0.65, 0.15, 0.20],
                    stream_mean: 32.0,
                    revisit: 0.5,
                    ..app("browser", 30_000, 1500)
                },
                app("messenger", 2000, 300),
                app("mail", 3000, 400),
            ],
            bg_share: 1.0 / 16.0,
            burst_mean: 40.0,
            switch_every: 0,
            ref_interval_ns: 1000,
        }
    }

    /// Like the paper's trace 2: five apps taking turns in the foreground, 3:1,
    /// with smaller, more concentrated working sets.
    pub fn switching_session(seed: u64, refs: u64) -> Self {
        let hot = |a: AppProfile| AppProfile {
            hot_alpha: 1.1,
            fg_mix: [0.6, 0.25, 0.15],
            revisit: 0.6,
            ..a
        };
        SessionConfig {
            seed,
            refs,
            apps: vec![
                hot(app("browser", 8000, 600)),
                hot(app("messenger", 3000, 400)),
                hot(app("mail", 4000, 400)),
                hot(app("camera", 2000, 300)),
                hot(app("music", 3000, 200)),
            ],
            bg_share: 0.25,
            burst_mean: 40.0,
            switch_every: refs / 10,
            ref_interval_ns: 1000,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config(format!("session generator: {m}")));
        if self.apps.is_empty() {
            return bad("apps: at least one app is needed".into());
        }
        if !(0.0..1.0).contains(&self.bg_share) {
            return bad(format!("bg_share must be in [0, 1), got {}", self.bg_share));
        }
        if self.burst_mean.is_nan() || self.burst_mean < 1.0 {
            return bad(format!("burst_mean must be >= 1, got {}", self.burst_mean));
        }
        for a in &self.apps {
            if a.hot_pages == 0 || a.write_pages == 0 {
                return bad(format!(
                    "app '{}': hot_pages and write_pages must be >= 1",
                    a.name
                ));
            }
            if a.hot_alpha.is_nan()
                || a.write_alpha.is_nan()
                || a.hot_alpha <= 0.0
                || a.write_alpha <= 0.0
            {
                return bad(format!("app '{}': Zipf exponents must be > 0", a.name));
            }
            if a.stream_mean.is_nan() || a.stream_mean < 1.0 || !(0.0..=1.0).contains(&a.revisit) {
                return bad(format!(
                    "app '{}': stream_mean must be >= 1 and revisit in [0, 1]",
                    a.name
                ));
            }
            for mix in [a.fg_mix, a.bg_mix] {
                if mix.iter().any(|p| p.is_nan() || *p < 0.0) || mix.iter().sum::<f64>() <= 0.0 {
                    return bad(format!(
                        "app '{}': mixes must be non-negative, not all 0",
                        a.name
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Keys of a `session:` trace spec.
pub const SPEC_KEYS: &[&str] = &[
    "preset",
    "seed",
    "refs",
    "bg_share",
    "burst_mean",
    "switch_every",
    "revisit",
];

/// Parses a generator spec `session:preset=browser,seed=1,refs=400000` (the
/// form `trace::open` accepts as a trace path): `preset` is `browser` (the
/// paper's trace 1, default) or `switching` (trace 2); the other keys override
/// the preset's fields. Returns `None` for paths that are not `session:` specs.
pub fn from_spec(path: &str) -> Result<Option<SessionReader>> {
    let Some(rest) = path.strip_prefix("session:") else {
        return Ok(None);
    };
    let mut kv = Vec::new();
    for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(Error::config(format!(
                "trace '{path}': expected key=value, got '{part}'; keys: {}",
                SPEC_KEYS.join(", ")
            )));
        };
        kv.push((k.trim(), v.trim()));
    }
    let get = |key: &str| kv.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let num = |key: &str, v: &str| -> Result<f64> {
        v.parse::<f64>().map_err(|_| {
            Error::config(format!("trace '{path}': {key} must be a number, got '{v}'"))
        })
    };
    for (k, _) in &kv {
        if !SPEC_KEYS.contains(k) {
            return Err(Error::config(format!(
                "trace '{path}': unknown key '{k}'; keys: {}",
                SPEC_KEYS.join(", ")
            )));
        }
    }
    let seed = get("seed")
        .map(|v| num("seed", v))
        .transpose()?
        .unwrap_or(1.0) as u64;
    let refs = get("refs")
        .map(|v| num("refs", v))
        .transpose()?
        .unwrap_or(400_000.0) as u64;
    let mut cfg = match get("preset").unwrap_or("browser") {
        "browser" => SessionConfig::browser_session(seed, refs),
        "switching" => SessionConfig::switching_session(seed, refs),
        other => {
            return Err(Error::config(format!(
                "trace '{path}': preset must be 'browser' or 'switching', got '{other}'"
            )))
        }
    };
    if let Some(v) = get("bg_share") {
        cfg.bg_share = num("bg_share", v)?;
    }
    if let Some(v) = get("burst_mean") {
        cfg.burst_mean = num("burst_mean", v)?;
    }
    if let Some(v) = get("switch_every") {
        cfg.switch_every = num("switch_every", v)? as u64;
    }
    // One revisit probability for every app (the sensitivity sweeps' knob for
    // long-distance reuse); `SessionReader::new` checks its range.
    if let Some(v) = get("revisit") {
        let r = num("revisit", v)?;
        for a in &mut cfg.apps {
            a.revisit = r;
        }
    }
    SessionReader::new(cfg).map(Some)
}

/// Page-space layout of app `a`: each app owns 2^28 pages.
const APP_SHIFT: u32 = 28;
const WRITE_BASE: u64 = 1 << 24;
const STREAM_BASE: u64 = 1 << 25;
const RECENT_RUNS: usize = 16;

struct AppState {
    hot: Zipf<f64>,
    write: Zipf<f64>,
    run_len: Geometric,
    /// Next page of the run in progress and pages left in it.
    run_next: u64,
    run_left: u64,
    /// Next never-streamed page.
    fresh: u64,
    /// Starts and lengths of recent runs.
    recent: Vec<(u64, u64)>,
}

/// The generator, as a streaming trace reader.
pub struct SessionReader {
    cfg: SessionConfig,
    rng: Pcg64,
    apps: Vec<AppState>,
    seq: u64,
    fg: Option<u32>,
    burst_app: u32,
    burst_left: u64,
    burst_len: Geometric,
    p_burst: f64,
}

impl SessionReader {
    pub fn new(cfg: SessionConfig) -> Result<Self> {
        cfg.validate()?;
        let zipf = |n: u32, s: f64| {
            Zipf::new(n as f64, s).map_err(|e| Error::config(format!("session generator: {e}")))
        };
        let geo = |mean: f64| {
            Geometric::new(1.0 / mean).map_err(|e| Error::config(format!("session generator: {e}")))
        };
        let apps = cfg
            .apps
            .iter()
            .map(|a| {
                Ok(AppState {
                    hot: zipf(a.hot_pages, a.hot_alpha)?,
                    write: zipf(a.write_pages, a.write_alpha)?,
                    run_len: geo(a.stream_mean)?,
                    run_next: 0,
                    run_left: 0,
                    fresh: 0,
                    recent: Vec::with_capacity(RECENT_RUNS),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let b = cfg.burst_mean;
        let p_burst = if cfg.apps.len() < 2 || cfg.bg_share == 0.0 {
            0.0
        } else {
            (cfg.bg_share / (b * (1.0 - cfg.bg_share))).min(1.0)
        };
        Ok(SessionReader {
            rng: Pcg64::seed_from_u64(cfg.seed),
            burst_len: geo(b)?,
            cfg,
            apps,
            seq: 0,
            fg: None,
            burst_app: 0,
            burst_left: 0,
            p_burst,
        })
    }

    fn fg_of(&self, seq: u64) -> u32 {
        match seq.checked_div(self.cfg.switch_every) {
            None => 0,
            Some(turn) => (turn % self.cfg.apps.len() as u64) as u32,
        }
    }

    /// The next reference of app `a`.
    fn reference(&mut self, a: u32, foreground: bool) -> (u64, Op) {
        let prof = &self.cfg.apps[a as usize];
        let mix = if foreground { prof.fg_mix } else { prof.bg_mix };
        let base = (a as u64) << APP_SHIFT;
        let st = &mut self.apps[a as usize];
        let rng = &mut self.rng;
        if st.run_left > 0 {
            st.run_left -= 1;
            let p = st.run_next;
            st.run_next += 1;
            return (
                base + STREAM_BASE + p,
                if foreground { Op::Read } else { Op::Write },
            );
        }
        // `mix` gives shares of references; a stream start brings `stream_mean`
        // references on average, so it is drawn with weight mix[2] / stream_mean
        // (drawing it with weight mix[2] made streams ~90% of all references
        // and most of the footprint first touches, unlike the paper's traces,
        // whose hit ratio keeps rising up to 70-80% of the footprint, Figures
        // 4(a), 5(a)).
        let w = [mix[0], mix[1], mix[2] / prof.stream_mean];
        let u: f64 = rng.random::<f64>() * w.iter().sum::<f64>();
        if u < mix[0] {
            let k = st.hot.sample(rng) as u64 - 1;
            (base + k, Op::Read)
        } else if u < mix[0] + mix[1] {
            let k = st.write.sample(rng) as u64 - 1;
            (base + WRITE_BASE + k, Op::Write)
        } else {
            let len = 1 + st.run_len.sample(rng);
            let start = if !st.recent.is_empty() && rng.random::<f64>() < prof.revisit {
                // Revisit the start of a recent run (for a fresh run length).
                st.recent[rng.random_range(0..st.recent.len())].0
            } else {
                let s = st.fresh;
                st.fresh += len;
                if st.recent.len() == RECENT_RUNS {
                    st.recent.remove(0);
                }
                st.recent.push((s, len));
                s
            };
            st.run_next = start + 1;
            st.run_left = len - 1;
            (
                base + STREAM_BASE + start,
                if foreground { Op::Read } else { Op::Write },
            )
        }
    }
}

impl TraceReader for SessionReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let n_apps = self.cfg.apps.len() as u32;
        let mut emitted = 0;
        while emitted < max.max(1) && self.seq < self.cfg.refs {
            let time = self.seq * self.cfg.ref_interval_ns;
            let fg = self.fg_of(self.seq);
            if self.fg != Some(fg) {
                if let Some(old) = self.fg {
                    out.push(Record::Event(Event {
                        time,
                        app: old,
                        kind: EventKind::Background,
                    }));
                }
                out.push(Record::Event(Event {
                    time,
                    app: fg,
                    kind: EventKind::Foreground,
                }));
                self.fg = Some(fg);
                emitted += 1;
            }
            if self.burst_left == 0 && self.p_burst > 0.0 && self.rng.random::<f64>() < self.p_burst
            {
                let k = self.rng.random_range(0..n_apps - 1);
                self.burst_app = if k >= fg { k + 1 } else { k };
                self.burst_left = 1 + self.burst_len.sample(&mut self.rng);
            }
            let (app, foreground) = if self.burst_left > 0 && self.burst_app != fg {
                self.burst_left -= 1;
                (self.burst_app, false)
            } else {
                self.burst_left = 0;
                (fg, true)
            };
            let (page, op) = self.reference(app, foreground);
            out.push(Record::Access(Access::file(time, page, 1, op, app, 0)));
            self.seq += 1;
            emitted += 1;
        }
        Ok(self.seq < self.cfg.refs)
    }
    fn page_size(&self) -> u32 {
        DEFAULT_PAGE_SIZE
    }
    fn app_names(&self) -> Vec<String> {
        self.cfg.apps.iter().map(|a| a.name.clone()).collect()
    }
    fn format(&self) -> &'static str {
        "session"
    }
}
