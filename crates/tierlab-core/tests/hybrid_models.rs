//! The hybrid DRAM+PCM policies against plain models: hybrid-2q, hybrid-lru and the app-aware
//! policy, each written the plainest way (queues as vectors of page numbers searched linearly),
//! make the same calls to the sink, in the same order, and end in the same state as the
//! policies, on random traces of any memory size and parameters.

use tierlab_core::policy::hybrid::app_aware::{AppAware, AppAwareConfig, PageState};
use tierlab_core::policy::hybrid::lru::{HybridLru, HybridLruConfig};
use tierlab_core::policy::hybrid::two_q::{HybridTwoQ, HybridTwoQConfig};
use tierlab_core::policy::hybrid::{DRAM, M, PCM};
use tierlab_core::policy::{Policy, PolicyDef};

mod hybrid_common;
use hybrid_common::*;

/// Takes page `p` out of `v` (a model's queue); whether it was there.
fn remove(v: &mut Vec<u64>, p: u64) -> bool {
    let i = v.iter().position(|&x| x == p);
    if let Some(i) = i {
        v.remove(i);
    }
    i.is_some()
}

/// The models' DRAM placement: puts `p` at the MRU end of `d` (DRAM of `dram` frames, MRU
/// first), demoting DRAM's LRU page first, and logs the migrations; returns `p`'s tier.
fn model_place(dram: usize, d: &mut Vec<u64>, log: &mut Vec<String>, p: u64, from_pcm: bool) -> u8 {
    if dram == 0 {
        return 1;
    }
    if d.len() == dram {
        let v = d.pop().unwrap();
        log.push(format!("mig {v} 0->1"));
    }
    if from_pcm {
        log.push(format!("mig {p} 1->0"));
    }
    d.insert(0, p);
    0
}

/// The models' DRAM side of a hit on `p`: to DRAM's MRU end if it is there, else promoted from
/// PCM when `promote`, else left in PCM; logs the hit with the tier it is served from.
fn model_hit(dram: usize, d: &mut Vec<u64>, log: &mut Vec<String>, p: u64, promote: bool) {
    let tier = if remove(d, p) {
        d.insert(0, p);
        0
    } else if promote {
        model_place(dram, d, log, p, true)
    } else {
        1
    };
    log.push(format!("hit {p} t{tier}"));
}

/// hybrid-2q as written in the plainest way: 2Q's three queues and DRAM's order as vectors of
/// page numbers (front = newest / MRU), searched linearly. Returns the sink's log, A1in and Am
/// at the end, and the ghost hits.
fn two_q_model(
    cap: usize,
    kin: usize,
    kout: usize,
    dram: usize,
    promote: bool,
    refs: &[(u64, bool)],
) -> (Vec<String>, Vec<u64>, Vec<u64>, u64) {
    let (mut a1in, mut am, mut a1out, mut d) = (vec![], vec![], vec![], vec![]);
    let mut dirty = std::collections::HashMap::new();
    let (mut log, mut ghost_hits) = (vec![], 0);
    for &(p, w) in refs {
        if a1in.contains(&p) || am.contains(&p) {
            *dirty.get_mut(&p).unwrap() |= w;
            if remove(&mut am, p) {
                am.insert(0, p);
            }
            model_hit(dram, &mut d, &mut log, p, promote);
            continue;
        }
        if cap == 0 {
            log.push(format!("bypass {p}"));
            continue;
        }
        let ghost = remove(&mut a1out, p);
        ghost_hits += ghost as u64;
        if a1in.len() + am.len() == cap {
            let from_a1in = a1in.len() > kin || am.is_empty();
            let v = if from_a1in { a1in.pop() } else { am.pop() }.unwrap();
            let tier = if remove(&mut d, v) { 0 } else { 1 };
            let dv = if dirty[&v] { "dirty" } else { "clean" };
            log.push(format!("evict {v} t{tier} {dv}"));
            if from_a1in && kout > 0 {
                if a1out.len() == kout {
                    a1out.pop();
                }
                a1out.insert(0, v);
            }
        }
        dirty.insert(p, w);
        if ghost {
            am.insert(0, p);
        } else {
            a1in.insert(0, p);
        }
        let tier = model_place(dram, &mut d, &mut log, p, false);
        log.push(format!("miss {p} t{tier}"));
    }
    (log, a1in, am, ghost_hits)
}

