//! The after-cache trace (papers/bs-clock-flash-buffer.md, section IV: the
//! "after-cache trace" of operation, page number and amount written that the
//! buffer cache sends to flash) and its replay on a real file or block device
//! with O_DIRECT, as the paper did on two microSD cards.
//!
//! ## File format (text, optionally gz/zst/xz compressed)
//!
//! ```text
//! # tierlab after-cache trace v1
//! # page_size=4096
//! op,store,first_page,pages
//! W,file,1234,16
//! R,file,77,1
//! W,swap,0,4
//! ```
//!
//! Lines starting with `#` are comments; the `# page_size=N` comment gives the
//! page size in bytes (default 4096). `op` is `R` or `W`, `store` is `file`
//! (the file store) or `swap` (swap slots), `first_page` is the first page of
//! the request in page units and `pages` its length. One line is one device
//! request as the cache issued it (`Accounting::log`): a bulk write is one
//! line.
//!
//! ## Replay
//!
//! The target is a regular file (created and filled when missing or smaller
//! than the replay region) or, with `allow_block_device`, a block device. The
//! trace's page numbers can lie anywhere on a large device (a phone's block
//! trace spans tens of GB), so they are folded into a region of
//! `region_bytes` at the start of the target: a request goes to page
//! `first_page mod region_pages` (moved back so that it ends inside the
//! region). Folding keeps consecutive requests consecutive except at the
//! region's edge. Both stores share the region. Every request is issued with
//! `pread`/`pwrite` on a file opened with O_DIRECT from a 4096-aligned buffer,
//! one at a time, and timed; the target is `fsync`ed at the end (timed
//! separately). Targets on memory file systems (tmpfs, ramfs), where O_DIRECT
//! does not reach a device, and file systems that reject O_DIRECT are refused
//! with an error that says so; `direct = false` replays through the page cache
//! instead (not a device measurement).

use crate::error::{Error, Result};
use crate::sim::accounting::{DeviceRequest, Store};
use crate::trace::input::{parse_u64, show, trim, Lines};
use crate::trace::{Op, DEFAULT_PAGE_SIZE};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// Header line of the after-cache trace.
pub const HEADER: &str = "op,store,first_page,pages";

/// An after-cache trace in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLog {
    pub page_size: u32,
    pub requests: Vec<DeviceRequest>,
}

/// Writes `requests` in the after-cache trace format.
pub fn write_device_log<W: Write>(
    mut w: W,
    requests: &[DeviceRequest],
    page_size: u32,
) -> std::io::Result<()> {
    writeln!(w, "# tierlab after-cache trace v1")?;
    writeln!(w, "# page_size={page_size}")?;
    writeln!(w, "{HEADER}")?;
    for r in requests {
        let op = match r.op {
            Op::Read => 'R',
            Op::Write => 'W',
        };
        let store = match r.store {
            Store::File => "file",
            Store::Swap => "swap",
        };
        writeln!(w, "{op},{store},{},{}", r.first, r.pages)?;
    }
    w.flush()
}

/// Writes an after-cache trace file (plain text; a `.gz` name is compressed).
pub fn save_device_log(path: &Path, requests: &[DeviceRequest], page_size: u32) -> Result<()> {
    let f = File::create(path).map_err(|e| Error::io(path, e))?;
    let res = if path.extension().is_some_and(|e| e == "gz") {
        // Buffer in front of the compressor: one small compress call per line costs far more
        // than the compression itself. Finish explicitly so a failed last write is an error,
        // not lost in a drop.
        let gz = flate2::write::GzEncoder::new(BufWriter::new(f), flate2::Compression::default());
        let mut w = BufWriter::with_capacity(1 << 16, gz);
        write_device_log(&mut w, requests, page_size).and_then(|()| {
            w.into_inner()
                .map_err(|e| e.into_error())?
                .finish()?
                .flush()
        })
    } else {
        write_device_log(BufWriter::new(f), requests, page_size)
    };
    res.map_err(|e| Error::io(path, e))
}

enum Line {
    Skip,
    PageSize(u32),
    Request(DeviceRequest),
}

fn parse_line(line: &[u8]) -> std::result::Result<Line, String> {
    let line = trim(line);
    if line.is_empty() || line == HEADER.as_bytes() {
        return Ok(Line::Skip);
    }
    if let Some(c) = line.strip_prefix(b"#") {
        let c = trim(c);
        return match c.strip_prefix(b"page_size=") {
            None => Ok(Line::Skip),
            Some(v) => match parse_u64(trim(v)) {
                Some(n) if n >= 512 && n.is_multiple_of(512) && n <= 1 << 20 => {
                    Ok(Line::PageSize(n as u32))
                }
                _ => Err(format!(
                    "page_size must be a multiple of 512 up to 1 MiB, got '{}'",
                    show(v)
                )),
            },
        };
    }
    let mut f = line.split(|&b| b == b',').map(trim);
    let (Some(op), Some(store), Some(first), Some(pages), None) =
        (f.next(), f.next(), f.next(), f.next(), f.next())
    else {
        return Err(format!(
            "expected 4 fields '{HEADER}', got '{}'",
            show(line)
        ));
    };
    let op = match op {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        _ => return Err(format!("op must be R or W, got '{}'", show(op))),
    };
    let store = match store {
        b"file" => Store::File,
        b"swap" => Store::Swap,
        _ => return Err(format!("store must be file or swap, got '{}'", show(store))),
    };
    let Some(first) = parse_u64(first) else {
        return Err(format!(
            "first_page must be a non-negative integer, got '{}'",
            show(first)
        ));
    };
    let pages = match parse_u64(pages) {
        Some(n) if (1..=crate::trace::MAX_REQUEST_PAGES).contains(&n) => n as u32,
        _ => {
            return Err(format!(
                "pages must be an integer in 1..={}, got '{}'",
                crate::trace::MAX_REQUEST_PAGES,
                show(pages)
            ))
        }
    };
    Ok(Line::Request(DeviceRequest {
        store,
        op,
        first,
        pages,
    }))
}

