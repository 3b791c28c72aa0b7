//! valgrind lackey `--trace-mem=yes` output (`I  ADDR,SIZE`, ` L|S|M ADDR,SIZE`),
//! converted to page references by the converter `tierlab capture` uses
//! (trace/capture.rs documents the rules: I -> File read, L -> Anon read,
//! S -> Anon write, M -> one write by default, straddling accesses touch every
//! page, data addresses in file mappings are File when `maps` is given).
//!
//! Options: `page_size` (4096), `modify` ("write" or "read-write"), `collapse`
//! (false), `sample` (1.0), and `maps`: the path of a saved `/proc/PID/maps` of
//! the traced process, to classify data addresses (without it every data
//! reference is Anon).

use crate::error::{Error, Location, Result};
use crate::trace::capture::{LackeyConverter, LackeyOptions, MapsTable, ModifyAs, PageAccess};
use crate::trace::input::Lines;
use crate::trace::{Access, Record, TraceReader};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LackeyReaderOptions {
    pub page_size: u32,
    pub modify: ModifyAs,
    pub collapse: bool,
    pub sample: f64,
    pub maps: Option<PathBuf>,
}

impl Default for LackeyReaderOptions {
    fn default() -> Self {
        let d = LackeyOptions::default();
        LackeyReaderOptions {
            page_size: d.page_size,
            modify: d.modify,
            collapse: d.collapse,
            sample: d.sample,
            maps: None,
        }
    }
}

pub struct LackeyReader {
    lines: Lines,
    conv: LackeyConverter,
    buf: Vec<PageAccess>,
    page_size: u32,
}

impl LackeyReader {
    pub fn open(path: &Path, options: LackeyReaderOptions) -> Result<Self> {
        let maps = match &options.maps {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
                Some(MapsTable::parse(&text).map_err(|(line, msg)| {
                    Error::input(p.display().to_string(), Location::Line(line), msg)
                })?)
            }
            None => None,
        };
        let opts = LackeyOptions {
            page_size: options.page_size,
            modify: options.modify,
            collapse: options.collapse,
            sample: options.sample,
        };
        opts.validate()
            .map_err(|e| Error::config(format!("options of trace format 'lackey': {e}")))?;
        Ok(LackeyReader {
            lines: Lines::open(path)?,
            conv: LackeyConverter::new(opts, maps)?,
            buf: Vec::with_capacity(8),
            page_size: options.page_size,
        })
    }
}

