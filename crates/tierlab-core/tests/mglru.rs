//! The multi-generational LRU (`mglru`, policy/swap/mglru.rs) on hand-worked
//! traces, one test per mechanism: placement and aging, eviction order
//! across generations and tiers, refault feedback (the PID controller), the
//! anon/file balance, and the min_ttl thrashing guard. Each expected value is
//! derived in the comments from the kernel rules the module cites.

use tierlab_core::policy::swap::linux_two_list::{FileAccess, Writeback};
use tierlab_core::policy::swap::mglru::{
    positive_ctrl_err, CtrlPos, Mglru, MglruConfig, MglruVersion,
};
use tierlab_core::policy::{PolicyCtx, PolicyDef};

mod common;
use common::{ctx, Driver, A, F, R, W};

fn mglru(capacity: usize, cfg: MglruConfig) -> Driver<Mglru> {
    Driver::new(Mglru::build(&cfg, &ctx(capacity)).unwrap())
}

fn mapped(capacity: usize) -> Driver<Mglru> {
    mglru(capacity, MglruConfig::default())
}

fn fd(capacity: usize, swappiness: u32) -> Driver<Mglru> {
    mglru(
        capacity,
        MglruConfig {
            file_access: FileAccess::Read,
            swappiness,
            ..Default::default()
        },
    )
}

#[test]
fn placement_follows_lru_gen_folio_seq() {
    // Start: max_seq = 3, min_seq = 0 for both types (lru_gen_init_lruvec).
    let mut d = fd(16, 60);
    assert_eq!(d.p.seqs(), (3, [0, 0]));
    // A faulted page is active without PG_workingset: max_seq - 1.
    d.go(1, R, A);
    assert_eq!(d.p.seq_of(1), Some(2));
    assert_eq!(d.p.page_refs(1), Some((0, false, true)));
    // A page-cache page added by read(): max_seq - 3, clamped to min_seq;
    // filemap_read marks it accessed once (PG_referenced, refs = 1).
    d.go(2, R, F);
    assert_eq!(d.p.seq_of(2), Some(0));
    assert_eq!(d.p.page_refs(2), Some((1, false, false)));
    // Further reads count refs up to 4, then set PG_workingset.
    for refs in 2..=4 {
        d.go(2, R, F);
        assert_eq!(d.p.page_refs(2), Some((refs, false, false)));
    }
    d.go(2, R, F);
    assert_eq!(d.p.page_refs(2), Some((4, true, false)));
    // A write() does not mark the page accessed.
    d.go(3, W, F);
    assert_eq!(d.p.page_refs(3), Some((0, false, false)));
}

fn fd_6_1(capacity: usize) -> Driver<Mglru> {
    mglru(
        capacity,
        MglruConfig {
            file_access: FileAccess::Read,
            version: MglruVersion::V6_1,
            ..Default::default()
        },
    )
}

#[test]
fn version_6_1_places_and_counts_as_lru_gen_add_folio_and_folio_inc_refs() {
    let mut d = fd_6_1(16);
    // lru_gen_add_folio: file has 4 generations (min_seq 0, max_seq 3), more
    // than MIN_NR_GENS: a page added by read() joins min_seq + 1.
    d.go(1, R, F);
    assert_eq!(d.p.seq_of(1), Some(1));
    // folio_inc_refs: the first access sets PG_referenced only (counter 0),
    d.go(2, R, F);
    assert_eq!(d.p.page_refs(2), Some((0, false, false)));
    // the second PG_workingset, then the counter counts up to 3.
    d.go(2, R, F);
    assert_eq!(d.p.page_refs(2), Some((0, true, false)));
    for c in 1..=3 {
        d.go(2, R, F);
        assert_eq!(d.p.page_refs(2), Some((c, true, false)));
    }
    d.go(2, R, F);
    assert_eq!(d.p.page_refs(2), Some((3, true, false)));
    // A faulted page is active: max_seq.
    d.go(3, R, A);
    assert_eq!(d.p.seq_of(3), Some(3));
}

#[test]
fn version_6_1_protects_full_refs_and_clears_them_on_the_way_up() {
    // Capacity 2, file pages read through read(). Page 1 read five times:
    // PG_referenced, PG_workingset, counter 3: refs = 3 + 1 = 4
    // (BIT(LRU_REFS_WIDTH)): sort_folio protects it whatever the tier
    // cut-off. Page 2 read once.
    let mut d = fd_6_1(2);
    for _ in 0..5 {
        d.go(1, R, F);
    }
    d.go(2, R, F);
    // Both in generation 1 (min_seq + 1), 2 at the head. Page 3 needs room:
    // try_to_inc_min_seq retires the empty generation 0 (min_seq[file] = 1,
    // three generations left, so no aging); the tail of generation 1 is
    // page 1: protected, to min_seq + 1 = 2 with LRU_REFS_MASK and
    // LRU_REFS_FLAGS cleared (folio_inc_gen). Then page 2 (tier 0): isolated
    // and evicted.
    d.go(3, R, F);
    assert_eq!(d.evicted(), vec![2]);
    assert_eq!(d.counter("protected"), 1);
    assert_eq!(d.p.seq_of(1), Some(2));
    assert_eq!(d.p.page_refs(1), Some((0, false, false)));
    // Page 3: min_seq[file] (1) + MIN_NR_GENS >= max_seq (3), so it joins
    // the oldest generation, 1.
    assert_eq!(d.p.seq_of(3), Some(1));
}

