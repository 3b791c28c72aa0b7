//! Runs a mobile session scenario and prints its launches, kills and totals.
//!
//! `cargo run -p tierlab-core --example mobile_session -- SCENARIO.toml [SWAP_DEVICE]`

use tierlab_core::device::DeviceCatalog;
use tierlab_core::mobile::{run_session, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: mobile_session SCENARIO.toml [SWAP_DEVICE]")?;
    let mut sc = Scenario::from_toml_file(std::path::Path::new(path))?;
    if let Some(d) = args.get(2) {
        sc.swap.device = Some(d.clone());
    }
    let r = run_session(&sc, &DeviceCatalog::default())?;
    let mb = |p: u64| p as f64 * r.totals.page_size as f64 / 1048576.0;
    for l in &r.launches {
        println!(
            "{:>5} {:<11} {:<7} {:>8.0} ms  start {:>4.0} file {:>6.0} ({:>5}p) swap {:>6.0} ({:>5}p) init {:>5.0} reclaim {:>6.0}",
            l.step, l.app, format!("{:?}", l.kind), l.time_ms, l.start_ms, l.file_read_ms, l.file_pages_read,
            l.swap_read_ms, l.swap_pages_in, l.anon_init_ms, l.reclaim_ms
        );
    }
    for k in &r.kills {
        println!(
            "kill step {} {} by {} adj {} rss {:.1} MB free {:.1} -> {:.1} MB file {:.1} MB",
            k.step,
            k.app,
            k.killer,
            k.score_adj,
            mb(k.rss_pages),
            mb(k.free_pages_before),
            mb(k.free_pages_after),
            mb(k.file_pages_before)
        );
    }
    println!("{}", serde_json::to_string_pretty(&r.totals)?);
    println!("minfree KB {:?}", r.minfree_kb);
    Ok(())
}