proptest::proptest! {
    /// hybrid-2q (one entry per page linking its queue and DRAM's order) makes the same calls
    /// to the sink, in the same order, and ends with the same queues as the plain model, for
    /// any memory size, kin, kout, DRAM share and promote setting (0 included).
    #[test]
    fn hybrid_two_q_agrees_with_a_plain_model(
        refs in proptest::collection::vec((0u64..24, proptest::bool::weighted(0.3)), 1..300),
        cap in 0usize..10,
        kin in 0.0f64..1.0,
        kout in 0.0f64..2.0,
        dram_ratio in 0.0f64..1.0,
        promote: bool,
    ) {
        let cfg = HybridTwoQConfig { dram_ratio, kin, kout, promote };
        let mut p = HybridTwoQ::build(&cfg, &ctx(cap)).unwrap();
        let mut log = Log::default();
        let steps: Vec<Step> = refs
            .iter()
            .map(|&(pg, w)| if w { W(0, pg) } else { R(0, pg) })
            .collect();
        drive(&mut p, &mut log, &steps, &mut 0);
        let kin_pages = ((cap as f64 * kin).round() as usize).max(1);
        let kout_pages = (cap as f64 * kout).round() as usize;
        let dram = ((cap as f64 * dram_ratio).round() as usize).min(cap);
        let (want, a1in, am, ghost_hits) =
            two_q_model(cap, kin_pages, kout_pages, dram, promote, &refs);
        proptest::prop_assert_eq!(&log.0, &want);
        proptest::prop_assert_eq!(p.queues(), (a1in, am));
        let c: std::collections::HashMap<_, _> = p.counters().into_iter().collect();
        proptest::prop_assert_eq!(c["ghost_hits"], ghost_hits);
    }
}

/// hybrid-lru as written in the plainest way: the LRU stack and DRAM's order as vectors of page
/// numbers (front = MRU), searched linearly, each page's owner and dirty bit in maps, and the
/// foreground app as the latest `Fg` step (all apps before the first). Returns the sink's log,
/// the stack and DRAM's order at the end, and the storage evictions the foreground is charged
/// (a foreground reference's, or a foreground page's).
fn lru_model(
    cap: usize,
    dram: usize,
    promote: bool,
    steps: &[Step],
) -> (Vec<String>, Vec<u64>, Vec<u64>, u64) {
    let (mut stack, mut d) = (vec![], vec![]);
    let mut dirty = std::collections::HashMap::new();
    let mut owner = std::collections::HashMap::new();
    let mut fg: Option<u32> = None;
    let (mut log, mut fg_evictions) = (vec![], 0);
    for s in steps {
        let Some((app, p, w)) = access(s, &mut fg) else {
            continue;
        };
        let is_fg = |a: u32| in_fg(fg, a);
        let cur_fg = is_fg(app);
        if remove(&mut stack, p) {
            stack.insert(0, p);
            *dirty.get_mut(&p).unwrap() |= w;
            owner.insert(p, app);
            model_hit(dram, &mut d, &mut log, p, promote);
            continue;
        }
        if cap == 0 {
            log.push(format!("bypass {p}"));
            continue;
        }
        if stack.len() == cap {
            let v = stack.pop().unwrap();
            let tier = if remove(&mut d, v) { 0 } else { 1 };
            let dv = if dirty[&v] { "dirty" } else { "clean" };
            log.push(format!("evict {v} t{tier} {dv}"));
            fg_evictions += (cur_fg || is_fg(owner[&v])) as u64;
        }
        stack.insert(0, p);
        dirty.insert(p, w);
        owner.insert(p, app);
        let tier = model_place(dram, &mut d, &mut log, p, false);
        log.push(format!("miss {p} t{tier}"));
    }
    (log, stack, d, fg_evictions)
}