#[test]
fn version_6_1_sorts_protected_pages_to_the_end_scanned_first() {
    // sort_folio moves a protected page to min_seq + 1 with list_move_tail:
    // the end scan_folios takes first. Capacity 3, pages 1, 2, 3 read five
    // times each (refs 4) in that order: generation 1 (min_seq + 1), page 1
    // at the tail.
    let mut d = fd_6_1(3);
    for p in 1..=3 {
        for _ in 0..5 {
            d.go(p, R, F);
        }
    }
    // Page 4 needs room: min_seq[file] rises to 1 (generation 0 empty);
    // pages 1, 2, 3 are protected in turn, each to the tail of generation 2
    // (refs cleared), so 3 ends at the tail. Generation 1 is empty and
    // neither type has a page to scan: aging (max_seq 4); min_seq rises to
    // 2 for both types (anon's waits at file's), and the tail of generation
    // 2, page 3 (refs 0, tier 0), is evicted.
    d.go(4, R, F);
    assert_eq!(d.counter("protected"), 3);
    assert_eq!(d.counter("aging"), 1);
    assert_eq!(d.evicted(), vec![3]);
    assert_eq!(d.p.seqs(), (4, [2, 2]));
    // Page 4 joins min_seq = 2 (min_seq + MIN_NR_GENS >= max_seq), at the
    // head; the next page taken from the tail is 2.
    assert_eq!(d.p.seq_of(4), Some(2));
    d.go(5, R, F);
    assert_eq!(d.evicted(), vec![3, 2]);
}

#[test]
fn aging_runs_when_eviction_is_no_longer_possible() {
    let mut d = mapped(4);
    for p in 1..=4 {
        d.go(p, R, A);
    }
    // Page 5 needs a page. try_to_inc_min_seq retires the empty
    // generations 0 and 1 of both types (min_seq 2 = max_seq - 1): only two
    // generations are left, so the aging runs. Its walk finds pages 1-4
    // young without PG_referenced: they only get PG_referenced (refs 1) and
    // stay in generation 2; max_seq becomes 4. File's empty generation 2 is
    // retired (min_seq[file] = 3). File has two generations, so anon is
    // scanned: the tail of generation 2 is page 1, not young: evicted.
    d.go(5, R, A);
    assert_eq!(d.counter("aging"), 1);
    assert_eq!(d.p.seqs(), (4, [2, 3]));
    assert_eq!(d.evicted(), vec![1]);
    for p in 2..=4 {
        assert_eq!(d.p.seq_of(p), Some(2), "page {p}");
        assert_eq!(d.p.page_refs(p), Some((1, false, false)));
    }
    assert_eq!(d.p.seq_of(5), Some(3));
    assert_eq!(d.counter("promoted"), 0);
}

#[test]
fn eviction_activates_young_referenced_pages_and_takes_the_oldest_generation_in_order() {
    let mut d = mapped(4);
    for p in 1..=5 {
        d.go(p, R, A);
    }
    // As above: generation 2 holds 4, 3, 2 (head to tail), generation 3
    // holds 5. Page 2 is referenced again (young, with PG_referenced).
    d.go(2, R, A);
    // Page 6: the tail of generation 2 is page 2, young with PG_referenced:
    // lru_gen_set_refs -> activate (PG_workingset, to max_seq = 4). Next,
    // page 3, not young: evicted. Page 6 joins max_seq - 1 = 3.
    d.go(6, R, A);
    assert_eq!(d.evicted(), vec![1, 3]);
    assert_eq!(d.p.seq_of(2), Some(4));
    assert_eq!(d.p.page_refs(2), Some((0, true, false)));
    assert_eq!(d.counter("activated"), 1);
    // Page 7 takes page 4, the last of generation 2; page 8 finds
    // generation 2 empty: it is retired (min_seq[anon] = 3), two
    // generations are left, so the aging runs again: pages 5, 6, 7 are
    // young -> PG_referenced; max_seq = 5, and 5, the tail of generation 3,
    // is evicted (not young any more). Page 2 (generation 4) is untouched.
    d.go(7, R, A);
    assert_eq!(d.evicted(), vec![1, 3, 4]);
    d.go(8, R, A);
    assert_eq!(d.counter("aging"), 2);
    assert_eq!(d.p.seqs().0, 5);
    assert_eq!(d.evicted(), vec![1, 3, 4, 5]);
    assert_eq!(d.p.seq_of(2), Some(4));
    assert_eq!(d.p.gen_pages(3, false), vec![6, 7]);
    assert_eq!(d.p.seq_of(8), Some(4));
}

