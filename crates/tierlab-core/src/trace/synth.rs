//! Synthetic trace generators: Zipf, sequential scan, loop, and their
//! weighted mixtures and phases. A generator is a [`TraceReader`] (format name
//! `synth`), so the engine streams it like a file and nothing is materialised.
//!
//! # Generators
//!
//! | name     | keys (defaults) | trace |
//! |----------|-----------------|-------|
//! | `zipf`   | `alpha` (1.0), `pages`, `n`, `layout` (`hot`) | `n` draws of rank `k` with probability ∝ `1/k^alpha` over `pages` pages |
//! | `scan`   | `pages` | pages `start, start+1, ..., start+pages-1`, each once |
//! | `loop`   | `pages`, `n` | `n` accesses cycling over `start .. start+pages` |
//! | `mix`    | components, `n` (optional) | weighted interleaving: each access comes from component `i` with probability `weight_i / Σ weight` (over the components not yet exhausted) |
//! | `phases` | components | the components one after another |
//!
//! Keys every leaf generator (`zipf`, `scan`, `loop`) takes: `write` (fraction
//! of accesses that are writes, 0.0), `kind` (`file` or `anon`, `file`),
//! `app` (app index written into every access, 0), `seed` (0), `start`
//! (first page), and `weight` (1.0; used only inside a `mix`).
//!
//! `layout=hot` maps rank 1 to page `start`, rank 2 to `start+1`, and so on;
//! `layout=scrambled` maps ranks to pages through a permutation of the
//! `pages` pages drawn from the generator's seed (so hot pages are not
//! neighbours, which matters to anything that looks at spatial locality).
//!
//! # Compact spec (command line)
//!
//! ```text
//! zipf:alpha=1.0,pages=1000000,n=10000000,seed=1
//! zipf:alpha=0.8,pages=1e6,n=1e7,write=0.3,kind=anon,layout=scrambled
//! scan:pages=50000,start=2000000
//! loop:pages=1200,n=100000
//! mix:0.9*zipf(alpha=1.0,pages=10000)+0.1*scan(pages=100000),n=1000000,seed=7
//! phases:zipf(alpha=1.0,pages=1000,n=50000)+loop(pages=3000,n=30000)
//! ```
//!
//! A spec is `NAME:KEY=VALUE,...`. Inside `mix` and `phases`, components are
//! written `[WEIGHT*]NAME(KEY=VALUE,...)` and joined by `+` (or `,`); they nest
//! (`phases:mix(0.5*zipf(...)+0.5*loop(...),n=1000)+scan(pages=10)`). Numbers
//! may use `_` separators and, for integers, exponent notation (`1e6`).
//!
//! The same generators as a TOML options table of format `synth` (typed,
//! unknown keys rejected), e.g. in Python `trace={"format": "synth", ...}`:
//!
//! ```toml
//! generator = "mix"
//! n = 1000000
//! seed = 7
//! components = [
//!   { generator = "zipf", weight = 0.9, alpha = 1.0, pages = 10000 },
//!   { generator = "scan", weight = 0.1, pages = 100000 },
//! ]
//! ```
//!
//! # Semantics
//!
//! - `time` is the access's ordinal in the generated trace; every access is
//!   one page (`npages = 1`).
//! - A component of a `mix` or `phases` without an explicit `start` is placed
//!   right after the pages of the component before it, so components touch
//!   disjoint pages unless told otherwise (`start=0` in each shares them).
//! - A component without a `seed` gets one derived from its parent's seed and
//!   its position, so two identical components still differ.
//! - In a `mix`, an exhausted component (a `scan` after its pages, a
//!   component whose `n` is reached) drops out and the others keep their
//!   relative weights; the mix ends at its `n` or when every component is
//!   exhausted. `zipf` and `loop` without `n` are unbounded inside a `mix`, so
//!   the mix then needs an `n`. At the top level and in `phases`, every
//!   generator must be bounded.
//!
//! # Reproducibility
//!
//! Same spec and seed, same trace. Random numbers come from `rand_pcg`'s
//! `Pcg64Mcg`, a generator whose output for a given seed is fixed by its
//! algorithm and documented as portable across platforms and crate versions;
//! Zipf ranks from `rand_distr::Zipf` (rejection-inversion sampling, exact for
//! every `alpha >= 0`), the permutation from `rand`'s `shuffle` and mixture
//! choices from `rand`'s `WeightedIndex`. `rand` documents these
//! distributions' values as stable within a minor release only; the lock file
//! pins them, and a test (`synth_golden_stream`) fails if an upgrade changes
//! the stream.

