//! Policies: one trait, one file per policy, and a registry that maps names to
//! types. The replay loop is generic over the policy type, so every policy's
//! per-access code is monomorphised; the name is looked up once per run.

pub mod admission;
pub mod classic;
pub mod external;
pub mod flash;
pub mod heap;
pub mod hybrid;
pub mod object;
pub mod swap;
pub mod tiered;

use crate::error::{Error, Result};
use crate::sim::{PageRef, Sink};
use crate::trace::Event;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// How many references ahead the replay loop hints [`Policy::prefetch`]'s `far` page: far
/// enough for a load from memory to arrive, near enough that it is still in cache when used.
pub const PREFETCH_FAR: usize = 16;
/// The same for `near` (reading the `far` entry, now cached, to prefetch what it points to).
pub const PREFETCH_NEAR: usize = 6;
/// The same for [`Policy::prefetch_mid`], between the two: for a policy whose reference follows
/// a chain of three loads (id -> slot -> position -> entry), `mid` loads the second link so that
/// `near` can read it and load the third.
pub const PREFETCH_MID: usize = 11;

/// The largest capacity a run accepts, in pages (bytes in object-size mode): 2^60, above any
/// machine's memory, and small enough that a policy may size a structure at a few times it
/// without overflowing `usize`.
pub const MAX_CAPACITY: usize = 1 << 60;

/// What a policy is built for.
#[derive(Debug, Clone)]
pub struct PolicyCtx {
    /// Memory size in pages (all tiers together).
    pub capacity: usize,
    /// Number of memory tiers in the system.
    pub tiers: usize,
    /// Page size in bytes.
    pub page_size: u32,
}

/// A replacement / placement policy.
///
/// A policy sees every page reference and event in trace order and reports
/// what happens through the [`Sink`]: exactly one of `hit`, `miss` or
/// `miss_bypass` per reference, plus any evictions, write-backs and
/// migrations it performs. It tracks its own dirty bits: the engine trusts the
/// `dirty` flag it reports on eviction (the conformance harness checks it).
pub trait Policy: Send + 'static {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S);
    fn event<S: Sink>(&mut self, _e: &Event, _sink: &mut S) {}
    /// A hint from the replay loop, which knows the references to come: `far` will be accessed
    /// in about [`PREFETCH_FAR`] references and `near` in about [`PREFETCH_NEAR`]. A policy may
    /// start loading the metadata they will touch (`far`: the page-id-indexed entry; `near`: what
    /// that entry points to, which is in cache by then). Purely a speed hint: it must not change
    /// any state. Default: nothing.
    #[inline(always)]
    fn prefetch(&self, _near: PageId, _far: PageId) {}
    /// Whether the replay loop should also call [`Policy::prefetch_mid`] (a constant, so a
    /// policy that does not want it costs the loop nothing).
    const PREFETCH_MID: bool = false;
    /// Like [`Policy::prefetch`], for a page that will be accessed in about [`PREFETCH_MID`]
    /// references (its `far` call was about 5 references ago, so what that loaded is cached).
    /// Only called when [`Policy::PREFETCH_MID`]; must not change any state.
    #[inline(always)]
    fn prefetch_mid(&self, _mid: PageId) {}
    /// Whether the replay loop should also call [`Policy::prefetch_ref`] (a constant, so a
    /// policy that does not want it costs the loop nothing).
    const PREFETCH_REFS: bool = false;
    /// Like [`Policy::prefetch`], for metadata found from the reference's other fields (a hash
    /// of its page, as W-TinyLFU's sketch): `r` will be accessed in about [`PREFETCH_FAR`]
    /// references. Only called when [`Policy::PREFETCH_REFS`]; must not change any state.
    #[inline(always)]
    fn prefetch_ref(&self, _r: &PageRef) {}
    /// Page ids below `n` may now appear (ids are dense, in first-seen order).
    fn grow(&mut self, _n: usize) {}
    /// Pages resident now, over all tiers.
    fn resident(&self) -> usize;
    /// The policy's own counters (e.g. ghost hits), reported with the results.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// An error that stopped the policy (a policy defined outside the crate whose callback
    /// failed, see [`external`]), taken once; the engine ends the run with it. Default: none.
    fn failed(&mut self) -> Option<Error> {
        None
    }
}