#[test]
fn aging_promotes_young_working_set_pages_to_the_youngest_generation() {
    let mut d = mapped(4);
    for p in [1, 2, 3, 4, 5, 2, 6] {
        d.go(p, R, A);
    }
    // Page 2 is in generation 4 with PG_workingset (activated above).
    // Touch it again: the next aging walk finds it young with
    // PG_workingset: folio_update_gen promotes it to the current max_seq
    // (4, then 5 is the new youngest; it stays in 4, now max_seq - 1).
    d.go(2, R, A);
    d.go(7, R, A);
    d.go(8, R, A); // aging #2 (see the previous test)
    assert_eq!(d.counter("aging"), 2);
    assert_eq!(d.counter("promoted"), 1);
    assert_eq!(d.p.seq_of(2), Some(4));
    assert_eq!(d.p.page_refs(2), Some((0, true, false)));
    // Without that touch the walk does not see page 2 (the previous test):
    // promoted stays 0.
    let mut e = mapped(4);
    for p in [1, 2, 3, 4, 5, 2, 6, 7, 8] {
        e.go(p, R, A);
    }
    assert_eq!(e.counter("promoted"), 0);
}

#[test]
fn generations_are_capped_at_max_nr_gens() {
    // File pages only, added by read() to the oldest generation, never
    // refaulting: each aging adds a generation to both types; anon, empty,
    // has its empty generations retired, so max_seq - min_seq stays < 4.
    let mut d = fd(8, 60);
    for p in 0..200 {
        d.go(p, R, F);
        let (max, min) = d.p.seqs();
        for m in min {
            assert!(max - m < 4, "{} generations", max - m + 1);
        }
    }
    assert_eq!(d.sink.misses, 200);
    assert_eq!(d.counter("reclaimed_anon"), 0);
    // FIFO order: every eviction is the oldest page read.
    assert_eq!(d.evicted(), (0..192).collect::<Vec<u64>>());
}

#[test]
fn positive_ctrl_err_by_hand() {
    // pv.refaulted < MIN_LRU_BATCH (64): always positive.
    let sp = CtrlPos {
        refaulted: 0,
        total: 1000,
        gain: 2,
    };
    let pv = CtrlPos {
        refaulted: 63,
        total: 64,
        gain: 3,
    };
    assert!(positive_ctrl_err(&sp, &pv));
    // sp: 10 refaults in 1000; pv: 100 in 200.
    // 100 x (1000 + 64) x 2 = 212800 > (10 + 1) x 200 x 3 = 6600: negative.
    let sp = CtrlPos {
        refaulted: 10,
        total: 1000,
        gain: 2,
    };
    let pv = CtrlPos {
        refaulted: 100,
        total: 200,
        gain: 3,
    };
    assert!(!positive_ctrl_err(&sp, &pv));
    // pv 100 in 100000: 100 x 1064 x 2 = 212800 <= 11 x 100000 x 3.
    let pv = CtrlPos {
        refaulted: 100,
        total: 100_000,
        gain: 3,
    };
    assert!(positive_ctrl_err(&sp, &pv));
}

#[test]
fn refaults_are_recent_within_max_nr_gens_of_the_shadow() {
    let mut d = mapped(4);
    for p in 1..=5 {
        d.go(p, R, A);
    }
    // Page 1 was evicted from generation 2 (its shadow holds min_seq 2);
    // max_seq is 4: |4 - 2| < 4, recent. It was tier 0 (refs 1): counted in
    // refaulted[anon][0].
    assert_eq!(d.p.ctrl_counts(false, 0), (0, 1, 0));
    d.go(1, R, A);
    assert_eq!(d.counter("refaults"), 1);
    assert_eq!(d.counter("refaults_recent"), 1);
    assert_eq!(d.p.ctrl_counts(false, 0).0, 1);
    // A page evicted long ago: stream 60 new pages (many agings), then
    // refault page 2, evicted in generation 2 too.
    for p in 100..160 {
        d.go(p, R, A);
    }
    assert!(d.p.seqs().0 >= 2 + 4);
    assert!(d.evicted().contains(&2));
    let recent = d.counter("refaults_recent");
    d.go(2, R, A);
    assert_eq!(d.counter("refaults"), 2);
    assert_eq!(d.counter("refaults_recent"), recent);
}

