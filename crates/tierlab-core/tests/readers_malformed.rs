//! Trace readers on malformed input written to temporary files: every error
//! names the file and the line or byte offset, and no input makes a reader panic.

use std::io::Write;
use tierlab_core::trace::{guess_format, open, read_all, Op, TraceReader};
use tierlab_core::Error;

mod reader_helpers;
use reader_helpers::*;

// ---------------------------------------------------------------- malformed

#[test]
fn truncated_gzip_is_reported_with_the_line() {
    let t = Tmp::new();
    let mut body = String::from("proces,device,rw_flag,sector,size,timestamp\n");
    for i in 0..20_000 {
        body.push_str(&format!("app-{},1,R,{},8,{}.5\n", i % 7, i * 8, i));
    }
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body.as_bytes()).unwrap();
    let gz = e.finish().unwrap();
    let p = t.file("cut.csv.gz", &gz[..gz.len() / 2]);
    assert_input_err(
        &spec(&p, None, ""),
        ":line ",
        "corrupt or truncated Gzip stream",
    );
    let whole = t.file("whole.csv.gz", &gz);
    assert_eq!(accesses(&spec(&whole, None, "")).len(), 20_000);
    // The same for a binary format: the oracle reader names the byte offset.
    let mut recs = Vec::new();
    for i in 0..50_000u64 {
        recs.extend((i as u32).to_le_bytes());
        recs.extend(i.to_le_bytes());
        recs.extend(4096u32.to_le_bytes());
        recs.extend((-1i64).to_le_bytes());
    }
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&recs).unwrap();
    let gz = e.finish().unwrap();
    let p = t.file("cut.oracleGeneral.bin.gz", &gz[..gz.len() * 2 / 3]);
    assert_input_err(
        &spec(&p, None, ""),
        ":byte offset ",
        "corrupt or truncated Gzip stream",
    );
}

#[test]
fn truncated_binary_records() {
    let t = Tmp::new();
    let mut rec = Vec::new();
    rec.extend(1u32.to_le_bytes());
    rec.extend(42u64.to_le_bytes());
    rec.extend(512u32.to_le_bytes());
    rec.extend((-1i64).to_le_bytes());
    let mut data = rec.repeat(2);
    data.extend(&rec[..10]);
    let p = t.file("t.oracleGeneral.bin", &data);
    assert_input_err(
        &spec(&p, None, ""),
        ":byte offset 48",
        "truncated oracleGeneral record",
    );
    // Zero size.
    let mut z = rec.clone();
    z[12..16].copy_from_slice(&0u32.to_le_bytes());
    let mut data = rec.clone();
    data.extend(&z);
    let p = t.file("z.oracleGeneral.bin", &data);
    assert_input_err(&spec(&p, None, ""), ":byte offset 24", "obj_size > 0");
    assert_eq!(accesses(&spec(&p, None, "skip_zero_size = true")).len(), 1);
    // vscsi: the real file cut in the middle of record 3.
    let real = std::fs::read(shared(&format!("{CP}.vscsi"))).unwrap();
    let p = t.file("t.vscsi", &real[..32 * 3 + 5]);
    assert_input_err(
        &spec(&p, None, ""),
        ":byte offset 96",
        "truncated vscsi record",
    );
    // Not a vscsi file at all.
    let p = t.file("junk.vscsi", &[0x11u8; 64]);
    assert_input_err(&spec(&p, None, ""), ":byte offset 0", "not a vscsi trace");
    // vscsi len 0.
    let mut z = real[..64].to_vec();
    z[36..40].copy_from_slice(&0u32.to_le_bytes());
    let p = t.file("z.vscsi", &z);
    assert_input_err(&spec(&p, None, ""), ":byte offset 32", "len > 0");
}

#[test]
fn empty_files_are_errors_for_every_format() {
    let t = Tmp::new();
    let cases = [
        ("csv", "e.csv", &b""[..]),
        ("csv", "h.csv", b"version,time,op,size,lbn\n"),
        ("txt", "e.txt", b"\n\n"),
        ("oracle", "e.bin", b""),
        ("vscsi", "e.vscsi", b""),
        ("addr", "e.trace", b""),
        ("msr", "e.csv", b""),
        ("spc", "e.spc", b""),
        ("blkparse", "e.blkparse", b""),
        (
            "android",
            "e.csv",
            b"proces,device,rw_flag,sector,size,timestamp\n",
        ),
        ("vfs", "e.txt", b"# nothing\n"),
    ];
    for (fmt, name, data) in cases {
        let p = t.file(&format!("{fmt}-{name}"), data);
        let msg = read_err(&spec(&p, Some(fmt), ""));
        assert!(
            msg.starts_with(&p.display().to_string()) && msg.contains("empty"),
            "{fmt}: {msg}"
        );
    }
    // An empty gzip stream too.
    let p = t.gz("e.trace.gz", b"");
    let msg = read_err(&spec(&p, Some("addr"), ""));
    assert!(msg.contains("empty"), "{msg}");
}

