//! Helpers for the throughput benchmarks (benches/): the dense page-id stream
//! of a trace and the machine's floor, a loop doing one dependent-free random
//! read into a table the size of the page-id space per access. No simulator
//! can touch per-page state faster than that on the same id stream.

use super::engine::Decoder;
use super::RefBatch;
use crate::error::Result;
use crate::policy::list::{prefetch, Ring, SlotBits, NIL};
use crate::policy::sampling::IndexSampler;
use crate::policy::{PREFETCH_FAR, PREFETCH_NEAR};
use crate::trace::TraceReader;
use std::time::Instant;

/// Decodes a whole trace into its page references (as the engine hands them to policies) and
/// the number of distinct pages.
pub fn dense_refs(reader: &mut dyn TraceReader) -> Result<(RefBatch, usize)> {
    let mut decoder = Decoder::default();
    let (mut refs, mut events) = (RefBatch::default(), Vec::new());
    while decoder.read(reader, 1 << 16, &mut refs, &mut events)? {}
    Ok((refs, decoder.distinct()))
}

/// Decodes a whole trace into its dense page ids (one per page reference).
pub fn dense_ids(reader: &mut dyn TraceReader) -> Result<(Vec<u32>, usize)> {
    let (refs, distinct) = dense_refs(reader)?;
    Ok((refs.ids, distinct))
}

/// One read-modify-write of a 4-byte counter per access, indexed by page id
/// (about what the cheapest policy must do: find the page's metadata).
/// Returns seconds and a checksum (so the loop is not optimised away).
pub fn floor(ids: &[u32], distinct: usize) -> (f64, u64) {
    let mut table = vec![0u32; distinct.max(1)];
    let start = Instant::now();
    for &id in ids {
        let slot = &mut table[id as usize];
        *slot = slot.wrapping_add(1);
    }
    let secs = start.elapsed().as_secs_f64();
    let sum = table.iter().map(|&v| v as u64).sum::<u64>();
    (secs, std::hint::black_box(sum))
}

/// [`floor`] reading the engine's reference stream instead of a bare `u32` array: batches of
/// `batch` references, their two hot columns (ids and op/kind flags, see [`RefBatch`]) copied
/// into reused buffers before each batch is timed, as the engine decodes a batch into buffers
/// that every instance then reads; the loop reads both columns. The floor of the engine's input
/// representation, to tell how much of a gap to [`floor`] is the stream itself.
pub fn floor_refs(refs: &RefBatch, distinct: usize, batch: usize) -> (f64, u64) {
    let mut table = vec![0u32; distinct.max(1)];
    let (mut ids, mut flags): (Vec<u32>, Vec<u8>) = (Vec::new(), Vec::new());
    let mut secs = 0.0;
    let n = batch.max(1);
    for (chunk, chunk_flags) in refs.ids.chunks(n).zip(refs.flags().chunks(n)) {
        ids.clear();
        ids.extend_from_slice(chunk);
        flags.clear();
        flags.extend_from_slice(chunk_flags);
        let start = Instant::now();
        for (&id, &f) in ids.iter().zip(&flags) {
            let slot = &mut table[id as usize];
            *slot = slot.wrapping_add(1 + f as u32);
        }
        secs += start.elapsed().as_secs_f64();
    }
    let sum = table.iter().map(|&v| v as u64).sum::<u64>();
    (secs, std::hint::black_box(sum))
}