/// A hot set of page-cache pages read twice per round (refs 2: tier 1) and
/// a stream of pages read once (tier 0), in memory that cannot hold both:
/// at first the hot pages are evicted with the stream and refault from
/// tier 1; once tier 1's refault rate is above tier 0's (and 64 refaults
/// have been counted), get_tier_idx returns 0 and sort_folio protects tier
/// 1: the hot set stays resident and only the stream is evicted.
#[test]
fn pid_controller_protects_a_refaulting_tier() {
    let mut d = fd(64, 0);
    let hot: Vec<u64> = (0..32).collect();
    let mut next_cold = 10_000;
    let mut late_hot_misses = 0;
    for round in 0..200 {
        let before = d.sink.misses;
        for &h in &hot {
            d.go(h, R, F);
            d.go(h, R, F);
        }
        if round >= 150 {
            late_hot_misses += d.sink.misses - before;
        }
        for _ in 0..48 {
            d.go(next_cold, R, F);
            next_cold += 1;
        }
    }
    assert_eq!(d.p.tier_idx(true), 0);
    assert!(d.counter("protected") > 0);
    assert_eq!(d.counter("forced"), 0);
    // In the last 50 rounds hardly any hot page is missed (an LRU would
    // miss all 32 every round: 32 + 48 pages cycle through 64).
    assert!(late_hot_misses < 50, "{late_hot_misses}");
}

#[test]
fn swappiness_sets_the_types_that_are_evicted() {
    // Swappiness 0: anon is never evicted while file pages can be (8 anon
    // pages reused, a stream of file pages, 16 pages of memory).
    let mut d = mglru(
        16,
        MglruConfig {
            swappiness: 0,
            ..Default::default()
        },
    );
    let mut next = 1000;
    for _ in 0..50 {
        for a in 0..8 {
            d.go(a, R, A);
        }
        for _ in 0..8 {
            d.go(next, R, F);
            next += 1;
        }
    }
    assert_eq!(d.counter("reclaimed_anon"), 0);
    assert!(d.counter("reclaimed_file") > 300);
    assert_eq!(d.counter("forced"), 0);
    // Swappiness 200: get_type_to_scan always picks anon; file is scanned
    // only when anon is down to MIN_NR_GENS generations. The same trace with
    // the roles swapped (8 file pages reused, an anon stream) evicts anon.
    let mut d = mglru(
        16,
        MglruConfig {
            swappiness: 200,
            ..Default::default()
        },
    );
    let mut next = 1000;
    for _ in 0..50 {
        for f in 0..8 {
            d.go(f, R, F);
        }
        for _ in 0..8 {
            d.go(next, R, A);
            next += 1;
        }
    }
    assert!(!d.p.type_to_scan());
    let anon = d.counter("reclaimed_anon");
    let file = d.counter("reclaimed_file");
    assert!(anon > 300 && file < anon / 4, "anon {anon} file {file}");
    // With no file pages at all and swappiness 0 the kernel would OOM-kill;
    // the replay must free a page: the bounded fallback evicts anon.
    let mut d = mglru(
        4,
        MglruConfig {
            swappiness: 0,
            ..Default::default()
        },
    );
    for a in 0..6 {
        d.go(a, R, A);
    }
    assert_eq!(d.counter("forced"), 2);
}

/// Anon pages that keep refaulting and file pages that never come back:
/// the type controller (SP = anon with gain swappiness, PV = file with gain
/// 200 - swappiness) finds file's refault rate lower and scans file.
#[test]
fn refault_feedback_balances_anon_and_file() {
    let mut d = mapped(64);
    let mut next_file = 10_000;
    for _ in 0..300 {
        for a in 0..40 {
            d.go(a, R, A);
        }
        for _ in 0..40 {
            d.go(next_file, R, F);
            next_file += 1;
        }
    }
    assert!(d.p.type_to_scan());
    let anon = d.counter("reclaimed_anon");
    let file = d.counter("reclaimed_file");
    assert!(file > 4 * anon, "anon {anon} file {file}");
}

#[test]
fn min_ttl_trips_when_the_oldest_generation_is_young() {
    let cfg = MglruConfig {
        min_ttl: 10,
        ..Default::default()
    };
    let mut d = mglru(2, cfg);
    d.at(1, R, A, 0);
    d.at(2, R, A, 1);
    // Reclaim at time 2: the oldest evictable generation (0) was born at
    // time 0, less than min_ttl = 10 ago: the kernel would OOM-kill.
    d.at(3, R, A, 2);
    assert_eq!(d.counter("min_ttl_oom"), 1);
    // That reclaim aged (max_seq 4, generation 4 born at 2) and evicted
    // page 1; the oldest evictable generation is now 2 (born at 0).
    assert_eq!(d.p.seqs(), (4, [2, 3]));
    assert!(d.p.working_set_protected(9));
    assert!(!d.p.working_set_protected(10));
    // At time 100 the oldest generation is older than min_ttl: no trip.
    d.at(4, R, A, 100);
    assert_eq!(d.counter("min_ttl_oom"), 1);
    // Off by default.
    let mut e = mapped(2);
    for p in 1..=3 {
        e.go(p, R, A);
    }
    assert_eq!(e.counter("min_ttl_oom"), 0);
    assert!(!e.p.working_set_protected(0));
}

