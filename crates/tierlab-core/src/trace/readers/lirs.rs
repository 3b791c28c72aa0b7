//! LIRS traces (Jiang & Zhang, SIGMETRICS 2002): one block number per line.
//! Every access is a single-page File read; blank lines are skipped, and so are
//! lines `*`: the LIRS distribution's `cs` and `2_pools` traces carry them in
//! the middle of the trace as phase separators (`cs` has one after its 17th
//! reference and 6,766 references follow), so they cannot mean "end".

use crate::error::Result;
use crate::trace::input::{parse_u64, show, trim, Lines};
use crate::trace::{Access, Kind, Op, Record, TraceReader, DEFAULT_PAGE_SIZE};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LirsOptions {}

pub struct LirsReader {
    lines: Lines,
    seq: u64,
}

impl LirsReader {
    pub fn open(path: &Path, _options: LirsOptions) -> Result<Self> {
        Ok(LirsReader {
            lines: Lines::open(path)?,
            seq: 0,
        })
    }
}

impl TraceReader for LirsReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        for _ in 0..max {
            let Some(line) = self.lines.next_line()? else {
                if self.seq == 0 {
                    return Err(super::common::no_requests(
                        &self.lines,
                        "block numbers, one per line",
                    ));
                }
                return Ok(false);
            };
            let field = trim(line);
            if field.is_empty() {
                continue;
            }
            if field == b"*" {
                continue;
            }
            let Some(page) = parse_u64(field) else {
                let msg = format!("expected a block number, found '{}'", show(field));
                return Err(self.lines.error(msg));
            };
            out.push(Record::Access(Access::page(
                self.seq,
                page,
                Op::Read,
                Kind::File,
            )));
            self.seq += 1;
        }
        Ok(true)
    }

    fn page_size(&self) -> u32 {
        DEFAULT_PAGE_SIZE
    }

    fn format(&self) -> &'static str {
        "lirs"
    }
}