#[test]
fn bad_lines_name_file_line_and_expectation() {
    let t = Tmp::new();
    let head = "proces,device,rw_flag,sector,size,timestamp\na-1,1,R,0,8,1\n";
    let cases: Vec<(&str, &str, String, &str, &str)> = vec![
        // format, file, content, location, expected text
        (
            "android",
            "c.csv",
            format!("{head}a-1,1,R,0,8\n"),
            ":line 3",
            "expected 6 fields",
        ),
        (
            "android",
            "n.csv",
            format!("{head}a-1,1,R,0,-8,2\n"),
            ":line 3",
            "size in 512-byte sectors",
        ),
        (
            "android",
            "z.csv",
            format!("{head}a-1,1,R,0,0,2\n"),
            ":line 3",
            "> 0, found 0",
        ),
        (
            "android",
            "x.csv",
            format!("{head}a-1,1,R,12a,8,2\n"),
            ":line 3",
            "sector number",
        ),
        (
            "android",
            "o.csv",
            format!("{head}a-1,1,R,36028797018963968,8,2\n"),
            ":line 3",
            "overflows",
        ),
        (
            "android",
            "f.csv",
            format!("{head}a-1,1,T,0,8,2\n"),
            ":line 3",
            "R or W",
        ),
        (
            "android",
            "h.csv",
            format!("{head}a-1,1,R,0,16777216,2\n"),
            ":line 3",
            "more than the limit",
        ),
        (
            "addr",
            "a.trace",
            "l 0x10 1\nx 0x10 1\n".into(),
            ":line 2",
            "'l' (load) or 's' (store)",
        ),
        (
            "addr",
            "b.trace",
            "l 0x10 1\nl 0xzz 1\n".into(),
            ":line 2",
            "hexadecimal address",
        ),
        (
            "addr",
            "c.trace",
            "l 0x10 1\nl 0x10\n".into(),
            ":line 2",
            "3 fields",
        ),
        (
            "addr",
            "d.trace",
            "l 0x10 1\nl 0x10 -1\n".into(),
            ":line 2",
            "instruction gap",
        ),
        ("vfs", "a.txt", "r 1\nr 1 2\n".into(), ":line 2", "2 fields"),
        (
            "vfs",
            "b.txt",
            "r 1\nr -5\n".into(),
            ":line 2",
            "block number",
        ),
        ("vfs", "c.txt", "r 1\nq 5\n".into(), ":line 2", "'r' or 'w'"),
        (
            "txt",
            "a.txt",
            "1\n2\nthree\n".into(),
            ":line 3",
            "object id",
        ),
        ("txt", "b.txt", "1\n-2\n".into(), ":line 2", "object id"),
        (
            "csv",
            "a.csv",
            "id,size\n1,512\n2\n".into(),
            ":line 3",
            "expected 2 fields",
        ),
        (
            "csv",
            "b.csv",
            "id,size\n1,512\n2,-1\n".into(),
            ":line 3",
            "size in bytes",
        ),
        (
            "csv",
            "c.csv",
            "id,size\n1,512\nx,1\n".into(),
            ":line 3",
            "object id",
        ),
    ];
    for (fmt, name, data, loc, what) in cases {
        let p = t.file(&format!("{fmt}-{name}"), data.as_bytes());
        assert_input_err(&spec(&p, Some(fmt), ""), loc, what);
    }
    // Non-UTF-8 process name in the android csv.
    let mut data = head.as_bytes().to_vec();
    data.extend(b"\xff\xfe-1,1,R,0,8,2\n");
    let p = t.file("u.csv", &data);
    assert_input_err(&spec(&p, Some("android"), ""), ":line 3", "UTF-8");
    // Non-UTF-8 bytes in a number field are a bad number.
    let p = t.file("u.txt", b"1\n\xff\xfe\n");
    assert_input_err(&spec(&p, Some("txt"), ""), ":line 2", "object id");
}