/// References of two apps to 24 pages: (page, written with probability `write`,
/// app, the app comes to the foreground first with probability 0.05).
fn two_app_refs(
    write: f64,
) -> impl proptest::strategy::Strategy<Value = Vec<(u64, bool, u32, bool)>> {
    proptest::collection::vec(
        (
            0u64..24,
            proptest::bool::weighted(write),
            0u32..2,
            proptest::bool::weighted(0.05),
        ),
        1..300,
    )
}

/// The steps of `two_app_refs`: an `Fg` step before each switching reference.
fn two_app_steps(refs: &[(u64, bool, u32, bool)]) -> Vec<Step> {
    let mut steps = vec![];
    for &(pg, w, app, switch) in refs {
        if switch {
            steps.push(Fg(app));
        }
        steps.push(if w { W(app, pg) } else { R(app, pg) });
    }
    steps
}

proptest::proptest! {
    /// hybrid-lru (one entry per page linking the stack and DRAM's order, with the page's
    /// owner) makes the same calls to the sink, in the same order, ends with the same stack and
    /// DRAM order, and charges the foreground the same storage evictions as the plain model,
    /// for any memory size, DRAM share and promote setting (0 included), with two apps taking
    /// turns in the foreground.
    #[test]
    fn hybrid_lru_agrees_with_a_plain_model(
        refs in two_app_refs(0.3),
        cap in 0usize..10,
        dram_ratio in 0.0f64..1.0,
        promote: bool,
    ) {
        let cfg = HybridLruConfig { dram_ratio, promote };
        let mut p = HybridLru::build(&cfg, &ctx(cap)).unwrap();
        let mut log = Log::default();
        let steps = two_app_steps(&refs);
        drive(&mut p, &mut log, &steps, &mut 0);
        let dram = ((cap as f64 * dram_ratio).round() as usize).min(cap);
        let (want, stack, d, fg_evictions) = lru_model(cap, dram, promote, &steps);
        proptest::prop_assert_eq!(&log.0, &want);
        proptest::prop_assert_eq!(p.resident_pages(), stack);
        let dram_ids: Vec<u64> = p.dram_ids().into_iter().map(u64::from).collect();
        proptest::prop_assert_eq!(dram_ids, d);
        proptest::prop_assert_eq!(p.meter().get(M::FgStorageEvictions), fg_evictions);
    }
}

