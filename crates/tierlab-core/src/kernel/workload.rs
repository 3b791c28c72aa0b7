//! The ground-truth workloads: page references known by construction.
//!
//! A workload is a list of references, each a page of the data file (read with
//! `pread`, written with `pwrite`, 4 KiB at a page boundary) or a page of an
//! anonymous mapping (a load or a store of one word). The driver
//! (`kernel::driver`) issues exactly these against the real kernel, and the
//! same list is written as a native trace for tierlab to replay, so the two
//! sides see the same references in the same order.
//!
//! Every workload is seeded and deterministic; its sizes are given in pages.

use crate::error::{Error, Result};
use crate::trace::native::NativeWriter;
use crate::trace::{Access, Kind, Op, Record};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The anon bit of an encoded reference.
pub const ANON_BIT: u64 = 1 << 63;
/// The write bit of an encoded reference.
pub const WRITE_BIT: u64 = 1 << 62;
/// The page number bits of an encoded reference.
pub const PAGE_MASK: u64 = (1 << 48) - 1;
/// Anonymous pages are numbered from here in the written trace, so that they
/// never share a number with a file page.
pub const ANON_TRACE_BASE: u64 = 1 << 40;

/// One workload of the ground-truth check (see docs/kernel-check.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "workload", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// `refs` reads of a file of `file_pages` pages, page rank drawn from
    /// Zipf(`alpha`), ranks scattered over the file by a seeded permutation.
    ZipfRead {
        file_pages: u64,
        refs: u64,
        alpha: f64,
        seed: u64,
    },
    /// `periods` times: `hot_refs` uniform reads of the first `hot_pages`
    /// pages, then one sequential pass over the next `scan_pages` pages.
    HotScan {
        hot_pages: u64,
        scan_pages: u64,
        hot_refs: u64,
        periods: u64,
        seed: u64,
    },
    /// `refs` reads cycling over the first `loop_pages` pages of the file.
    LoopRead { loop_pages: u64, refs: u64 },
    /// Like `ZipfRead`, a `write_share` of the references writing the page
    /// (whole-page `pwrite`, dirtying it) instead of reading it.
    MixedReadWrite {
        file_pages: u64,
        refs: u64,
        alpha: f64,
        write_share: f64,
        seed: u64,
    },
    /// An anonymous mapping of `anon_pages` pages: one store to every page
    /// in address order (so each page is allocated, not mapped to the zero
    /// page), then `refs` references with Zipf(`alpha`) ranks scattered by a
    /// seeded permutation, a `write_share` of them stores, the rest loads.
    AnonZipf {
        anon_pages: u64,
        refs: u64,
        alpha: f64,
        write_share: f64,
        seed: u64,
    },
}

