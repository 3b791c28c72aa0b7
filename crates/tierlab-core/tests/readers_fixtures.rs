//! Trace readers on small fixtures written here from their documented formats:
//! MSR, SPC and blkparse have no real file in ../shared (for blkparse also the
//! output of the real blkparse tool, see tests/reference/blkparse_fixture.py),
//! and the csv reader's options.

use tierlab_core::trace::{guess_format, open, read_all, Access, Op};

mod reader_helpers;
use reader_helpers::*;

// ---------------------------------------------------------------- fixtures

/// Each `(line, what)` after the good line `first` makes a file (named
/// `bad{i}.{ext}`) whose read fails at line 2 with an error mentioning `what`.
fn assert_bad_second_lines(
    t: &Tmp,
    first: &str,
    ext: &str,
    format: Option<&str>,
    bad: &[(&str, &str)],
) {
    for (i, (line, what)) in bad.iter().enumerate() {
        let p = t.file(
            &format!("bad{i}.{ext}"),
            format!("{first}{line}").as_bytes(),
        );
        assert_input_err(&spec(&p, format, ""), ":line 2", what);
    }
}

/// The three data bios both blkparse fixtures queue (Q), at `times`: two 4 KiB
/// writes of kjournald (3417048 * 512 / 4096 = 427131) and the 8 KiB read of
/// sectors 100..116 (bytes 51200..59392: pages 12..14) of "my app".
fn assert_queued(p: &std::path::Path, times: [u64; 3]) {
    let (q, names) = accesses_and_apps(&spec(p, None, ""));
    let got: Vec<(u64, u64, u32, Op, u32)> = q
        .iter()
        .map(|a| (a.time, a.page, a.npages, a.op, a.app))
        .collect();
    assert_eq!(
        got,
        vec![
            (times[0], 427_131, 1, Op::Write, 0),
            (times[1], 427_132, 1, Op::Write, 0),
            (times[2], 12, 3, Op::Read, 1),
        ]
    );
    assert_eq!(names, ["kjournald", "my app"]);
}

#[test]
fn msr_fixture() {
    let t = Tmp::new();
    let p = t.file(
        "hm_0.csv",
        b"128166372003061629,hm,0,Read,8192,4096,1331\n\
          128166372016382155,hm,0,Write,4094,4,48\n\
          128166372016382156,hm,0,write,0,12288,48\n",
    );
    assert_eq!(guess_format(&p).unwrap(), "msr");
    let a = accesses(&spec(&p, None, ""));
    assert_eq!(
        a,
        vec![
            Access::file(12_816_637_200_306_162_900, 2, 1, Op::Read, 0, 0),
            Access::file(12_816_637_201_638_215_500, 0, 2, Op::Write, 0, 0),
            Access::file(12_816_637_201_638_215_600, 0, 3, Op::Write, 0, 0),
        ]
    );
    let bad = [
        ("1,hm,0,Read,0,4096\n", "expected 7 fields"),
        ("1,hm,0,Read,0,-4096,1\n", "Size"),
        ("1,hm,0,Read,0,0,1\n", "size > 0"),
        ("1,hm,0,Trim,0,512,1\n", "'Read' or 'Write'"),
        ("x,hm,0,Read,0,512,1\n", "Timestamp"),
        ("1,hm,0,Read,0,99999999999999,1\n", "more than the limit"),
        ("1,hm,0,Read,18446744073709551615,2,1\n", "overflows"),
    ];
    assert_bad_second_lines(&t, "1,hm,0,Read,0,512,1\n", "csv", Some("msr"), &bad);
}

#[test]
fn spc_fixture() {
    let t = Tmp::new();
    let p = t.file(
        "Financial1.spc",
        b"0,303567,3584,w,0.000000\n\
          1,303567,512,R,0.026214,extra\n\
          0,7,1024,r,1.5\n",
    );
    let a = accesses(&spec(&p, None, ""));
    // 303567 * 512 = 155426304 = page 37945 + 2048 bytes; 3584 bytes end in page 37946.
    assert_eq!(
        a,
        vec![
            Access::file(0, 37_945, 2, Op::Write, 0, 0),
            Access::file(26_214_000, 1 << 44 | 37_945, 1, Op::Read, 0, 0),
            Access::file(1_500_000_000, 0, 2, Op::Read, 0, 0),
        ]
    );
    let bad = [
        ("0,1,512,r\n", "expected 5 fields"),
        ("0,1,0,r,1\n", "size > 0"),
        ("0,1,-512,r,1\n", "Size"),
        ("0,1,512,x,1\n", "Opcode"),
        ("0,1,512,r,-1\n", "Timestamp"),
        ("0,36028797018963968,512,r,1\n", "overflows"),
    ];
    assert_bad_second_lines(&t, "0,1,512,r,0\n", "spc", None, &bad);
}