/// Reads an after-cache trace file (errors name the file and line).
pub fn read_device_log(path: &Path) -> Result<DeviceLog> {
    let mut lines = Lines::open(path)?;
    let mut page_size = DEFAULT_PAGE_SIZE;
    let mut requests = Vec::new();
    loop {
        let parsed = match lines.next_line()? {
            None => break,
            Some(line) => parse_line(line),
        };
        match parsed {
            Err(m) => return Err(lines.error(m)),
            Ok(Line::Skip) => {}
            Ok(Line::PageSize(n)) => page_size = n,
            Ok(Line::Request(r)) => requests.push(r),
        }
    }
    Ok(DeviceLog {
        page_size,
        requests,
    })
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Bytes of the target the trace is folded into (None: the size of an
    /// existing target, else 64 MiB, the amount of the paper's Figure 2).
    pub region_bytes: Option<u64>,
    /// Allow a block device as target (its contents are overwritten).
    pub allow_block_device: bool,
    /// Use O_DIRECT (true: a device measurement, as the paper did).
    pub direct: bool,
    /// Replay only this store's requests (None: both).
    pub store: Option<Store>,
    /// Replay only reads or only writes (None: both). Policies with equal
    /// misses (Spatial Clock and BS-CLOCK) differ only in their writes.
    pub only: Option<Op>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            region_bytes: None,
            allow_block_device: false,
            direct: true,
            store: None,
            only: None,
        }
    }
}

/// Measured I/O of one replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayReport {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Sum of the measured times of the read / write requests.
    pub read_ns: u64,
    pub write_ns: u64,
    /// The final fsync.
    pub fsync_ns: u64,
    /// read + write + fsync.
    pub io_ns: u64,
    pub page_size: u32,
    pub region_bytes: u64,
    pub direct: bool,
}

/// A zeroed buffer aligned for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout =
            std::alloc::Layout::from_size_align(len.max(4096), 4096).expect("valid buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let mut b = AlignedBuf { ptr, layout };
        // A non-constant pattern, so that no device can skip or compress it.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for chunk in b.as_mut().chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        b
    }
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely owned.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
    fn as_ref(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Name of the memory file system `f` is on, if any.
fn memory_fs(f: &File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and out-pointer.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    match st.f_type as i64 {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

fn open_target(target: &Path, direct: bool, create: bool) -> Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(create);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(target).map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            Error::config(format!(
                "{}: the file system does not support O_DIRECT; replay on a disk-backed file \
                 system or a block device (or pass direct=false for a page-cache replay, which \
                 is not a device measurement)",
                target.display()
            ))
        } else {
            Error::io(target, e)
        }
    })
}

fn io_err(target: &Path, e: std::io::Error, direct: bool) -> Error {
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        Error::config(format!(
            "{}: O_DIRECT I/O was rejected (EINVAL): the file system or device does not support \
             direct I/O at this alignment; replay on a disk-backed file system or a block device",
            target.display()
        ))
    } else {
        Error::io(target, e)
    }
}

