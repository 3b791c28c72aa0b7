//! The synthetic-trace spec parser (`zipf:alpha=1.0,pages=1e6,...`) and the
//! generator it builds, streamed for a bounded number of records.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tierlab_core::trace::synth::{parse_spec, SynthReader};
use tierlab_core::trace::TraceReader;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(spec) = parse_spec(text) else {
        return;
    };
    // A scrambled layout shuffles a permutation of all its pages first (a valid spec with 1e9
    // pages takes seconds and 4 GB before its first record): beyond the records this harness
    // streams, so such specs stop at parsing, as over-long streams stop at MAX_RECORDS.
    if spec.permuted_pages() > tierlab_fuzz::MAX_PERMUTED_PAGES {
        return;
    }
    let Ok(mut r) = SynthReader::new(spec) else {
        return;
    };
    let mut out = Vec::new();
    let mut total = 0;
    while let Ok(true) = r.read_batch(&mut out, 4096) {
        total += out.len();
        out.clear();
        if total >= tierlab_fuzz::MAX_RECORDS {
            break;
        }
    }
});