const BLKPARSE: &str = "\
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
  8,0    3        0     0.000021735     0  m   N cfq697 alloced
  8,0    3        2     0.000003546   697  G  WS 3417048 + 8 [kjournald]
  8,0    3        3     0.000005000   697  Q  WS 3417056 + 8 [kjournald]
  8,0    3        4     0.000006000   697  M  WS 3417056 + 8 [kjournald]
  8,0    3        5     0.000008000   697  I  WS 3417048 + 16 [kjournald]
  8,0    3        6     0.000009000   697  U   N [kjournald] 1
  8,0    0        7     0.000010000  1234  Q   R 100 + 16 [my app]
  8,0    3        8     0.000012000   697  D  WS 3417048 + 16 [kjournald]
  8,0    0        9     0.000013000  1234  Q  FWS [kworker/0:1]
  8,0    0       10     0.000014000  1234  Q   D 500 + 8 [fstrim]
  8,0    0       11     0.002540588     0  C  WS 3417048 + 16 [0]
  8,0    0       12     0.003000000    55  D   R 100 + 16 [kworker/0:1]
  8,0    0       13     0.004000000     0  C   R 100 + 16 [0]

CPU0 (8,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           2,        8KiB
Total (8,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           2,        8KiB
";

#[test]
fn blkparse_fixture_takes_one_event_kind() {
    let t = Tmp::new();
    let p = t.file("sda.blkparse", BLKPARSE.as_bytes());
    // Q: the three queued data bios; the discard and the flush are skipped.
    assert_queued(&p, [0, 5_000, 10_000]);
    // D: the merged write and the read, as dispatched.
    let d = accesses(&spec(&p, None, "event = 'D'"));
    let got: Vec<(u64, u32, Op)> = d.iter().map(|a| (a.page, a.npages, a.op)).collect();
    assert_eq!(got, vec![(427_131, 2, Op::Write), (12, 3, Op::Read)]);
    let mut r = open(&spec(&p, None, "event = 'C'")).unwrap();
    assert_eq!(read_all(r.as_mut()).unwrap().len(), 2);
    assert_eq!(r.app_names(), ["all"]);
    // Errors.
    let msg = read_err(&spec(&p, None, "event = 'X'"));
    assert!(
        msg.contains("event = 'X'") && msg.contains("Q, D, C"),
        "{msg}"
    );
    let bad = [
        ("  8,0 3 1 0.1 697 Q W 12x + 8 [a]\n", "sector number"),
        ("  8,0 3 1 0.1 697 Q W 12 + 0 [a]\n", "size > 0"),
        ("  8,0 3 1 zero 697 Q W 12 + 8 [a]\n", "SECONDS.NANOSECONDS"),
        (
            "  8,0 3 1 0.1 697 Q W 36028797018963968 + 8 [a]\n",
            "overflows",
        ),
        ("garbage here\n", "expected a blkparse event line"),
    ];
    assert_bad_second_lines(
        &t,
        "  8,0 3 1 0.0 697 Q R 0 + 8 [a]\n",
        "blkparse",
        None,
        &bad,
    );
    let mut nonutf = b"  8,0 3 1 0.0 697 Q R 0 + 8 [".to_vec();
    nonutf.extend([0xff, 0xfe, b']', b'\n']);
    let p = t.file("nonutf.blkparse", &nonutf);
    assert_input_err(&spec(&p, None, ""), ":line 1", "not UTF-8");
}

// ---------------------------------------------------------------- csv options

#[test]
fn csv_options_and_ops() {
    let t = Tmp::new();
    let p = t.file(
        "kv.csv",
        b"5;get;100;key-a\n6;SET;1;key-b\n7;read;100;key-a\n8;delete;4;key-c\n",
    );
    let s = spec(
        &p,
        Some("csv"),
        "id_col = 4\ntime_col = 1\nop_col = 2\nsize_col = 3\ndelimiter = ';'\nid_is_num = false\ntime_unit = 'ms'",
    );
    // `delete` is not a read or a write.
    assert_input_err(&s, ":line 4", "expected an op");
    let p = t.file(
        "kv2.csv",
        b"5;get;100;key-a\n6;SET;1;key-b\n7;read;100;key-a\n",
    );
    let mut s2 = s.clone();
    s2.path = p;
    let a = accesses(&s2);
    assert_eq!(a.len(), 3);
    assert_eq!(a[0].page, a[2].page);
    assert_ne!(a[0].page, a[1].page);
    assert_eq!(
        a.iter().map(|x| (x.time, x.op)).collect::<Vec<_>>(),
        vec![
            (5_000_000, Op::Read),
            (6_000_000, Op::Write),
            (7_000_000, Op::Read)
        ]
    );
    // Numeric ids, no header, a zero size skipped on request.
    let p = t.file("n.csv", b"1,0\n2,512\n0x10,4096\n");
    let a = accesses(&spec(
        &p,
        Some("csv"),
        "id_col = 1\nsize_col = 2\nskip_zero_size = true",
    ));
    assert_eq!(a.iter().map(|x| x.page).collect::<Vec<_>>(), vec![2, 16]);
    assert_input_err(
        &spec(&p, Some("csv"), "id_col = 1\nsize_col = 2"),
        ":line 1",
        "size > 0",
    );
    // Config errors name the key.
    for (opts, what) in [
        ("idcol = 1", "unknown field `idcol`"),
        ("id_col = 0", "id_col = 0"),
        ("time_col = 1", "id_col is required"),
        ("id_col = 9", "column 9"),
        ("id_col = 1\npage_size = 1000", "page_size = 1000"),
        (
            "id_col = 1\naddressing = 'bytes'",
            "unknown variant `bytes`",
        ),
        ("id_col = 1\ntime_unit = 'h'", "unknown variant `h`"),
    ] {
        let msg = read_err(&spec(&p, Some("csv"), opts));
        assert!(msg.contains(what), "{opts}: {msg}");
    }
}

/// Output of the real `blkparse -i` (blktrace 1.2.0) on the binary trace that
/// tests/reference/blkparse_fixture.py writes.
const BLKPARSE_REAL: &str =
    "  8,0    0        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
  8,0    0        2     0.000001000   697  G  WS 3417048 + 8 [kjournald]
  8,0    0        3     0.000002000   697  Q  WS 3417056 + 8 [kjournald]
  8,0    0        4     0.000003000   697  M  WS 3417056 + 8 [kjournald]
  8,0    0        5     0.000004000  1234  Q   R 100 + 16 [my app]
  8,0    0        6     0.000005000   697  D  WS 3417048 + 16 [kjournald]
  8,0    0        7     0.000006000  1234  Q   D 500 + 8 [my app]
  8,0    0        8     0.002539588     0  C  WS 3417048 + 16 [0]
  8,0    0        9     0.002999000    55  D   R 100 + 16 [(null)]
  8,0    0       10     0.003999000     0  C   R 100 + 16 [0]
CPU0 (sda):
 Reads Queued:           1,        8KiB\t Writes Queued:           3,       12KiB
 Read Dispatches:        1,        8KiB\t Write Dispatches:        1,        8KiB
 Reads Requeued:         0\t\t Writes Requeued:         0
 Reads Completed:        1,        8KiB\t Writes Completed:        1,        8KiB
 Read Merges:            0,        0KiB\t Write Merges:            1,        4KiB
 Read depth:             1        \t Write depth:             1
 IO unplugs:             0        \t Timer unplugs:           0

Throughput (R/W): 2666KiB/s / 2666KiB/s
Events (sda): 10 entries
Skips: 0 forward (0 -   0.0%)
Input file /tmp/sda.blktrace.0 added
";

#[test]
fn blkparse_real_tool_output() {
    let t = Tmp::new();
    let p = t.file("sda.blkparse", BLKPARSE_REAL.as_bytes());
    // Q: the three queued data bios; the discard is skipped.
    assert_queued(&p, [0, 2_000, 4_000]);
    // D: the merged write, then the read issued from a context blkparse has
    // no name for.
    let (d, names) = accesses_and_apps(&spec(&p, None, "event = 'D'"));
    let d: Vec<(u64, u64, u32, u32)> = d
        .iter()
        .map(|a| (a.time, a.page, a.npages, a.app))
        .collect();
    assert_eq!(d, vec![(5_000, 427_131, 2, 0), (2_999_000, 12, 3, 1)]);
    assert_eq!(names, ["kjournald", "<unknown>"]);
    // C: completion times.
    let c = accesses(&spec(&p, None, "event = 'C'"));
    let times: Vec<u64> = c.iter().map(|a| a.time).collect();
    assert_eq!(times, vec![2_539_588, 3_999_000]);
}