#[test]
fn dirty_pages_are_written_when_evicted() {
    let mut d = mapped(2);
    d.go(1, W, A);
    d.go(2, R, F);
    d.go(3, R, A);
    d.go(4, R, A);
    assert_eq!(d.sink.evicted.len(), 2);
    assert!(d.sink.evicted.iter().any(|&(p, dirty)| p == 1 && dirty));
}

#[test]
fn rejects_bad_parameters() {
    let ctx = PolicyCtx {
        capacity: 4,
        tiers: 1,
        page_size: 4096,
    };
    for cfg in [
        MglruConfig {
            swappiness: 201,
            ..Default::default()
        },
        MglruConfig {
            reclaim_batch: 0,
            ..Default::default()
        },
    ] {
        assert!(Mglru::build(&cfg, &ctx).is_err());
    }
}

#[test]
fn sync_swap_rewrites_a_page_swapped_in_by_a_load() {
    // Capacity 4, anonymous pages only: pages 1-4 stored, page 5 evicts page
    // 1 dirty (written to swap; aging_runs_when_eviction_is_no_longer_possible
    // works the order out). A load of 1 swaps it in; it is never stored to
    // again, and new pages push it out once more. On a swap file its slot is
    // kept (clean: nothing to write); on zram or brd the swap-in freed the
    // slot (do_swap_page, SWP_SYNCHRONOUS_IO), so it is written again.
    for sync in [false, true] {
        let mut d = mglru(
            4,
            MglruConfig {
                sync_swap: sync,
                ..Default::default()
            },
        );
        for p in 1..=5 {
            d.go(p, W, A);
        }
        assert_eq!(d.sink.evicted, vec![(1, true)]);
        d.go(1, R, A);
        let mut p = 6;
        while d.sink.evicted.iter().filter(|e| e.0 == 1).count() < 2 {
            d.go(p, W, A);
            p += 1;
            assert!(p < 40, "page 1 never evicted again");
        }
        let again: Vec<bool> = d
            .sink
            .evicted
            .iter()
            .filter(|e| e.0 == 1)
            .map(|e| e.1)
            .collect();
        assert_eq!(again, vec![true, sync], "sync_swap {sync}");
        // every other eviction is of a page stored since it came in: dirty
        assert!(d.sink.evicted.iter().all(|e| e.0 == 1 || e.1));
    }
}

/// A policy counter by name.
fn counter(p: &Mglru, name: &str) -> u64 {
    use tierlab_core::policy::Policy;
    p.counters().into_iter().find(|c| c.0 == name).unwrap().1
}

/// 6.1-6.13's memory-cgroup reclaim: file pages through read(), reclaim
/// rounds of 8 pages (nr_to_reclaim).
fn memcg_6_1() -> MglruConfig {
    MglruConfig {
        file_access: FileAccess::Read,
        version: MglruVersion::V6_1,
        reclaim_batch: 8,
        ..Default::default()
    }
}

