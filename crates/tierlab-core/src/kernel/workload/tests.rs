//! Tests of the ground-truth workloads: determinism and size, each workload
//! against its definition, the first-store rule for anonymous pages, bad
//! parameters, and a trace or a generator spec turned into references (the
//! workloads are in `workload.rs`). Cost: a few workloads of up to tens of
//! thousands of references each.

use super::*;

/// `w`'s references, after checking what every workload promises: the same references on
/// every call, and as many as `reference_count` says.
fn refs(w: &Workload) -> Vec<u64> {
    let r = w.references().unwrap();
    assert_eq!(r, w.references().unwrap(), "{w:?} is not deterministic");
    assert_eq!(r.len() as u64, w.reference_count(), "{w:?}");
    r
}

#[test]
fn workloads_are_deterministic_and_sized() {
    let w = Workload::MixedReadWrite {
        file_pages: 1000,
        refs: 20_000,
        alpha: 0.9,
        write_share: 0.3,
        seed: 7,
    };
    let a = refs(&w);
    assert_eq!(a.len(), 20_000);
    let writes = a.iter().filter(|&&r| r & WRITE_BIT != 0).count() as f64;
    assert!((writes / 20_000.0 - 0.3).abs() < 0.02, "{writes}");
    assert!(a.iter().all(|&r| r & ANON_BIT == 0 && r & PAGE_MASK < 1000));
}

#[test]
fn hot_scan_and_loop_follow_their_definitions() {
    let w = Workload::HotScan {
        hot_pages: 10,
        scan_pages: 50,
        hot_refs: 30,
        periods: 2,
        seed: 1,
    };
    let r = refs(&w);
    assert_eq!(r.len(), 2 * (30 + 50));
    assert!(r[..30].iter().all(|&p| p < 10));
    assert_eq!(r[30..80], (10..60).collect::<Vec<u64>>()[..]);
    let l = Workload::LoopRead {
        loop_pages: 3,
        refs: 7,
    }
    .references()
    .unwrap();
    assert_eq!(l, vec![0, 1, 2, 0, 1, 2, 0]);
}

#[test]
fn anon_starts_with_one_store_per_page() {
    let w = Workload::AnonZipf {
        anon_pages: 100,
        refs: 500,
        alpha: 1.0,
        write_share: 0.5,
        seed: 3,
    };
    let r = refs(&w);
    assert_eq!(r.len(), 600);
    for (i, &x) in r[..100].iter().enumerate() {
        assert_eq!(decode(x), (i as u64, true, true));
    }
    assert!(r.iter().all(|&x| x & ANON_BIT != 0));
}

