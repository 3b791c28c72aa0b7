//! The native trace format: round trips, corruption detection, conversion.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tierlab_core::trace::native::{
    convert, convert_with, NativeReader, NativeWriter, WriterOptions,
};
use tierlab_core::trace::{
    self, read_all, Access, Event, EventKind, Kind, Op, Record, RecordColumns, TraceReader,
    TraceSpec, MAX_REQUEST_PAGES,
};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tierlab-native-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn acc(time: u64, page: u64, op: Op, kind: Kind, app: u32, npages: u32) -> Record {
    Record::Access(Access {
        time,
        page,
        op,
        kind,
        app,
        npages,
        size: 0,
    })
}

fn ev(time: u64, app: u32, kind: EventKind) -> Record {
    Record::Event(Event { time, app, kind })
}

/// Every field value, including extremes: times that go backwards, pages at
/// both ends of u64, every op/kind pair, big app ids and request sizes, and
/// every event kind.
fn sample_records() -> Vec<Record> {
    vec![
        ev(0, 1, EventKind::AppLaunch),
        acc(5, 100, Op::Read, Kind::File, 1, 1),
        acc(6, 101, Op::Write, Kind::File, 1, 8),
        ev(7, 1, EventKind::Foreground),
        acc(3, u64::MAX, Op::Read, Kind::Anon, 2, 1),
        acc(
            u64::MAX,
            0,
            Op::Write,
            Kind::Anon,
            u32::MAX,
            MAX_REQUEST_PAGES as u32,
        ),
        ev(8, 2, EventKind::Background),
        acc(9, 42, Op::Read, Kind::File, 0, 3),
        ev(10, 2, EventKind::AppExit),
        acc(11, 7, Op::Write, Kind::Anon, 1, 1),
    ]
}

fn write(path: &Path, recs: &[Record], names: &[String], per_block: u32) {
    let opts = WriterOptions {
        records_per_block: per_block,
        ..Default::default()
    };
    let mut w = NativeWriter::create_with(path, 512, opts).unwrap();
    w.push_all(recs).unwrap();
    w.finish(names).unwrap();
}

#[test]
fn round_trip_every_field_and_app_names() {
    let d = tmpdir("rt");
    let names: Vec<String> = ["all", "com.example.mail", "카메라"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for per_block in [1, 3, 4, 1000] {
        let p = d.join(format!("t{per_block}.tlt"));
        write(&p, &sample_records(), &names, per_block);
        let mut r = trace::open(&TraceSpec::new(&p)).unwrap();
        assert_eq!(r.format(), "native");
        assert_eq!(r.page_size(), 512);
        assert_eq!(r.app_names(), names);
        assert_eq!(read_all(r.as_mut()).unwrap(), sample_records());
    }
    // The native reader's totals come from the trailer, before any block.
    let r = NativeReader::open(&d.join("t3.tlt"), Default::default()).unwrap();
    let t = r.totals();
    assert_eq!((t.blocks, t.records, t.events), (4, 10, 4));
}

#[test]
fn empty_trace_round_trips() {
    let d = tmpdir("empty");
    let p = d.join("e.tlt");
    write(&p, &[], &[], 16);
    let mut r = trace::open(&TraceSpec::new(&p)).unwrap();
    assert!(read_all(r.as_mut()).unwrap().is_empty());
    assert_eq!(r.app_names(), vec!["all".to_string()]);
}

#[test]
fn magic_is_sniffed_whatever_the_name() {
    let d = tmpdir("sniff");
    let p = d.join("trace.bin");
    write(&p, &sample_records(), &[], 4);
    let mut r = trace::open(&TraceSpec::new(&p)).unwrap();
    assert_eq!(r.format(), "native");
    assert_eq!(read_all(r.as_mut()).unwrap().len(), 10);
}

fn block_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut offs = Vec::new();
    let mut off = 24;
    while &bytes[off..off + 4] == b"TLBK" {
        offs.push(off);
        let comp = u32::from_le_bytes(bytes[off + 16..off + 20].try_into().unwrap()) as usize;
        off += 32 + comp;
    }
    offs
}

