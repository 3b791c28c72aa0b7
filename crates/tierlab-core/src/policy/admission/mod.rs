//! Admission policies: whether a missed object (or page) is cached at all, an axis of its own
//! beside the replacement policy. Any policy takes one, in page and object-size mode:
//! `lru+bloom`, `s3fifo+prob(p=0.2)`, `fifo+size(threshold=65536)`,
//! `lru+sizeprob(exponent=1e-6)`, `lru+adaptsize`, or in an
//! experiment file / a Python dict the reserved parameter `admit = "bloom"` /
//! `admit = {name = "prob", p = 0.2}`. `tierlab policies --admission` lists them.
//!
//! The wrapper [`Admitted`] asks the admission policy on every miss, as libCacheSim's
//! `cache_can_insert_default` does (before its too-large check): a refused miss is reported as
//! `miss_bypass` and the replacement policy never sees it. It knows which objects are resident
//! by watching the policy's `miss` and `evict` reports, so it needs nothing from the policy.
//! Difference from libCacheSim: libCacheSim's policies look the object up (dropping a ghost
//! entry, e.g. ARC's and S3-FIFO's) before asking the admission policy; here a refused miss
//! leaves the policy's history untouched. The two can only differ when an object that was once
//! cached (so can be a ghost) is refused later: never with `bloom` (it refuses only first
//! misses), nor with `size` while an object keeps its size; possible with `prob`, `sizeprob`
//! and `adaptsize`. Bloom and size admission equal libCacheSim's for FIFO, LRU, CLOCK, SIEVE, LFU and
//! S3-FIFO in both modes (crates/tierlab-core/tests/libcachesim_object_conformance.rs).

pub mod adaptsize;
pub mod bloom;
pub mod prob;
pub mod size;
pub mod sizeprob;

use crate::error::{Error, Result};
use crate::policy::{Policy, PolicyCtx};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Event;
use serde::Serialize;

/// The reserved policy parameter that holds the admission policy.
pub const ADMIT_KEY: &str = "admit";

/// Position of the first `+` outside parentheses and quotes in a policy spec.
pub fn top_level_plus(text: &str) -> Option<usize> {
    top_level(text, '+').next()
}

/// The byte offsets of `sep` in `text` outside brackets and quotes.
pub fn top_level(text: &str, sep: char) -> impl Iterator<Item = usize> + '_ {
    let (mut depth, mut quote) = (0i32, None);
    text.char_indices().filter_map(move |(i, c)| {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (_, Some(_)) => {}
            ('(' | '[' | '{', None) => depth += 1,
            (')' | ']' | '}', None) => depth -= 1,
            (c, None) if c == sep && depth == 0 => return Some(i),
            _ => {}
        }
        None
    })
}

/// An admission policy's name and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionSpec {
    pub name: String,
    pub params: toml::Table,
}

/// Name, aliases, summary and default parameters of an admission policy.
#[derive(Debug, Clone, Serialize)]
pub struct AdmissionInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    /// The default parameters, as TOML.
    pub defaults: String,
}

/// One admission policy type.
pub trait AdmissionDef: Sized {
    const NAME: &'static str;
    const ALIASES: &'static [&'static str] = &[];
    const SUMMARY: &'static str;
    type Config: serde::de::DeserializeOwned + Serialize + Default + std::fmt::Debug;
    fn build(cfg: &Self::Config, ctx: &PolicyCtx) -> Result<Self>;
}

fn info<A: AdmissionDef>() -> AdmissionInfo {
    AdmissionInfo {
        name: A::NAME,
        aliases: A::ALIASES,
        summary: A::SUMMARY,
        defaults: toml::to_string(&A::Config::default()).unwrap_or_default(),
    }
}

/// Every admission policy.
pub fn all_admissions() -> Vec<AdmissionInfo> {
    vec![
        info::<bloom::Bloom>(),
        info::<prob::Prob>(),
        info::<size::SizeThreshold>(),
        info::<sizeprob::SizeProb>(),
        info::<adaptsize::AdaptSize>(),
    ]
}

