//! The kernel-check driver as a program of its own, for a kernel booted under
//! QEMU (`tierlab.kernel_vm`): built statically, it is the only program in
//! the VM besides busybox.
//!
//! `kernel_vm_driver TRACE DATA CGROUP ANON_PAGES [CPU]` reads the references
//! from TRACE (written by `kernel::workload::write_trace`, the same file
//! tierlab replays), drops DATA's pages (a brd RAM disk) from the page cache,
//! runs `kernel::driver::drive` in CGROUP (v2; the group's per-CPU charge
//! stock returned before the ready snapshot), then counts the page-cache
//! events of the tracefs top-level buffer (`mm_filemap_add_to_page_cache`,
//! `mm_filemap_delete_from_page_cache`, `writeback_dirty_folio`, and where
//! /init enabled them the statistics flushes and the data disk's write
//! requests (`block_bio_queue`, as `[ns, first page, pages]`); the page-cache
//! events need no filter, nothing else runs in the VM) and prints one JSON object between
//! `TIERLAB-VM-BEGIN` and `TIERLAB-VM-END` lines on stdout (the serial
//! console). A failure prints `TIERLAB-VM-ERROR: ` and the message.
//! Cost: the references in memory (8 bytes each) and one pass over the trace
//! buffer.

use std::path::{Path, PathBuf};
use tierlab_core::kernel::driver::{
    bio_pages, drive, drop_file_cache, references_from_trace, trace_timestamp_ns, DriveSpec,
};

const TRACEFS: &str = "/sys/kernel/tracing";

/// Pages of the folio an add/delete event names (2^order; order 0 where not printed).
fn folio_pages(line: &str) -> u64 {
    line.rsplit_once("order=")
        .and_then(|(_, r)| r.split_whitespace().next()?.parse::<u32>().ok())
        .map_or(1, |o| 1 << o)
}

fn trace_counts() -> Result<serde_json::Value, String> {
    let mut lost = 0u64;
    for cpu in std::fs::read_dir(Path::new(TRACEFS).join("per_cpu")).map_err(|e| e.to_string())? {
        let stats = cpu.map_err(|e| e.to_string())?.path().join("stats");
        for line in std::fs::read_to_string(&stats).unwrap_or_default().lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k == "overrun" || k == "dropped events" {
                    lost += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
    }
    if lost > 0 {
        return Err(format!(
            "the trace buffer lost {lost} events; raise buffer_size_kb"
        ));
    }
    let text =
        std::fs::read_to_string(Path::new(TRACEFS).join("trace")).map_err(|e| e.to_string())?;
    let (mut ins, mut del, mut dirtied, mut large) = (0u64, 0u64, 0u64, 0u64);
    let flushes_on = std::fs::read_to_string(Path::new(TRACEFS).join(FLUSH_ENABLE))
        .is_ok_and(|v| v.trim() == "1");
    let writes_on = std::fs::read_to_string(Path::new(TRACEFS).join(WRITES_ENABLE))
        .is_ok_and(|v| v.trim() == "1");
    let mut flushes = Vec::new();
    let mut writes = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if flushes_on && line.contains(" memcg_flush:") {
            flushes.push(trace_timestamp_ns(line, " memcg_flush:").map_err(|e| e.to_string())?);
            continue;
        }
        if writes_on && line.contains(" block_bio_queue:") {
            let t = trace_timestamp_ns(line, " block_bio_queue:").map_err(|e| e.to_string())?;
            let (first, pages) = bio_pages(line).map_err(|e| e.to_string())?;
            writes.push([t, first, pages]);
            continue;
        }
        if line.contains("mm_filemap_add_to_page_cache:") {
            let p = folio_pages(line);
            ins += p;
            large += u64::from(p > 1);
        } else if line.contains("mm_filemap_delete_from_page_cache:") {
            del += folio_pages(line);
        } else if line.contains("writeback_dirty_folio:") {
            dirtied += 1;
        }
    }
    let mut counts = serde_json::json!({
        "insertions": ins, "deletions": del, "dirtied": dirtied, "large_folios": large,
    });
    if flushes_on {
        counts["flushes_ns"] = serde_json::json!(flushes);
    }
    if writes_on {
        counts["written_ns"] = serde_json::json!(writes);
    }
    Ok(counts)
}

/// The write requests to the cell's data disk, which /init records where the kernel has the
/// tracepoint (`kernel_vm.DATA_DISK`).
const WRITES_ENABLE: &str = "events/block/block_bio_queue/enable";

/// The kprobe on `cgroup_rstat_flush` that /init sets up where the kernel allows it (the
/// statistics flushes of the cell's group or the root; docs/kernel-check.md).
const FLUSH_ENABLE: &str = "events/tierlab/memcg_flush/enable";

/// The references between two reads of the driver's clock.
const PROGRESS_EVERY: usize = 256;

fn run(args: &[String]) -> Result<String, String> {
    if args.len() < 5 {
        return Err("usage: kernel_vm_driver TRACE DATA CGROUP ANON_PAGES [CPU]".into());
    }
    let refs = references_from_trace(Path::new(&args[1])).map_err(|e| e.to_string())?;
    let data = PathBuf::from(&args[2]);
    let anon_pages: u64 = args[4]
        .parse()
        .map_err(|_| format!("ANON_PAGES: expected a number, found '{}'", args[4]))?;
    let cpu = match args.get(5) {
        Some(c) => Some(
            c.parse()
                .map_err(|_| format!("CPU: expected a number, found '{c}'"))?,
        ),
        None => None,
    };
    let f = std::fs::File::open(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    drop_file_cache(&f, &data).map_err(|e| e.to_string())?;
    drop(f);
    let spec = DriveSpec {
        data_file: data,
        anon_pages,
        cgroup_dir: PathBuf::from(&args[3]),
        readahead: false,
        cpu,
        // The VM has one CPU, so the driver's memory.high writes drain the
        // stock at once: ready's memory.current is what the child holds, not
        // a batch charged ahead (docs/kernel-check.md, "Kernels under QEMU").
        drain_charge_stock: true,
        progress_every: PROGRESS_EVERY,
    };
    let out = drive(&refs, &spec, &|| false).map_err(|e| e.to_string())?;
    std::fs::write(Path::new(TRACEFS).join("tracing_on"), "0").map_err(|e| e.to_string())?;
    let mut v = serde_json::to_value(&out).map_err(|e| e.to_string())?;
    v["trace"] = trace_counts()?;
    v["progress_every"] = serde_json::json!(PROGRESS_EVERY);
    Ok(v.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(json) => println!("TIERLAB-VM-BEGIN\n{json}\nTIERLAB-VM-END"),
        Err(e) => {
            println!("TIERLAB-VM-ERROR: {e}");
            std::process::exit(1);
        }
    }
}
