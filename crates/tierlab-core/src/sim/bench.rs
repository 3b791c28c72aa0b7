//! Helpers for the throughput benchmarks (benches/): the dense page-id stream
//! of a trace and the machine's floor, a loop doing one dependent-free random
//! read into a table the size of the page-id space per access. No simulator
//! can touch per-page state faster than that on the same id stream.

use super::engine::Decoder;
use super::PageRef;
use crate::error::Result;
use crate::trace::TraceReader;
use std::time::Instant;

/// Decodes a whole trace into its page references (as the engine hands them to policies) and
/// the number of distinct pages.
pub fn dense_refs(reader: &mut dyn TraceReader) -> Result<(Vec<PageRef>, usize)> {
    let mut decoder = Decoder::default();
    let (mut records, mut refs, mut events) = (Vec::new(), Vec::new(), Vec::new());
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
    Ok((refs.iter().map(|r| r.id).collect(), distinct))
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

/// [`floor`] reading the ids out of the engine's reference stream instead of a packed `u32`
/// array: batches of `batch` `PageRef`s (48 bytes each), each copied into one reused buffer
/// before it is timed, as the engine decodes a batch into a buffer that every instance then
/// reads. The floor of this engine's input representation, to tell how much of a gap to
/// [`floor`] is the stream itself.
pub fn floor_refs(refs: &[PageRef], distinct: usize, batch: usize) -> (f64, u64) {
    let mut table = vec![0u32; distinct.max(1)];
    let mut buf: Vec<PageRef> = Vec::with_capacity(batch);
    let mut secs = 0.0;
    for chunk in refs.chunks(batch.max(1)) {
        buf.clear();
        buf.extend_from_slice(chunk);
        let start = Instant::now();
        for r in &buf {
            let slot = &mut table[r.id as usize];
            *slot = slot.wrapping_add(1);
        }
        secs += start.elapsed().as_secs_f64();
    }
    let sum = table.iter().map(|&v| v as u64).sum::<u64>();
    (secs, std::hint::black_box(sum))
}