fn matches<A: AdmissionDef>(name: &str) -> bool {
    A::NAME.eq_ignore_ascii_case(name) || A::ALIASES.iter().any(|a| a.eq_ignore_ascii_case(name))
}

fn config<A: AdmissionDef>(spec: &AdmissionSpec) -> Result<A::Config> {
    use serde::Deserialize as _;
    A::Config::deserialize(toml::Value::Table(spec.params.clone())).map_err(|e| {
        Error::config(format!(
            "parameters of admission policy '{}': {e}; defaults are: {}",
            A::NAME,
            toml::to_string(&A::Config::default())
                .unwrap_or_default()
                .trim()
                .replace('\n', ", ")
        ))
    })
}

impl AdmissionSpec {
    /// From the `admit` parameter: a name, or a table with `name` and parameters. Checks the
    /// name and the parameters.
    pub fn from_value(v: &toml::Value) -> Result<Self> {
        let spec = match v {
            toml::Value::String(name) => AdmissionSpec {
                name: name.trim().to_string(),
                params: toml::Table::new(),
            },
            toml::Value::Table(t) => {
                let mut params = t.clone();
                let Some(toml::Value::String(name)) = params.remove("name") else {
                    return Err(Error::config(format!(
                        "admit = {v}: expected a name (admit = \"bloom\") or a table with a name (admit = {{name = \"prob\", p = 0.1}})"
                    )));
                };
                AdmissionSpec { name, params }
            }
            _ => {
                return Err(Error::config(format!(
                    "admit = {v}: expected an admission policy name or table"
                )))
            }
        };
        spec.check()?;
        Ok(spec)
    }

