//! The typed description of a generator ([`GenSpec`]): the keys every generator takes
//! ([`Placement`]), the keys every leaf takes ([`Stream`]), and each generator's own keys
//! ([`Shape`]). A spec is read from a TOML table (the options of format `synth`, or a compact spec
//! turned into one); unknown keys are rejected.

use serde::{Deserialize, Serialize};

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

/// Keys every generator takes: where it sits and how it is drawn inside its parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Seed of the generator's random numbers (derived from the parent's when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// First page, relative to the parent's start (after the previous component when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// Weight inside a `mix`.
    #[serde(default = "default_weight")]
    pub weight: f64,
}

impl Placement {
    const KEYS: &'static [&'static str] = &["seed", "start", "weight"];
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            seed: None,
            start: None,
            weight: default_weight(),
        }
    }
}

/// Keys every leaf generator (`zipf`, `scan`, `loop`) takes: what each access is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// Fraction of accesses that are writes.
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub kind: SynthKind,
    /// App index written into every access.
    #[serde(default)]
    pub app: u32,
}

impl Stream {
    const KEYS: &'static [&'static str] = &["write", "kind", "app"];
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZipfSpec {
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    pub pages: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    #[serde(default)]
    pub layout: Layout,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSpec {
    pub pages: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    pub pages: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub components: Vec<GenSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhasesSpec {
    pub components: Vec<GenSpec>,
}

/// What a generator draws, with the keys only it takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Zipf(ZipfSpec),
    Scan(ScanSpec),
    Loop(LoopSpec),
    Mix(MixSpec),
    Phases(PhasesSpec),
}

/// A generator description: the typed options of format `synth` (see the module docs of
/// `trace::synth` for the keys). As a table it is flat: `generator` names the shape, and the
/// placement, stream (leaves only) and shape keys sit side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "toml::Table", into = "toml::Table")]
pub struct GenSpec {
    pub placement: Placement,
    /// What each access is; only leaves take these keys (a composite's stays the default).
    pub stream: Stream,
    pub shape: Shape,
}

/// Generator names accepted as `generator` (and before `:` in a compact spec).
pub const GENERATORS: &[&str] = &["zipf", "scan", "loop", "mix", "phases"];

fn typed<T: serde::de::DeserializeOwned>(table: toml::Table, more_keys: &str) -> Result<T, String> {
    T::deserialize(toml::Value::Table(table)).map_err(|e| {
        let msg = e.to_string().trim().replace('\n', " ");
        if msg.contains("unknown field") {
            format!("{msg}, or one of the keys {more_keys}")
        } else {
            msg
        }
    })
}

impl TryFrom<toml::Table> for GenSpec {
    type Error = String;

    fn try_from(mut table: toml::Table) -> Result<Self, String> {
        let name = match table.remove("generator") {
            Some(toml::Value::String(s)) => s,
            Some(v) => return Err(format!("generator must be a string, got {v}")),
            None => {
                return Err(format!(
                    "missing field `generator` (one of: {})",
                    GENERATORS.join(", ")
                ))
            }
        };
        let leaf = matches!(name.as_str(), "zipf" | "scan" | "loop");
        let take = |table: &mut toml::Table, keys: &[&str]| -> toml::Table {
            keys.iter()
                .filter_map(|k| table.remove(*k).map(|v| (k.to_string(), v)))
                .collect()
        };
        let placement: Placement = typed(take(&mut table, Placement::KEYS), "")?;
        let (stream, more) = if leaf {
            (
                typed(take(&mut table, Stream::KEYS), "")?,
                "every generator takes (seed, start, weight) or every leaf takes (write, kind, app)",
            )
        } else {
            (
                Stream::default(),
                "every generator takes (seed, start, weight)",
            )
        };
        let shape = match name.as_str() {
            "zipf" => Shape::Zipf(typed(table, more)?),
            "scan" => Shape::Scan(typed(table, more)?),
            "loop" => Shape::Loop(typed(table, more)?),
            "mix" => Shape::Mix(typed(table, more)?),
            "phases" => Shape::Phases(typed(table, more)?),
            other => {
                return Err(format!(
                    "unknown generator '{other}'; expected one of: {}",
                    GENERATORS.join(", ")
                ))
            }
        };
        Ok(GenSpec {
            placement,
            stream,
            shape,
        })
    }
}

impl From<GenSpec> for toml::Table {
    fn from(spec: GenSpec) -> toml::Table {
        fn table_of<T: Serialize>(value: &T) -> toml::Table {
            toml::Table::try_from(value).expect("a generator's keys serialise to a table")
        }
        let mut t = toml::Table::new();
        t.insert("generator".into(), spec.name().into());
        t.extend(table_of(&spec.placement));
        if spec.is_leaf() {
            t.extend(table_of(&spec.stream));
        }
        t.extend(match &spec.shape {
            Shape::Zipf(s) => table_of(s),
            Shape::Scan(s) => table_of(s),
            Shape::Loop(s) => table_of(s),
            Shape::Mix(s) => table_of(s),
            Shape::Phases(s) => table_of(s),
        });
        t
    }
}

impl GenSpec {
    pub fn name(&self) -> &'static str {
        match self.shape {
            Shape::Zipf(_) => "zipf",
            Shape::Scan(_) => "scan",
            Shape::Loop(_) => "loop",
            Shape::Mix(_) => "mix",
            Shape::Phases(_) => "phases",
        }
    }

    /// Whether the generator draws pages itself (rather than from components).
    pub fn is_leaf(&self) -> bool {
        self.children().is_none()
    }

    /// The components of a `mix` or `phases`.
    pub fn children(&self) -> Option<&[GenSpec]> {
        match &self.shape {
            Shape::Mix(m) => Some(&m.components),
            Shape::Phases(p) => Some(&p.components),
            _ => None,
        }
    }

    /// Pages spanned from the generator's start (its footprint for leaves).
    pub fn extent(&self) -> u64 {
        match &self.shape {
            Shape::Zipf(s) => s.pages,
            Shape::Scan(s) => s.pages,
            Shape::Loop(s) => s.pages,
            Shape::Mix(m) => children_extent(&m.components),
            Shape::Phases(p) => children_extent(&p.components),
        }
    }

    /// Number of accesses, or None when unbounded.
    pub fn accesses(&self) -> Option<u64> {
        match &self.shape {
            Shape::Zipf(s) => s.n,
            Shape::Scan(s) => Some(s.pages),
            Shape::Loop(s) => s.n,
            Shape::Mix(m) => {
                let all: Option<u64> = m.components.iter().map(|c| c.accesses()).sum();
                match (m.n, all) {
                    (Some(n), Some(a)) => Some(n.min(a)),
                    (Some(n), None) => Some(n),
                    (None, a) => a,
                }
            }
            Shape::Phases(p) => p.components.iter().map(|c| c.accesses()).sum(),
        }
    }

    /// Pages the generator keeps a permutation of (`layout=scrambled` leaves): 4 bytes each, drawn
    /// and shuffled before the first access, so the set-up time and memory grow with it.
    pub fn permuted_pages(&self) -> u64 {
        match (&self.shape, self.children()) {
            (Shape::Zipf(s), _) if s.layout == Layout::Scrambled => s.pages,
            (_, Some(cs)) => cs.iter().map(GenSpec::permuted_pages).sum(),
            _ => 0,
        }
    }

    /// The largest app index of any access.
    pub fn max_app(&self) -> u32 {
        match self.children() {
            Some(cs) => cs.iter().map(GenSpec::max_app).max().unwrap_or(0),
            None => self.stream.app,
        }
    }

    /// Checks every value; `bounded` requires a finite length.
    pub fn validate(&self, bounded: bool) -> Result<(), String> {
        let name = self.name();
        let w = self.placement.weight;
        if !(w.is_finite() && w > 0.0) {
            return Err(format!("{name}: weight must be a number > 0, got {w}"));
        }
        match &self.shape {
            Shape::Zipf(ZipfSpec { pages, .. })
            | Shape::Scan(ScanSpec { pages })
            | Shape::Loop(LoopSpec { pages, .. }) => {
                if *pages < 1 {
                    return Err(format!("{name}: pages must be >= 1"));
                }
                let write = self.stream.write;
                if !(0.0..=1.0).contains(&write) {
                    return Err(format!("{name}: write must be in [0, 1], got {write}"));
                }
            }
            Shape::Mix(_) | Shape::Phases(_) => {}
        }
        if let Shape::Zipf(s) = &self.shape {
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
        if let Some(cs) = self.children() {
            if cs.is_empty() {
                return Err(format!("{name}: needs at least one component"));
            }
            // A mix's components may be endless (the mix's n bounds them); a phase may not.
            let phases = matches!(self.shape, Shape::Phases(_));
            for c in cs {
                c.validate(phases)?;
            }
        }
        if bounded && self.accesses().is_none() {
            return Err(format!(
                "{name}: the trace would be endless; give n{}",
                if matches!(self.shape, Shape::Mix(_)) {
                    " (of the mix, or of every component)"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }
}

/// Extent of components laid out one after another (explicit `start`s are
/// relative to the parent's start and may overlap).
pub(super) fn children_extent(cs: &[GenSpec]) -> u64 {
    let mut next = 0u64;
    let mut end = 0u64;
    for c in cs {
        let s = c.placement.start.unwrap_or(next);
        let e = s.saturating_add(c.extent());
        end = end.max(e);
        next = e;
    }
    end
}