/// Rewrites a block's checksum after a deliberate edit, so that the check
/// behind the checksum is the one exercised.
fn reseal(bytes: &mut [u8], off: usize) {
    let comp = u32::from_le_bytes(bytes[off + 16..off + 20].try_into().unwrap()) as usize;
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[off..off + 28]);
    h.update(&bytes[off + 32..off + 32 + comp]);
    let crc = h.finalize();
    bytes[off + 28..off + 32].copy_from_slice(&crc.to_le_bytes());
}

/// Opens and reads the whole file; returns the error text.
fn read_err(p: &Path) -> String {
    let res = trace::open(&TraceSpec::new(p).with_format("native"))
        .and_then(|mut r| read_all(r.as_mut()));
    match res {
        Ok(recs) => panic!("corrupt file read without error ({} records)", recs.len()),
        Err(e) => e.to_string(),
    }
}

fn corrupt(tag: &str, edit: impl FnOnce(&mut Vec<u8>, &[usize])) -> (String, Vec<usize>) {
    let d = tmpdir("corrupt");
    let p = d.join(format!("{tag}.tlt"));
    let recs: Vec<Record> = (0..400u64)
        .map(|i| acc(i, i * 7 % 101, Op::Read, Kind::File, 0, 1))
        .collect();
    write(&p, &recs, &["all".into()], 100);
    let mut bytes = std::fs::read(&p).unwrap();
    let offs = block_offsets(&bytes);
    assert_eq!(offs.len(), 4);
    edit(&mut bytes, &offs);
    std::fs::write(&p, &bytes).unwrap();
    let msg = read_err(&p);
    println!("{tag}: {msg}");
    assert!(msg.contains(&p.display().to_string()), "{msg}");
    (msg, offs)
}

#[test]
fn flipped_payload_byte_is_a_checksum_error_naming_block_and_offset() {
    for k in [0usize, 5, 20] {
        let (msg, offs) = corrupt("flip", |b, offs| b[offs[2] + 32 + k] ^= 0x40);
        assert!(
            msg.contains(&format!(
                "byte offset {}: block 2: checksum mismatch",
                offs[2]
            )),
            "{msg}"
        );
    }
}

#[test]
fn flipped_block_header_byte_is_detected() {
    let (msg, offs) = corrupt("hdr", |b, offs| b[offs[1] + 5] ^= 0x01);
    assert!(
        msg.contains(&format!(
            "byte offset {}: block 1: checksum mismatch",
            offs[1]
        )),
        "{msg}"
    );
}

#[test]
fn impossible_counts_are_rejected_even_with_a_valid_checksum() {
    let (msg, offs) = corrupt("counts", |b, offs| {
        b[offs[0] + 8..offs[0] + 12].copy_from_slice(&500u32.to_le_bytes());
        reseal(b, offs[0]);
    });
    assert!(
        msg.contains(&format!(
            "byte offset {}: block 0: impossible counts",
            offs[0]
        )),
        "{msg}"
    );
    let (msg, _) = corrupt("zero", |b, offs| {
        b[offs[3] + 4..offs[3] + 8].copy_from_slice(&0u32.to_le_bytes());
        reseal(b, offs[3]);
    });
    assert!(msg.contains("block 3: impossible record count 0"), "{msg}");
    // Records counted in a block that disagree with its payload.
    let (msg, _) = corrupt("events", |b, offs| {
        b[offs[1] + 8..offs[1] + 12].copy_from_slice(&3u32.to_le_bytes());
        reseal(b, offs[1]);
    });
    assert!(msg.contains("block 1:"), "{msg}");
}

#[test]
fn decompression_failure_is_reported() {
    let (msg, offs) = corrupt("zstd", |b, offs| {
        for x in &mut b[offs[1] + 32..offs[1] + 40] {
            *x = 0xAB;
        }
        reseal(b, offs[1]);
    });
    assert!(
        msg.contains(&format!(
            "byte offset {}: block 1: decompression failed",
            offs[1]
        )),
        "{msg}"
    );
}