/// Static description and construction of a policy type.
pub trait PolicyDef: Policy + Sized {
    /// Canonical name (lower case, as on the command line).
    const NAME: &'static str;
    const ALIASES: &'static [&'static str] = &[];
    /// Family, as in DESIGN.md: classic, flash, hybrid, swap, tiered, mobile.
    const FAMILY: &'static str;
    /// One line for `tierlab policies`, with the source.
    const SUMMARY: &'static str;
    /// Whether the policy reads `PageRef::next_use` (offline policies).
    const NEEDS_FUTURE: bool = false;
    /// Memory tiers the system must have (e.g. 2 for DRAM+PCM policies).
    const MIN_TIERS: usize = 1;
    /// Typed parameters; unknown keys are rejected.
    type Config: DeserializeOwned + Serialize + Default + std::fmt::Debug + Clone;
    fn build(cfg: &Self::Config, ctx: &PolicyCtx) -> Result<Self>;
    /// Object-size mode (docs/design.md): calls `v.visit::<O>()` with the policy's object-size
    /// variant `O`, a policy whose `ctx.capacity` is in bytes and which reads each object's
    /// size from `PageRef::size`, or returns `None`, the default: a policy that does not opt in
    /// is rejected in object-size mode with a config error naming it. The default is the variant
    /// of the same name in [`object`] ([`object::visit_object_form`]); a policy whose own type
    /// reads sizes returns `Some(v.visit::<Self>())`.
    fn visit_object_mode<V: PolicyVisitor>(v: V) -> Option<V::Out> {
        object::visit_object_form(Self::NAME, v)
    }
}

/// Something to do with a policy type chosen by name at run time.
pub trait PolicyVisitor {
    type Out;
    fn visit<P: PolicyDef>(self) -> Self::Out;
}

/// Name, aliases and description of a registered policy.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub family: &'static str,
    pub summary: &'static str,
    pub needs_future: bool,
    /// Memory tiers the system must have.
    pub min_tiers: usize,
    /// The default parameters, as TOML.
    pub defaults: String,
    /// Whether the policy has an object-size mode (`PolicyDef::visit_object_mode`).
    pub object_sizes: bool,
}

/// Lists policy types once; generates the name table and the dispatcher.
macro_rules! registry {
    ($($ty:path),* $(,)?) => {
        /// Every registered policy.
        pub fn all_policies() -> Vec<PolicyInfo> {
            vec![$(info::<$ty>()),*]
        }

        /// Calls `v.visit::<P>()` for the policy named `name` (or an alias).
        pub fn visit_policy<V: PolicyVisitor>(name: &str, v: V) -> Result<V::Out> {
            let lower = name.to_ascii_lowercase();
            $(
                if <$ty as PolicyDef>::NAME == lower
                    || <$ty as PolicyDef>::ALIASES.iter().any(|a| a.eq_ignore_ascii_case(&lower))
                {
                    return Ok(v.visit::<$ty>());
                }
            )*
            Err(Error::config(format!(
                "unknown policy '{name}'; known policies: {}",
                all_policies().iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            )))
        }
    };
}

fn info<P: PolicyDef>() -> PolicyInfo {
    PolicyInfo {
        name: P::NAME,
        aliases: P::ALIASES,
        family: P::FAMILY,
        summary: P::SUMMARY,
        needs_future: P::NEEDS_FUTURE,
        min_tiers: P::MIN_TIERS,
        defaults: toml::to_string(&P::Config::default()).unwrap_or_default(),
        object_sizes: has_object_mode::<P>(),
    }
}