impl TraceReader for LackeyReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let start = out.len();
        while out.len() - start < max {
            let Some(line) = self.lines.next_line()? else {
                if self.conv.stats.references == 0 {
                    return Err(super::common::no_requests(
                        &self.lines,
                        "valgrind lackey lines 'I|L|S|M ADDR,SIZE'",
                    ));
                }
                return Ok(false);
            };
            self.buf.clear();
            if let Err(msg) = self.conv.line(line, &mut self.buf) {
                return Err(self.lines.error(msg));
            }
            let time = self.conv.stats.references.saturating_sub(1);
            for a in &self.buf {
                out.push(Record::Access(Access::page(time, a.page, a.op, a.kind)));
            }
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn format(&self) -> &'static str {
        "lackey"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{read_all, Kind, Op};

    fn write_tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lackey-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn pages(recs: &[Record]) -> Vec<(u64, Op, Kind)> {
        recs.iter()
            .map(|r| match r {
                Record::Access(a) => (a.page, a.op, a.kind),
                _ => panic!("no events expected"),
            })
            .collect()
    }

    const TRACE: &str = "==123== Lackey, an example Valgrind tool\n\
I  04001000,3\n \
L 1ffefffd40,8\n \
S 1ffefffd38,8\n \
M 0421d3c8,4\n\
I  04001ffe,4\n\
\n \
L 04a00010,8\n";

    #[test]
    fn converts_kinds_ops_and_straddles() {
        let p = write_tmp("t.lackey", TRACE);
        let mut r = LackeyReader::open(&p, LackeyReaderOptions::default()).unwrap();
        let got = pages(&read_all(&mut r).unwrap());
        assert_eq!(
            got,
            vec![
                (0x4001, Op::Read, Kind::File),
                (0x1ffefff, Op::Read, Kind::Anon),
                (0x1ffefff, Op::Write, Kind::Anon),
                (0x421d, Op::Write, Kind::Anon),
                // 0x4001ffe..0x4002001 straddles pages 0x4001 and 0x4002.
                (0x4001, Op::Read, Kind::File),
                (0x4002, Op::Read, Kind::File),
                (0x4a00, Op::Read, Kind::Anon),
            ]
        );
        assert_eq!(r.conv.stats.straddles, 1);
        assert_eq!(r.conv.stats.references, 6);
    }

    #[test]
    fn modify_read_write_and_maps() {
        let p = write_tmp("m.lackey", TRACE);
        let maps = write_tmp(
            "maps",
            "04000000-04010000 r-xp 00000000 08:01 42 /usr/bin/prog\n\
             04a00000-04a01000 r--p 00010000 08:01 42 /usr/bin/prog\n\
             0421d000-0421e000 rw-p 00011000 08:01 42 /usr/bin/prog\n\
             1ffeff0000-1fff000000 rw-p 00000000 00:00 0 [stack]\n",
        );
        let opts = LackeyReaderOptions {
            modify: ModifyAs::ReadWrite,
            maps: Some(maps),
            ..Default::default()
        };
        let mut r = LackeyReader::open(&p, opts).unwrap();
        let got = pages(&read_all(&mut r).unwrap());
        // M is a read then a write; rw-p file data is Anon (copy-on-write);
        // the load from the r--p file mapping is File.
        assert_eq!(got[3], (0x421d, Op::Read, Kind::Anon));
        assert_eq!(got[4], (0x421d, Op::Write, Kind::Anon));
        assert_eq!(*got.last().unwrap(), (0x4a00, Op::Read, Kind::File));
        assert_eq!(got.len(), 8);
    }

    #[test]
    fn collapse_keeps_two_of_a_run() {
        let text = "I  1000,4\nI  1004,4\nI  1008,4\nI  100c,4\n L 1010,4\nI  1014,4\nI  1018,4\n";
        let p = write_tmp("c.lackey", text);
        let opts = LackeyReaderOptions {
            collapse: true,
            ..Default::default()
        };
        let mut r = LackeyReader::open(&p, opts).unwrap();
        let got = pages(&read_all(&mut r).unwrap());
        assert_eq!(
            got,
            vec![
                (1, Op::Read, Kind::File),
                (1, Op::Read, Kind::File),
                (1, Op::Read, Kind::Anon),
                (1, Op::Read, Kind::File),
                (1, Op::Read, Kind::File),
            ]
        );
        assert_eq!(r.conv.stats.collapsed, 2);
    }

    #[test]
    fn malformed_lines_are_located() {
        let cases = [
            ("I  04001000,3\nX  0400,3\n", "line 2", "expected a lackey"),
            ("I  zz01000,3\n", "line 1", "hexadecimal address"),
            (" L 1000\n", "line 1", "ADDR,SIZE"),
            (" S 1000,0\n", "line 1", "access size"),
            (" S 1000,abc\n", "line 1", "access size"),
            ("I  ffffffffffffffff,8\n", "line 1", "overflows"),
            ("I  1000,3\n\n L 2000,99999999\n", "line 3", "access size"),
        ];
        for (i, (text, loc, what)) in cases.iter().enumerate() {
            let p = write_tmp(&format!("bad{i}.lackey"), text);
            let mut r = LackeyReader::open(&p, LackeyReaderOptions::default()).unwrap();
            let e = read_all(&mut r).unwrap_err().to_string();
            assert!(e.contains(loc) && e.contains(what), "case {i}: {e}");
            assert!(e.contains(&format!("bad{i}.lackey")), "{e}");
        }
        let maps = write_tmp("badmaps", "0400-0500 r-xp 0 0 0 /x\nnot a maps line\n");
        let e = LackeyReader::open(
            &write_tmp("ok.lackey", TRACE),
            LackeyReaderOptions {
                maps: Some(maps),
                ..Default::default()
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("badmaps:line 2"), "{e}");
        let e = LackeyReader::open(
            &write_tmp("ok2.lackey", TRACE),
            LackeyReaderOptions {
                sample: 0.0,
                ..Default::default()
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("sample"), "{e}");
    }

    #[test]
    fn sampling_keeps_whole_pages() {
        let mut text = String::new();
        for round in 0..3 {
            for p in 0..2000u64 {
                text.push_str(&format!(" L {:x},8\n", p * 4096 + round * 8));
            }
        }
        let p = write_tmp("s.lackey", &text);
        let opts = LackeyReaderOptions {
            sample: 0.25,
            ..Default::default()
        };
        let mut r = LackeyReader::open(&p, opts).unwrap();
        let got = pages(&read_all(&mut r).unwrap());
        let kept: std::collections::BTreeSet<u64> = got.iter().map(|g| g.0).collect();
        // Every kept page is kept in every round (reuse is exact) ...
        assert_eq!(got.len(), 3 * kept.len());
        // ... and about a quarter of the pages are kept.
        assert!((400..600).contains(&kept.len()), "{}", kept.len());
    }
}