/// The leanest CLOCK we could write, as a bound for the engine's: one pass over packed ids, a
/// page-id -> slot table, reference bits in a [`SlotBits`] swept 64 slots at a time, the table
/// entry of the page it will see 16 references later prefetched, no sink, no dirty bits, no
/// page numbers. It makes the same decisions as the `clock` policy (the test below checks the
/// miss counts), so its speed is what a CLOCK can do on this machine, branch mispredictions on
/// hit/miss included. Returns seconds and misses.
pub fn clock_kernel(ids: &[u32], distinct: usize, capacity: usize) -> (f64, u64) {
    let capacity = capacity.max(1);
    let mut slot_of = vec![NIL; distinct.max(1)];
    let mut slot_page = vec![0u32; capacity];
    let mut referenced = SlotBits::with_slots(capacity);
    let (mut used, mut hand, mut misses) = (0usize, 0usize, 0u64);
    let start = Instant::now();
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&ahead) = ids.get(i + PREFETCH_FAR) {
            prefetch(&slot_of, ahead as usize);
        }
        let s = slot_of[id as usize];
        if s != NIL {
            referenced.set(s as usize);
            continue;
        }
        misses += 1;
        let s = if used < capacity {
            used += 1;
            used - 1
        } else {
            let s = referenced.sweep(hand, capacity);
            slot_of[slot_page[s] as usize] = NIL;
            hand = if s + 1 == capacity { 0 } else { s + 1 };
            s
        };
        slot_page[s] = id;
        slot_of[id as usize] = s as u32;
    }
    (start.elapsed().as_secs_f64(), misses)
}

/// The leanest LRU we could write, as a bound for the engine's: a page-id -> slot table and a
/// [`Ring`] of 8-byte links, with both prefetched as the replay loop does (the table entry 16
/// references ahead, the links 6 ahead), no sink. Same decisions as the `lru` policy (tested).
/// Returns seconds and misses.
pub fn lru_kernel(ids: &[u32], distinct: usize, capacity: usize) -> (f64, u64) {
    let capacity = capacity.max(1);
    let mut slot_of = vec![NIL; distinct.max(1)];
    // Slot 0 is the ring's sentinel.
    let mut slot_page = vec![0u32; capacity + 1];
    let mut stack = Ring::with_slots(capacity);
    let mut misses = 0u64;
    let start = Instant::now();
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&ahead) = ids.get(i + PREFETCH_FAR) {
            prefetch(&slot_of, ahead as usize);
        }
        if let Some(&near) = ids.get(i + PREFETCH_NEAR) {
            let s = slot_of[near as usize];
            if s != NIL {
                stack.prefetch(s);
            }
        }
        let s = slot_of[id as usize];
        if s != NIL {
            stack.move_to_front(s);
            continue;
        }
        misses += 1;
        let s = if stack.slots() < capacity {
            stack.push_new_front()
        } else {
            let v = stack.back().expect("full");
            slot_of[slot_page[v as usize] as usize] = NIL;
            stack.move_to_front(v);
            v
        };
        slot_page[s as usize] = id;
        slot_of[id as usize] = s;
    }
    (start.elapsed().as_secs_f64(), misses)
}

