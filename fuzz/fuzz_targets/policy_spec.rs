//! Policy specs `name(key=value, ...)`: parsing, typed parameters and
//! building, then a short checked replay (the policy contract of
//! `sim::check` must hold for any accepted parameters).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::check::{check_policy, make_refs};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let Ok(spec) = PolicySpec::parse(text) else {
        return;
    };
    let capacity = 1 + (sel & 0x1f) as usize;
    let tiers = 1 + (sel >> 5) as usize % 3;
    let pages: Vec<(u64, bool)> = (0..300u64)
        .map(|i| ((i * 7919 + i / 3) % 61, i % 5 == 0))
        .collect();
    if let Err(e) = check_policy(&spec, capacity, tiers, &make_refs(&pages)) {
        let msg = e.to_string();
        // A contract violation is a bug in the policy, not bad input.
        assert!(!msg.contains("contract"), "{text}: {msg}");
    }
});
