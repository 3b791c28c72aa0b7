//! LIRS traces (Jiang & Zhang, SIGMETRICS 2002): one block number per line.
//! Every access is a single-page File read; blank lines are skipped, and so are
//! lines `*`: the LIRS distribution's `cs` and `2_pools` traces carry them in
//! the middle of the trace as phase separators (`cs` has one after its 17th
//! reference and 6,766 references follow), so they cannot mean "end".

use super::common::{LineAt, LineFormat, LineReader, Step};
use crate::error::Result;
use crate::trace::input::{parse_u64, show, trim};
use crate::trace::{Access, Kind, Op};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LirsOptions {}

/// The LIRS line format; [`LirsReader`] reads it.
pub struct LirsLines;

pub type LirsReader = LineReader<LirsLines>;

impl LirsReader {
    pub fn open(path: &Path, _options: LirsOptions) -> Result<Self> {
        LineReader::new(path, LirsLines)
    }
}

impl LineFormat for LirsLines {
    const NAME: &'static str = "lirs";
    const EXPECTED: &'static str = "block numbers, one per line";
    fn parse(&mut self, line: &[u8], at: LineAt) -> Result<Step, String> {
        let field = trim(line);
        if field.is_empty() || field == b"*" {
            return Ok(Step::Skip);
        }
        let Some(page) = parse_u64(field) else {
            return Err(format!("expected a block number, found '{}'", show(field)));
        };
        Ok(Step::Push(Access::page(
            at.record,
            page,
            Op::Read,
            Kind::File,
        )))
    }
}