use crate::error::{Error, Result};
use crate::trace::{Access, Kind, Op, Record, TraceReader, DEFAULT_PAGE_SIZE};
use rand::distr::weighted::WeightedIndex;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Generator names accepted before `:` in a compact spec.
pub const GENERATORS: &[&str] = &["zipf", "scan", "loop", "mix", "phases"];

/// Page kind of generated accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SynthKind {
    #[default]
    File,
    Anon,
}

/// How Zipf ranks map to pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Rank 1 is page `start`, rank 2 page `start + 1`, ...
    #[default]
    Hot,
    /// Ranks are mapped through a seeded random permutation of the pages.
    Scrambled,
}

fn default_alpha() -> f64 {
    1.0
}
fn default_weight() -> f64 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZipfSpec {
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    pub pages: u64,
    #[serde(default)]
    pub n: Option<u64>,
    #[serde(default)]
    pub layout: Layout,
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub kind: SynthKind,
    #[serde(default)]
    pub app: u32,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSpec {
    pub pages: u64,
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub kind: SynthKind,
    #[serde(default)]
    pub app: u32,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    pub pages: u64,
    #[serde(default)]
    pub n: Option<u64>,
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub kind: SynthKind,
    #[serde(default)]
    pub app: u32,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub components: Vec<GenSpec>,
    #[serde(default)]
    pub n: Option<u64>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhasesSpec {
    pub components: Vec<GenSpec>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

/// A generator description: the typed options of format `synth`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "generator", rename_all = "lowercase")]
pub enum GenSpec {
    Zipf(ZipfSpec),
    Scan(ScanSpec),
    Loop(LoopSpec),
    Mix(MixSpec),
    Phases(PhasesSpec),
}

impl GenSpec {
    fn name(&self) -> &'static str {
        match self {
            GenSpec::Zipf(_) => "zipf",
            GenSpec::Scan(_) => "scan",
            GenSpec::Loop(_) => "loop",
            GenSpec::Mix(_) => "mix",
            GenSpec::Phases(_) => "phases",
        }
    }
    fn weight(&self) -> f64 {
        match self {
            GenSpec::Zipf(s) => s.weight,
            GenSpec::Scan(s) => s.weight,
            GenSpec::Loop(s) => s.weight,
            GenSpec::Mix(s) => s.weight,
            GenSpec::Phases(s) => s.weight,
        }
    }
    fn start(&self) -> Option<u64> {
        match self {
            GenSpec::Zipf(s) => s.start,
            GenSpec::Scan(s) => s.start,
            GenSpec::Loop(s) => s.start,
            GenSpec::Mix(s) => s.start,
            GenSpec::Phases(s) => s.start,
        }
    }
    /// Pages spanned from the generator's start (its footprint for leaves).
    pub fn extent(&self) -> u64 {
        match self {
            GenSpec::Zipf(s) => s.pages,
            GenSpec::Scan(s) => s.pages,
            GenSpec::Loop(s) => s.pages,
            GenSpec::Mix(m) => children_extent(&m.components),
            GenSpec::Phases(p) => children_extent(&p.components),
        }
    }
    /// Number of accesses, or None when unbounded.
    pub fn accesses(&self) -> Option<u64> {
        match self {
            GenSpec::Zipf(s) => s.n,
            GenSpec::Scan(s) => Some(s.pages),
            GenSpec::Loop(s) => s.n,
            GenSpec::Mix(m) => {
                let all: Option<u64> = m.components.iter().map(|c| c.accesses()).sum();
                match (m.n, all) {
                    (Some(n), Some(a)) => Some(n.min(a)),
                    (Some(n), None) => Some(n),
                    (None, a) => a,
                }
            }
            GenSpec::Phases(p) => p.components.iter().map(|c| c.accesses()).sum(),
        }
    }
}

/// Extent of components laid out one after another (explicit `start`s are
/// relative to the parent's start and may overlap).
fn children_extent(cs: &[GenSpec]) -> u64 {
    let mut next = 0u64;
    let mut end = 0u64;
    for c in cs {
        let s = c.start().unwrap_or(next);
        let e = s.saturating_add(c.extent());
        end = end.max(e);
        next = e;
    }
    end
}

/// Parses a compact spec such as `zipf:alpha=1.0,pages=1000,n=5000`.
pub fn parse_spec(text: &str) -> Result<GenSpec> {
    let table = spec_to_table(text).map_err(|m| bad_spec(text, &m))?;
    let spec: GenSpec = GenSpec::deserialize(toml::Value::Table(table))
        .map_err(|e| bad_spec(text, &e.to_string()))?;
    spec.validate(true).map_err(|m| bad_spec(text, &m))?;
    Ok(spec)
}

fn bad_spec(text: &str, msg: &str) -> Error {
    Error::config(format!(
        "synthetic trace '{text}': {}",
        msg.trim().replace('\n', " ")
    ))
}

/// Whether `path` is a generator spec rather than a file name: it starts with
/// a generator name and `:`, and no file of that name exists.
pub fn looks_like_spec(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    GENERATORS
        .iter()
        .any(|g| s.strip_prefix(g).is_some_and(|r| r.starts_with(':')))
        && !path.exists()
}

/// Splits at top-level separators (outside parentheses).
fn split_top(s: &str, seps: &[char]) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ')'".into());
                }
            }
            _ => {}
        }
        if depth == 0 && seps.contains(&ch) {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    if depth != 0 {
        return Err("unbalanced '('".into());
    }
    out.push(cur);
    Ok(out)
}

