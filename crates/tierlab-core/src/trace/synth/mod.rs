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

mod compact;
mod gen;
mod spec;

pub use compact::{looks_like_spec, parse_spec};
pub use spec::{
    GenSpec, Layout, LoopSpec, MixSpec, PhasesSpec, Placement, ScanSpec, Shape, Stream, SynthKind,
    ZipfSpec, GENERATORS,
};

use crate::error::{Error, Result};
use crate::trace::{Access, Record, TraceReader, DEFAULT_PAGE_SIZE};
use gen::Gen;
use std::path::Path;

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
        let gen = Gen::new(&spec, 0, 0);
        let apps = spec.max_app() + 1;
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
        GenSpec::try_from(options.clone())
            .map_err(|m| Error::config(format!("options of trace format 'synth': {m}")))?
    };
    Ok(Box::new(SynthReader::new(spec)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permuted_pages_counts_scrambled_leaves_only() {
        let one = parse_spec("zipf:alpha=0.8,pages=1e9,n=1e3,layout=scrambled").unwrap();
        assert_eq!(one.permuted_pages(), 1_000_000_000);
        assert_eq!(
            parse_spec("zipf:alpha=0.8,pages=1e9,n=1e3")
                .unwrap()
                .permuted_pages(),
            0
        );
        let mix = parse_spec(
            "mix:0.5*zipf(alpha=0.8,pages=50,layout=scrambled)+0.5*scan(pages=70),n=100",
        )
        .unwrap();
        assert_eq!(mix.permuted_pages(), 50);
    }

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
        let Shape::Phases(p) = &s.shape else {
            panic!("{s:?}")
        };
        assert_eq!(p.components.len(), 2);
        let Shape::Mix(m) = &p.components[0].shape else {
            panic!()
        };
        assert_eq!(p.components[0].placement.seed, Some(3));
        assert_eq!(m.components[0].placement.weight, 0.25);
        assert_eq!(m.components[1].placement.weight, 0.75);
        assert_eq!(s.extent(), 8);
        assert_eq!(s.accesses(), Some(12));
    }

    #[test]
    fn a_spec_round_trips_through_its_flat_table() {
        let s = parse_spec(
            "mix:0.3*zipf(alpha=0.8,pages=50,write=0.5,kind=anon,app=2,layout=scrambled)\
             +0.7*loop(pages=9,start=100,seed=4),n=40,seed=1",
        )
        .unwrap();
        let table = toml::Table::from(s.clone());
        let zipf = table["components"].as_array().unwrap()[0]
            .as_table()
            .unwrap();
        assert_eq!(zipf["generator"].as_str(), Some("zipf"));
        assert_eq!(zipf["kind"].as_str(), Some("anon"));
        assert_eq!(zipf["weight"].as_float(), Some(0.3));
        assert!(
            !table.contains_key("write"),
            "a composite has no stream keys: {table}"
        );
        assert_eq!(GenSpec::try_from(table).unwrap(), s);
    }

    #[test]
    fn an_unknown_key_lists_the_shared_keys_too() {
        let e = parse_spec("scan:pages=3,wirte=0.5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `wirte`"), "{e}");
        assert!(e.contains("(write, kind, app)"), "{e}");
        // A composite does not take a leaf's keys.
        let e = parse_spec("mix:scan(pages=3),write=0.5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `write`"), "{e}");
        assert!(!e.contains("(write, kind, app)"), "{e}");
    }
}
