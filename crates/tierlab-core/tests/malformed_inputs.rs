//! Malformed input, reader by reader (issue 11), filling what `readers.rs` and
//! `native_format.rs` leave out: every case must end in ONE error line that
//! starts with the file name and the line or byte offset, and says what was
//! expected. Cases: empty file, wrong format (another format's bytes), bad
//! number, negative or zero size, absurd page counts, sector overflow,
//! non-UTF-8, truncated compressed stream.

use std::io::Write;
use std::path::PathBuf;
use tierlab_core::trace::{open, read_all, TraceSpec};

struct Case {
    format: &'static str,
    data: Vec<u8>,
    /// Location right after the file name, e.g. ":line 2".
    loc: &'static str,
    what: &'static str,
}

fn case(format: &'static str, data: &[u8], loc: &'static str, what: &'static str) -> Case {
    Case {
        format,
        data: data.to_vec(),
        loc,
        what,
    }
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zst(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// A long text body compressed, cut in the middle.
fn cut_gz(line: impl Fn(usize) -> String) -> Vec<u8> {
    let body: String = (0..20_000).map(line).collect();
    let z = gz(body.as_bytes());
    z[..z.len() / 2].to_vec()
}

fn check(cases: Vec<Case>) {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let path: PathBuf = dir.path().join(format!("case{i}.{}", c.format));
        std::fs::write(&path, &c.data).unwrap();
        let spec = TraceSpec::new(&path).with_format(c.format);
        let msg = match open(&spec).and_then(|mut r| read_all(r.as_mut()).map(|_| ())) {
            Ok(()) => {
                failures.push(format!("case {i} ({}): accepted", c.format));
                continue;
            }
            Err(e) => e.to_string(),
        };
        let name = path.display().to_string();
        if !msg.starts_with(&format!("{name}{}", c.loc))
            || !msg.contains(c.what)
            || msg.contains('\n')
        {
            failures.push(format!(
                "case {i} ({}): want '{}' and '{}' on one line, got: {msg}",
                c.format, c.loc, c.what
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lirs_and_arc() {
    check(vec![
        case("lirs", b"", ":", "empty"),
        case("lirs", b"1\n2\nx7\n", ":line 3", "block number"),
        case("lirs", b"1\n-2\n", ":line 2", "block number"),
        case(
            "lirs",
            b"1\n99999999999999999999999\n",
            ":line 2",
            "block number",
        ),
        case("lirs", b"1\n\xff\xfe\n", ":line 2", "block number"),
        // Another format's bytes: an oracleGeneral record.
        case(
            "lirs",
            &[1, 0, 0, 0, 42, 0, 0, 0],
            ":line 1",
            "block number",
        ),
        case(
            "lirs",
            &cut_gz(|i| format!("{i}\n")),
            ":line ",
            "truncated Gzip",
        ),
        case("arc", b"", ":", "empty"),
        case("arc", b"1 2 0 1\nfoo 1 0 2\n", ":line 2", "start"),
        case("arc", b"1 0 0 1\n", ":line 1", "block count"),
        case("arc", b"1 -3 0 1\n", ":line 1", "block count"),
        case("arc", b"1 4294967296000 0 1\n", ":line 1", "block count"),
        case("arc", b"l 0x10 1\n", ":line 1", ""),
    ]);
}

#[test]
fn msr_spc_blkparse() {
    let msr = "128166372003061629,hm,0,Read,383496192,32768,1\n";
    let spc = "0,20941264,8192,W,0.551706\n";
    let blk = "  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]\n";
    let with = |first: &str, second: &str| format!("{first}{second}").into_bytes();
    check(vec![
        case("msr", b"", ":", "empty"),
        case(
            "msr",
            &with(msr, "1,hm,0,Read,12x,4096,1\n"),
            ":line 2",
            "offset",
        ),
        case("msr", &with(msr, "1,hm,0,Read,0,0,1\n"), ":line 2", "size"),
        case(
            "msr",
            &with(msr, "1,hm,0,Read,0,-4096,1\n"),
            ":line 2",
            "size",
        ),
        case(
            "msr",
            &with(msr, "1,hm,0,Read,0,99999999999999,1\n"),
            ":line 2",
            "limit",
        ),
        case(
            "msr",
            &with(msr, "1,hm,0,Read,18446744073709551615,4096,1\n"),
            ":line 2",
            "overflow",
        ),
        case("msr", b"1\n2\n", ":line 1", "7 fields"),
        case("spc", b"", ":", "empty"),
        case("spc", &with(spc, "0,1,0,W,0.6\n"), ":line 2", "size"),
        case("spc", &with(spc, "0,1,-512,W,0.6\n"), ":line 2", "size"),
        case(
            "spc",
            &with(spc, "0,1,9999999999999,W,0.6\n"),
            ":line 2",
            "limit",
        ),
        case(
            "spc",
            &with(spc, "0,36028797018963968,512,W,0.6\n"),
            ":line 2",
            "overflow",
        ),
        case(
            "spc",
            &[spc.as_bytes(), b"0,1,512,W,\xff\n"].concat(),
            ":line 2",
            "",
        ),
        case("blkparse", b"", ":", "empty"),
        case(
            "blkparse",
            &with(blk, "  8,0 3 2 0.1 697 Q WS 12x + 8 [a]\n"),
            ":line 2",
            "sector",
        ),
        case(
            "blkparse",
            &with(blk, "  8,0 3 2 0.1 697 Q WS 8 + 0 [a]\n"),
            ":line 2",
            "",
        ),
        case(
            "blkparse",
            &with(blk, "  8,0 3 2 0.1 697 Q WS 8 + 999999999999 [a]\n"),
            ":line 2",
            "limit",
        ),
        case(
            "blkparse",
            &with(blk, "  8,0 3 2 0.1 697 Q WS 36028797018963968 + 8 [a]\n"),
            ":line 2",
            "overflow",
        ),
        case("blkparse", b"1,hm,0,Read,0,4096,1\n", ":line 1", ""),
        case(
            "blkparse",
            &cut_gz(|i| format!("  8,0 0 {i} 0.{i} 1 Q R {} + 8 [a]\n", i * 8)),
            ":line ",
            "truncated Gzip",
        ),
    ]);
}

#[test]
fn lackey_and_tlpages() {
    let mut tlp = b"TLPAGES1".to_vec();
    tlp.extend(4096u32.to_le_bytes());
    tlp.extend([4, 8, 12]);
    let mut bad_varint = tlp.clone();
    bad_varint.extend([0xff; 11]);
    let zipped = zst(&tlp);
    check(vec![
        case("lackey", b"", ":", "empty"),
        case("lackey", b" L 7ff000008,8\n L zz,8\n", ":line 2", "address"),
        case("lackey", b" L 7ff000008,8\n L 10,-8\n", ":line 2", "size"),
        case("lackey", b" L 7ff000008,8\n L 10,0\n", ":line 2", "size"),
        case("lackey", b" L 7ff000008,8\n \xff 10,8\n", ":line 2", ""),
        case("lackey", b"r 1\nw 2\n", ":line 1", ""),
        case("tlpages", b"", ":", ""),
        case("tlpages", b"1\n2\n3\n", ":", "TLPAGES1"),
        case("tlpages", &bad_varint, ":byte offset", "varint"),
        case(
            "tlpages",
            &zipped[..zipped.len() - 3],
            ":byte offset",
            "truncated stream",
        ),
    ]);
}

/// Found by cargo-fuzz (text_readers): a legacy `.lzma` header asking for a
/// 4 GiB dictionary made the decoder allocate it. The decoders' memory is
/// capped; the file is reported as a corrupt stream at line 1.
#[test]
fn lzma_header_with_a_huge_dictionary_is_refused() {
    let mut data = vec![0x5d, 0xff, 0xff, 0xff, 0xff];
    data.extend([0xff; 8]); // unknown uncompressed size
    data.extend([0x00, 0x1a, 0x3c, 0x9e, 0x11, 0x42, 0x77, 0x01]);
    check(vec![
        case("txt", &data, ":line 1", "memory limit"),
        case("lirs", &data, ":line 1", "memory limit"),
    ]);
}