    fn check(&self) -> Result<()> {
        let n = self.name.as_str();
        if matches::<bloom::Bloom>(n) {
            config::<bloom::Bloom>(self).map(drop)
        } else if matches::<prob::Prob>(n) {
            config::<prob::Prob>(self).map(drop)
        } else if matches::<size::SizeThreshold>(n) {
            config::<size::SizeThreshold>(self).map(drop)
        } else if matches::<sizeprob::SizeProb>(n) {
            config::<sizeprob::SizeProb>(self).map(drop)
        } else if matches::<adaptsize::AdaptSize>(n) {
            config::<adaptsize::AdaptSize>(self).map(drop)
        } else {
            Err(Error::config(format!(
                "unknown admission policy '{}'; known: {}",
                self.name,
                all_admissions()
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }

    /// Builds the admission policy for a cache described by `ctx`.
    pub fn build(&self, ctx: &PolicyCtx) -> Result<Admission> {
        let n = self.name.as_str();
        Ok(if matches::<bloom::Bloom>(n) {
            Admission::Bloom(bloom::Bloom::build(&config::<bloom::Bloom>(self)?, ctx)?)
        } else if matches::<prob::Prob>(n) {
            Admission::Prob(prob::Prob::build(&config::<prob::Prob>(self)?, ctx)?)
        } else if matches::<size::SizeThreshold>(n) {
            Admission::Size(size::SizeThreshold::build(
                &config::<size::SizeThreshold>(self)?,
                ctx,
            )?)
        } else if matches::<sizeprob::SizeProb>(n) {
            Admission::SizeProb(sizeprob::SizeProb::build(
                &config::<sizeprob::SizeProb>(self)?,
                ctx,
            )?)
        } else if matches::<adaptsize::AdaptSize>(n) {
            Admission::AdaptSize(Box::new(adaptsize::AdaptSize::build(
                &config::<adaptsize::AdaptSize>(self)?,
                ctx,
            )?))
        } else {
            self.check()?;
            unreachable!("check() rejects unknown names")
        })
    }

    /// A label such as `bloom` or `prob(p=0.1)`.
    pub fn label(&self) -> String {
        crate::policy::PolicySpec {
            name: self.name.clone(),
            params: self.params.clone(),
        }
        .label()
    }

    /// As JSON: `{"name": ..., params...}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::to_value(&self.params).unwrap_or_default();
        if let serde_json::Value::Object(o) = &mut m {
            o.insert("name".into(), self.name.clone().into());
        }
        m
    }
}

/// A built admission policy. Matched once per miss (never on a hit), and only in runs that
/// asked for admission.
pub enum Admission {
    Bloom(bloom::Bloom),
    Prob(prob::Prob),
    Size(size::SizeThreshold),
    SizeProb(sizeprob::SizeProb),
    AdaptSize(Box<adaptsize::AdaptSize>),
}

impl Admission {
    /// Whether to cache the missed `r`.
    #[inline]
    fn admit(&mut self, r: &PageRef) -> bool {
        match self {
            Admission::Bloom(a) => a.admit(r),
            Admission::Prob(a) => a.admit(r),
            Admission::Size(a) => a.admit(r),
            Admission::SizeProb(a) => a.admit(r),
            Admission::AdaptSize(a) => a.admit(r),
        }
    }
    /// Every reference, hit or miss, before it is handled (AdaptSize's request statistics).
    #[inline]
    fn observe(&mut self, r: &PageRef) {
        if let Admission::AdaptSize(a) = self {
            a.observe(r);
        }
    }
    fn grow(&mut self, n: usize) {
        if let Admission::Bloom(a) = self {
            a.grow(n);
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            Admission::AdaptSize(a) => a.counters(),
            _ => Vec::new(),
        }
    }
}

/// A policy behind an admission policy.
pub struct Admitted<P> {
    inner: P,
    admission: Admission,
    /// Whether each object (page) id is resident, from the policy's `miss`/`evict` reports.
    resident: Vec<bool>,
    refused: u64,
}

impl<P> Admitted<P> {
    pub fn new(inner: P, admission: Admission) -> Self {
        Admitted {
            inner,
            admission,
            resident: Vec::new(),
            refused: 0,
        }
    }
}

/// The sink the wrapped policy reports to: keeps `resident` in step and passes everything on.
struct Track<'a, S> {
    sink: &'a mut S,
    resident: &'a mut [bool],
}

impl<S: Sink> Sink for Track<'_, S> {
    #[inline]
    fn hit(&mut self, r: &PageRef, tier: u8) {
        self.sink.hit(r, tier)
    }
    #[inline]
    fn miss(&mut self, r: &PageRef, tier: u8) {
        self.resident[r.id as usize] = true;
        self.sink.miss(r, tier)
    }
    #[inline]
    fn miss_bypass(&mut self, r: &PageRef) {
        self.sink.miss_bypass(r)
    }
    #[inline]
    fn evict(&mut self, p: PageOut) {
        self.resident[p.id as usize] = false;
        self.sink.evict(p)
    }
    fn write_back(&mut self, pages: &[PageOut]) {
        self.sink.write_back(pages)
    }
    fn migrate(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.sink.migrate(id, page, from, to)
    }
    fn event(&mut self, e: &Event) {
        self.sink.event(e)
    }
    fn remap(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.sink.remap(id, page, from, to)
    }
}

impl<P: Policy> Policy for Admitted<P> {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.admission.observe(r);
        if !self.resident[r.id as usize] && !self.admission.admit(r) {
            self.refused += 1;
            sink.miss_bypass(r);
            return;
        }
        let mut t = Track {
            sink,
            resident: &mut self.resident,
        };
        self.inner.access(r, &mut t);
    }
    fn event<S: Sink>(&mut self, e: &Event, sink: &mut S) {
        let mut t = Track {
            sink,
            resident: &mut self.resident,
        };
        self.inner.event(e, &mut t);
    }
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.inner.prefetch(near, far)
    }
    const PREFETCH_MID: bool = P::PREFETCH_MID;
    #[inline(always)]
    fn prefetch_mid(&self, mid: PageId) {
        self.inner.prefetch_mid(mid)
    }
    const PREFETCH_REFS: bool = P::PREFETCH_REFS;
    #[inline(always)]
    fn prefetch_ref(&self, r: &PageRef) {
        self.inner.prefetch_ref(r)
    }
    fn grow(&mut self, n: usize) {
        if self.resident.len() < n {
            self.resident.resize(n, false);
        }
        self.admission.grow(n);
        self.inner.grow(n);
    }
    fn resident(&self) -> usize {
        self.inner.resident()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.inner.counters();
        c.push(("admission_refused", self.refused));
        c.extend(self.admission.counters());
        c
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicySpec;

    #[test]
    fn commas_inside_arrays_and_strings_belong_to_the_value() {
        let s = PolicySpec::parse("linux-two-list(stats_flush_at=[3, 14],x='a,b', y=1)").unwrap();
        let at: Vec<i64> = s.params["stats_flush_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_integer().unwrap())
            .collect();
        assert_eq!(at, [3, 14]);
        assert_eq!(s.params["x"].as_str(), Some("a,b"));
        assert_eq!(s.params["y"].as_integer(), Some(1));
        assert!(PolicySpec::parse("lru(k=[1,2)").is_err());
    }

    #[test]
    fn plus_syntax_is_the_admit_parameter() {
        let s = PolicySpec::parse("lru+bloom").unwrap();
        assert_eq!(s.name, "lru");
        assert_eq!(s.params["admit"].as_str(), Some("bloom"));
        assert_eq!(s.label(), "lru+bloom");
        let s = PolicySpec::parse("clock(bits=2)+prob(p=0.25)").unwrap();
        let (bare, adm) = s.split_admission().unwrap();
        assert_eq!(bare, PolicySpec::parse("clock(bits=2)").unwrap());
        let adm = adm.unwrap();
        assert_eq!(
            (adm.name.as_str(), adm.params["p"].as_float()),
            ("prob", Some(0.25))
        );
        assert_eq!(s.label(), "clock(bits=2)+prob(p=0.25)");
        // The table form experiment files use is the same spec.
        let t: toml::Table =
            toml::from_str("admit = {name = \"prob\", p = 0.25}\nbits = 2").unwrap();
        assert_eq!(
            PolicySpec {
                name: "clock".into(),
                params: t
            }
            .split_admission()
            .unwrap()
            .1
            .unwrap(),
            adm
        );
    }

    #[test]
    fn bad_admission_specs_are_config_errors() {
        let e = PolicySpec::parse("lru+nope")
            .unwrap()
            .split_admission()
            .unwrap_err();
        assert!(
            e.to_string().contains("unknown admission policy 'nope'"),
            "{e}"
        );
        let e = PolicySpec::parse("lru+size(limit=3)")
            .unwrap()
            .split_admission()
            .unwrap_err();
        assert!(e.to_string().contains("admission policy 'size'"), "{e}");
        assert!(PolicySpec::parse("lru(admit=\"bloom\")+bloom").is_err());
    }

    #[test]
    fn bloom_admits_second_misses_in_page_mode() {
        // Unit sizes, 2 pages: 1 (refused) 1 (admitted) 2 (refused) 1 (hit) 2 (admitted)
        // 3 (refused) 2 (hit).
        use crate::sim::check::make_refs;
        use crate::sim::engine::build_instance;
        let pages: Vec<(u64, bool)> = [1, 1, 2, 1, 2, 3, 2].iter().map(|&p| (p, false)).collect();
        let sys = crate::device::System::resolve(
            &crate::device::SystemSpec::default(),
            &crate::device::DeviceCatalog::default(),
        )
        .unwrap();
        let ctx = crate::policy::PolicyCtx {
            capacity: 2,
            tiers: 1,
            page_size: 4096,
        };
        let spec = PolicySpec::parse("lru+bloom").unwrap();
        let mut inst = build_instance(&spec, &ctx, crate::sim::Accounting::new(sys)).unwrap();
        inst.grow(3);
        inst.run(&make_refs(&pages), &[]);
        let res = inst.finish();
        assert_eq!((res.stats.hits_total(), res.stats.misses_total()), (2, 5));
        assert_eq!(res.label, "lru+bloom");
        assert!(res.counters.contains(&("admission_refused".to_string(), 3)));
    }
}
