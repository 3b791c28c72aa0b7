//! The after-cache trace (write, read back, located errors) and its O_DIRECT
//! replay on a temporary file (in Cargo's target tmp dir, on disk; not /tmp,
//! which may be tmpfs on other machines).

use std::path::PathBuf;
use tierlab_core::device::replay::{
    model_time, read_device_log, replay, save_device_log, CursorMode, DeviceLog, ReplayOptions,
};
use tierlab_core::device::DeviceCatalog;
use tierlab_core::sim::accounting::{DeviceRequest, Store};
use tierlab_core::trace::Op;

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("flash_replay");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn req(op: Op, first: u64, pages: u32) -> DeviceRequest {
    DeviceRequest {
        store: Store::File,
        op,
        first,
        pages,
    }
}

#[test]
fn after_cache_trace_round_trips_plain_and_gz() {
    let log = vec![
        req(Op::Write, 2, 4),
        req(Op::Read, 1000, 1),
        DeviceRequest {
            store: Store::Swap,
            op: Op::Write,
            first: 0,
            pages: 16,
        },
    ];
    for name in ["a.csv", "a.csv.gz"] {
        let p = tmp(name);
        save_device_log(&p, &log, 4096).unwrap();
        let back = read_device_log(&p).unwrap();
        assert_eq!(
            back,
            DeviceLog {
                page_size: 4096,
                requests: log.clone()
            }
        );
    }
    let text = std::fs::read_to_string(tmp("a.csv")).unwrap();
    assert_eq!(
        text,
        "# tierlab after-cache trace v1\n# page_size=4096\nop,store,first_page,pages\n\
         W,file,2,4\nR,file,1000,1\nW,swap,0,16\n"
    );
}

#[test]
fn after_cache_trace_errors_name_file_and_line() {
    let cases = [
        (
            "op,store,first_page,pages\nW,file,2,4\nX,file,1,1\n",
            "line 3",
            "op must be R or W",
        ),
        ("W,file,2\n", "line 1", "expected 4 fields"),
        ("W,disk,2,1\n", "line 1", "store must be file or swap"),
        ("W,file,-2,1\n", "line 1", "first_page"),
        ("W,file,2,0\n", "line 1", "pages must be"),
        ("# page_size=1000\n", "line 1", "page_size"),
    ];
    for (i, (text, line, msg)) in cases.iter().enumerate() {
        let p = tmp(&format!("bad{i}.csv"));
        std::fs::write(&p, text).unwrap();
        let e = read_device_log(&p).unwrap_err().to_string();
        assert!(e.contains(line) && e.contains(msg), "{e}");
        assert!(e.contains(&format!("bad{i}.csv")), "{e}");
    }
}

#[test]
fn replay_on_a_temporary_file_with_o_direct() {
    // 8 MB of writes as 4 KB requests, then as 256 KB requests, plus reads.
    let mut small = Vec::new();
    for i in 0..2048u64 {
        small.push(req(Op::Write, i, 1));
    }
    let mut bulk = Vec::new();
    for i in 0..32u64 {
        bulk.push(req(Op::Write, i * 64, 64));
    }
    bulk.push(req(Op::Read, 5, 3));
    // A page far beyond the region folds into it.
    bulk.push(req(Op::Read, (1 << 30) + 7, 2));
    let target = tmp("target.img");
    let _ = std::fs::remove_file(&target);
    let opts = ReplayOptions {
        region_bytes: Some(16 << 20),
        ..Default::default()
    };
    let a = replay(
        &DeviceLog {
            page_size: 4096,
            requests: small,
        },
        &target,
        &opts,
    )
    .unwrap();
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 16 << 20);
    assert_eq!((a.writes, a.pages_written, a.reads), (2048, 2048, 0));
    assert!(a.direct && a.write_ns > 0 && a.io_ns >= a.write_ns);
    let b = replay(
        &DeviceLog {
            page_size: 4096,
            requests: bulk,
        },
        &target,
        &ReplayOptions::default(), // the existing file's size is the region
    )
    .unwrap();
    assert_eq!(b.region_bytes, 16 << 20);
    assert_eq!((b.writes, b.pages_written), (32, 2048));
    assert_eq!((b.reads, b.pages_read), (2, 5));
    println!(
        "8 MB as 4 KB writes: {:.1} ms; as 256 KB writes: {:.1} ms",
        a.write_ns as f64 / 1e6,
        b.write_ns as f64 / 1e6
    );
    // A request larger than the region is refused.
    let e = replay(
        &DeviceLog {
            page_size: 4096,
            requests: vec![req(Op::Write, 0, 8192)],
        },
        &target,
        &ReplayOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
}

#[test]
fn replay_refuses_memory_file_systems_and_directories() {
    let log = DeviceLog {
        page_size: 4096,
        requests: vec![req(Op::Write, 0, 1)],
    };
    let e = replay(&log, &tmp(""), &ReplayOptions::default()).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
    let shm = std::path::Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/mounts")
        .map(|m| {
            m.lines()
                .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.contains("tmpfs"))
        })
        .unwrap_or(false);
    if shm.is_dir() && is_tmpfs {
        let t = shm.join(format!("tierlab-replay-{}", std::process::id()));
        let e = replay(&log, &t, &ReplayOptions::default()).unwrap_err();
        let _ = std::fs::remove_file(&t);
        assert!(e.to_string().contains("tmpfs"), "{e}");
        assert!(e.to_string().contains("O_DIRECT"), "{e}");
    }
}

#[test]
fn model_time_charges_bulk_writes_as_one_request() {
    let cat = DeviceCatalog::default();
    let dev = cat.get("microsd-sandisk-c10").unwrap();
    let single: Vec<_> = (0..16).map(|i| req(Op::Write, i, 1)).collect();
    let bulk = vec![req(Op::Write, 0, 16)];
    let s = model_time(&single, Store::File, dev, CursorMode::PerDirection);
    let b = model_time(&bulk, Store::File, dev, CursorMode::PerDirection);
    assert_eq!((s.writes, b.writes), (16, 1));
    assert_eq!(s.sequential, 15);
    let w = &dev.write;
    let want_s = w.random_setup_ns + 15.0 * w.seq_setup_ns + 16.0 * w.per_page_ns;
    let want_b = w.random_setup_ns + 16.0 * w.per_page_ns;
    assert!((s.write_ns - want_s).abs() < 1e-6 && (b.write_ns - want_b).abs() < 1e-6);
    // A read between two writes breaks the stream only with a shared cursor.
    let inter = vec![
        req(Op::Write, 0, 1),
        req(Op::Read, 50, 1),
        req(Op::Write, 1, 1),
    ];
    let pd = model_time(&inter, Store::File, dev, CursorMode::PerDirection);
    let sh = model_time(&inter, Store::File, dev, CursorMode::Shared);
    assert_eq!((pd.sequential, sh.sequential), (1, 0));
    assert!(sh.write_ns > pd.write_ns);
}

#[test]
fn replay_can_skip_reads() {
    let log = DeviceLog {
        page_size: 4096,
        requests: vec![
            req(Op::Read, 0, 1),
            req(Op::Write, 1, 2),
            req(Op::Read, 9, 4),
        ],
    };
    let target = tmp("only.img");
    let opts = ReplayOptions {
        region_bytes: Some(1 << 20),
        only: Some(Op::Write),
        ..Default::default()
    };
    let r = replay(&log, &target, &opts).unwrap();
    assert_eq!(
        (r.requests, r.writes, r.reads, r.pages_written),
        (1, 1, 0, 2)
    );
}