impl Workload {
    /// The workload's short name.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::ZipfRead { .. } => "zipf_read",
            Workload::HotScan { .. } => "hot_scan",
            Workload::LoopRead { .. } => "loop_read",
            Workload::MixedReadWrite { .. } => "mixed_read_write",
            Workload::AnonZipf { .. } => "anon_zipf",
        }
    }

    /// Pages of the data file the workload needs.
    pub fn file_pages(&self) -> u64 {
        match *self {
            Workload::ZipfRead { file_pages, .. } | Workload::MixedReadWrite { file_pages, .. } => {
                file_pages
            }
            Workload::HotScan {
                hot_pages,
                scan_pages,
                ..
            } => hot_pages + scan_pages,
            Workload::LoopRead { loop_pages, .. } => loop_pages,
            Workload::AnonZipf { .. } => 0,
        }
    }

    /// Pages of the anonymous mapping the workload needs.
    pub fn anon_pages(&self) -> u64 {
        match *self {
            Workload::AnonZipf { anon_pages, .. } => anon_pages,
            _ => 0,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |what: &str| {
            Err(Error::config(format!(
                "kernel-check workload '{}': {what}",
                self.name()
            )))
        };
        let share_ok = |s: f64| (0.0..=1.0).contains(&s);
        let alpha_bad = |a: f64| a.is_nan() || a <= 0.0;
        match *self {
            Workload::ZipfRead {
                file_pages, alpha, ..
            } if file_pages == 0 || alpha_bad(alpha) => bad("file_pages must be > 0 and alpha > 0"),
            Workload::MixedReadWrite {
                file_pages,
                alpha,
                write_share,
                ..
            } if file_pages == 0 || alpha_bad(alpha) || !share_ok(write_share) => {
                bad("file_pages must be > 0, alpha > 0 and write_share in [0, 1]")
            }
            Workload::HotScan { hot_pages: 0, .. } => bad("hot_pages must be > 0"),
            Workload::LoopRead { loop_pages: 0, .. } => bad("loop_pages must be > 0"),
            Workload::AnonZipf {
                anon_pages,
                alpha,
                write_share,
                ..
            } if anon_pages == 0 || alpha_bad(alpha) || !share_ok(write_share) => {
                bad("anon_pages must be > 0, alpha > 0 and write_share in [0, 1]")
            }
            _ if self.file_pages() > PAGE_MASK || self.anon_pages() > PAGE_MASK => {
                bad("too many pages")
            }
            _ => Ok(()),
        }
    }

    /// How many references the workload makes (without generating them).
    pub fn reference_count(&self) -> u64 {
        match *self {
            Workload::ZipfRead { refs, .. }
            | Workload::MixedReadWrite { refs, .. }
            | Workload::LoopRead { refs, .. } => refs,
            Workload::HotScan {
                scan_pages,
                hot_refs,
                periods,
                ..
            } => (hot_refs + scan_pages) * periods,
            Workload::AnonZipf {
                anon_pages, refs, ..
            } => anon_pages + refs,
        }
    }

    /// The references, encoded as page | WRITE_BIT | ANON_BIT.
    pub fn references(&self) -> Result<Vec<u64>> {
        self.validate()?;
        let mut out = Vec::with_capacity(self.reference_count() as usize);
        match *self {
            Workload::ZipfRead {
                file_pages,
                refs,
                alpha,
                seed,
            } => zipf_refs(&mut out, file_pages, refs, alpha, 0.0, seed, 0)?,
            Workload::MixedReadWrite {
                file_pages,
                refs,
                alpha,
                write_share,
                seed,
            } => zipf_refs(&mut out, file_pages, refs, alpha, write_share, seed, 0)?,
            Workload::HotScan {
                hot_pages,
                scan_pages,
                hot_refs,
                periods,
                seed,
            } => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed);
                for _ in 0..periods {
                    for _ in 0..hot_refs {
                        out.push(rng.random_range(0..hot_pages));
                    }
                    out.extend(hot_pages..hot_pages + scan_pages);
                }
            }
            Workload::LoopRead { loop_pages, refs } => {
                out.extend((0..refs).map(|i| i % loop_pages));
            }
            Workload::AnonZipf {
                anon_pages,
                refs,
                alpha,
                write_share,
                seed,
            } => {
                out.extend((0..anon_pages).map(|p| p | ANON_BIT | WRITE_BIT));
                zipf_refs(
                    &mut out,
                    anon_pages,
                    refs,
                    alpha,
                    write_share,
                    seed,
                    ANON_BIT,
                )?;
            }
        }
        Ok(out)
    }
}

/// Appends `refs` references with Zipf(`alpha`) ranks over `pages` pages,
/// scattered by a seeded permutation, a `write_share` of them writes; `kind`
/// is 0 for file pages or ANON_BIT.
fn zipf_refs(
    out: &mut Vec<u64>,
    pages: u64,
    refs: u64,
    alpha: f64,
    write_share: f64,
    seed: u64,
    kind: u64,
) -> Result<()> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut perm: Vec<u64> = (0..pages).collect();
    perm.shuffle(&mut rng);
    let z = Zipf::new(pages as f64, alpha)
        .map_err(|e| Error::config(format!("kernel-check workload: zipf: {e}")))?;
    for _ in 0..refs {
        let rank = z.sample(&mut rng) as u64 - 1;
        let write = write_share > 0.0 && rng.random::<f64>() < write_share;
        out.push(perm[rank as usize] | kind | if write { WRITE_BIT } else { 0 });
    }
    Ok(())
}