/// The app-aware policy as written in the plainest way: DRAM's and PCM's lists as vectors of
/// (page, count, dirty) (front = MRU), searched linearly, owners in a map, the foreground app as
/// the latest `Fg` step (all apps before the first). Returns the sink's log, both lists at the
/// end, the second chances and the storage evictions the foreground is charged.
#[allow(clippy::type_complexity)]
fn app_aware_model(
    dram: usize,
    pcm: usize,
    migrate_count: u32,
    max_count: u32,
    steps: &[Step],
) -> (Vec<String>, Vec<PageState>, Vec<PageState>, u64, u64) {
    let max = if max_count == 0 { u32::MAX } else { max_count };
    let (mut d, mut m): (Vec<PageState>, Vec<PageState>) = (vec![], vec![]);
    let mut owner = std::collections::HashMap::new();
    let mut fg: Option<u32> = None;
    let (mut log, mut chances, mut fg_evictions) = (vec![], 0, 0);
    // The victim of a list: its LRU page with count 0, LRU pages with a count losing 1 and
    // going to the MRU end.
    let victim = |l: &mut Vec<PageState>, chances: &mut u64| loop {
        let mut t = l.pop().unwrap();
        if t.count == 0 {
            return t;
        }
        t.count -= 1;
        *chances += 1;
        l.insert(0, t);
    };
    for s in steps {
        let Some((app, p, w)) = access(s, &mut fg) else {
            continue;
        };
        let is_fg = |a: u32| in_fg(fg, a);
        let cur_fg = is_fg(app);
        let in_d = d.iter().position(|x| x.page == p);
        let in_m = m.iter().position(|x| x.page == p);
        if in_d.is_some() || in_m.is_some() {
            owner.insert(p, app);
            if let Some(i) = in_d {
                let mut e = d.remove(i);
                e.dirty |= w;
                e.count = e.count.saturating_add(1).min(max);
                d.insert(0, e);
                log.push(format!("hit {p} t0"));
                continue;
            }
            let mut e = m.remove(in_m.unwrap());
            e.dirty |= w;
            e.count = e.count.saturating_add(1).min(max);
            if cur_fg && e.dirty && e.count >= migrate_count && dram > 0 {
                if d.len() == dram {
                    let v = victim(&mut d, &mut chances);
                    log.push(format!("mig {} 0->1", v.page));
                    m.insert(0, v);
                }
                d.insert(0, e);
                log.push(format!("mig {p} 1->0"));
                log.push(format!("hit {p} t0"));
            } else {
                m.insert(0, e);
                log.push(format!("hit {p} t1"));
            }
            continue;
        }
        if dram + pcm == 0 {
            log.push(format!("bypass {p}"));
            continue;
        }
        let to_dram = (cur_fg && dram > 0) || pcm == 0;
        let evict = |l: &mut Vec<PageState>, tier: u8, log: &mut Vec<String>, c: &mut u64| {
            let v = victim(l, c);
            let dv = if v.dirty { "dirty" } else { "clean" };
            log.push(format!("evict {} t{tier} {dv}", v.page));
            (cur_fg || is_fg(owner[&v.page])) as u64
        };
        if to_dram && d.len() == dram {
            if pcm == 0 {
                fg_evictions += evict(&mut d, 0, &mut log, &mut chances);
            } else {
                if m.len() == pcm {
                    fg_evictions += evict(&mut m, 1, &mut log, &mut chances);
                }
                let v = victim(&mut d, &mut chances);
                log.push(format!("mig {} 0->1", v.page));
                m.insert(0, v);
            }
        } else if !to_dram && m.len() == pcm {
            fg_evictions += evict(&mut m, 1, &mut log, &mut chances);
        }
        owner.insert(p, app);
        let e = PageState {
            page: p,
            count: 0,
            dirty: w,
        };
        if to_dram {
            d.insert(0, e);
        } else {
            m.insert(0, e);
        }
        log.push(format!("miss {p} t{}", if to_dram { 0 } else { 1 }));
    }
    (log, d, m, chances, fg_evictions)
}

proptest::proptest! {
    /// app-aware (one entry per page linking its tier's list, with its count and owner) makes
    /// the same calls to the sink, in the same order, ends with the same lists, counts and dirty
    /// bits, and counts the same second chances and foreground storage evictions as the plain
    /// model, for any memory size, DRAM share (0 and all included), migrate_count and
    /// max_count, with two apps taking turns in the foreground.
    #[test]
    fn app_aware_agrees_with_a_plain_model(
        refs in two_app_refs(0.4),
        cap in 0usize..10,
        dram_ratio in 0.0f64..1.0,
        migrate_count in 0u32..4,
        max_count in 0u32..4,
    ) {
        let cfg = AppAwareConfig { dram_ratio, migrate_count, max_count };
        let mut p = AppAware::build(&cfg, &ctx(cap)).unwrap();
        let mut log = Log::default();
        let steps = two_app_steps(&refs);
        drive(&mut p, &mut log, &steps, &mut 0);
        let (dram, pcm) = p.split();
        proptest::prop_assert_eq!(dram, ((cap as f64 * dram_ratio).round() as usize).min(cap));
        let (want, d, m, chances, fg_evictions) =
            app_aware_model(dram, pcm, migrate_count, max_count, &steps);
        proptest::prop_assert_eq!(&log.0, &want);
        proptest::prop_assert_eq!(p.list(DRAM), d);
        proptest::prop_assert_eq!(p.list(PCM), m);
        let c: std::collections::HashMap<_, _> = p.counters().into_iter().collect();
        proptest::prop_assert_eq!(c["second_chances"], chances);
        proptest::prop_assert_eq!(p.meter().get(M::FgStorageEvictions), fg_evictions);
    }
}
