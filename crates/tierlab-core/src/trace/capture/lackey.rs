//! The lackey-to-page-references conversion shared by the `lackey` reader and [`super::capture`]
//! (the rules are in the module docs of `trace::capture`).

use crate::error::{Error, Result};
use crate::trace::input::{parse_hex, parse_u64, show, trim};
use crate::trace::{Kind, Op};
use serde::{Deserialize, Serialize};

/// How a lackey `M` (modify) reference is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ModifyAs {
    /// One write reference (default).
    #[default]
    Write,
    /// A read reference followed by a write reference.
    ReadWrite,
}

/// File-backed address ranges of a process, from `/proc/PID/maps`.
///
/// A mapping counts as File when it names a file (a path starting with `/`)
/// and is shared (`s`) or private and not writable (program text, read-only
/// data, mapped files read by the program). Private writable file mappings
/// (`rw-p`, e.g. a library's `.data`) are copy-on-write: a page written there
/// becomes swap-backed, so they count as Anon, like every unnamed mapping
/// (heap, stack, and under valgrind the client's brk segment). Limit: a page of
/// a private writable file mapping that is only ever read is really a File
/// page; the table cannot tell without per-page history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapsTable {
    /// Sorted, non-overlapping `[start, end)` byte ranges of File mappings.
    file: Vec<(u64, u64)>,
    last: usize,
}

impl MapsTable {
    /// Parses the text of a `/proc/PID/maps` file. Errors name the 1-based line.
    pub fn parse(text: &str) -> std::result::Result<MapsTable, (u64, String)> {
        let mut file = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i as u64 + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let mut f = line.split_ascii_whitespace();
            let range = f.next().unwrap_or_default();
            let perms = f.next().ok_or_else(|| {
                (
                    line_no,
                    "expected 'START-END PERMS OFFSET DEV INODE [PATH]'".to_string(),
                )
            })?;
            let (Some(start), Some(end)) = range
                .split_once('-')
                .map(|(a, b)| (parse_hex(a.as_bytes()), parse_hex(b.as_bytes())))
                .unwrap_or((None, None))
            else {
                return Err((
                    line_no,
                    format!("expected an address range START-END in hex, found '{range}'"),
                ));
            };
            if end < start || perms.len() != 4 {
                return Err((
                    line_no,
                    format!(
                        "expected START <= END and 4 permission letters, found '{range} {perms}'"
                    ),
                ));
            }
            let _offset = f.next();
            let _dev = f.next();
            let _inode = f.next();
            let path: Vec<&str> = f.collect();
            let named_file = path.first().is_some_and(|p| p.starts_with('/'));
            let p = perms.as_bytes();
            let shared = p[3] == b's';
            let writable = p[1] == b'w';
            if named_file && (shared || !writable) {
                file.push((start, end));
            }
        }
        file.sort_unstable();
        // Merge adjacent or overlapping ranges.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(file.len());
        for (s, e) in file {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Ok(MapsTable {
            file: merged,
            last: 0,
        })
    }

    /// Number of File ranges.
    pub fn len(&self) -> usize {
        self.file.len()
    }

    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }

    /// Whether byte address `addr` lies in a File mapping.
    #[inline]
    pub fn is_file(&mut self, addr: u64) -> bool {
        if let Some(&(s, e)) = self.file.get(self.last) {
            if s <= addr && addr < e {
                return true;
            }
        }
        let i = self.file.partition_point(|&(s, _)| s <= addr);
        if i > 0 && addr < self.file[i - 1].1 {
            self.last = i - 1;
            true
        } else {
            false
        }
    }
}

/// Options of the lackey-to-page-references conversion.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LackeyOptions {
    /// Page size in bytes (power of two).
    pub page_size: u32,
    /// How `M` references count.
    pub modify: ModifyAs,
    /// Keep only the first two of a run of identical references.
    pub collapse: bool,
    /// Spatial sampling rate in (0, 1]; 1 keeps every page.
    pub sample: f64,
}

impl Default for LackeyOptions {
    fn default() -> Self {
        LackeyOptions {
            page_size: crate::trace::DEFAULT_PAGE_SIZE,
            modify: ModifyAs::Write,
            collapse: false,
            sample: 1.0,
        }
    }
}

impl LackeyOptions {
    pub fn validate(&self) -> Result<()> {
        if !self.page_size.is_power_of_two() || self.page_size < 512 {
            return Err(Error::config(format!(
                "page_size must be a power of two >= 512, got {}",
                self.page_size
            )));
        }
        if !(self.sample > 0.0 && self.sample <= 1.0) {
            return Err(Error::config(format!(
                "sample must be in (0, 1], got {}",
                self.sample
            )));
        }
        Ok(())
    }
}

/// One page reference produced by the converter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAccess {
    pub page: u64,
    pub op: Op,
    pub kind: Kind,
}

