//! The native workload driver: a forked child that joins a memory cgroup and
//! issues a workload's references against the real kernel.
//!
//! Why a fork of the calling process and not a program of its own: the child
//! needs nothing but the reference array (shared copy-on-write with the
//! parent and only read, so never copied or charged), two pipe ends, the data
//! file's descriptor and one page of stack buffer. Between `fork` and
//! `_exit` it makes raw system calls only (no allocation, no locks), which is
//! what POSIX allows after forking a multi-threaded process. Its own charge
//! to the cgroup is the few stack pages it writes, and it is measured: the
//! parent reads the cgroup's usage once the child is in the cgroup and
//! ready, before the first reference.
//!
//! The handshake, one byte each way over two pipes:
//! parent writes the child's pid into `cgroup.procs`, sends `P`; the child
//! maps its anonymous region (if any), answers `R`; the parent snapshots the
//! counters, sends `G`; the child issues every reference, answers `D`; the
//! parent snapshots again, sends `X`; the child exits. The child dies with
//! its parent (PR_SET_PDEATHSIG), so an interrupted run leaves no process.

use crate::error::{Error, Result};
use crate::kernel::workload::{ANON_BIT, ANON_TRACE_BASE, PAGE_MASK, WRITE_BIT};
use crate::trace::native::{NativeOptions, NativeReader};
use crate::trace::{Kind, Op, Record, TraceReader};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The page size the driver works in (the kernel's base page on x86-64 and arm64).
pub const PAGE: usize = 4096;

/// What the driver needs besides the references.
#[derive(Debug, Clone)]
pub struct DriveSpec {
    /// The data file (created by [`prepare_data_file`]).
    pub data_file: PathBuf,
    /// Pages of the anonymous mapping.
    pub anon_pages: u64,
    /// The memory cgroup (v1 or v2) directory the child joins.
    pub cgroup_dir: PathBuf,
    /// Leave the kernel's readahead on (default off: POSIX_FADV_RANDOM makes
    /// every read fetch exactly the page asked for).
    pub readahead: bool,
    /// Pin the child to this CPU (its per-CPU charge stock then stays one).
    pub cpu: Option<usize>,
    /// Return the group's per-CPU charge stock before the ready snapshot
    /// ([`drain_charge_stock`]; cgroup v2, and the writer on the stock's CPU:
    /// the one-CPU VM).
    pub drain_charge_stock: bool,
    /// Read CLOCK_MONOTONIC before every `progress_every`-th reference (0:
    /// never), so events the kernel stamps with that clock (a trace instance
    /// with `trace_clock` mono) can be placed among the references.
    pub progress_every: usize,
}

/// The counters read at one point of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// memory.usage_in_bytes (v1) or memory.current (v2) of the cgroup.
    pub usage_bytes: u64,
    /// memory.kmem.usage_in_bytes (v1) or the `kernel` line of memory.stat
    /// (v2) of the cgroup (0 if absent).
    pub kmem_bytes: u64,
    /// memory.stat of the cgroup, verbatim.
    pub memory_stat: String,
    /// /proc/vmstat, verbatim (swap-in/out are only system-wide).
    pub vmstat: String,
    /// /sys/block/zram0/mm_stat, verbatim, while the child still holds its
    /// pages (empty without zram0): the pool the swapped pages take.
    pub zram_mm_stat: String,
    /// /proc/pressure/memory, verbatim (empty without PSI).
    pub pressure_memory: String,
}

/// What a drive returns.
#[derive(Debug, Clone, Serialize)]
pub struct DriveOutcome {
    /// Counters when the child is ready, before the first reference.
    pub ready: Snapshot,
    /// Counters after the last reference.
    pub done: Snapshot,
    /// Wall time of the references.
    pub seconds: f64,
    pub references: u64,
    /// With `progress_every` = k: CLOCK_MONOTONIC in ns before references 0,
    /// k, 2k, ..., and after the last one (empty with k = 0).
    pub progress_ns: Vec<u64>,
}

fn os_err(what: &str) -> Error {
    Error::config(format!(
        "kernel-check driver: {what}: {}",
        std::io::Error::last_os_error()
    ))
}

fn read_number(path: &Path) -> Result<u64> {
    let s = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    s.trim().parse().map_err(|_| {
        Error::input(
            path.display().to_string(),
            crate::error::Location::Line(1),
            format!("expected a number, found '{}'", s.trim()),
        )
    })
}

fn stat_line(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        if k == key {
            v.trim().parse().ok()
        } else {
            None
        }
    })
}

