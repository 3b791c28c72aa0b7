//! ARC traces (Megiddo & Modha, FAST 2003; e.g. `OLTP.lis`): each line is
//! `START COUNT IGNORED REQUEST_NO`: COUNT consecutive cache blocks (pages)
//! starting at block START. All accesses are File reads (the format carries no
//! read/write flag). The request boundary is kept (`npages = COUNT`), as
//! libCacheSim and the ARC paper's simulator expand it into COUNT blocks.

use super::common::{LineAt, LineFormat, LineReader, Step};
use crate::error::Result;
use crate::trace::input::{parse_u64, show};
use crate::trace::{Access, Op, MAX_REQUEST_PAGES};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcOptions {}

/// The ARC line format; [`ArcReader`] reads it.
pub struct ArcLines;

pub type ArcReader = LineReader<ArcLines>;

impl ArcReader {
    pub fn open(path: &Path, _options: ArcOptions) -> Result<Self> {
        LineReader::new(path, ArcLines)
    }
}

impl LineFormat for ArcLines {
    const NAME: &'static str = "arc";
    const EXPECTED: &'static str = "'START COUNT IGNORED REQNO' lines";
    fn parse(&mut self, line: &[u8], at: LineAt) -> Result<Step, String> {
        let mut fields = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty());
        let Some(start) = fields.next() else {
            return Ok(Step::Skip);
        };
        let Some(start_page) = parse_u64(start) else {
            return Err(format!(
                "expected the start block (unsigned integer), found '{}'",
                show(start)
            ));
        };
        let count = match fields.next().map(|f| (f, parse_u64(f))) {
            Some((_, Some(c))) if (1..=MAX_REQUEST_PAGES).contains(&c) => c,
            Some((f, _)) => {
                return Err(format!(
                    "expected the block count (1..={MAX_REQUEST_PAGES}), found '{}'",
                    show(f)
                ))
            }
            None => return Err("expected 'START COUNT IGNORED REQNO', found one field".into()),
        };
        if start_page.checked_add(count).is_none() {
            return Err("start block + count overflows 64 bits".into());
        }
        Ok(Step::Push(Access::file(
            at.record,
            start_page,
            count as u32,
            Op::Read,
            0,
            0,
        )))
    }
}