fn has_object_mode<P: PolicyDef>() -> bool {
    struct Probe;
    impl PolicyVisitor for Probe {
        type Out = ();
        fn visit<O: PolicyDef>(self) {}
    }
    P::visit_object_mode(Probe).is_some()
}

/// Names of the policies with an object-size mode.
pub fn object_mode_policies() -> Vec<&'static str> {
    all_policies()
        .into_iter()
        .filter(|p| p.object_sizes)
        .map(|p| p.name)
        .collect()
}

registry!(
    classic::fifo::Fifo,
    classic::lru::Lru,
    classic::clock::Clock,
    classic::opt::Opt,
    classic::twoq::TwoQ,
    classic::arc::Arc,
    classic::lirs::Lirs,
    classic::s3fifo::S3Fifo,
    classic::sieve::Sieve,
    classic::lfu::Lfu,
    classic::car::Car,
    classic::lruk::LruK,
    classic::optwb::OptWb,
    classic::clockpro::ClockPro,
    swap::four_area::FourArea,
    swap::linux_two_list::LinuxTwoList,
    swap::mglru::Mglru,
    tiered::tpp::Tpp,
    tiered::nomad::Nomad,
    tiered::ssp::Ssp,
    tiered::memtis::Memtis,
    hybrid::app_aware::AppAware,
    hybrid::clock_dwf::ClockDwf,
    hybrid::lru::HybridLru,
    hybrid::two_q::HybridTwoQ,
    flash::cflru::Cflru,
    flash::lru_wsr::LruWsr,
    flash::ccf_lru::CcfLru,
    flash::fab::Fab,
    flash::spatial_clock::SpatialClock,
    flash::bs_clock::BsClock,
    classic::slru::Slru,
    classic::lfuda::Lfuda,
    classic::gdsf::Gdsf,
    classic::size::Size,
    classic::mq::Mq,
    classic::clock2qplus::Clock2QPlus,
    classic::lruprob::LruProb,
    classic::random::Random,
    // Sampled and learning policies (libCacheSim's, agreeing in distribution).
    classic::hyperbolic::Hyperbolic,
    classic::lecar::Lecar,
    classic::lhd::Lhd,
    classic::cacheus::Cacheus,
    // Sketch, oracle and flash-admission policies (W-TinyLFU, BeladySize, FlashProb).
    classic::wtinylfu::WTinyLfu,
    classic::beladysize::BeladySize,
    classic::flashprob::FlashProb,
);

/// A policy name with parameters, e.g. `{name = "clock", bits = 2}`.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec {
    pub name: String,
    pub params: toml::Table,
}

impl PolicySpec {
    pub fn new(name: &str) -> Self {
        PolicySpec {
            name: name.to_string(),
            params: toml::Table::new(),
        }
    }