/// `NAME:BODY` to a table with `generator = NAME`.
fn spec_to_table(text: &str) -> std::result::Result<toml::Table, String> {
    let (name, body) = text
        .split_once(':')
        .ok_or_else(|| format!("expected NAME:KEY=VALUE,... with NAME one of {GENERATORS:?}"))?;
    gen_table(name.trim(), body)
}

fn gen_table(name: &str, body: &str) -> std::result::Result<toml::Table, String> {
    if !GENERATORS.contains(&name) {
        return Err(format!(
            "unknown generator '{name}'; expected one of: {}",
            GENERATORS.join(", ")
        ));
    }
    let mut t = toml::Table::new();
    t.insert("generator".into(), toml::Value::String(name.into()));
    let composite = name == "mix" || name == "phases";
    let mut components = Vec::new();
    for item in split_top(body, if composite { &[',', '+'] } else { &[','] })? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let paren = item.find('(');
        let eq = item.find('=');
        let is_component = match (paren, eq) {
            (Some(p), Some(e)) => p < e,
            (Some(_), None) => true,
            _ => false,
        };
        if is_component {
            if !composite {
                return Err(format!("'{item}': only mix and phases take components"));
            }
            components.push(toml::Value::Table(component_table(item)?));
        } else {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("'{item}': expected KEY=VALUE"))?;
            let k = k.trim();
            if k == "generator" || k == "components" {
                return Err(format!("'{k}' is not a key of the compact form"));
            }
            if t.insert(k.into(), parse_value(v.trim())).is_some() {
                return Err(format!("key '{k}' given twice"));
            }
        }
    }
    if composite {
        t.insert("components".into(), toml::Value::Array(components));
    }
    Ok(t)
}

/// `[WEIGHT*]NAME(BODY)`.
fn component_table(item: &str) -> std::result::Result<toml::Table, String> {
    let open = item.find('(').expect("checked by the caller");
    let head = item[..open].trim();
    let Some(inner) = item[open + 1..].strip_suffix(')') else {
        return Err(format!("'{item}': expected NAME(KEY=VALUE,...)"));
    };
    let (weight, name) = match head.split_once('*') {
        Some((w, n)) => {
            let w: f64 = w
                .trim()
                .parse()
                .map_err(|_| format!("'{item}': bad weight '{}'", w.trim()))?;
            (Some(w), n.trim())
        }
        None => (None, head),
    };
    let mut t = gen_table(name, inner)?;
    if let Some(w) = weight {
        if t.insert("weight".into(), toml::Value::Float(w)).is_some() {
            return Err(format!("'{item}': weight given twice"));
        }
    }
    Ok(t)
}

fn parse_value(v: &str) -> toml::Value {
    let clean: String = v.chars().filter(|&c| c != '_').collect();
    if let Ok(i) = clean.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = clean.parse::<f64>() {
        let integral_exp = clean.contains(['e', 'E']) && !clean.contains('.');
        if integral_exp && f.fract() == 0.0 && f.abs() < 9.0e18 {
            return toml::Value::Integer(f as i64);
        }
        return toml::Value::Float(f);
    }
    toml::Value::String(v.to_string())
}

