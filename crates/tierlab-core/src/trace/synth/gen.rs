//! The generators' running state: each [`Gen`] yields one access at a time, and a composite
//! draws from its components.

use super::spec::{GenSpec, Layout, Shape, SynthKind};
use crate::trace::{Kind, Op};
use rand::distr::weighted::WeightedIndex;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

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
            let rel = c.placement.start.unwrap_or(next);
            next = rel.saturating_add(c.extent());
            // `build` adds the spec's own `start`; pass the auto offset in
            // the base only when the spec has none.
            let b = if c.placement.start.is_some() {
                base
            } else {
                base.saturating_add(rel)
            };
            Gen::new(c, b, child_seed(seed, i))
        })
        .collect()
}

/// State shared by the leaf generators.
pub(super) struct Leaf {
    rng: Pcg64Mcg,
    start: u64,
    write: f64,
    kind: Kind,
    app: u32,
    left: Option<u64>,
}

impl Leaf {
    fn new(spec: &GenSpec, start: u64, seed: u64, n: Option<u64>) -> Self {
        let stream = &spec.stream;
        Leaf {
            rng: Pcg64Mcg::seed_from_u64(spec.placement.seed.unwrap_or(seed)),
            start,
            write: stream.write,
            kind: match stream.kind {
                SynthKind::File => Kind::File,
                SynthKind::Anon => Kind::Anon,
            },
            app: stream.app,
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

pub(super) struct Gened {
    pub(super) page: u64,
    pub(super) op: Op,
    pub(super) kind: Kind,
    pub(super) app: u32,
}

pub(super) enum Gen {
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
    /// Builds the state of a validated spec; `base` is the parent's first page and `seed` the
    /// seed to use when the spec gives none.
    pub(super) fn new(spec: &GenSpec, base: u64, seed: u64) -> Gen {
        let start = base.saturating_add(spec.placement.start.unwrap_or(0));
        match &spec.shape {
            Shape::Zipf(s) => {
                let mut leaf = Leaf::new(spec, start, seed, s.n);
                // The permutation is drawn first from the leaf's generator (the golden stream).
                let perm = (s.layout == Layout::Scrambled).then(|| {
                    let mut p: Vec<u32> = (0..s.pages as u32).collect();
                    p.shuffle(&mut leaf.rng);
                    p
                });
                Gen::Zipf {
                    leaf,
                    dist: Zipf::new(s.pages as f64, s.alpha).expect("validated"),
                    pages: s.pages,
                    perm,
                }
            }
            Shape::Scan(s) => Gen::Scan {
                leaf: Leaf::new(spec, start, seed, Some(s.pages)),
                i: 0,
            },
            Shape::Loop(s) => Gen::Loop {
                leaf: Leaf::new(spec, start, seed, s.n),
                pages: s.pages,
                i: 0,
            },
            Shape::Mix(m) => {
                let seed = spec.placement.seed.unwrap_or(seed);
                let weights: Vec<f64> = m.components.iter().map(|c| c.placement.weight).collect();
                Gen::Mix {
                    rng: Pcg64Mcg::seed_from_u64(seed),
                    comps: build_children(&m.components, start, seed),
                    pick: WeightedIndex::new(&weights).expect("validated weights"),
                    left: m.n,
                }
            }
            Shape::Phases(p) => {
                let seed = spec.placement.seed.unwrap_or(seed);
                Gen::Phases {
                    comps: build_children(&p.components, start, seed),
                    cur: 0,
                }
            }
        }
    }
    pub(super) fn next(&mut self) -> Option<Gened> {
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