#[test]
fn version_6_1_memcg_reclaim_ages_at_low_priority_and_swaps_out_cold_anon() {
    // 6.1-6.13's memcg reclaim (mglru/memcg.rs), capacity 8, reclaim_batch 8
    // (nr_to_reclaim), file pages through read(). Anon pages 1, 2 are faulted
    // once (max_seq = 3, young); file pages 11-16 read once (min_seq + 1 = 1:
    // file has four generations).
    let mut d = mglru(8, memcg_6_1());
    d.go(1, R, A);
    d.go(2, R, A);
    for p in 11..=16 {
        d.go(p, R, F);
    }
    assert_eq!((d.p.seq_of(1), d.p.seq_of(11)), (Some(3), Some(1)));
    // File page 17 needs a page. Priorities 12..4: four generations, 8 pages:
    // should_run_aging false, nr_to_scan = 8 >> priority = 0. Priority 3
    // (nr_to_scan 1): evict_folios finds generation 0 empty for both types;
    // try_to_inc_min_seq raises both min_seq to 1 (reported as 1 scanned).
    // Priority 2: three generations, young (gen 3) = 2 of 8, old (gen 1) =
    // 6: spread well, no aging; nr_to_scan 2: file (no refaults yet) pages
    // 11-16 are reclaimed, both min_seq go to 2, and with anon down to
    // MIN_NR_GENS generations evict_folios reports 0. 6 of 8 reclaimed.
    // Priority 1: out of cold pages (min_seq 2 + 2 > max_seq 3): aging (pages
    // 1, 2 found young go to max_seq 3, where they are, refs cleared: the
    // 6.1-6.13 folio_update_gen), max_seq 4. Priority 0: three
    // generations with the oldest (gen 2) empty, old * 4 < total: aging again,
    // max_seq 5. Page 17 joins min_seq[file] + 1 = 3 (four generations).
    d.go(17, R, F);
    assert_eq!(d.p.seqs(), (5, [2, 2]));
    assert_eq!(counter(&d.p, "aging"), 2);
    assert_eq!(counter(&d.p, "reclaimed_file"), 6);
    assert_eq!(counter(&d.p, "reclaimed_anon"), 0);
    assert_eq!((d.p.seq_of(1), d.p.seq_of(17)), (Some(3), Some(3)));
    // (6.14's walk would have set PG_referenced: refs 1.)
    assert_eq!(d.p.page_refs(1), Some((0, false, false)));
    for p in 18..=22 {
        d.go(p, R, F);
    }
    // Page 23: priorities 12..4 scan nothing (8 >> priority = 0); priority 3:
    // generation 2 empty for both, min_seq to 3 (three generations left).
    // Priority 2: gen 3 holds all 8 pages (old * 4 >= total), nr_to_scan 2:
    // file pages 17-22 are reclaimed, file's generation 3 is empty, but its
    // min_seq waits at anon's (try_to_inc_min_seq: file = max(min_seq[anon],
    // min_seq[file])). Priority 1: total 2 (the anon pages), nr_to_scan 1;
    // file's oldest generation is empty, so isolate_folios turns to anon:
    // pages 1 and 2, touched once and never again, are swapped out. 8 of 8.
    d.go(23, R, F);
    assert_eq!(counter(&d.p, "reclaimed_anon"), 2);
    assert_eq!(counter(&d.p, "reclaimed_file"), 12);
    assert_eq!(counter(&d.p, "aging"), 2);
    assert_eq!(d.p.seqs(), (5, [4, 4]));
    assert_eq!(d.p.seq_of(23), Some(4));
    let order: Vec<u64> = d.sink.evicted.iter().map(|e| e.0).collect();
    assert_eq!(
        order,
        [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 1, 2]
    );
    // One page per round with no priorities (reclaim_batch 1): no aging is
    // needed while file pages refill the oldest generation, and the anon
    // pages stay.
    let mut d = mglru(
        8,
        MglruConfig {
            reclaim_batch: 1,
            ..memcg_6_1()
        },
    );
    for (p, k) in [(1, A), (2, A)]
        .into_iter()
        .chain((11..=23).map(|p| (p, F)))
    {
        d.go(p, R, k);
    }
    assert_eq!(counter(&d.p, "reclaimed_anon"), 0);
    assert_eq!(counter(&d.p, "aging"), 0);
}

/// File pages through read()/write(), reclaim one page at a time, dirty file
/// pages left to the flusher (`writeback = "flusher"`, mglru/writeback.rs).
fn flusher(
    capacity: usize,
    version: MglruVersion,
    written_at: Option<Vec<[u64; 3]>>,
) -> Driver<Mglru> {
    let mut d = mglru(
        capacity,
        MglruConfig {
            file_access: FileAccess::Read,
            version,
            writeback: Writeback::Flusher,
            written_at,
            ..Default::default()
        },
    );
    d.sink.written = Some(Vec::new());
    d
}

#[test]
fn version_6_12_passes_a_dirty_file_page_over_until_its_write_completes() {
    // Capacity 3; the write before reference 4 is recorded: page 1.
    let mut d = flusher(3, MglruVersion::V6_12, Some(vec![[4, 1, 1]]));
    // References 0-2: page 1 written (dirty, not marked accessed), pages 2, 3
    // read (PG_referenced); all join min_seq + 1 = 1 (four generations),
    // each at the head: the tail, scanned first, is page 1.
    d.go(1, W, F);
    d.go(2, R, F);
    d.go(3, R, F);
    // Reference 3, page 4: reclaim. Generation 0 is empty, min_seq goes to 1.
    // Page 1 is isolated (file_taken 1), not young; shrink_folio_list finds
    // it dirty: PG_reclaim, activated -> max_seq 3 (nr_unqueued_dirty 1).
    // Page 2 (PG_referenced, tier 0, not protected) is reclaimed clean. The
    // pass took 2 file pages, 1 dirty: no wake-up (and the writes are
    // recorded anyway).
    d.go(4, R, F);
    assert_eq!(d.sink.evicted, vec![(2, false)]);
    assert_eq!(d.p.seq_of(1), Some(3));
    assert_eq!(d.counter("dirty_passed_over"), 1);
    assert_eq!(d.counter("flusher_wakeups"), 0);
    // Before reference 4 the flusher writes page 1: folio_end_writeback sees
    // PG_reclaim and rotates it to the tail of the oldest file generation
    // (min_seq 1), so page 5's reclaim takes it, clean, before page 3.
    d.go(5, R, F);
    assert_eq!(d.sink.written, Some(vec![vec![1]]));
    assert_eq!(d.counter("rotated"), 1);
    assert_eq!(d.sink.evicted, vec![(2, false), (1, false)]);
    assert_eq!(d.p.seq_of(3), Some(1));
}

