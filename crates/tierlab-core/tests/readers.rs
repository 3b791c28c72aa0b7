//! Trace readers on the real traces under ../shared/traces (counts checked
//! independently with zcat/wc and Python one-liners, quoted next to each
//! number) and on malformed input written to temporary files. MSR, SPC and
//! blkparse have no real file in ../shared: they are tested on small fixtures
//! written here from their documented formats (for blkparse also on the
//! output of the real blkparse tool, see tests/reference/blkparse_fixture.py).

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{open, Access, Kind, Op};

mod reader_helpers;
use reader_helpers::*;

// ---------------------------------------------------------------- libCacheSim

#[test]
fn cloudphysics_csv_txt_oracle_vscsi_give_the_same_requests() {
    let csv = accesses(&spec(shared(&format!("{CP}.csv")), None, ""));
    let txt = accesses(&spec(shared(&format!("{CP}.txt")), None, ""));
    let oracle = accesses(&spec(shared(&format!("{CP}.oracleGeneral.bin")), None, ""));
    let vscsi = accesses(&spec(shared(&format!("{CP}.vscsi")), None, ""));
    for (name, t) in [
        ("csv", &csv),
        ("txt", &txt),
        ("oracle", &oracle),
        ("vscsi", &vscsi),
    ] {
        assert_eq!(t.len(), CP_REQUESTS, "{name}");
        assert!(t.iter().all(|a| a.npages == 1 && a.kind == Kind::File));
    }
    let ids = |t: &[Access]| t.iter().map(|a| a.page).collect::<Vec<_>>();
    assert_eq!(ids(&csv), ids(&txt));
    assert_eq!(ids(&csv), ids(&oracle));
    assert_eq!(ids(&csv), ids(&vscsi));
    // Line 2 of the csv: `1,5633898,2a,512,42932745`.
    assert_eq!(csv[0].page, 42_932_745);
    assert_eq!(csv[0].time, 5_633_898_000_000_000);
    assert_eq!(csv[0].op, Op::Write);
    // The csv op column and the vscsi cmd agree; the csv time (s) is the
    // oracle time and the vscsi time (us) truncated to seconds.
    let writes = |t: &[Access]| t.iter().filter(|a| a.op == Op::Write).count();
    assert_eq!(writes(&csv), CP_WRITES);
    assert_eq!(writes(&vscsi), CP_WRITES);
    assert!(csv.iter().zip(&vscsi).all(|(c, v)| c.op == v.op));
    assert!(csv.iter().zip(&oracle).all(|(c, o)| c.time == o.time));
    assert!(csv
        .iter()
        .zip(&vscsi)
        .all(|(c, v)| v.time / 1_000_000_000 * 1_000_000_000 == c.time));
    // vscsi record 0: ts = 5633898368802 us.
    assert_eq!(vscsi[0].time, 5_633_898_368_802_000);
    // txt and oracle carry no op: reads; txt has no time: ordinals.
    assert!(txt.iter().chain(&oracle).all(|a| a.op == Op::Read));
    assert_eq!(txt[5].time, 5);
}

#[test]
fn cloudphysics_csv_explicit_column_spec_matches_header_names() {
    let named = accesses(&spec(shared(&format!("{CP}.csv")), Some("csv"), ""));
    let explicit = accesses(&spec(
        shared(&format!("{CP}.csv")),
        Some("csv"),
        "id_col = 5\ntime_col = 2\nsize_col = 4\nop_col = 3\nheader = true\ndelimiter = ','",
    ));
    assert_eq!(named, explicit);
}

#[test]
fn cloudphysics_block_addressing_splits_into_pages() {
    // Python: for each row, off = lbn*512, pages [off//4096, (off+size-1)//4096]:
    // 1141869 page references, 269210 distinct pages.
    let csv = accesses(&spec(
        shared(&format!("{CP}.csv")),
        None,
        "addressing = 'block'",
    ));
    assert_eq!(csv.len(), CP_REQUESTS);
    assert_eq!(total_pages(&csv), 1_141_869);
    assert_eq!(distinct_pages(&csv), 269_210);
    // lbn 42932745 * 512 / 4096 = 5366593, 512 bytes: one page.
    assert_eq!((csv[0].page, csv[0].npages), (5_366_593, 1));
    // vscsi has the same lbn and len.
    let vscsi = accesses(&spec(
        shared(&format!("{CP}.vscsi")),
        None,
        "addressing = 'block'",
    ));
    assert_eq!(csv, {
        let mut v = vscsi;
        for (a, c) in v.iter_mut().zip(&csv) {
            a.time = c.time;
        }
        v
    });
}

/// LRU misses from libCacheSim with unit object size, produced by
/// tests/reference/libcachesim_lru.py (sizes 100, 1000, 10000).
const LIBCACHESIM_LRU: [(usize, u64); 3] = [(100, 100_215), (1000, 94_823), (10_000, 79_438)];