impl GenSpec {
    /// Checks every value; `bounded` requires a finite length.
    pub fn validate(&self, bounded: bool) -> std::result::Result<(), String> {
        let name = self.name();
        let w = self.weight();
        if !(w.is_finite() && w > 0.0) {
            return Err(format!("{name}: weight must be a number > 0, got {w}"));
        }
        let check_write = |write: f64| {
            if (0.0..=1.0).contains(&write) {
                Ok(())
            } else {
                Err(format!("{name}: write must be in [0, 1], got {write}"))
            }
        };
        let check_pages = |pages: u64| {
            if pages >= 1 {
                Ok(())
            } else {
                Err(format!("{name}: pages must be >= 1"))
            }
        };
        match self {
            GenSpec::Zipf(s) => {
                check_pages(s.pages)?;
                check_write(s.write)?;
                if !(s.alpha.is_finite() && s.alpha >= 0.0) {
                    return Err(format!(
                        "zipf: alpha must be a number >= 0, got {}",
                        s.alpha
                    ));
                }
                if s.layout == Layout::Scrambled && s.pages > (1 << 32) {
                    return Err(format!(
                        "zipf: layout=scrambled keeps a permutation of the pages in memory; \
                         pages must be <= 2^32, got {}",
                        s.pages
                    ));
                }
            }
            GenSpec::Scan(s) => {
                check_pages(s.pages)?;
                check_write(s.write)?;
            }
            GenSpec::Loop(s) => {
                check_pages(s.pages)?;
                check_write(s.write)?;
            }
            GenSpec::Mix(m) => {
                if m.components.is_empty() {
                    return Err("mix: needs at least one component".into());
                }
                for c in &m.components {
                    c.validate(false)?;
                }
            }
            GenSpec::Phases(p) => {
                if p.components.is_empty() {
                    return Err("phases: needs at least one component".into());
                }
                for c in &p.components {
                    c.validate(true)?;
                }
            }
        }
        if bounded && self.accesses().is_none() {
            return Err(format!(
                "{name}: the trace would be endless; give n{}",
                if matches!(self, GenSpec::Mix(_)) {
                    " (of the mix, or of every component)"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }

    /// Builds the generator's state; `base` is the parent's first page and
    /// `seed` the seed to use when the spec gives none.
    fn build(&self, base: u64, seed: u64) -> Gen {
        let start = base.saturating_add(self.start().unwrap_or(0));
        match self {
            GenSpec::Zipf(s) => {
                let mut rng = Pcg64Mcg::seed_from_u64(s.seed.unwrap_or(seed));
                let perm = (s.layout == Layout::Scrambled).then(|| {
                    let mut p: Vec<u32> = (0..s.pages as u32).collect();
                    p.shuffle(&mut rng);
                    p
                });
                Gen::Zipf {
                    leaf: Leaf::new(rng, start, s.write, s.kind, s.app, s.n),
                    dist: Zipf::new(s.pages as f64, s.alpha).expect("validated"),
                    pages: s.pages,
                    perm,
                }
            }
            GenSpec::Scan(s) => Gen::Scan {
                leaf: Leaf::new(
                    Pcg64Mcg::seed_from_u64(s.seed.unwrap_or(seed)),
                    start,
                    s.write,
                    s.kind,
                    s.app,
                    Some(s.pages),
                ),
                i: 0,
            },
            GenSpec::Loop(s) => Gen::Loop {
                leaf: Leaf::new(
                    Pcg64Mcg::seed_from_u64(s.seed.unwrap_or(seed)),
                    start,
                    s.write,
                    s.kind,
                    s.app,
                    s.n,
                ),
                pages: s.pages,
                i: 0,
            },
            GenSpec::Mix(m) => {
                let seed = m.seed.unwrap_or(seed);
                let comps = build_children(&m.components, start, seed);
                let weights: Vec<f64> = m.components.iter().map(|c| c.weight()).collect();
                Gen::Mix {
                    rng: Pcg64Mcg::seed_from_u64(seed),
                    comps,
                    pick: WeightedIndex::new(&weights).expect("validated weights"),
                    left: m.n,
                }
            }
            GenSpec::Phases(p) => {
                let seed = p.seed.unwrap_or(seed);
                Gen::Phases {
                    comps: build_children(&p.components, start, seed),
                    cur: 0,
                }
            }
        }
    }
}

/// Derives a child's seed from its parent's (SplitMix64 finaliser of the
/// parent seed and the child's position), so siblings get unrelated streams.
fn child_seed(parent: u64, index: usize) -> u64 {
    let mut z = parent.wrapping_add((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn build_children(cs: &[GenSpec], base: u64, seed: u64) -> Vec<Gen> {
    let mut next = 0u64;
    cs.iter()
        .enumerate()
        .map(|(i, c)| {
            let rel = c.start().unwrap_or(next);
            next = rel.saturating_add(c.extent());
            // `build` adds the spec's own `start`; pass the auto offset in
            // the base only when the spec has none.
            let b = if c.start().is_some() {
                base
            } else {
                base.saturating_add(rel)
            };
            c.build(b, child_seed(seed, i))
        })
        .collect()
}

/// State shared by the leaf generators.
struct Leaf {
    rng: Pcg64Mcg,
    start: u64,
    write: f64,
    kind: Kind,
    app: u32,
    left: Option<u64>,
}

impl Leaf {
    fn new(
        rng: Pcg64Mcg,
        start: u64,
        write: f64,
        kind: SynthKind,
        app: u32,
        n: Option<u64>,
    ) -> Self {
        Leaf {
            rng,
            start,
            write,
            kind: match kind {
                SynthKind::File => Kind::File,
                SynthKind::Anon => Kind::Anon,
            },
            app,
            left: n,
        }
    }

    /// Takes one access from the budget; false when exhausted.
    #[inline]
    fn take(&mut self) -> bool {
        match &mut self.left {
            Some(0) => false,
            Some(l) => {
                *l -= 1;
                true
            }
            None => true,
        }
    }

    #[inline]
    fn access(&mut self, offset: u64) -> Gened {
        let op = if self.write > 0.0 && self.rng.random::<f64>() < self.write {
            Op::Write
        } else {
            Op::Read
        };
        Gened {
            page: self.start.wrapping_add(offset),
            op,
            kind: self.kind,
            app: self.app,
        }
    }
}

struct Gened {
    page: u64,
    op: Op,
    kind: Kind,
    app: u32,
}

enum Gen {
    Zipf {
        leaf: Leaf,
        dist: Zipf<f64>,
        pages: u64,
        perm: Option<Vec<u32>>,
    },
    Scan {
        leaf: Leaf,
        i: u64,
    },
    Loop {
        leaf: Leaf,
        pages: u64,
        i: u64,
    },
    Mix {
        rng: Pcg64Mcg,
        comps: Vec<Gen>,
        pick: WeightedIndex<f64>,
        left: Option<u64>,
    },
    Phases {
        comps: Vec<Gen>,
        cur: usize,
    },
}

impl Gen {
    fn next(&mut self) -> Option<Gened> {
        match self {
            Gen::Zipf {
                leaf,
                dist,
                pages,
                perm,
            } => {
                if !leaf.take() {
                    return None;
                }
                let rank = (dist.sample(&mut leaf.rng) as u64).clamp(1, *pages) - 1;
                let off = match perm {
                    Some(p) => p[rank as usize] as u64,
                    None => rank,
                };
                Some(leaf.access(off))
            }
            Gen::Scan { leaf, i } => {
                if !leaf.take() {
                    return None;
                }
                *i += 1;
                Some(leaf.access(*i - 1))
            }
            Gen::Loop { leaf, pages, i } => {
                if !leaf.take() {
                    return None;
                }
                let off = *i;
                *i = (*i + 1) % *pages;
                Some(leaf.access(off))
            }
            Gen::Mix {
                rng,
                comps,
                pick,
                left,
            } => {
                if *left == Some(0) {
                    return None;
                }
                loop {
                    let i = pick.sample(rng);
                    if let Some(g) = comps[i].next() {
                        if let Some(l) = left {
                            *l -= 1;
                        }
                        return Some(g);
                    }
                    // Component exhausted: drop it; done when none is left.
                    if pick.update_weights(&[(i, &0.0)]).is_err() {
                        *left = Some(0);
                        return None;
                    }
                }
            }
            Gen::Phases { comps, cur } => {
                while *cur < comps.len() {
                    if let Some(g) = comps[*cur].next() {
                        return Some(g);
                    }
                    *cur += 1;
                }
                None
            }
        }
    }
}

/// A generator streamed as a trace (format `synth`).
pub struct SynthReader {
    spec: GenSpec,
    gen: Gen,
    seq: u64,
    apps: u32,
}

impl SynthReader {
    /// Builds the reader of a validated spec (see [`parse_spec`]).
    pub fn new(spec: GenSpec) -> Result<Self> {
        spec.validate(true)
            .map_err(|m| Error::config(format!("synthetic trace: {m}")))?;
        let gen = spec.build(0, 0);
        let apps = max_app(&spec) + 1;
        Ok(SynthReader {
            spec,
            gen,
            seq: 0,
            apps,
        })
    }

    pub fn spec(&self) -> &GenSpec {
        &self.spec
    }
}

fn max_app(s: &GenSpec) -> u32 {
    match s {
        GenSpec::Zipf(z) => z.app,
        GenSpec::Scan(z) => z.app,
        GenSpec::Loop(z) => z.app,
        GenSpec::Mix(m) => m.components.iter().map(max_app).max().unwrap_or(0),
        GenSpec::Phases(p) => p.components.iter().map(max_app).max().unwrap_or(0),
    }
}

impl TraceReader for SynthReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        for _ in 0..max {
            let Some(g) = self.gen.next() else {
                return Ok(false);
            };
            out.push(Record::Access(Access {
                time: self.seq,
                page: g.page,
                op: g.op,
                kind: g.kind,
                app: g.app,
                npages: 1,
                size: 0,
            }));
            self.seq += 1;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        DEFAULT_PAGE_SIZE
    }

    fn app_names(&self) -> Vec<String> {
        if self.apps <= 1 {
            vec!["all".to_string()]
        } else {
            (0..self.apps).map(|i| format!("app{i}")).collect()
        }
    }

    fn format(&self) -> &'static str {
        "synth"
    }
}

/// Opens format `synth`: the generator comes from the options table when it
/// is not empty, and otherwise from `path` read as a compact spec.
pub fn open(path: &Path, options: &toml::Table) -> Result<Box<dyn TraceReader>> {
    let spec = if options.is_empty() {
        let text = path.to_str().unwrap_or_default();
        if text.is_empty() {
            return Err(Error::config(
                "trace format 'synth' needs a generator: a spec such as \
                 'zipf:alpha=1.0,pages=1000,n=10000' or an options table with 'generator'",
            ));
        }
        parse_spec(text)?
    } else {
        if !path.as_os_str().is_empty() {
            return Err(Error::config(format!(
                "trace format 'synth': give the generator either as a spec ('{}') or as \
                 options, not both",
                path.display()
            )));
        }
        GenSpec::deserialize(toml::Value::Table(options.clone())).map_err(|e| {
            Error::config(format!(
                "options of trace format 'synth': {}",
                e.to_string().trim().replace('\n', " ")
            ))
        })?
    };
    Ok(Box::new(SynthReader::new(spec)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_told_from_file_paths() {
        assert!(looks_like_spec(Path::new("zipf:alpha=1,pages=10,n=5")));
        assert!(looks_like_spec(Path::new("mix:scan(pages=3)")));
        assert!(!looks_like_spec(Path::new("traces/zipf:x.lis")));
        assert!(!looks_like_spec(Path::new("zipfian.trace")));
        assert!(!looks_like_spec(Path::new("Cargo.toml")));
        // An existing file whose name looks like a spec stays a file.
        let name = format!("scan:tierlab-test-{}.trace", std::process::id());
        std::fs::write(&name, "1\n").unwrap();
        let is_spec = looks_like_spec(Path::new(&name));
        std::fs::remove_file(&name).unwrap();
        assert!(!is_spec);
    }

    #[test]
    fn nested_components_parse_to_the_same_tree_as_tables() {
        let s = parse_spec(
            "phases:mix(0.25*scan(pages=4)+0.75*loop(pages=2,n=6),seed=3)+scan(pages=2)",
        )
        .unwrap();
        let GenSpec::Phases(p) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(p.components.len(), 2);
        let GenSpec::Mix(m) = &p.components[0] else {
            panic!()
        };
        assert_eq!(m.seed, Some(3));
        assert_eq!(m.components[0].weight(), 0.25);
        assert_eq!(m.components[1].weight(), 0.75);
        assert_eq!(s.extent(), 8);
        assert_eq!(s.accesses(), Some(12));
    }
}