    /// Parses `name` or `name(key=value, ...)`; values are TOML values
    /// (numbers, booleans, quoted strings, arrays such as `[1, 2]`). An admission policy follows a `+`:
    /// `lru+bloom`, `lru(k=1)+prob(p=0.1)` (see [`admission`]); it is kept as the reserved
    /// parameter `admit` (`admit = "bloom"` or `admit = {name = "prob", p = 0.1}`), which is
    /// also how experiment files write it.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if let Some(plus) = admission::top_level_plus(text) {
            let mut spec = PolicySpec::parse(&text[..plus])?;
            let adm = PolicySpec::parse(&text[plus + 1..])?;
            if spec.params.contains_key(admission::ADMIT_KEY) {
                return Err(Error::config(format!(
                    "policy '{text}': give the admission policy once, as '+name' or admit=..."
                )));
            }
            let value = if adm.params.is_empty() {
                toml::Value::String(adm.name)
            } else {
                let mut t = adm.params;
                t.insert("name".into(), toml::Value::String(adm.name));
                toml::Value::Table(t)
            };
            spec.params.insert(admission::ADMIT_KEY.into(), value);
            return Ok(spec);
        }
        let Some(open) = text.find('(') else {
            return Ok(PolicySpec::new(text));
        };
        let Some(inner) = text[open + 1..].strip_suffix(')') else {
            return Err(Error::config(format!(
                "policy '{text}': expected name(key=value, ...)"
            )));
        };
        let name = text[..open].trim();
        // Commas inside a value (an array, an inline table, a string) are the value's.
        let mut cuts: Vec<usize> = admission::top_level(inner, ',').collect();
        cuts.push(inner.len());
        let mut start = 0;
        let mut pairs = Vec::new();
        for end in cuts {
            let pair = inner[start..end].trim();
            if !pair.is_empty() {
                pairs.push(pair);
            }
            start = end + 1;
        }
        let doc = pairs.join("\n");
        let params: toml::Table = toml::from_str(&doc).map_err(|e| {
            Error::config(format!(
                "policy '{text}': parameters must be key=value TOML pairs: {e}"
            ))
        })?;
        Ok(PolicySpec {
            name: name.to_string(),
            params,
        })
    }

    /// Deserialises the parameters into `P::Config`, naming the policy on error.
    pub fn config<P: PolicyDef>(&self) -> Result<P::Config> {
        P::Config::deserialize(toml::Value::Table(self.params.clone())).map_err(|e| {
            Error::config(format!(
                "parameters of policy '{}': {e}; defaults are: {}",
                P::NAME,
                toml::to_string(&P::Config::default())
                    .unwrap_or_default()
                    .trim()
                    .replace('\n', ", ")
            ))
        })
    }

    /// The spec without its admission policy, and that admission policy (validated), if any.
    pub fn split_admission(&self) -> Result<(PolicySpec, Option<admission::AdmissionSpec>)> {
        let Some(v) = self.params.get(admission::ADMIT_KEY) else {
            return Ok((self.clone(), None));
        };
        let adm = admission::AdmissionSpec::from_value(v)?;
        let mut bare = self.clone();
        bare.params.remove(admission::ADMIT_KEY);
        Ok((bare, Some(adm)))
    }

    /// A label such as `lru`, `cflru(window=0.2)` or `lru+bloom`.
    pub fn label(&self) -> String {
        if let Ok((bare, Some(adm))) = self.split_admission() {
            return format!("{}+{}", bare.label(), adm.label());
        }
        if self.params.is_empty() {
            self.name.clone()
        } else {
            let kv: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("{}({})", self.name, kv.join(","))
        }
    }
}

use serde::Deserialize as _;

/// Returns the info of the policy named `name`.
pub fn policy_info(name: &str) -> Result<PolicyInfo> {
    struct V;
    impl PolicyVisitor for V {
        type Out = PolicyInfo;
        fn visit<P: PolicyDef>(self) -> PolicyInfo {
            info::<P>()
        }
    }
    visit_policy(name, V)
}

pub mod id_list;
pub mod list;
pub mod sampling;

use crate::sim::{PageId, PageOut};
use crate::trace::Kind;

/// What most policies keep per resident page: enough to report an eviction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub page: u64,
    pub id: PageId,
    pub kind: Kind,
    pub dirty: bool,
}

impl Frame {
    #[inline]
    pub fn of(r: &PageRef) -> Frame {
        Frame {
            page: r.page(),
            id: r.id,
            kind: r.kind(),
            dirty: r.is_write(),
        }
    }
    #[inline]
    pub fn out(&self, tier: u8) -> PageOut {
        PageOut {
            id: self.id,
            page: self.page,
            kind: self.kind,
            dirty: self.dirty,
            tier,
        }
    }
}

/// Rejects a zero or absurd fraction parameter.
pub fn check_fraction(policy: &str, key: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v > 0.0 && v < 1.0) {
        return Err(Error::config(format!(
            "policy '{policy}': {key} must be in (0, 1), got {v}"
        )));
    }
    Ok(())
}