/// The leanest sampled eviction we could write, as a floor for the sampling policies
/// (Hyperbolic 64 samples, LHD 16 to 40, BeladySize 128): the CLOCK kernel's page-id -> slot
/// table, resident pages dense by slot, and on a miss in a full cache `samples` indices drawn
/// with [`IndexSampler`] (the draws of a block are independent, and vectorised) and prefetched,
/// then the smallest 8-byte key among them (each page's insertion time: a sampled FIFO, the
/// cheapest rank there is: one load and one compare a sample, no division, no table lookup)
/// evicted, its place filled by the last page. A sampling policy does at least this much per
/// eviction, so a policy with `samples` samples cannot run faster than this kernel on the same
/// id stream (benches/README.md, "Rust examples"). With `free_draws` the
/// indices are drawn before the clock starts (a cache evicts only when full, so they are drawn
/// from `0..capacity`) and read from memory in order: the floor without the generator's cost.
/// Returns seconds and misses.
pub fn sampled_kernel(
    ids: &[u32],
    distinct: usize,
    capacity: usize,
    samples: usize,
    free_draws: bool,
) -> (f64, u64) {
    const BLOCK: usize = 128;
    const DRAWN: usize = 1 << 20;
    let capacity = capacity.max(1);
    let mut drawn_ahead = Vec::new();
    if free_draws {
        drawn_ahead = vec![0u32; DRAWN];
        IndexSampler::new(2).fill(capacity, &mut drawn_ahead);
    }
    let mut ahead = 0usize;
    let mut slot_of = vec![NIL; distinct.max(1)];
    let mut slot_page = Vec::with_capacity(capacity);
    let mut slot_key: Vec<u64> = Vec::with_capacity(capacity);
    let mut sampler = IndexSampler::new(1);
    let mut drawn = [0u32; BLOCK];
    let mut misses = 0u64;
    let start = Instant::now();
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&ahead) = ids.get(i + PREFETCH_FAR) {
            prefetch(&slot_of, ahead as usize);
        }
        if slot_of[id as usize] != NIL {
            continue;
        }
        misses += 1;
        if slot_page.len() == capacity {
            let n = slot_page.len();
            let (mut victim, mut oldest) = (0usize, u64::MAX);
            let mut left = samples;
            while left > 0 {
                let b = left.min(BLOCK);
                let drawn: &[u32] = if free_draws {
                    if ahead + b > DRAWN {
                        ahead = 0;
                    }
                    ahead += b;
                    &drawn_ahead[ahead - b..ahead]
                } else {
                    sampler.fill(n, &mut drawn[..b]);
                    &drawn[..b]
                };
                drawn.iter().for_each(|&d| prefetch(&slot_key, d as usize));
                for &d in drawn {
                    let k = slot_key[d as usize];
                    let older = k < oldest;
                    oldest = if older { k } else { oldest };
                    victim = if older { d as usize } else { victim };
                }
                left -= b;
            }
            slot_of[slot_page[victim] as usize] = NIL;
            slot_page.swap_remove(victim);
            slot_key.swap_remove(victim);
            if let Some(&moved) = slot_page.get(victim) {
                slot_of[moved as usize] = victim as u32;
            }
        }
        slot_of[id as usize] = slot_page.len() as u32;
        slot_page.push(id);
        slot_key.push(i as u64);
    }
    (start.elapsed().as_secs_f64(), misses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;
    use crate::sim::check::{check_policy, make_refs};

    #[test]
    fn sampled_kernel_is_a_sampled_fifo() {
        let spec = crate::trace::TraceSpec::new("zipf:alpha=0.9,pages=3000,n=60000,seed=4");
        let mut reader = crate::trace::open(&spec).unwrap();
        let (ids, distinct) = dense_ids(reader.as_mut()).unwrap();
        // One page: every change of page misses.
        let changes = 1 + ids.windows(2).filter(|w| w[0] != w[1]).count() as u64;
        assert_eq!(sampled_kernel(&ids, distinct, 1, 64, false).1, changes);
        assert_eq!(sampled_kernel(&ids, distinct, 1, 64, true).1, changes);
        // 8 pages, 1,024 samples: the oldest is missed with probability (7/8)^1024, so the
        // evictions are FIFO's.
        let refs = make_refs(&ids.iter().map(|&id| (id as u64, false)).collect::<Vec<_>>());
        let fifo = check_policy(&PolicySpec::new("fifo"), 8, 1, &refs).unwrap();
        assert_eq!(
            sampled_kernel(&ids, distinct, 8, 1024, false).1,
            fifo.misses
        );
        assert_eq!(sampled_kernel(&ids, distinct, 8, 1024, true).1, fifo.misses);
    }

    #[test]
    fn kernels_miss_exactly_as_the_policies_do() {
        let spec = crate::trace::TraceSpec::new("zipf:alpha=0.9,pages=3000,n=60000,seed=4");
        let mut reader = crate::trace::open(&spec).unwrap();
        let (ids, distinct) = dense_ids(reader.as_mut()).unwrap();
        let refs = make_refs(&ids.iter().map(|&id| (id as u64, false)).collect::<Vec<_>>());
        for cap in [1, 7, 300, 1000] {
            let clock = check_policy(&PolicySpec::new("clock"), cap, 1, &refs).unwrap();
            assert_eq!(
                clock_kernel(&ids, distinct, cap).1,
                clock.misses,
                "cap {cap}"
            );
            let lru = check_policy(&PolicySpec::new("lru"), cap, 1, &refs).unwrap();
            assert_eq!(lru_kernel(&ids, distinct, cap).1, lru.misses, "cap {cap}");
        }
    }
}
