use super::layout::{
    candidates_after, hit_age_class, Stamp, FRAME_BITS, HIT_AGE_CLASSES, MAX_AGE, STRIDE,
    WARMUP_RECONFIGURATIONS,
};
use super::sampler::{ExplorerDraws, Samples, EXPLORER_SEED};
use super::{Lhd, LhdConfig, LhdCore};
use crate::policy::list::NIL;
use crate::policy::sampling::IndexSampler;
use crate::sim::check::{replay_ids, replay_spec_ids};
use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;

#[test]
fn samples_are_one_splitmix64_stream() {
    // Outputs drawn in uneven steps, with the buffer regenerated between them and
    // lookahead asked of different lengths, are SplitMix64's stream in order, and a drawn
    // output's index is the one `IndexSampler::fill` draws.
    for seed in [0u64, 1, 7, u64::MAX] {
        let mut reference = SplitMix64::seed_from_u64(seed);
        let mut filled = IndexSampler::new(seed);
        let mut samples = Samples::new(seed, 0);
        for step in 0..2_000usize {
            let (take, look) = (1 + step % 37, step % 50);
            samples.ensure(take + look);
            assert!(samples.ahead().len() >= take + look);
            let n = 1 + step * 7919 % 1_000_003;
            let mut expected = vec![0u32; take];
            filled.fill(n, &mut expected);
            for (k, &r) in samples.ahead()[..take].iter().enumerate() {
                assert_eq!(
                    r,
                    reference.next_u64(),
                    "seed {seed} step {step} output {k}"
                );
                assert_eq!(IndexSampler::index_of(r, n) as u32, expected[k]);
            }
            samples.head += take;
        }
    }
}

#[test]
fn indexed_samples_are_the_fill_of_the_range() {
    // Page mode: the buffer of indices of `0..range`, drawn in uneven steps with lookahead
    // of different lengths (more than a buffer at times), is `IndexSampler::fill(range, ..)`
    // of the same stream, which is `index_of` of SplitMix64's outputs in order: the draws
    // of the raw buffer for a constant `n`.
    for (seed, range) in [
        (0u64, 1usize),
        (1, 7),
        (7, 1_000_003),
        (u64::MAX, u32::MAX as usize),
    ] {
        let mut reference = SplitMix64::seed_from_u64(seed);
        let mut filled = IndexSampler::new(seed);
        let mut samples = Samples::new(seed, range);
        for step in 0..2_000usize {
            let (take, look) = (1 + step % 37, (step * 13) % 700);
            samples.ensure(take + look);
            assert!(samples.ahead_idx().len() >= take + look);
            let mut expected = vec![0u32; take];
            filled.fill(range, &mut expected);
            for (k, &i) in samples.ahead_idx()[..take].iter().enumerate() {
                assert_eq!(i, expected[k], "seed {seed} step {step} draw {k}");
                let r = reference.next_u64();
                assert_eq!(i as usize, IndexSampler::index_of(r, range));
            }
            samples.head += take;
        }
    }
}

#[test]
fn cached_candidates_and_warmup_change_at_reconfigurations() {
    // `candidates` and `exploring` are kept between reconfigurations: after every access,
    // across the reconfigurations that end the warm-up (the 50th: no more explorers; the
    // 51st: `associativity` candidates instead of 8), they equal what the count gives, and
    // each sampled eviction draws that many (the buffer's head moves by as many).
    let mut core = LhdCore::new(&LhdConfig::default(), 200, true);
    core.reconfigurations = WARMUP_RECONFIGURATIONS - 2;
    let mut x = 5u64;
    let mut seen = [0usize; 2];
    for _ in 0..4 {
        core.next_reconfiguration = 3_000;
        for _ in 0..3_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let key = ((x >> 33) % 600) as u32;
            if !core.contains(key) && core.len() == 200 {
                let (head, candidates) = (core.samples.head, core.candidates);
                core.evict();
                let head_now = core.samples.head;
                // The buffer is refilled (its head back to 0) before the draws, or not.
                assert!(head_now == head + candidates || head_now == candidates);
                seen[(candidates == 32) as usize] += 1;
            }
            core.update(key, 1.0);
            let done = core.reconfigurations;
            assert_eq!(core.candidates, candidates_after(32, done), "after {done}");
            assert_eq!(
                core.exploring,
                done < WARMUP_RECONFIGURATIONS,
                "after {done}"
            );
        }
    }
    assert_eq!(core.reconfigurations, WARMUP_RECONFIGURATIONS + 2);
    assert!(seen[0] > 100 && seen[1] > 100, "{seen:?}");
}