#[test]
fn libcachesim_lru_agreement_on_oracle_and_csv() {
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let inst: Vec<InstanceSpec> = LIBCACHESIM_LRU
        .iter()
        .map(|&(c, _)| InstanceSpec {
            policy: PolicySpec::new("lru"),
            capacity: c,
        })
        .collect();
    for file in [".oracleGeneral.bin", ".csv", ".vscsi"] {
        let mut r = open(&spec(shared(&format!("{CP}{file}")), None, "")).unwrap();
        let out = run(r.as_mut(), &inst, &sys, &RunOptions::default(), &mut |_| {
            Ok(())
        })
        .unwrap();
        assert_eq!(out.requests, CP_REQUESTS as u64);
        for (res, &(c, want)) in out.results.iter().zip(&LIBCACHESIM_LRU) {
            assert_eq!(res.capacity, c);
            assert_eq!(res.stats.misses_total(), want, "{file} LRU at {c}");
        }
    }
}

#[test]
fn vscsi_version_2_records() {
    // Two version-2 records (40 bytes): cmd, ver = 2 << 8, sn, len, nSG, lbn, ts, rt.
    let rec = |cmd: u16, len: u32, lbn: u64, ts: u64| {
        let mut b = Vec::new();
        b.extend(cmd.to_le_bytes());
        b.extend((2u16 << 8).to_le_bytes());
        b.extend(7u32.to_le_bytes());
        b.extend(len.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        b.extend(lbn.to_le_bytes());
        b.extend(ts.to_le_bytes());
        b.extend(99u64.to_le_bytes());
        b
    };
    let t = Tmp::new();
    let mut data = rec(0x28, 4096, 10, 1_000_000);
    data.extend(rec(0x2a, 1024, 7, 2_500_000));
    let p = t.file("v2.vscsi", &data);
    let a = accesses(&spec(&p, None, ""));
    assert_eq!(
        a,
        vec![
            Access {
                time: 1_000_000_000,
                page: 10,
                op: Op::Read,
                kind: Kind::File,
                app: 0,
                npages: 1,
                size: 4096,
            },
            Access {
                time: 2_500_000_000,
                page: 7,
                op: Op::Write,
                kind: Kind::File,
                app: 0,
                npages: 1,
                size: 1024,
            },
        ]
    );
    // Block addressing: lbn 10 = bytes 5120..9216 straddles pages 1 and 2;
    // lbn 7 = bytes 3584..4608 straddles pages 0 and 1.
    let b = accesses(&spec(&p, None, "addressing = 'block'"));
    assert_eq!((b[0].page, b[0].npages), (1, 2));
    assert_eq!((b[1].page, b[1].npages), (0, 2));
    // A truncated second record (40 + 36 bytes).
    let p = t.file("v2t.vscsi", &data[..76]);
    assert_input_err(&spec(&p, None, ""), ":byte offset 40", "truncated");
    // A record whose version field changes (misaligned or corrupt).
    let mut bad = data.clone();
    bad[43] = 9;
    let p = t.file("v2c.vscsi", &bad);
    assert_input_err(&spec(&p, None, ""), ":byte offset 40", "version 2");
}

// ---------------------------------------------------------------- address

#[test]
fn gcc_address_trace() {
    // zcat gcc.trace.gz | wc -l: 515683; awk '{print $1}' | sort | uniq -c:
    // 318197 l, 197486 s; Python: 294 distinct addr // 4096.
    let a = accesses(&spec(shared("address/gcc.trace.gz"), None, ""));
    assert_eq!(a.len(), 515_683);
    let loads = a.iter().filter(|x| x.op == Op::Read).count();
    assert_eq!(loads, 318_197);
    assert!(a.iter().all(|x| x.kind == Kind::Anon && x.npages == 1));
    assert_eq!(distinct_pages(&a), 294);
    // Line 1: `s 0x1fffff50 1`.
    assert_eq!(
        (a[0].op, a[0].page, a[0].time),
        (Op::Write, 0x1fffff50 / 4096, 0)
    );
    let big = accesses(&spec(
        shared("address/gcc.trace.gz"),
        None,
        "page_size = 65536",
    ));
    assert_eq!(big[0].page, 0x1fffff50 / 65536);
}

// ---------------------------------------------------------------- android

#[test]
fn android_telegram() {
    // Python over the csv: 251879 rows; sum of pages touched by
    // [sector*512, (sector+size)*512) = 1538672, 1021153 distinct; 227785 W;
    // 117 apps after stripping -PID, the first three loop40, <unknown>,
    // SettingsProvide; 5 requests stay <unknown> after PID resolution.
    let p = shared("mobile-block/telegram_exec.csv.gz");
    assert_eq!(open(&spec(&p, None, "")).unwrap().format(), "android");
    let (a, names) = accesses_and_apps(&spec(&p, None, ""));
    assert_eq!(a.len(), 251_879);
    assert_eq!(total_pages(&a), 1_538_672);
    assert_eq!(distinct_pages(&a), 1_021_153);
    assert_eq!(a.iter().filter(|x| x.op == Op::Write).count(), 227_785);
    assert!(a.iter().all(|x| x.kind == Kind::File));
    assert_eq!(names.len(), 117);
    assert_eq!(&names[..3], ["loop40", "<unknown>", "SettingsProvide"]);
    assert_eq!(a.iter().filter(|x| x.app == 1).count(), 5);
    // Line 2: `loop40-2757,8388608,R,206567552,8,653406.907265`: 8 sectors =
    // one 4 KiB page at 206567552 * 512 / 4096.
    assert_eq!(
        a[0],
        Access {
            time: 653_406_907_265_000,
            page: 206_567_552 / 8,
            op: Op::Read,
            kind: Kind::File,
            app: 0,
            npages: 1,
            size: 0,
        }
    );
}

#[test]
fn android_cod_pid_resolution() {
    // Python: 223998 rows, 2496029 page references, 215 apps, 263 requests of
    // `<...>-PID` whose PID had no name yet.
    let p = shared("mobile-block/cod_exec.csv.gz");
    let (a, names) = accesses_and_apps(&spec(&p, None, ""));
    assert_eq!(a.len(), 223_998);
    assert_eq!(total_pages(&a), 2_496_029);
    assert_eq!(names.len(), 215);
    let unknown = names.iter().position(|n| n == "<unknown>").unwrap() as u32;
    assert_eq!(a.iter().filter(|x| x.app == unknown).count(), 263);
}

#[test]
fn android_app_names_fixture() {
    let t = Tmp::new();
    let p = t.file(
        "a.csv",
        b"proces,device,rw_flag,sector,size,timestamp\n\
          Thread-7-100,1,R,0,8,1.5\n\
          <...>-100,1,W,7,2,2\n\
          <...>-200,1,R,8,8,3\n\
          Jit,1,W,16,16,4\n\
          f2fs_ckpt-254:4-599,1,W,40,1,5\n",
    );
    let (a, names) = accesses_and_apps(&spec(&p, None, ""));
    assert_eq!(names, ["Thread-7", "<unknown>", "Jit", "f2fs_ckpt-254:4"]);
    let got: Vec<(u64, u32, u32, Op, u64)> = a
        .iter()
        .map(|x| (x.page, x.npages, x.app, x.op, x.time))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, 0, Op::Read, 1_500_000_000),
            // sectors 7..9 straddle pages 0 and 1; PID 100 was Thread-7.
            (0, 2, 0, Op::Write, 2_000_000_000),
            (1, 1, 1, Op::Read, 3_000_000_000),
            (2, 2, 2, Op::Write, 4_000_000_000),
            (5, 1, 3, Op::Write, 5_000_000_000),
        ]
    );
}