#[test]
fn version_6_12_wakes_the_flusher_when_every_page_taken_is_dirty() {
    // Without recorded writes. Capacity 2, both pages written: page 3's
    // reclaim isolates only dirty pages (nr_unqueued_dirty == file_taken), so
    // they go round the generations until the pass gives up; then the
    // flusher it woke writes both (in the order they were dirtied), each
    // rotated to the oldest generation's tail: page 2, rotated last, is
    // reclaimed, clean.
    let mut d = flusher(2, MglruVersion::V6_12, None);
    d.go(1, W, F);
    d.go(2, W, F);
    d.go(3, R, F);
    assert_eq!(d.sink.written, Some(vec![vec![1, 2]]));
    assert_eq!(d.sink.evicted, vec![(2, false)]);
    assert_eq!(d.counter("flusher_wakeups"), 1);
    assert_eq!(d.counter("forced"), 0);
    // A page written once more is dirty again, and written again when next
    // the flusher is woken: never evicted dirty.
    d.go(1, W, F);
    for p in 4..=12 {
        d.go(p, R, F);
    }
    assert!(d.sink.evicted.iter().all(|e| !e.1), "{:?}", d.sink.evicted);
}

#[test]
fn version_6_1_sorts_a_dirty_file_page_up_a_generation() {
    // 6.1-6.11 sort_folio ("waiting for writeback"): the dirty page 1 goes to
    // min_seq + 1 = 2 with PG_reclaim, not isolated; reclaim wakes no flusher.
    let mut d = flusher(3, MglruVersion::V6_1, None);
    d.go(1, W, F);
    d.go(2, R, F);
    d.go(3, R, F);
    d.go(4, R, F);
    assert_eq!(d.sink.evicted, vec![(2, false)]);
    assert_eq!(d.p.seq_of(1), Some(2));
    assert_eq!(d.counter("dirty_passed_over"), 1);
    assert_eq!(d.counter("flusher_wakeups"), 0);
}