/// Replays `log` on `target` and measures the time of every request.
pub fn replay(log: &DeviceLog, target: &Path, opts: &ReplayOptions) -> Result<ReplayReport> {
    let ps = log.page_size as u64;
    if ps == 0 || !ps.is_multiple_of(512) {
        return Err(Error::config(format!(
            "page_size {ps} is not a multiple of 512 bytes, as O_DIRECT needs"
        )));
    }
    let meta = std::fs::metadata(target).ok();
    let is_block = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    if is_block && !opts.allow_block_device {
        return Err(Error::config(format!(
            "{} is a block device: replaying overwrites its contents; pass \
             allow_block_device (--allow-block-device) to do it anyway",
            target.display()
        )));
    }
    if meta.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(Error::config(format!(
            "{} is a directory; the target must be a file or a block device",
            target.display()
        )));
    }
    let file = open_target(target, opts.direct, !is_block)?;
    if let Some(fs) = memory_fs(&file) {
        if opts.direct {
            return Err(Error::config(format!(
                "{} is on {fs}: O_DIRECT does not reach a device there and the times would be \
                 memory copies; put the target on a disk-backed file system or a block device",
                target.display()
            )));
        }
    }
    let existing = if is_block {
        use std::io::{Seek, SeekFrom};
        let mut f = &file;
        f.seek(SeekFrom::End(0)).map_err(|e| Error::io(target, e))?
    } else {
        file.metadata().map_err(|e| Error::io(target, e))?.len()
    };
    let region = match opts.region_bytes {
        Some(r) => r,
        None if existing >= ps => existing,
        None => 64 << 20,
    };
    let region_pages = region / ps;
    if region_pages == 0 {
        return Err(Error::config(format!(
            "replay region of {region} bytes holds no {ps}-byte page"
        )));
    }
    if is_block && region > existing {
        return Err(Error::config(format!(
            "{}: region of {region} bytes exceeds the device size {existing}",
            target.display()
        )));
    }
    let selected = |r: &DeviceRequest| {
        opts.store.is_none_or(|s| s == r.store) && opts.only.is_none_or(|o| o == r.op)
    };
    let max_pages = log
        .requests
        .iter()
        .filter(|r| selected(r))
        .map(|r| r.pages as u64)
        .max()
        .unwrap_or(1);
    if max_pages > region_pages {
        return Err(Error::config(format!(
            "a request of {max_pages} pages does not fit the replay region of {region_pages} pages"
        )));
    }
    let chunk = (1u64 << 20).max(ps);
    let mut buf = AlignedBuf::new((max_pages * ps).max(chunk) as usize);
    // Fill the region so that reads hit written blocks, not holes.
    if !is_block && existing < region_pages * ps {
        let mut off = existing / chunk * chunk;
        while off < region_pages * ps {
            let n = chunk.min(region_pages * ps - off);
            file.write_all_at(&buf.as_ref()[..n as usize], off)
                .map_err(|e| io_err(target, e, opts.direct))?;
            off += n;
        }
        file.sync_all().map_err(|e| Error::io(target, e))?;
    }
    let mut rep = ReplayReport {
        page_size: log.page_size,
        region_bytes: region_pages * ps,
        direct: opts.direct,
        ..Default::default()
    };
    for r in log.requests.iter().filter(|r| selected(r)) {
        let pages = r.pages as u64;
        let mut start = r.first % region_pages;
        if start + pages > region_pages {
            start = region_pages - pages;
        }
        let off = start * ps;
        let len = (pages * ps) as usize;
        let t = Instant::now();
        match r.op {
            Op::Read => {
                file.read_exact_at(&mut buf.as_mut()[..len], off)
                    .map_err(|e| io_err(target, e, opts.direct))?;
                rep.read_ns += t.elapsed().as_nanos() as u64;
                rep.reads += 1;
                rep.pages_read += pages;
            }
            Op::Write => {
                file.write_all_at(&buf.as_ref()[..len], off)
                    .map_err(|e| io_err(target, e, opts.direct))?;
                rep.write_ns += t.elapsed().as_nanos() as u64;
                rep.writes += 1;
                rep.pages_written += pages;
            }
        }
        rep.requests += 1;
    }
    let t = Instant::now();
    file.sync_all().map_err(|e| Error::io(target, e))?;
    rep.fsync_ns = t.elapsed().as_nanos() as u64;
    rep.io_ns = rep.read_ns + rep.write_ns + rep.fsync_ns;
    Ok(rep)
}

/// Whether a request continues "the previous request" per direction (as
/// `Accounting` charges: reads and writes keep separate cursors) or over both
/// directions (a read between two writes breaks the write stream, as on a
/// device that sees the requests interleaved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorMode {
    PerDirection,
    Shared,
}

/// Modeled time of an after-cache trace on a device model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModeledTime {
    pub read_ns: f64,
    pub write_ns: f64,
    pub reads: u64,
    pub writes: u64,
    /// Requests charged as sequential.
    pub sequential: u64,
}

impl ModeledTime {
    pub fn total_ns(&self) -> f64 {
        self.read_ns + self.write_ns
    }
}

/// Charges every request of `store` in `requests` through `dev`'s cost model
/// (`IoCost::time_ns`), deciding sequentiality with `mode`. With
/// [`CursorMode::PerDirection`] this is exactly what `Accounting` charged the
/// run that recorded the log, so a log recorded once can be costed on any
/// device (e.g. both microSD presets) without replaying the trace.
pub fn model_time(
    requests: &[DeviceRequest],
    store: Store,
    dev: &super::Device,
    mode: CursorMode,
) -> ModeledTime {
    let mut next: [Option<u64>; 2] = [None, None];
    let mut m = ModeledTime::default();
    for r in requests.iter().filter(|r| r.store == store) {
        let c = match mode {
            CursorMode::PerDirection => r.op as usize,
            CursorMode::Shared => 0,
        };
        let seq = next[c] == Some(r.first);
        next[c] = Some(r.first + r.pages as u64);
        m.sequential += seq as u64;
        match r.op {
            Op::Read => {
                m.read_ns += dev.read.time_ns(r.pages as u64, seq);
                m.reads += 1;
            }
            Op::Write => {
                m.write_ns += dev.write.time_ns(r.pages as u64, seq);
                m.writes += 1;
            }
        }
    }
    m
}