/// Returns a cgroup v2 group's per-CPU charge stock (mm/memcontrol.c):
/// `try_charge_memcg` charges MEMCG_CHARGE_BATCH (64) pages at a time and
/// keeps what the charge did not need in the charging CPU's stock
/// (`refill_stock`), which memory.current counts though no page holds it;
/// the group's first charges consume it. `memory_high_write` drains it
/// (`drain_all_stock`, at once for the writer's own CPU) when the group is
/// above the new memory.high: memory.high one page below memory.current,
/// then `max` again, leaves memory.current at what is in use. (Were no
/// stock held, the write would reclaim from the child, which holds only its
/// stack page by then.) Cost: two writes.
pub fn drain_charge_stock(cg: &Path) -> Result<()> {
    let high = cg.join("memory.high");
    let usage = read_number(&cg.join("memory.current"))?;
    if usage >= 2 * PAGE as u64 {
        std::fs::write(&high, format!("{}\n", usage - PAGE as u64))
            .map_err(|e| Error::io(&high, e))?;
    }
    std::fs::write(&high, "max\n").map_err(|e| Error::io(&high, e))
}

fn snapshot(cg: &Path) -> Result<Snapshot> {
    let memory_stat = std::fs::read_to_string(cg.join("memory.stat"))
        .map_err(|e| Error::io(cg.join("memory.stat"), e))?;
    let current = cg.join("memory.current");
    let (usage_bytes, kmem_bytes) = if current.exists() {
        (
            read_number(&current)?,
            stat_line(&memory_stat, "kernel").unwrap_or(0),
        )
    } else {
        let kmem = cg.join("memory.kmem.usage_in_bytes");
        (
            read_number(&cg.join("memory.usage_in_bytes"))?,
            if kmem.exists() {
                read_number(&kmem)?
            } else {
                0
            },
        )
    };
    Ok(Snapshot {
        usage_bytes,
        kmem_bytes,
        memory_stat,
        vmstat: std::fs::read_to_string("/proc/vmstat")
            .map_err(|e| Error::io("/proc/vmstat", e))?,
        zram_mm_stat: std::fs::read_to_string("/sys/block/zram0/mm_stat").unwrap_or_default(),
        pressure_memory: std::fs::read_to_string("/proc/pressure/memory").unwrap_or_default(),
    })
}

/// Reads a native trace of single-page accesses back into encoded references
/// (the inverse of [`crate::kernel::workload::write_trace`]: anonymous pages
/// numbered from [`ANON_TRACE_BASE`]). Cost: one pass over the trace, 8 bytes
/// a reference.
pub fn references_from_trace(path: &Path) -> Result<Vec<u64>> {
    let name = path.display().to_string();
    let mut reader = NativeReader::open(path, NativeOptions::default())?;
    let mut batch = Vec::new();
    let mut out = Vec::new();
    loop {
        batch.clear();
        let more = reader.read_batch(&mut batch, 1 << 16)?;
        for rec in &batch {
            let i = out.len() as u64;
            let bad = |msg: String| {
                Error::input(
                    &name,
                    crate::error::Location::Whole,
                    format!("record {i}: {msg}"),
                )
            };
            let Record::Access(a) = rec else {
                return Err(bad("expected a page access, found an event".into()));
            };
            if a.npages != 1 {
                return Err(bad(format!(
                    "expected a single-page access, found {} pages",
                    a.npages
                )));
            }
            let page = match a.kind {
                Kind::File if a.page < ANON_TRACE_BASE => a.page,
                Kind::Anon
                    if a.page >= ANON_TRACE_BASE && a.page - ANON_TRACE_BASE <= PAGE_MASK =>
                {
                    (a.page - ANON_TRACE_BASE) | ANON_BIT
                }
                k => {
                    return Err(bad(format!(
                        "page {} out of range for a {k:?} reference (file pages below 2^40, \
                         anonymous pages from 2^40)",
                        a.page
                    )))
                }
            };
            out.push(page | if a.op == Op::Write { WRITE_BIT } else { 0 });
        }
        if !more {
            break;
        }
    }
    Ok(out)
}

/// Creates (or re-creates) the data file of `pages` pages, each page's first
/// word its page number and the rest a non-zero pattern, flushed to disk, and
/// drops its pages from the page cache.
pub fn prepare_data_file(path: &Path, pages: u64) -> Result<()> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &f);
    let mut buf = vec![0xa5u8; PAGE];
    for p in 0..pages {
        buf[..8].copy_from_slice(&p.to_le_bytes());
        w.write_all(&buf).map_err(|e| Error::io(path, e))?;
    }
    w.flush().map_err(|e| Error::io(path, e))?;
    drop(w);
    f.sync_all().map_err(|e| Error::io(path, e))?;
    drop_file_cache(&f, path)
}

