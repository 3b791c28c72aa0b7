//! The output of a capture: the native format or the compact `tlpages` stream.

use crate::error::Result;
use crate::trace::native::{NativeWriter, WriterOptions};
use crate::trace::readers::tlpages::TlpagesWriter;
use crate::trace::{Access, Kind, Op, Record};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Output format of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureFormat {
    /// tierlab's native format (trace/native.rs), in large blocks at zstd
    /// level 19.
    #[default]
    Native,
    /// The compact `tlpages` stream (readers/tlpages.rs): one zstd stream with
    /// long-distance matching over one-byte records. Memory traces repeat
    /// over long distances, which per-block compression cannot see: on
    /// tierlab's captures it is 3-17x smaller than native (80 M references of
    /// sqlite3: 0.27 MB vs 4.6 MB; of CPython: 3.0 MB vs 9.2 MB), so the
    /// shipped traces use it. It keeps no timestamps (time = ordinal).
    Tlpages,
}

/// Where a capture writes its page references. This is the one place that
/// knows the output formats.
pub struct CaptureWriter {
    w: Out,
    /// Page references written.
    pub written: u64,
}

enum Out {
    Native(NativeWriter<std::io::BufWriter<std::fs::File>>),
    Tlpages(TlpagesWriter),
}

/// Records per native block of a capture (bounded reader memory, ~10 MB).
pub const CAPTURE_BLOCK_RECORDS: u32 = 1 << 18;
/// zstd level of native captures.
pub const CAPTURE_ZSTD_LEVEL: i32 = 19;

pub fn create_writer(path: &Path, page_size: u32, format: CaptureFormat) -> Result<CaptureWriter> {
    let w = match format {
        CaptureFormat::Native => {
            let opts = WriterOptions {
                records_per_block: CAPTURE_BLOCK_RECORDS,
                level: CAPTURE_ZSTD_LEVEL,
            };
            Out::Native(NativeWriter::create_with(path, page_size, opts)?)
        }
        CaptureFormat::Tlpages => Out::Tlpages(TlpagesWriter::create(path, page_size)?),
    };
    Ok(CaptureWriter { w, written: 0 })
}

impl CaptureWriter {
    /// Appends one single-page reference; `time` is the lackey reference index
    /// (native only).
    #[inline]
    pub fn push(&mut self, time: u64, page: u64, op: Op, kind: Kind) -> Result<()> {
        self.written += 1;
        match &mut self.w {
            Out::Native(w) => w.push(&Record::Access(Access::page(time, page, op, kind))),
            Out::Tlpages(w) => w.push(page, op, kind),
        }
    }

    /// Flushes and closes the file.
    pub fn finish(self) -> Result<()> {
        match self.w {
            Out::Native(w) => w.finish(&["all".to_string()]).map(|_| ()),
            Out::Tlpages(w) => w.finish(),
        }
    }
}