#[test]
fn truncation_names_the_cut_block() {
    let (msg, offs) = corrupt("trunc", |b, offs| b.truncate(offs[2] + 40));
    assert!(
        msg.contains(&format!("byte offset {}: block 2: truncated", offs[2])),
        "{msg}"
    );
    let (msg, offs) = corrupt("trunc-hdr", |b, offs| b.truncate(offs[3] + 10));
    assert!(
        msg.contains(&format!(
            "byte offset {}: block 3: truncated block header",
            offs[3]
        )),
        "{msg}"
    );
    // Cut inside the trailer: every block is whole, the footer is missing.
    let (msg, _) = corrupt("trunc-trailer", |b, _| {
        let n = b.len();
        b.truncate(n - 3)
    });
    assert!(msg.contains("no footer"), "{msg}");
}

#[test]
fn wrong_version_and_bad_magic() {
    let (msg, _) = corrupt("version", |b, _| b[8] = 2);
    assert!(
        msg.contains("byte offset 8: unsupported native format version 2"),
        "{msg}"
    );
    let (msg, _) = corrupt("magic", |b, _| b[0] = b'X');
    assert!(msg.contains("byte offset 0: not a native trace"), "{msg}");
    let (msg, _) = corrupt("headercrc", |b, _| b[13] ^= 1);
    assert!(msg.contains("header checksum mismatch"), "{msg}");
}

/// A footer pointing at a trailer near u64::MAX is reported, not an arithmetic overflow
/// (found by the fuzz smoke's overflow-checked build).
#[test]
fn footer_pointing_past_u64_is_reported() {
    let (msg, _) = corrupt("hugetrailer", |b, _| {
        let n = b.len();
        b[n - 16..n - 8].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    });
    assert!(
        msg.contains("footer points to a trailer at byte 18446744073709551612, outside the file"),
        "{msg}"
    );
}

#[test]
fn block_sequence_must_match_the_trailer() {
    // Drop block 1 whole and fix nothing else: block 2 then claims to start
    // at record 200 after only 100 records.
    let (msg, offs) = corrupt("drop", |b, offs| {
        let (a, z) = (offs[1], offs[2]);
        let len = z - a;
        b.drain(a..z);
        // Repoint the footer at the moved trailer.
        let n = b.len();
        let t = u64::from_le_bytes(b[n - 16..n - 8].try_into().unwrap()) - len as u64;
        b[n - 16..n - 8].copy_from_slice(&t.to_le_bytes());
    });
    assert!(
        msg.contains(&format!(
            "byte offset {}: block 1: block starts at record 200 but 100 records precede it",
            offs[1]
        )),
        "{msg}"
    );
}