/// Drops a (clean) file's pages from the page cache.
pub fn drop_file_cache(f: &File, path: &Path) -> Result<()> {
    // SAFETY: plain system call on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(Error::io(path, std::io::Error::from_raw_os_error(rc)));
    }
    Ok(())
}

/// Child-side failure codes (exit status).
const EXIT_PREAD: i32 = 10;
const EXIT_PWRITE: i32 = 11;
const EXIT_MMAP: i32 = 12;
const EXIT_PIPE: i32 = 13;

/// CLOCK_MONOTONIC in ns (the vDSO: no system call, no lock; safe after fork).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The timestamp, in ns, of a tracefs text line `TASK-PID [CPU] FLAGS SECONDS.MICROS: EVENT: ...`
/// (the clock is the buffer's `trace_clock`; mono is CLOCK_MONOTONIC, as [`DriveOutcome::progress_ns`]).
pub fn trace_timestamp_ns(line: &str, event: &str) -> Result<u64> {
    let bad = || {
        Error::config(format!(
            "trace line without a timestamp before '{event}': {line}"
        ))
    };
    let (head, _) = line.split_once(event).ok_or_else(bad)?;
    let stamp = head
        .split_whitespace()
        .last()
        .ok_or_else(bad)?
        .trim_end_matches(':');
    let (sec, frac) = stamp.split_once('.').ok_or_else(bad)?;
    let digits = frac.len().min(9);
    let sec: u64 = sec.parse().map_err(|_| bad())?;
    let frac: u64 = frac[..digits].parse().map_err(|_| bad())?;
    Ok(sec * 1_000_000_000 + frac * 10u64.pow(9 - digits as u32))
}

/// The pages a block request covers, from the text of a `block:block_bio_queue` line
/// (`... block_bio_queue: 1,0 W 7192 + 8 [comm]`: its first sector and sectors, of 512 bytes):
/// (first page, pages).
pub fn bio_pages(line: &str) -> Result<(u64, u64)> {
    let rest = line.split_once(" block_bio_queue:").map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    match (num(2), f.get(3), num(4)) {
        (Some(sector), Some(&"+"), Some(sectors)) if sectors > 0 => {
            let first = sector / 8;
            Ok((first, (sector + sectors - 1) / 8 - first + 1))
        }
        _ => Err(Error::config(format!(
            "block_bio_queue line without 'DEV RWBS SECTOR + SECTORS': {line}"
        ))),
    }
}

/// The progress clock's slots: a shared anonymous mapping the parent zeroes
/// (so its pages are charged to the parent's group, not the cell's) and the
/// child fills; unmapped on drop.
struct ProgressSlots {
    ptr: *mut u64,
    len: usize,
}

impl ProgressSlots {
    fn new(refs: usize, every: usize) -> Result<ProgressSlots> {
        if every == 0 {
            return Ok(ProgressSlots {
                ptr: std::ptr::null_mut(),
                len: 0,
            });
        }
        let len = refs.div_ceil(every) + 1;
        // SAFETY: a fresh shared anonymous mapping of `len` u64s.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len * 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err("mmap of the progress clock"));
        }
        let ptr = p as *mut u64;
        // Touch every page here, so the child writes only pages already charged.
        for i in 0..len {
            // SAFETY: i < len, inside the mapping.
            unsafe { std::ptr::write_volatile(ptr.add(i), 0) };
        }
        Ok(ProgressSlots { ptr, len })
    }

    fn read(&self) -> Vec<u64> {
        // SAFETY: the mapping holds `len` u64s; the child has exited.
        (0..self.len)
            .map(|i| unsafe { std::ptr::read_volatile(self.ptr.add(i)) })
            .collect()
    }
}

impl Drop for ProgressSlots {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping the mapping this struct owns.
            unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len * 8) };
        }
    }
}

/// Reads one byte; false on EOF or error.
unsafe fn recv(fd: i32, want: u8) -> bool {
    let mut b = 0u8;
    loop {
        let n = libc::read(fd, &mut b as *mut u8 as *mut libc::c_void, 1);
        if n == 1 {
            return b == want;
        }
        if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        }
        return false;
    }
}

