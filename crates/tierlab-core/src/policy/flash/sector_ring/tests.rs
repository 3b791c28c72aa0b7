use super::*;
use std::collections::BTreeSet;

fn frame(page: u64, id: u32) -> Frame {
    Frame {
        page,
        id,
        kind: Kind::File,
        dirty: false,
    }
}

/// The ring against a `BTreeSet` model of the sorted circle and its hand,
/// under random insertions, references and evictions (clustered and
/// spread page numbers, sizes crossing many chunk splits and drops).
#[test]
fn matches_a_sorted_set_model() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (cap, span) in [
        (1usize, 10u64),
        (5, 20),
        (70, 200),
        (300, 1000),
        (1000, 1 << 40),
        (3000, 1 << 40),
        // Half the pages below the table's limit, half above.
        (3000, 1 << 29),
    ] {
        let mut ring = SectorRing::default();
        let ids = 4096usize;
        ring.grow(ids);
        let mut model: BTreeSet<u64> = BTreeSet::new();
        let mut referenced: BTreeSet<u64> = BTreeSet::new();
        let mut hand: Option<u64> = None;
        let page_of = |id: u64| id.wrapping_mul(span / 4096 + 1) % span.max(1);
        let mut id_of = std::collections::HashMap::new();
        let mut step = 0u64;
        for _ in 0..20_000 {
            let id = (rnd() % ids as u64) as u32;
            let page = page_of(id as u64);
            if *id_of.entry(page).or_insert(id) != id {
                continue; // one id per page
            }
            if ring.is_resident(id) {
                assert!(!ring.hit(id, false));
                referenced.insert(page);
            } else {
                if model.len() == cap {
                    // model sweep
                    let mut h = hand.unwrap();
                    while referenced.remove(&h) {
                        h = *model
                            .range(h + 1..)
                            .next()
                            .unwrap_or_else(|| model.iter().next().unwrap());
                    }
                    let p = ring.sweep();
                    assert_eq!(ring.at(p).0, h);
                    assert_eq!(ring.evict_at_hand(), h);
                    model.remove(&h);
                    hand = model
                        .range(h + 1..)
                        .next()
                        .or_else(|| model.iter().next())
                        .copied();
                }
                ring.insert(frame(page, id));
                model.insert(page);
                if hand.is_none() {
                    hand = Some(page);
                }
            }
            step += 1;
            if step.is_multiple_of(97) {
                ring.check();
            }
            assert_eq!(ring.len(), model.len());
            if let Some(h) = hand {
                assert_eq!(ring.at(ring.hand()).0, h);
            }
        }
        let from_hand = ring.order_from_hand();
        let h = hand.unwrap();
        let expect: Vec<u64> = model.range(h..).chain(model.range(..h)).copied().collect();
        assert_eq!(from_hand, expect);
    }
}
