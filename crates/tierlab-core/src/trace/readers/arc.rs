//! ARC traces (Megiddo & Modha, FAST 2003; e.g. `OLTP.lis`): each line is
//! `START COUNT IGNORED REQUEST_NO`: COUNT consecutive cache blocks (pages)
//! starting at block START. All accesses are File reads (the format carries no
//! read/write flag). The request boundary is kept (`npages = COUNT`), as
//! libCacheSim and the ARC paper's simulator expand it into COUNT blocks.

use crate::error::Result;
use crate::trace::input::{parse_u64, show, Lines};
use crate::trace::{Access, Kind, Op, Record, TraceReader, DEFAULT_PAGE_SIZE, MAX_REQUEST_PAGES};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcOptions {}

pub struct ArcReader {
    lines: Lines,
    seq: u64,
}

impl ArcReader {
    pub fn open(path: &Path, _options: ArcOptions) -> Result<Self> {
        Ok(ArcReader {
            lines: Lines::open(path)?,
            seq: 0,
        })
    }
}

impl TraceReader for ArcReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        for _ in 0..max {
            let Some(line) = self.lines.next_line()? else {
                if self.seq == 0 {
                    return Err(super::common::no_requests(
                        &self.lines,
                        "'START COUNT IGNORED REQNO' lines",
                    ));
                }
                return Ok(false);
            };
            let mut fields = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|f| !f.is_empty());
            let Some(start) = fields.next() else { continue };
            let Some(start_page) = parse_u64(start) else {
                let msg = format!(
                    "expected the start block (unsigned integer), found '{}'",
                    show(start)
                );
                return Err(self.lines.error(msg));
            };
            let count = match fields.next().map(|f| (f, parse_u64(f))) {
                Some((_, Some(c))) if (1..=MAX_REQUEST_PAGES).contains(&c) => c,
                Some((f, _)) => {
                    let msg = format!(
                        "expected the block count (1..={MAX_REQUEST_PAGES}), found '{}'",
                        show(f)
                    );
                    return Err(self.lines.error(msg));
                }
                None => {
                    return Err(self
                        .lines
                        .error("expected 'START COUNT IGNORED REQNO', found one field"))
                }
            };
            if start_page.checked_add(count).is_none() {
                return Err(self.lines.error("start block + count overflows 64 bits"));
            }
            out.push(Record::Access(Access {
                time: self.seq,
                page: start_page,
                op: Op::Read,
                kind: Kind::File,
                app: 0,
                npages: count as u32,
                size: 0,
            }));
            self.seq += 1;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        DEFAULT_PAGE_SIZE
    }

    fn format(&self) -> &'static str {
        "arc"
    }
}