#[test]
fn new_rank_is_a_new_stamps_density() {
    // The rank an insertion compares with the victims' average is the density of the
    // stamp it pushes (no explorer), in both modes, under the prior and after
    // reconfigurations re-modelled the table and re-chose the age shift.
    for unit in [true, false] {
        let mut core = LhdCore::new(&LhdConfig::default(), 100, unit);
        let mut x = 11u64;
        let mut ranks = Vec::new();
        for access in 0..(5u64 << 20) + 1_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let key = ((x >> 33) % 400) as u32;
            if access % 4_099 == 0 && !core.is_empty() {
                let size = if unit { 1.0 } else { core.sizes[0] };
                let stamp = Stamp::new(core.timestamp, 0, false, access & 3);
                let rank = core.new_rank(size);
                assert_eq!(rank, core.density(stamp, 0), "access {access}");
                ranks.push(rank);
            }
            if !core.contains(key) && core.len() == 100 {
                core.evict();
            }
            core.update(key, if unit { 1.0 } else { 1.0 + (key % 5) as f32 });
        }
        assert_eq!(core.reconfigurations, 5);
        ranks.sort_by(f32::total_cmp);
        ranks.dedup();
        // The prior's, then one per re-modelled table at least.
        assert!(ranks.len() >= 5, "{ranks:?}");
    }
}

#[test]
fn explorer_draws_are_five_bits_of_splitmix64() {
    // Twelve draws per output, low bits first; each is 0 with probability 1/32 (the
    // masks of draws, refilled after each output's twelfth, give exactly those).
    let mut reference = SplitMix64::seed_from_u64(3 ^ EXPLORER_SEED);
    let mut draws = ExplorerDraws::new(3);
    let mut zeros = 0;
    for _ in 0..100_000 {
        let r = reference.next_u64();
        for k in 0..12 {
            let explore = draws.explore();
            assert_eq!(explore, (r >> (5 * k)) & 31 == 0);
            zeros += explore as u32;
        }
    }
    // 1.2M draws: 37,500 expected, standard deviation about 190.
    assert!(zeros.abs_diff(37_500) < 1_000, "{zeros}");
}

#[test]
fn classes_are_libcachesims_loop() {
    // libCacheSim's hitAgeClass: double the age until it reaches MAX_AGE, at most 15 times.
    fn by_doubling(age: u64) -> usize {
        if age == 0 {
            return HIT_AGE_CLASSES - 1;
        }
        let (mut age, mut log) = (age, 0);
        while age < MAX_AGE as u64 && log < HIT_AGE_CLASSES - 1 {
            age <<= 1;
            log += 1;
        }
        log
    }
    for age in (0..=2 * MAX_AGE as u64 + 10).chain([u64::MAX / 2, u64::MAX]) {
        assert_eq!(hit_age_class(age), by_doubling(age), "age {age}");
    }
}