unsafe fn send(fd: i32, b: u8) -> bool {
    libc::write(fd, &b as *const u8 as *const libc::c_void, 1) == 1
}

#[repr(align(4096))]
struct PageBuf([u8; PAGE]);

/// The child: raw system calls only, then `_exit`.
unsafe fn child_main(
    refs: &[u64],
    fd: i32,
    anon_pages: u64,
    cmd: i32,
    ack: i32,
    cpu: Option<usize>,
    progress: (*mut u64, usize),
) -> ! {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if let Some(c) = cpu {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(c, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    let mut buf = PageBuf([0x5a; PAGE]);
    if !recv(cmd, b'P') {
        libc::_exit(EXIT_PIPE);
    }
    let mut base: *mut u8 = std::ptr::null_mut();
    let len = anon_pages as usize * PAGE;
    if anon_pages > 0 {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            libc::_exit(EXIT_MMAP);
        }
        // Base pages only: each reference is one 4 KiB page on both sides.
        libc::madvise(p, len, libc::MADV_NOHUGEPAGE);
        base = p as *mut u8;
    }
    // Touch the stack buffer now, so its pages are in the ready snapshot.
    std::ptr::write_volatile(&mut buf.0[PAGE - 1], 1);
    if !send(ack, b'R') || !recv(cmd, b'G') {
        libc::_exit(EXIT_PIPE);
    }
    let mut sink = 0u64;
    let (slots, every) = progress;
    for (i, &r) in refs.iter().enumerate() {
        if every > 0 && i % every == 0 {
            std::ptr::write_volatile(slots.add(i / every), monotonic_ns());
        }
        let page = r & PAGE_MASK;
        let write = r & WRITE_BIT != 0;
        if r & ANON_BIT != 0 {
            let word = base.add(page as usize * PAGE) as *mut u64;
            if write {
                std::ptr::write_volatile(word, r ^ sink);
            } else {
                sink = sink.wrapping_add(std::ptr::read_volatile(word));
            }
        } else {
            let off = (page as usize * PAGE) as libc::off_t;
            if write {
                buf.0[0] ^= 1;
                if libc::pwrite(fd, buf.0.as_ptr() as *const libc::c_void, PAGE, off)
                    != PAGE as isize
                {
                    libc::_exit(EXIT_PWRITE);
                }
            } else if libc::pread(fd, buf.0.as_mut_ptr() as *mut libc::c_void, PAGE, off)
                != PAGE as isize
            {
                libc::_exit(EXIT_PREAD);
            }
        }
    }
    if every > 0 {
        std::ptr::write_volatile(slots.add(refs.len().div_ceil(every)), monotonic_ns());
    }
    std::ptr::write_volatile(&mut buf.0[0], sink as u8);
    if !send(ack, b'D') || !recv(cmd, b'X') {
        libc::_exit(EXIT_PIPE);
    }
    libc::_exit(0)
}

struct Pipe {
    r: i32,
    w: i32,
}

impl Pipe {
    fn new() -> Result<Pipe> {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(os_err("pipe"));
        }
        Ok(Pipe {
            r: fds[0],
            w: fds[1],
        })
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: closing descriptors this struct owns (-1 is skipped).
        unsafe {
            if self.r >= 0 {
                libc::close(self.r);
            }
            if self.w >= 0 {
                libc::close(self.w);
            }
        }
    }
}

/// Kills and reaps the child if the parent leaves early (error or interrupt).
struct ChildGuard {
    pid: libc::pid_t,
    reaped: bool,
}

impl ChildGuard {
    fn wait(&mut self) -> Result<i32> {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid {
                break;
            }
            if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(os_err("waitpid"));
            }
        }
        self.reaped = true;
        Ok(status)
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: signalling and reaping our own child.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
            }
            let _ = self.wait();
        }
    }
}

fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            EXIT_PREAD => "a pread failed".into(),
            EXIT_PWRITE => "a pwrite failed".into(),
            EXIT_MMAP => "mmap of the anonymous region failed".into(),
            EXIT_PIPE => "the handshake pipe closed".into(),
            c => format!("exited with status {c}"),
        }
    } else if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        if sig == libc::SIGKILL {
            "killed by SIGKILL (the cgroup's OOM killer? raise the limit or add swap)".into()
        } else {
            format!("killed by signal {sig}")
        }
    } else {
        format!("ended with wait status {status}")
    }
}