fn arb_record() -> impl Strategy<Value = Record> {
    prop_oneof![
        8 => (any::<u64>(), any::<u64>(), any::<bool>(), any::<bool>(), any::<u32>(), 1..=MAX_REQUEST_PAGES as u32)
            .prop_map(|(t, p, w, a, app, n)| acc(
                t,
                p,
                if w { Op::Write } else { Op::Read },
                if a { Kind::Anon } else { Kind::File },
                app,
                n
            )),
        // Nearby times and pages, as real traces have (small deltas).
        8 => (0..1000u64, 0..1000u64, any::<bool>()).prop_map(|(t, p, w)| acc(
            t,
            p,
            if w { Op::Write } else { Op::Read },
            Kind::File,
            0,
            1
        )),
        1 => (any::<u64>(), any::<u32>(), 0..4u8).prop_map(|(t, app, k)| ev(
            t,
            app,
            [EventKind::AppLaunch, EventKind::Foreground, EventKind::Background, EventKind::AppExit][k as usize]
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_round_trip(
        recs in proptest::collection::vec(arb_record(), 0..3000),
        per_block in 1u32..700,
        batch in 1usize..5000,
        names in proptest::collection::vec("[a-z.\\pL]{0,12}", 0..5),
    ) {
        let d = tmpdir("prop");
        let p = d.join("p.tlt");
        write(&p, &recs, &names, per_block);
        let mut r = NativeReader::open(&p, Default::default()).unwrap();
        let mut got = Vec::new();
        while r.read_batch(&mut got, batch).unwrap() {}
        prop_assert_eq!(&got, &recs);
        let want_names = if names.is_empty() { vec!["all".to_string()] } else { names };
        prop_assert_eq!(r.app_names(), want_names);

        // The engine's path: blocks decoded straight into columns, handed over whole or split
        // across batches, give the same records, events in place.
        let mut r = NativeReader::open(&p, Default::default()).unwrap();
        let (mut cols, mut scratch, mut via_columns) = (RecordColumns::default(), Vec::new(), Vec::new());
        loop {
            cols.clear();
            let more = r.read_columns(&mut cols, batch, &mut scratch).unwrap();
            prop_assert!(cols.records() <= batch);
            prop_assert_eq!(cols.single_pages, (0..cols.accesses()).all(|i| cols.npages[i] == 1));
            cols.records_to(0, cols.records(), &mut via_columns);
            if !more {
                break;
            }
        }
        prop_assert_eq!(via_columns, recs);
    }
}

#[test]
fn convert_oltp_keeps_every_record() {
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/arc/OLTP.lis.zst"
    );
    let d = tmpdir("oltp");
    let out = d.join("OLTP.tlt");
    let mut calls = 0;
    let stats = convert(&TraceSpec::new(src), &out, &mut |_| {
        calls += 1;
        Ok(())
    })
    .unwrap();
    assert!(calls >= 1);
    assert!(!d.join("OLTP.tlt.partial").exists());
    let mut a = trace::open(&TraceSpec::new(src)).unwrap();
    let mut b = trace::open(&TraceSpec::new(&out)).unwrap();
    assert_eq!(b.format(), "native");
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    let mut n = 0u64;
    let mut page_refs = 0u64;
    loop {
        ra.clear();
        rb.clear();
        let ma = a.read_batch(&mut ra, 50_000).unwrap();
        let mb = b.read_batch(&mut rb, 50_000).unwrap();
        assert_eq!(ra, rb, "records differ after {n}");
        n += ra.len() as u64;
        for r in &ra {
            if let Record::Access(x) = r {
                page_refs += x.npages as u64;
            }
        }
        assert_eq!(ma, mb);
        if !ma {
            break;
        }
    }
    assert_eq!(stats.records, n);
    assert_eq!(stats.accesses, n);
    assert_eq!(stats.page_refs, page_refs);
    assert_eq!(stats.format_in, "arc");
    let ratio = stats.bytes_out as f64 / stats.bytes_in as f64;
    println!(
        "OLTP: {} records ({} page refs), {} blocks; zst source {} B, native {} B, native/zst = {ratio:.3}",
        stats.records, stats.page_refs, stats.blocks, stats.bytes_in, stats.bytes_out
    );
    // The native file must not be larger than a generic zstd of the text.
    assert!(ratio < 1.0, "native/zst = {ratio}");
}

#[test]
fn failed_conversion_leaves_no_output() {
    let d = tmpdir("fail");
    let src = d.join("bad.lis");
    std::fs::write(&src, "1 2 0 0\nnot a number\n").unwrap();
    let out = d.join("bad.tlt");
    let err = convert(&TraceSpec::new(&src), &out, &mut |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("bad.lis:line 2"), "{err}");
    assert!(!out.exists());
    assert!(!d.join("bad.tlt.partial").exists());
    // An interrupt from the progress callback also leaves nothing.
    let good = d.join("good.lis");
    std::fs::write(&good, "1 2 0 0\n").unwrap();
    let err = convert_with(
        &TraceSpec::new(&good),
        &out,
        WriterOptions::default(),
        &mut |_| Err(tierlab_core::Error::Interrupted),
    )
    .unwrap_err();
    assert!(matches!(err, tierlab_core::Error::Interrupted));
    assert!(!out.exists());
}

#[test]
fn convert_a_generator_spec() {
    let d = tmpdir("synth");
    let out = d.join("z.tlt");
    let spec = TraceSpec::new("zipf:alpha=0.9,pages=5000,n=30000,write=0.2,kind=anon,seed=4");
    let stats = convert(&spec, &out, &mut |_| Ok(())).unwrap();
    assert_eq!((stats.records, stats.format_in.as_str()), (30_000, "synth"));
    assert_eq!(stats.bytes_in, 0);
    let mut a = trace::open(&spec).unwrap();
    let mut b = trace::open(&TraceSpec::new(&out)).unwrap();
    assert_eq!(read_all(a.as_mut()).unwrap(), read_all(b.as_mut()).unwrap());
}