#[test]
fn recent_admissions_track_their_tags() {
    // The recent admissions' tag indices equal what `pos` says of their keys (NIL if not
    // resident) after every access and eviction, over evictions that move tags, keys that
    // come back while still in the ring, and the sampled path (capacity 50 > 8 candidates).
    let cfg = LhdConfig::default();
    let mut core = LhdCore::new(&cfg, 50, true);
    let mut x = 12345u64;
    let mut tracked = 0;
    for _ in 0..200_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = ((x >> 33) % 120) as u32;
        if !core.contains(key) && core.len() == 50 {
            let v = core.evict();
            assert!(!core.contains(v));
        }
        core.update(key, 1.0);
        for (r, (&k, &at)) in core.recent.iter().zip(&core.recent_at).enumerate() {
            let expected = core.index(k).map_or(NIL, |p| p as u32);
            assert_eq!(at, expected, "recent key {k}");
            let live = core.recent_live[r / 64] >> (r % 64) & 1 != 0;
            assert_eq!(live, at != NIL, "recent {r}: live bit");
            tracked += (at != NIL) as usize;
        }
    }
    assert!(tracked > 0, "no recent admission was ever resident");
}

#[test]
fn stamps_pack_and_age_exactly() {
    // The stamp's fields come back as packed, and its age taken from the word is the
    // coarsened difference of the timestamps, clamped to the last age, for every shift,
    // flag pattern and a difference on either side of each multiple of 2^shift.
    let mut core = LhdCore::new(&LhdConfig::default(), 10, true);
    for shift in [0u32, 1, 5, 10, 17, 30] {
        core.shift = shift;
        for &(ts, delta) in &[(0u64, 0u64), (5, 1), (1 << 40, 3), (12_345, 1 << 20)] {
            for d in [
                delta,
                (delta << shift) + 1,
                (delta << shift).saturating_sub(1),
            ] {
                core.timestamp = ts + d;
                for class in 0..HIT_AGE_CLASSES {
                    for explorer in [false, true] {
                        for frame in 0..4u64 {
                            let s = Stamp::new(ts, class, explorer, frame);
                            assert_eq!(s.timestamp(), ts);
                            assert_eq!(s.class(), class);
                            assert_eq!(s.explorer(), explorer);
                            assert_eq!(s.row(), class + HIT_AGE_CLASSES * explorer as usize);
                            assert_eq!(s.0 & FRAME_BITS, frame);
                            let age = ((d >> shift) as usize).min(MAX_AGE - 1);
                            assert_eq!(core.age(s), age, "ts {ts} d {d} shift {shift}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn explorer_rows_are_each_class_plus_one() {
    // Before and after a reconfiguration (the prior, then the modelled densities), an
    // explorer's row is its class's + 1, and the last age ranks lowest in both.
    let mut core = LhdCore::new(&LhdConfig::default(), 100, true);
    let mut x = 7u64;
    for round in 0..2 {
        for c in 0..HIT_AGE_CLASSES {
            for a in 0..MAX_AGE {
                let d = core.densities[c * STRIDE + a];
                let e = core.densities[(HIT_AGE_CLASSES + c) * STRIDE + a];
                assert_eq!(e, d + 1.0, "round {round} class {c} age {a}");
            }
            assert_eq!(core.densities[c * STRIDE + MAX_AGE - 1], f32::MIN);
        }
        for _ in 0..(1 << 20) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let key = ((x >> 33) % 300) as u32;
            if !core.contains(key) && core.len() == 100 {
                core.evict();
            }
            core.update(key, 1.0);
        }
    }
    assert!(core.reconfigurations >= 1);
}

#[test]
fn evictions_report_the_frame() {
    // The page, kind and dirty bit of every evicted page are those it was loaded with (and
    // written since), over a capacity whose evictions sample and move entries.
    use crate::policy::{Policy, PolicyCtx, PolicyDef};
    use crate::sim::check::make_refs;
    use crate::sim::{PageId, PageOut, PageRef, Sink};
    use crate::trace::Kind;
    #[derive(Default)]
    struct Evicted(Vec<PageOut>);
    impl Sink for Evicted {
        fn hit(&mut self, _r: &PageRef, _tier: u8) {}
        fn miss(&mut self, _r: &PageRef, _tier: u8) {}
        fn miss_bypass(&mut self, _r: &PageRef) {}
        fn evict(&mut self, p: PageOut) {
            self.0.push(p);
        }
        fn write_back(&mut self, _pages: &[PageOut]) {}
        fn migrate(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {}
    }
    let mut x = 99u64;
    let pages: Vec<(u64, bool)> = (0..50_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (1_000_000 + 7 * ((x >> 33) % 400), (x >> 20) & 7 < 2)
        })
        .collect();
    let refs = make_refs(&pages);
    let ctx = PolicyCtx {
        capacity: 60,
        tiers: 1,
        page_size: 4096,
    };
    let mut lhd = Lhd::build(&LhdConfig::default(), &ctx).unwrap();
    lhd.grow(400);
    let mut sink = Evicted::default();
    let mut dirty = std::collections::HashMap::new();
    let mut checked = [0usize; 2];
    for i in 0..refs.len() {
        let r = refs.get(i);
        let before = sink.0.len();
        lhd.access(&r, &mut sink);
        for p in &sink.0[before..] {
            assert_eq!(p.kind == Kind::Anon, p.page % 3 == 0, "page {}", p.page);
            assert_eq!(p.dirty, dirty.remove(&p.page).unwrap(), "page {}", p.page);
            checked[p.dirty as usize] += 1;
        }
        *dirty.entry(r.page()).or_insert(false) |= r.is_write();
    }
    assert!(checked[0] > 1_000 && checked[1] > 1_000, "{checked:?}");
}

#[test]
fn classes() {
    // Sum of the last two hit ages: 0 -> the top class; 20000 and more (a new object:
    // 0 + MAX_AGE) -> class 0; each halving below 20000 one class up.
    assert_eq!(hit_age_class(0), 15);
    assert_eq!(hit_age_class(20_000), 0);
    assert_eq!(hit_age_class(19_999), 1);
    assert_eq!(hit_age_class(10_000), 1);
    assert_eq!(hit_age_class(9_999), 2);
    assert_eq!(hit_age_class(1), 15);
}

#[test]
fn hand_worked_prior() {
    // Before the first reconfiguration with the initial age shift of 10, every age below
    // 1024 accesses is 0, so the prior density is (17 + class) for every page: a new page
    // or one hit once (last two hit ages 0 + 20000: class 0) has 17; a page hit twice
    // (0 + 0: class 15) has 32. Memory 2 (whole-cache scans: 8 candidates >= 2):
    // 1 1 1 (class 15), 2 (class 0); 3 evicts 2 (LRU would evict 1); 1 hits.
    assert_eq!(replay_ids("lhd", 2, &[1, 1, 1, 2, 3, 1]), (3, 3));
    assert_eq!(replay_ids("lru", 2, &[1, 1, 1, 2, 3, 1]), (2, 4));
    // Equal densities: the least recently accessed goes. 1 2; 3 evicts 1; 1 evicts 2 (3 is
    // newer); 3 hits.
    assert_eq!(replay_ids("lhd", 2, &[1, 2, 3, 1, 3]), (1, 4));
}

#[test]
fn sampled_is_seeded() {
    use crate::policy::PolicySpec;
    use crate::sim::check::{check_policy, mod_skewed_refs};
    let refs = mod_skewed_refs(5, 20_000, 400);
    let run = |s: &str| check_policy(&PolicySpec::parse(s).unwrap(), 100, 1, &refs).unwrap();
    let a = run("lhd(seed=5)");
    assert_eq!(a, run("lhd(seed=5)"));
    assert_ne!(a.eviction_digest, run("lhd(seed=6)").eviction_digest);
    let e = check_policy(
        &PolicySpec::parse("lhd(associativity=0)").unwrap(),
        2,
        1,
        &refs,
    )
    .unwrap_err();
    assert!(e.to_string().contains("associativity"), "{e}");
    let _ = replay_spec_ids("lhd(admissions=0)", 3, &[1, 2, 3, 4]);
}