// ---------------------------------------------------------------- vfs

#[test]
fn vfs_web_office() {
    // xz -dc | grep -v '#': 90941 lines, 24507 of them `-1` (21170 r, 3337 w);
    // the rest: 52310 r, 14124 w, 42107 distinct blocks, 6179 distinct
    // block*512//4096.
    let p = shared("vfs/WebOfficeDesktop-3mins.txt.lzma");
    let a = accesses(&spec(&p, None, ""));
    assert_eq!(a.len(), 66_434);
    assert_eq!(a.iter().filter(|x| x.op == Op::Read).count(), 52_310);
    assert_eq!(distinct_pages(&a), 42_107);
    assert_eq!(
        (a[0].op, a[0].page, a[0].npages),
        (Op::Write, 101_531_320, 1)
    );
    let sectors = accesses(&spec(&p, None, "block_size = 512"));
    assert_eq!(sectors.len(), 66_434);
    assert_eq!(distinct_pages(&sectors), 6_179);
    // The first `-1` is on line 17611.
    assert_input_err(
        &spec(&p, None, "unmapped = 'error'"),
        ":line 17611",
        "block -1",
    );
}

#[test]
fn txt_block_addressing() {
    // cloudPhysicsIO.txt holds the lbns: block addressing maps 8 sectors to a
    // page; Python: len({lbn*512//4096}) = 44774 distinct pages.
    let a = accesses(&spec(
        shared(&format!("{CP}.txt")),
        None,
        "addressing = 'block'",
    ));
    assert_eq!(a.len(), CP_REQUESTS);
    assert!(a.iter().all(|x| x.npages == 1));
    assert_eq!(distinct_pages(&a), 44_774);
    // 8 KiB blocks span two 4 KiB pages.
    let b = accesses(&spec(
        shared(&format!("{CP}.txt")),
        None,
        "addressing = 'block'\nblock_size = 8192",
    ));
    assert_eq!((b[0].page, b[0].npages), (42_932_745 * 2, 2));
}