#[test]
fn the_flusher_settings_parse_and_bad_writes_are_refused() {
    let cfg: MglruConfig = serde_json::from_str(
        r#"{"version": "6.12", "writeback": "flusher", "written_at": [[5, 1, 2]]}"#,
    )
    .unwrap();
    assert_eq!(cfg.version, MglruVersion::V6_12);
    assert_eq!(cfg.written_at, Some(vec![[5, 1, 2]]));
    for (cfg, want) in [
        (
            MglruConfig {
                written_at: Some(vec![[1, 1, 1]]),
                ..Default::default()
            },
            "needs writeback = 'flusher'",
        ),
        (
            MglruConfig {
                writeback: Writeback::Flusher,
                written_at: Some(vec![[5, 1, 1], [4, 2, 1]]),
                ..Default::default()
            },
            "entry 1 (reference 4) follows reference 5",
        ),
        (
            MglruConfig {
                writeback: Writeback::Flusher,
                written_at: Some(vec![[5, 1, 0]]),
                ..Default::default()
            },
            "entry 0 writes 0 pages",
        ),
    ] {
        let e = Mglru::build(&cfg, &ctx(4)).err().unwrap().to_string();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn the_flusher_keeps_the_dirty_page_contract() {
    // Under the checking sink (sim/check.rs): a page is written back only
    // while dirty, evicted dirty only if written since loaded or cleaned, and
    // the counts add up; for each version, woken or with recorded writes
    // (some of clean or absent pages), one page or 32 at a time.
    use tierlab_core::policy::PolicySpec;
    use tierlab_core::sim::check::{check_policy, make_refs};
    let mut x = 7u64;
    let mut pages = Vec::new();
    for _ in 0..6000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let page = (x >> 33) % 400;
        pages.push((page, (x >> 20) % 10 < 3));
    }
    let refs = make_refs(&pages);
    let written: Vec<String> = (0..60)
        .map(|k| format!("[{},{},{}]", 100 * k, (k * 37) % 400, 1 + k % 5))
        .collect();
    for version in ["6.1", "6.12", "6.14"] {
        for batch in [1, 32] {
            for rec in ["", &format!(",written_at=[{}]", written.join(","))] {
                let spec = format!(
                    "mglru(file_access='read',writeback='flusher',version='{version}',reclaim_batch={batch}{rec})"
                );
                for cap in [8, 60, 200] {
                    let c = check_policy(&PolicySpec::parse(&spec).unwrap(), cap, 1, &refs)
                        .unwrap_or_else(|e| panic!("{spec} cap {cap}: {e}"));
                    assert_eq!(c.hits + c.misses, refs.len() as u64, "{spec} cap {cap}");
                }
            }
        }
    }
}

#[test]
fn version_6_1_eviction_looks_around_a_young_page() {
    // lru_gen_look_around (6.1-6.13 mm/vmscan.c): eviction's rmap walk that
    // finds a page young also scans the PTEs around it (MIN_LRU_BATCH = 64
    // of its PTE table) and activates the young pages there. Capacity 6,
    // swappiness 200 (anon only), one page per round.
    let cfg = MglruConfig {
        version: MglruVersion::V6_1,
        swappiness: 200,
        ..Default::default()
    };
    let mut d = mglru(6, cfg);
    // Anon pages 0-5 faulted: max_seq 3, young.
    for p in 0..6 {
        d.go(p, W, A);
    }
    // Page 600 (another PTE table) needs a page: no generation is evictable
    // (min_seq 0 + 2 <= max_seq 3, but generations 0-2 are empty and min_seq
    // rises to 2): aging (0-5 young: to max_seq 3, young bits cleared;
    // max_seq 4), again (min_seq 3, nothing young; max_seq 5). Generation 3
    // holds 0-5, page 0 at its tail: not young, swapped out.
    d.go(600, W, A);
    assert_eq!(d.evicted(), [0]);
    assert_eq!(d.p.seqs(), (5, [3, 3]));
    // Pages 1, 3, 5 are used again (young); page 601 needs a page. The tail
    // of generation 3 is page 1: young, so it is kept (max_seq 5), and the
    // look-around (pages 0-63 of its table) activates 3 and 5 with it; 600
    // (another table) keeps its young bit. The next tail, page 2, is
    // swapped out.
    for p in [1, 3, 5] {
        d.go(p, R, A);
    }
    d.go(601, W, A);
    assert_eq!(d.evicted(), [0, 2]);
    assert_eq!(d.counter("looked_around"), 2);
    for p in [1, 3, 5] {
        assert_eq!(d.p.seq_of(p as u32), Some(5), "page {p}");
        assert_eq!(d.p.page_refs(p as u32), Some((0, false, false)), "page {p}");
    }
    assert_eq!(d.p.seq_of(4), Some(3));
    assert_eq!(d.p.page_refs(600), Some((0, false, true)));
}

#[test]
fn version_6_1_memcg_batch_keeps_an_isolated_page_the_look_around_found_young() {
    // The references of version_6_1_memcg_reclaim_ages_at_low_priority_and_
    // swaps_out_cold_anon, with anon pages 1 and 2 used again before page 23
    // needs a page. At priority 1 evict_folios isolates both
    // (file's oldest generation is empty) before shrink_folio_list looks at
    // either: page 1 is young, so it is kept and its look-around finds page
    // 2 young while isolated: PG_referenced, kept too ("folio_update_gen()
    // tried to promote this page?"). Both go to max_seq 5 and nothing anon
    // is swapped out; one page at a time, page 2 would have been activated
    // by the look-around from the list instead. try_to_inc_min_seq then
    // raises both min_seq to 4 (anon at MIN_NR_GENS: 0 scanned reported),
    // and priority 0 ages (min_seq 4 + 2 > max_seq 5): max_seq 6. 6 of 8
    // reclaimed (file pages 17-22); page 23 joins min_seq[file] = 4 (two
    // generations above it).
    let mut d = mglru(8, memcg_6_1());
    for (p, k) in [(1, A), (2, A)]
        .into_iter()
        .chain((11..=22).map(|p| (p, F)))
        .chain([(1, A), (2, A)])
    {
        d.go(p, R, k);
    }
    assert_eq!(d.p.seqs(), (5, [2, 2]));
    assert_eq!(counter(&d.p, "activated"), 0);
    d.go(23, R, F);
    assert_eq!(d.evicted(), (11..=22).collect::<Vec<u64>>());
    assert_eq!(counter(&d.p, "activated"), 2);
    assert_eq!(counter(&d.p, "looked_around"), 0);
    assert_eq!(d.p.seqs(), (6, [4, 4]));
    assert_eq!(counter(&d.p, "aging"), 3);
    for p in [1, 2] {
        assert_eq!(d.p.seq_of(p), Some(5), "page {p}");
        assert_eq!(d.p.page_refs(p), Some((0, false, false)), "page {p}");
    }
    assert_eq!(d.p.seq_of(23), Some(4));
}