#[test]
fn formats_are_guessed_from_names_and_content() {
    let cases = [
        (format!("{CP}.csv"), "csv"),
        (format!("{CP}.txt"), "txt"),
        (format!("{CP}.oracleGeneral.bin"), "oracle"),
        (format!("{CP}.vscsi"), "vscsi"),
        ("address/gcc.trace.gz".into(), "addr"),
        ("address/swim.trace.gz".into(), "addr"),
        ("lirs/sprite.trace.gz".into(), "lirs"),
        ("arc/OLTP.lis.zst".into(), "arc"),
        ("mobile-block/cod_exec.csv.gz".into(), "android"),
        ("vfs/WebOfficeDesktop-3mins.txt.lzma".into(), "vfs"),
    ];
    for (rel, want) in cases {
        assert_eq!(guess_format(&shared(&rel)).unwrap(), want, "{rel}");
    }
    let t = Tmp::new();
    let p = t.file("x.csv", b"0,1,512,r,0.1\n");
    assert_eq!(guess_format(&p).unwrap(), "spc");
    let p = t.file(
        "h.csv",
        b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n1,hm,0,Read,0,512,1\n",
    );
    assert_eq!(guess_format(&p).unwrap(), "msr");
    assert_eq!(accesses(&spec(&p, None, "")).len(), 1);
    let p = t.file("h2.csv", b"ASU,LBA,Size,Opcode,Timestamp\n0,8,4096,w,0.5\n");
    assert_eq!(guess_format(&p).unwrap(), "spc");
    let a = accesses(&spec(&p, None, ""));
    assert_eq!((a.len(), a[0].page, a[0].op), (1, 1, Op::Write));
    let p = t.file("x.bin", b"");
    assert!(matches!(guess_format(&p), Err(Error::Config(_))));
    let msg = read_err(&spec(shared(&format!("{CP}.csv")), Some("nope"), ""));
    assert!(msg.contains("unknown trace format 'nope'") && msg.contains("android"));
}

#[test]
fn readers_stream_in_batches() {
    // Batches of 1000 give the same records as one read, and the reader keeps
    // reporting the end once reached.
    let s = spec(shared(&format!("{CP}.vscsi")), None, "");
    let all = accesses(&s);
    let mut r = open(&s).unwrap();
    let mut out = Vec::new();
    let mut calls = 0;
    loop {
        let before = out.len();
        let more = r.read_batch(&mut out, 1000).unwrap();
        assert!(out.len() - before <= 1000);
        calls += 1;
        if !more {
            break;
        }
    }
    assert_eq!(calls, CP_REQUESTS / 1000 + 1);
    assert_eq!(out.len(), all.len());
    assert!(!r.read_batch(&mut out, 10).unwrap());
    let _: &dyn TraceReader = r.as_ref();
}

#[test]
fn truncated_lzma_and_xz_are_reported() {
    // The real legacy-.lzma VFS trace cut in half, and an xz stream cut short.
    let t = Tmp::new();
    let real = std::fs::read(shared("vfs/WebOfficeDesktop-3mins.txt.lzma")).unwrap();
    let p = t.file("cut.txt.lzma", &real[..real.len() / 2]);
    assert_input_err(
        &spec(&p, None, ""),
        ":line ",
        "corrupt or truncated Lzma stream",
    );
    let mut body = String::new();
    for i in 0..50_000 {
        body.push_str(&format!("l {:#x} 1\n", i * 4096));
    }
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(body.as_bytes()).unwrap();
    let xz = e.finish().unwrap();
    let p = t.file("cut.trace.xz", &xz[..xz.len() / 2]);
    assert_input_err(
        &spec(&p, Some("addr"), ""),
        ":line ",
        "corrupt or truncated Xz stream",
    );
    let p = t.file("whole.trace.xz", &xz);
    let a = accesses(&spec(&p, None, ""));
    assert_eq!(a.len(), 50_000);
    assert_eq!(distinct_pages(&a), 50_000);
}

mod no_panics {
    use super::*;
    use proptest::prelude::*;

    /// Text that looks like the formats, mutated: any result is fine but a panic.
    fn texty() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                Just(b"proces,device,rw_flag,sector,size,timestamp\n".to_vec()),
                Just(b"a-1,1,R,8,8,1.5\n".to_vec()),
                Just(b"  8,0 1 1 0.5 7 Q W 8 + 8 [x]\n".to_vec()),
                Just(b"l 0x1000 1\n".to_vec()),
                Just(b"r 12\n".to_vec()),
                Just(b"0,8,4096,r,0.1\n".to_vec()),
                Just(b"1,h,0,Read,0,512,1\n".to_vec()),
                Just(b"1,2,2a,512,3\n".to_vec()),
                prop::collection::vec(any::<u8>(), 0..24),
            ],
            0..12,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn readers_never_panic(data in texty(), bin in prop::collection::vec(any::<u8>(), 0..200)) {
            let t = Tmp::new();
            // Generators read no file: their specs are tested in tests/synth.rs.
            for fmt in tierlab_core::trace::readers::FORMAT_NAMES.iter().filter(|f| !matches!(**f, "synth" | "nomad_bench")) {
                for (name, bytes) in [("t", &data), ("b", &bin)] {
                    let p = t.file(&format!("{fmt}-{name}"), bytes);
                    let s = spec(&p, Some(fmt), "");
                    let r = open(&s).and_then(|mut r| read_all(r.as_mut()));
                    if let Err(e) = r {
                        let msg = e.to_string();
                        prop_assert!(msg.starts_with(&p.display().to_string()), "{}", msg);
                    }
                }
            }
        }
    }
}
