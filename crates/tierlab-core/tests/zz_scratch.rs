use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::accounting::Comp;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{open, TraceSpec};

#[test]
fn scratch() {
    let path = std::env::var("T").unwrap();
    let pols: Vec<String> = std::env::var("P")
        .unwrap_or("clock,four-area,linux-two-list".into())
        .split(';')
        .map(|s| s.to_string())
        .collect();
    let pols: Vec<String> = pols
        .iter()
        .flat_map(|p| {
            if p.contains('(') {
                vec![p.clone()]
            } else {
                p.split(',').map(|s| s.to_string()).collect()
            }
        })
        .collect();
    let mut r = open(&TraceSpec::new(&path)).unwrap();
    let spec = SystemSpec {
        tiers: vec!["dram".into()],
        file_store: "flash-ufs31".into(),
        swap: Some("emram-swap".into()),
        write_miss_fetch: false,
    };
    let sys = System::resolve(&spec, &DeviceCatalog::default()).unwrap();
    let fp: usize = std::env::var("FP").unwrap().parse().unwrap();
    let mut inst = vec![];
    for p in &pols {
        for f in [5, 10, 15, 20] {
            inst.push(InstanceSpec {
                policy: PolicySpec::parse(p).unwrap(),
                capacity: fp * f / 100,
            });
        }
    }
    let opts = RunOptions {
        threads: 2,
        ..Default::default()
    };
    let out = run(r.as_mut(), &inst, &sys, &opts, &mut |_| Ok(())).unwrap();
    println!("refs {} distinct {}", out.page_refs, out.distinct_pages);
    for res in &out.results {
        let s = &res.stats;
        let fr = s.comp(Comp::FileRead).time_ns;
        let sr = s.comp(Comp::SwapRead).time_ns;
        let sw = s.comp(Comp::SwapWrite).time_ns;
        println!(
            "{:40} {:6} miss {:8} io {:10.3} ms  fr {:8.3} sr {:8.3} sw {:8.3}  {:?}",
            res.label,
            res.capacity,
            s.misses_total(),
            (fr + sr + sw) / 1e6,
            fr / 1e6,
            sr / 1e6,
            sw / 1e6,
            res.counters
                .iter()
                .filter(|c| c.0.starts_with("target") || c.0.starts_with("ghost"))
                .map(|c| c.1)
                .collect::<Vec<_>>()
        );
    }
}