/// Counters of a conversion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConvertStats {
    /// Lackey references parsed (I, L, S, M lines).
    pub references: u64,
    pub instr: u64,
    pub loads: u64,
    pub stores: u64,
    pub modifies: u64,
    /// Accesses that touched two or more pages.
    pub straddles: u64,
    /// Page references dropped by `collapse`.
    pub collapsed: u64,
    /// Page references dropped by `sample`.
    pub sampled_out: u64,
    /// Data references classified File by the maps table.
    pub data_file: u64,
    /// Page references emitted.
    pub emitted: u64,
}

/// Streaming lackey-to-page-references converter (constant memory).
pub struct LackeyConverter {
    opts: LackeyOptions,
    shift: u32,
    pub maps: Option<MapsTable>,
    last: Option<PageAccess>,
    run: u32,
    sample_cut: u64,
    pub stats: ConvertStats,
}

/// Largest access size accepted (bytes); lackey reports at most a few hundred.
const MAX_ACCESS_BYTES: u64 = 1 << 16;

impl LackeyConverter {
    pub fn new(opts: LackeyOptions, maps: Option<MapsTable>) -> Result<Self> {
        opts.validate()?;
        Ok(LackeyConverter {
            shift: opts.page_size.trailing_zeros(),
            sample_cut: (opts.sample * (1u64 << 24) as f64).round() as u64,
            opts,
            maps,
            last: None,
            run: 0,
            stats: ConvertStats::default(),
        })
    }

    #[inline]
    fn keep_page(&self, page: u64) -> bool {
        if self.sample_cut >= 1 << 24 {
            return true;
        }
        // splitmix64 finaliser: a well-mixed hash of the page number.
        let mut z = page.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z & ((1 << 24) - 1)) < self.sample_cut
    }

    #[inline]
    fn emit(&mut self, a: PageAccess, out: &mut Vec<PageAccess>) {
        if !self.keep_page(a.page) {
            self.stats.sampled_out += 1;
            return;
        }
        if self.opts.collapse {
            if self.last == Some(a) {
                self.run += 1;
                if self.run > 2 {
                    self.stats.collapsed += 1;
                    return;
                }
            } else {
                self.last = Some(a);
                self.run = 1;
            }
        }
        self.stats.emitted += 1;
        out.push(a);
    }

    /// Converts one line of lackey output, appending its page references to
    /// `out`. Returns a description of what was expected on a malformed line.
    pub fn line(
        &mut self,
        line: &[u8],
        out: &mut Vec<PageAccess>,
    ) -> std::result::Result<(), String> {
        if line.starts_with(b"==") || trim(line).is_empty() {
            return Ok(());
        }
        let (tag, rest) = match line {
            [b'I', b' ', rest @ ..] => (b'I', rest),
            [b' ', t @ (b'L' | b'S' | b'M'), b' ', rest @ ..] => (*t, rest),
            _ => {
                return Err(format!(
                    "expected a lackey --trace-mem line ('I  ADDR,SIZE' or ' L|S|M ADDR,SIZE'), found '{}'",
                    show(line)
                ))
            }
        };
        let Some(comma) = rest.iter().position(|&b| b == b',') else {
            return Err(format!("expected 'ADDR,SIZE', found '{}'", show(rest)));
        };
        let Some(addr) = parse_hex(&rest[..comma]) else {
            return Err(format!(
                "expected a hexadecimal address, found '{}'",
                show(&rest[..comma])
            ));
        };
        let size = match parse_u64(&rest[comma + 1..]) {
            Some(s) if (1..=MAX_ACCESS_BYTES).contains(&s) => s,
            _ => {
                return Err(format!(
                    "expected an access size in bytes (1..={MAX_ACCESS_BYTES}), found '{}'",
                    show(&rest[comma + 1..])
                ))
            }
        };
        let Some(last_byte) = addr.checked_add(size - 1) else {
            return Err(format!("address {addr:#x} + size {size} overflows 64 bits"));
        };
        self.stats.references += 1;
        let (first, last) = (addr >> self.shift, last_byte >> self.shift);
        if last > first {
            self.stats.straddles += 1;
        }
        let kind = if tag == b'I' {
            self.stats.instr += 1;
            Kind::File
        } else {
            match tag {
                b'L' => self.stats.loads += 1,
                b'S' => self.stats.stores += 1,
                _ => self.stats.modifies += 1,
            }
            if self.maps.as_mut().is_some_and(|m| m.is_file(addr)) {
                self.stats.data_file += 1;
                Kind::File
            } else {
                Kind::Anon
            }
        };
        for page in first..=last {
            match tag {
                b'I' | b'L' => self.emit(
                    PageAccess {
                        page,
                        op: Op::Read,
                        kind,
                    },
                    out,
                ),
                b'S' => self.emit(
                    PageAccess {
                        page,
                        op: Op::Write,
                        kind,
                    },
                    out,
                ),
                _ => {
                    if self.opts.modify == ModifyAs::ReadWrite {
                        self.emit(
                            PageAccess {
                                page,
                                op: Op::Read,
                                kind,
                            },
                            out,
                        );
                    }
                    self.emit(
                        PageAccess {
                            page,
                            op: Op::Write,
                            kind,
                        },
                        out,
                    );
                }
            }
        }
        Ok(())
    }
}
