//! Helpers for the throughput benchmarks (benches/): the dense page-id stream
//! of a trace and the machine's floor, a loop doing one dependent-free random
//! read into a table the size of the page-id space per access. No simulator
//! can touch per-page state faster than that on the same id stream.

use super::engine::Decoder;
use super::RefBatch;
use crate::error::Result;
use crate::trace::TraceReader;
use std::time::Instant;

/// Decodes a whole trace into its page references (as the engine hands them to policies) and
/// the number of distinct pages.
pub fn dense_refs(reader: &mut dyn TraceReader) -> Result<(RefBatch, usize)> {
    let mut decoder = Decoder::default();
    let (mut records, mut refs, mut events) = (Vec::new(), RefBatch::default(), Vec::new());
    let mut more = true;
    while more {
        records.clear();
        more = reader.read_batch(&mut records, 1 << 16)?;
        decoder.decode(&records, &mut refs, &mut events)?;
    }
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
    let all_flags: Vec<u8> = refs.iter().map(|r| r.is_write() as u8).collect();
    for (chunk, chunk_flags) in refs
        .ids
        .chunks(batch.max(1))
        .zip(all_flags.chunks(batch.max(1)))
    {
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