/// Waits for one byte from the child, polling `interrupted` every 100 ms.
fn await_byte(fd: i32, want: u8, interrupted: &dyn Fn() -> bool) -> Result<bool> {
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, 100) };
        if rc < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                if interrupted() {
                    return Err(Error::Interrupted);
                }
                continue;
            }
            return Err(os_err("poll"));
        }
        if rc == 0 {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            continue;
        }
        // SAFETY: reading one byte from our pipe.
        return Ok(unsafe { recv(fd, want) });
    }
}

/// Runs `refs` in a child that joins `spec.cgroup_dir`, and returns the
/// counters read just before the first and after the last reference.
/// `interrupted` is polled while waiting (Ctrl-C); the child is killed and
/// reaped on any early return.
pub fn drive(
    refs: &[u64],
    spec: &DriveSpec,
    interrupted: &dyn Fn() -> bool,
) -> Result<DriveOutcome> {
    let procs = spec.cgroup_dir.join("cgroup.procs");
    if !procs.exists() {
        return Err(Error::config(format!(
            "kernel-check driver: {} is not a cgroup directory",
            spec.cgroup_dir.display()
        )));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&spec.data_file)
        .map_err(|e| Error::io(&spec.data_file, e))?;
    // The size from the end offset: a block device's metadata says 0.
    let file_pages = file
        .seek(SeekFrom::End(0))
        .map_err(|e| Error::io(&spec.data_file, e))?
        / PAGE as u64;
    if let Some(bad) = refs
        .iter()
        .find(|&&r| r & ANON_BIT == 0 && r & PAGE_MASK >= file_pages)
    {
        return Err(Error::config(format!(
            "kernel-check driver: reference to page {} beyond the data file's {file_pages} pages",
            bad & PAGE_MASK
        )));
    }
    if refs
        .iter()
        .any(|&r| r & ANON_BIT != 0 && r & PAGE_MASK >= spec.anon_pages)
    {
        return Err(Error::config(
            "kernel-check driver: anonymous reference beyond the mapping",
        ));
    }
    if !spec.readahead {
        // SAFETY: plain system call on an open descriptor.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        if rc != 0 {
            return Err(Error::io(
                &spec.data_file,
                std::io::Error::from_raw_os_error(rc),
            ));
        }
    }
    let progress = ProgressSlots::new(refs.len(), spec.progress_every)?;
    let mut cmd = Pipe::new()?;
    let mut ack = Pipe::new()?;
    let fd = file.as_raw_fd();
    // SAFETY: the child runs child_main, which makes raw system calls only and
    // never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_err("fork"));
    }
    if pid == 0 {
        // SAFETY: see child_main.
        unsafe {
            child_main(
                refs,
                fd,
                spec.anon_pages,
                cmd.r,
                ack.w,
                spec.cpu,
                (progress.ptr, spec.progress_every),
            )
        }
    }
    let mut child = ChildGuard { pid, reaped: false };
    // The parent keeps only its own ends: a child that dies (the cgroup's OOM
    // killer, a signal) closes the last write end of `ack`, so `await_byte`
    // reads end of file and reports it instead of waiting forever.
    // SAFETY: closing the child's ends, which this process does not use.
    unsafe {
        libc::close(cmd.r);
        libc::close(ack.w);
    }
    cmd.r = -1;
    ack.w = -1;
    let fail = |child: &mut ChildGuard, what: &str| -> Error {
        // SAFETY: killing our own child.
        unsafe {
            libc::kill(child.pid, libc::SIGKILL);
        }
        match child.wait() {
            Ok(st) => Error::config(format!(
                "kernel-check driver: {what}: the child {}",
                describe_status(st)
            )),
            Err(e) => e,
        }
    };
    std::fs::write(&procs, format!("{pid}\n")).map_err(|e| Error::io(&procs, e))?;
    // SAFETY: writing to our pipe.
    if !unsafe { send(cmd.w, b'P') } || !await_byte(ack.r, b'R', interrupted)? {
        return Err(fail(&mut child, "while preparing"));
    }
    if spec.drain_charge_stock {
        drain_charge_stock(&spec.cgroup_dir)?;
    }
    let ready = snapshot(&spec.cgroup_dir)?;
    let t0 = Instant::now();
    // SAFETY: writing to our pipe.
    if !unsafe { send(cmd.w, b'G') } || !await_byte(ack.r, b'D', interrupted)? {
        return Err(fail(&mut child, "while running the references"));
    }
    let seconds = t0.elapsed().as_secs_f64();
    let done = snapshot(&spec.cgroup_dir)?;
    // SAFETY: writing to our pipe.
    unsafe { send(cmd.w, b'X') };
    let status = child.wait()?;
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(Error::config(format!(
            "kernel-check driver: the child {}",
            describe_status(status)
        )));
    }
    Ok(DriveOutcome {
        ready,
        done,
        seconds,
        references: refs.len() as u64,
        progress_ns: progress.read(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn data_file_pages_carry_their_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("data");
        prepare_data_file(&p, 5).unwrap();
        let f = File::open(&p).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 5 * PAGE as u64);
        let mut b = [0u8; 8];
        f.read_exact_at(&mut b, 3 * PAGE as u64).unwrap();
        assert_eq!(u64::from_le_bytes(b), 3);
    }

    #[test]
    fn the_trace_gives_back_the_references_the_driver_issues() {
        use crate::kernel::workload::{write_trace, Workload};
        let dir = tempfile::tempdir().unwrap();
        for w in [
            Workload::MixedReadWrite {
                file_pages: 300,
                refs: 5000,
                alpha: 0.9,
                write_share: 0.3,
                seed: 3,
            },
            Workload::AnonZipf {
                anon_pages: 200,
                refs: 3000,
                alpha: 0.99,
                write_share: 0.3,
                seed: 5,
            },
        ] {
            let refs = w.references().unwrap();
            let p = dir.path().join(format!("{}.tlt", w.name()));
            write_trace(&refs, &p, PAGE as u32).unwrap();
            assert_eq!(references_from_trace(&p).unwrap(), refs, "{}", w.name());
        }
    }

    #[test]
    fn a_trace_with_a_multi_page_access_is_refused_with_its_record() {
        use crate::trace::native::NativeWriter;
        use crate::trace::Access;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.tlt");
        let mut w = NativeWriter::create(&p, PAGE as u32).unwrap();
        w.push(&Record::Access(Access::page(0, 1, Op::Read, Kind::File)))
            .unwrap();
        w.push(&Record::Access(Access::file(1, 2, 4, Op::Read, 0, 0)))
            .unwrap();
        w.finish(&[]).unwrap();
        let e = references_from_trace(&p).unwrap_err().to_string();
        assert!(e.contains("record 1") && e.contains("4 pages"), "{e}");
    }

    #[test]
    fn a_trace_line_gives_its_time_in_ns() {
        let line =
            "  driver-51  [000] d..1.  12.345678: memcg_flush: (cgroup_rstat_flush+0x0/0x20) id=1";
        assert_eq!(
            trace_timestamp_ns(line, " memcg_flush:").unwrap(),
            12_345_678_000
        );
        let e = trace_timestamp_ns("garbage memcg_flush: x", " memcg_flush:")
            .unwrap_err()
            .to_string();
        assert!(e.contains("without a timestamp"), "{e}");
        assert!(trace_timestamp_ns("no event here", " memcg_flush:").is_err());
    }

    #[test]
    fn a_block_request_gives_its_pages() {
        let line = "  kworker/u4:1-30  [000] ...1.  3.507466: block_bio_queue: 1,0 W 7192 + 8 [kworker/u4:1]";
        assert_eq!(bio_pages(line).unwrap(), (899, 1));
        let merged = "driver-1 [000] ..... 1.0: block_bio_queue: 1,1 WS 16 + 24 [driver]";
        assert_eq!(bio_pages(merged).unwrap(), (2, 3));
        // a request that starts inside a page covers it and the pages it reaches
        let odd = "x [000] ..... 1.0: block_bio_queue: 1,1 W 12 + 8 [x]";
        assert_eq!(bio_pages(odd).unwrap(), (1, 2));
        for bad in [
            "x [000] ..... 1.0: block_bio_queue: 1,1 W 12 [x]",
            "x [000] ..... 1.0: block_bio_queue: 1,1 W 12 + 0 [x]",
            "no event",
        ] {
            let e = bio_pages(bad).unwrap_err().to_string();
            assert!(e.contains("SECTOR + SECTORS"), "{e}");
        }
    }

    #[test]
    fn a_directory_that_is_no_cgroup_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("data");
        prepare_data_file(&p, 1).unwrap();
        let spec = DriveSpec {
            data_file: p,
            anon_pages: 0,
            cgroup_dir: dir.path().to_path_buf(),
            readahead: false,
            cpu: None,
            drain_charge_stock: false,
            progress_every: 0,
        };
        let e = drive(&[0], &spec, &|| false).unwrap_err().to_string();
        assert!(e.contains("not a cgroup directory"), "{e}");
    }
}