#[test]
fn bad_parameters_are_config_errors() {
    let w = Workload::MixedReadWrite {
        file_pages: 10,
        refs: 1,
        alpha: 1.0,
        write_share: 1.5,
        seed: 0,
    };
    let e = w.references().unwrap_err().to_string();
    assert!(
        e.contains("mixed_read_write") && e.contains("write_share"),
        "{e}"
    );
    let j: std::result::Result<Workload, _> =
        serde_json::from_str(r#"{"workload": "loop_read", "loop_pages": 3}"#);
    assert!(j.is_err());
}

#[test]
fn new_workloads_follow_their_definitions() {
    let w = Workload::AnonLoop {
        anon_pages: 4,
        refs: 6,
        write_share: 0.0,
        seed: 1,
    };
    let r = refs(&w);
    let pages: Vec<u64> = r.iter().map(|&x| x & PAGE_MASK).collect();
    assert_eq!(pages, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    assert!(r[..4].iter().all(|&x| x & WRITE_BIT != 0));
    assert!(r[4..]
        .iter()
        .all(|&x| x & WRITE_BIT == 0 && x & ANON_BIT != 0));

    let m = Workload::MixedScan {
        anon_pages: 10,
        scan_pages: 20,
        hot_refs: 30,
        periods: 2,
        alpha: 0.99,
        write_share: 0.3,
        seed: 2,
    };
    let r = refs(&m);
    assert_eq!(r.len(), 10 + 2 * (30 + 20));
    assert!(r[10..40]
        .iter()
        .all(|&x| x & ANON_BIT != 0 && x & PAGE_MASK < 10));
    assert_eq!(r[40..60], (0..20).collect::<Vec<u64>>()[..]);

    let z = Workload::MixedZipf {
        file_pages: 100,
        anon_pages: 50,
        refs: 10_000,
        anon_share: 0.5,
        alpha: 0.99,
        write_share: 0.3,
        seed: 3,
    };
    let r = refs(&z);
    let anon = r[50..].iter().filter(|&&x| x & ANON_BIT != 0).count() as f64;
    assert!((anon / 10_000.0 - 0.5).abs() < 0.03, "{anon}");
    assert!(r[50..]
        .iter()
        .all(|&x| x & ANON_BIT != 0 || (x & WRITE_BIT == 0 && x < 100)));
}

#[test]
fn app_switch_launches_each_app_once_and_keeps_to_its_pages() {
    let w = Workload::AppSwitch {
        apps: 3,
        file_pages_per_app: 20,
        anon_pages_per_app: 10,
        phases: 6,
        phase_refs: 100,
        anon_share: 0.5,
        alpha: 0.99,
        write_share: 0.3,
        seed: 4,
    };
    let r = refs(&w);
    assert_eq!((w.file_pages(), w.anon_pages()), (60, 30));
    // app 0 launches first: one store to each of its 10 pages in address order
    for (i, &x) in r[..10].iter().enumerate() {
        assert_eq!(decode(x), (i as u64, true, true));
    }
    // the first phase stays on app 0's pages
    assert!(r[10..110].iter().all(|&x| {
        let (p, _, anon) = decode(x);
        if anon {
            p < 10
        } else {
            p < 20
        }
    }));
    // every anonymous page gets exactly one launch store before any other reference
    let mut seen = [false; 30];
    for &x in &r {
        let (p, write, anon) = decode(x);
        if anon && !seen[p as usize] {
            assert!(write);
            seen[p as usize] = true;
        }
    }
    assert!(seen.iter().all(|&s| s), "all three apps launched");
}

#[test]
fn a_trace_becomes_dense_references_in_trace_order() {
    use crate::trace::{Access, Event, EventKind, Kind, Op, Record, TraceReader};
    struct Fixed(Vec<Record>);
    impl TraceReader for Fixed {
        fn read_batch(&mut self, out: &mut Vec<Record>, _max: usize) -> Result<bool> {
            out.append(&mut self.0);
            Ok(false)
        }
        fn page_size(&self) -> u32 {
            4096
        }
        fn format(&self) -> &'static str {
            "test"
        }
    }
    let mut two = Access::page(3, 900, Op::Write, Kind::File);
    two.npages = 2;
    let recs = vec![
        Record::Access(Access::page(0, 5000, Op::Read, Kind::File)),
        Record::Access(Access::page(1, 77, Op::Read, Kind::Anon)),
        Record::Event(Event {
            time: 2,
            app: 0,
            kind: EventKind::Foreground,
        }),
        Record::Access(two),
        Record::Access(Access::page(4, 77, Op::Read, Kind::Anon)),
        Record::Access(Access::page(5, 5000, Op::Write, Kind::File)),
        Record::Access(Access::page(6, 12, Op::Write, Kind::Anon)),
    ];
    let a = trace_references(&mut Fixed(recs.clone()), None).unwrap();
    // file 5000 -> 0, 900 -> 1, 901 -> 2; anon 77 -> 0 (first touch a store), 12 -> 1
    let f = |p: u64, w: bool| p | if w { WRITE_BIT } else { 0 };
    let an = |p: u64, w: bool| f(p, w) | ANON_BIT;
    assert_eq!(
        a.refs,
        vec![
            f(0, false),
            an(0, true),
            f(1, true),
            f(2, true),
            an(0, false),
            f(0, true),
            an(1, true)
        ]
    );
    assert_eq!((a.file_pages, a.anon_pages), (3, 2));
    let b = trace_references(&mut Fixed(recs), Some(3)).unwrap();
    assert_eq!(b.refs, a.refs[..3]);
    assert_eq!((b.file_pages, b.anon_pages), (2, 1));
    let e = trace_references(&mut Fixed(vec![]), None).unwrap_err();
    assert!(e.to_string().contains("no page accesses"), "{e}");
}

#[test]
fn a_generator_spec_is_a_workload() {
    let w: Workload = serde_json::from_str(
        r#"{"workload": "trace", "trace": "loop:pages=5,n=12,kind=anon,write=0.0"}"#,
    )
    .unwrap();
    let a = w.build().unwrap();
    assert_eq!((a.file_pages, a.anon_pages, a.refs.len()), (0, 5, 12));
    let pages: Vec<u64> = a.refs.iter().map(|&x| x & PAGE_MASK).collect();
    assert_eq!(pages, vec![0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]);
    assert!(a.refs[..5].iter().all(|&x| x & WRITE_BIT != 0));
    assert!(a.refs[5..].iter().all(|&x| x & WRITE_BIT == 0));
    let bad: Workload =
        serde_json::from_str(r#"{"workload": "trace", "trace": "zipf:alpha=-1,pages=5,n=3"}"#)
            .unwrap();
    assert!(bad.build().is_err());
}