/// Decodes one reference: (page, write, anon).
#[inline]
pub fn decode(r: u64) -> (u64, bool, bool) {
    (r & PAGE_MASK, r & WRITE_BIT != 0, r & ANON_BIT != 0)
}

/// Writes the references as a native trace (time = ordinal; anon pages
/// numbered from [`ANON_TRACE_BASE`]).
pub fn write_trace(refs: &[u64], path: &Path, page_size: u32) -> Result<()> {
    let mut w = NativeWriter::create(path, page_size)?;
    for (i, &r) in refs.iter().enumerate() {
        let (page, write, anon) = decode(r);
        let op = if write { Op::Write } else { Op::Read };
        let (kind, page) = if anon {
            (Kind::Anon, ANON_TRACE_BASE + page)
        } else {
            (Kind::File, page)
        };
        w.push(&Record::Access(Access::page(i as u64, page, op, kind)))?;
    }
    w.finish(&[])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_deterministic_and_sized() {
        let w = Workload::MixedReadWrite {
            file_pages: 1000,
            refs: 20_000,
            alpha: 0.9,
            write_share: 0.3,
            seed: 7,
        };
        let a = w.references().unwrap();
        assert_eq!(a, w.references().unwrap());
        assert_eq!(a.len(), 20_000);
        assert_eq!(w.reference_count(), 20_000);
        let writes = a.iter().filter(|&&r| r & WRITE_BIT != 0).count() as f64;
        assert!((writes / 20_000.0 - 0.3).abs() < 0.02, "{writes}");
        assert!(a.iter().all(|&r| r & ANON_BIT == 0 && r & PAGE_MASK < 1000));
    }

    #[test]
    fn hot_scan_and_loop_follow_their_definitions() {
        let w = Workload::HotScan {
            hot_pages: 10,
            scan_pages: 50,
            hot_refs: 30,
            periods: 2,
            seed: 1,
        };
        let r = w.references().unwrap();
        assert_eq!(r.len(), 2 * (30 + 50));
        assert_eq!(w.reference_count(), 160);
        assert!(r[..30].iter().all(|&p| p < 10));
        assert_eq!(r[30..80], (10..60).collect::<Vec<u64>>()[..]);
        let l = Workload::LoopRead {
            loop_pages: 3,
            refs: 7,
        }
        .references()
        .unwrap();
        assert_eq!(l, vec![0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn anon_starts_with_one_store_per_page() {
        let w = Workload::AnonZipf {
            anon_pages: 100,
            refs: 500,
            alpha: 1.0,
            write_share: 0.5,
            seed: 3,
        };
        let r = w.references().unwrap();
        assert_eq!(r.len(), 600);
        assert_eq!(w.reference_count(), 600);
        for (i, &x) in r[..100].iter().enumerate() {
            assert_eq!(decode(x), (i as u64, true, true));
        }
        assert!(r.iter().all(|&x| x & ANON_BIT != 0));
    }

    #[test]
    fn bad_parameters_are_config_errors() {
        let w = Workload::MixedReadWrite {
            file_pages: 10,
            refs: 1,
            alpha: 1.0,
            write_share: 1.5,
            seed: 0,
        };
        let e = w.references().unwrap_err().to_string();
        assert!(
            e.contains("mixed_read_write") && e.contains("write_share"),
            "{e}"
        );
        let j: std::result::Result<Workload, _> =
            serde_json::from_str(r#"{"workload": "loop_read", "loop_pages": 3}"#);
        assert!(j.is_err());
    }
}
