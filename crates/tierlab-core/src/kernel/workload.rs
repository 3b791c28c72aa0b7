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
//!
//! Besides the built-in workloads, [`Workload::Trace`] takes a user's
//! workload: any trace tierlab reads, or a generator spec
//! (`zipf:alpha=0.99,pages=4096,n=100000,kind=anon`). Its accesses become
//! references in trace order (a request of several pages, one reference per
//! page); its file pages and its anonymous pages are numbered densely, each in
//! the order first referenced, so the data file and the mapping are as large
//! as the trace's footprint. One change is made, and the written trace carries
//! it so both sides still see the same references: the first reference to an
//! anonymous page is a store, because a load of a never-written anonymous
//! page maps the kernel's shared zero page, which takes no memory (tierlab
//! would count a resident page). App events of the trace are dropped. Cost:
//! one pass over the trace and two hash maps of its distinct pages.

use crate::error::{Error, Result};
use crate::trace::native::NativeWriter;
use crate::trace::{Access, Kind, Op, Record};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    /// An anonymous mapping of `anon_pages` pages: one store to every page,
    /// then `refs` references cycling over the pages in address order, a
    /// seeded `write_share` of them stores.
    AnonLoop {
        anon_pages: u64,
        refs: u64,
        write_share: f64,
        seed: u64,
    },
    /// File and anonymous memory together: one store to each of
    /// `anon_pages` pages, then `refs` references, each anonymous with
    /// probability `anon_share` (Zipf(`alpha`) over the mapping, a
    /// `write_share` of them stores) and otherwise a read of the file
    /// (Zipf(`alpha`) over `file_pages` pages).
    MixedZipf {
        file_pages: u64,
        anon_pages: u64,
        refs: u64,
        anon_share: f64,
        alpha: f64,
        write_share: f64,
        seed: u64,
    },
    /// A hot anonymous set and file scans: one store to each of `anon_pages`
    /// pages, then `periods` times: `hot_refs` Zipf(`alpha`) references to the
    /// mapping (a `write_share` of them stores), then one sequential read
    /// pass over the `scan_pages` pages of the file.
    MixedScan {
        anon_pages: u64,
        scan_pages: u64,
        hot_refs: u64,
        periods: u64,
        alpha: f64,
        write_share: f64,
        seed: u64,
    },
    /// A phone-like app switch: `apps` apps, each with its own
    /// `file_pages_per_app` file pages and `anon_pages_per_app` anonymous
    /// pages. `phases` times a foreground app is drawn (seeded, never the one
    /// in the foreground already; app 0 first); an app in the foreground for
    /// the first time stores once to each of its anonymous pages (its launch),
    /// then it makes `phase_refs` references, each anonymous with probability
    /// `anon_share` (Zipf(`alpha`) over its mapping, a `write_share` of them
    /// stores), else a read of its file pages (Zipf(`alpha`)). Apps in the
    /// background keep their memory and make no references.
    AppSwitch {
        apps: u64,
        file_pages_per_app: u64,
        anon_pages_per_app: u64,
        phases: u64,
        phase_refs: u64,
        anon_share: f64,
        alpha: f64,
        write_share: f64,
        seed: u64,
    },
    /// A user's workload: the page references of `trace` (a file in any
    /// format tierlab reads, `format` and `options` as for `tierlab run`, or
    /// a generator spec), the first `max_refs` of them when given. See the
    /// module doc for how it becomes references.
    Trace {
        trace: String,
        #[serde(default)]
        format: Option<String>,
        #[serde(default)]
        options: toml::Table,
        #[serde(default)]
        max_refs: Option<u64>,
    },
}

/// A cell's references and the memory they need: what the driver issues and
/// what the written trace replays.
#[derive(Debug, Clone, PartialEq)]
pub struct RefArray {
    /// Encoded references (page | [`WRITE_BIT`] | [`ANON_BIT`]).
    pub refs: Vec<u64>,
    /// Pages of the data file.
    pub file_pages: u64,
    /// Pages of the anonymous mapping.
    pub anon_pages: u64,
}

/// Zipf(`alpha`) ranks over `pages` pages scattered by a seeded permutation.
struct ZipfPages {
    perm: Vec<u64>,
    z: Zipf<f64>,
}

impl ZipfPages {
    fn new(pages: u64, alpha: f64, rng: &mut Pcg64Mcg) -> Result<ZipfPages> {
        let mut perm: Vec<u64> = (0..pages).collect();
        perm.shuffle(rng);
        let z = Zipf::new(pages as f64, alpha)
            .map_err(|e| Error::config(format!("kernel-check workload: zipf: {e}")))?;
        Ok(ZipfPages { perm, z })
    }

    fn draw(&self, rng: &mut Pcg64Mcg) -> u64 {
        self.perm[self.z.sample(rng) as usize - 1]
    }
}

/// File and anonymous references mixed: each anonymous with probability
/// `anon_share` (a `write_share` of those stores), else a file read; both
/// Zipf over their pages, offset by the caller's first file and anon page.
struct MixedPages {
    file: ZipfPages,
    anon: ZipfPages,
    anon_share: f64,
    write_share: f64,
}

impl MixedPages {
    /// The file permutation is drawn first, then the anonymous one.
    fn new(
        file_pages: u64,
        anon_pages: u64,
        alpha: f64,
        anon_share: f64,
        write_share: f64,
        rng: &mut Pcg64Mcg,
    ) -> Result<MixedPages> {
        Ok(MixedPages {
            file: ZipfPages::new(file_pages, alpha, rng)?,
            anon: ZipfPages::new(anon_pages, alpha, rng)?,
            anon_share,
            write_share,
        })
    }

    fn draw(&self, rng: &mut Pcg64Mcg, file0: u64, anon0: u64) -> u64 {
        if rng.random::<f64>() < self.anon_share {
            (anon0 + self.anon.draw(rng)) | ANON_BIT | store_if(rng, self.write_share)
        } else {
            file0 + self.file.draw(rng)
        }
    }
}

/// One store to each anonymous page of `pages`, in address order (so each
/// page is allocated, not mapped to the zero page).
fn first_stores(out: &mut Vec<u64>, pages: std::ops::Range<u64>) {
    out.extend(pages.map(|p| p | ANON_BIT | WRITE_BIT));
}

fn store_if(rng: &mut Pcg64Mcg, share: f64) -> u64 {
    if share > 0.0 && rng.random::<f64>() < share {
        WRITE_BIT
    } else {
        0
    }
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
            Workload::AnonLoop { .. } => "anon_loop",
            Workload::MixedZipf { .. } => "mixed_zipf",
            Workload::MixedScan { .. } => "mixed_scan",
            Workload::AppSwitch { .. } => "app_switch",
            Workload::Trace { .. } => "trace",
        }
    }

    /// Pages of the data file the workload needs (0 for a trace: its
    /// footprint is known once read, in [`RefArray::file_pages`]).
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
            Workload::MixedZipf { file_pages, .. } => file_pages,
            Workload::MixedScan { scan_pages, .. } => scan_pages,
            Workload::AppSwitch {
                apps,
                file_pages_per_app,
                ..
            } => apps * file_pages_per_app,
            Workload::AnonZipf { .. } | Workload::AnonLoop { .. } | Workload::Trace { .. } => 0,
        }
    }

    /// Pages of the anonymous mapping the workload needs (0 for a trace, as
    /// for [`Workload::file_pages`]).
    pub fn anon_pages(&self) -> u64 {
        match *self {
            Workload::AnonZipf { anon_pages, .. }
            | Workload::AnonLoop { anon_pages, .. }
            | Workload::MixedZipf { anon_pages, .. }
            | Workload::MixedScan { anon_pages, .. } => anon_pages,
            Workload::AppSwitch {
                apps,
                anon_pages_per_app,
                ..
            } => apps * anon_pages_per_app,
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
            Workload::AnonLoop {
                anon_pages,
                write_share,
                ..
            } if anon_pages == 0 || !share_ok(write_share) => {
                bad("anon_pages must be > 0 and write_share in [0, 1]")
            }
            Workload::MixedZipf {
                file_pages,
                anon_pages,
                anon_share,
                alpha,
                write_share,
                ..
            } if file_pages == 0
                || anon_pages == 0
                || alpha_bad(alpha)
                || !share_ok(anon_share)
                || !share_ok(write_share) =>
            {
                bad("file_pages and anon_pages must be > 0, alpha > 0, anon_share and write_share in [0, 1]")
            }
            Workload::MixedScan {
                anon_pages,
                alpha,
                write_share,
                ..
            } if anon_pages == 0 || alpha_bad(alpha) || !share_ok(write_share) => {
                bad("anon_pages must be > 0, alpha > 0 and write_share in [0, 1]")
            }
            Workload::AppSwitch {
                apps,
                file_pages_per_app,
                anon_pages_per_app,
                anon_share,
                alpha,
                write_share,
                ..
            } if apps < 2
                || file_pages_per_app == 0
                || anon_pages_per_app == 0
                || alpha_bad(alpha)
                || !share_ok(anon_share)
                || !share_ok(write_share) =>
            {
                bad("apps must be >= 2, pages per app > 0, alpha > 0, anon_share and write_share in [0, 1]")
            }
            _ if self.file_pages() > PAGE_MASK || self.anon_pages() > PAGE_MASK => {
                bad("too many pages")
            }
            _ => Ok(()),
        }
    }

    /// How many references the workload makes (without generating them; a
    /// trace's `max_refs`, or 0 when it has none: count [`RefArray::refs`]).
    pub fn reference_count(&self) -> u64 {
        match *self {
            Workload::ZipfRead { refs, .. }
            | Workload::MixedReadWrite { refs, .. }
            | Workload::LoopRead { refs, .. } => refs,
            Workload::AnonLoop {
                anon_pages, refs, ..
            }
            | Workload::MixedZipf {
                anon_pages, refs, ..
            } => anon_pages + refs,
            Workload::MixedScan {
                anon_pages,
                scan_pages,
                hot_refs,
                periods,
                ..
            } => anon_pages + (hot_refs + scan_pages) * periods,
            Workload::AppSwitch {
                apps,
                anon_pages_per_app,
                phases,
                phase_refs,
                ..
            } => apps.min(phases) * anon_pages_per_app + phases * phase_refs,
            Workload::Trace { max_refs, .. } => max_refs.unwrap_or(0),
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

    /// The references and the memory they need; for a trace, read from it.
    pub fn build(&self) -> Result<RefArray> {
        if let Workload::Trace {
            trace,
            format,
            options,
            max_refs,
        } = self
        {
            let spec = crate::trace::TraceSpec {
                path: trace.into(),
                format: format.clone(),
                options: options.clone(),
            };
            let mut reader = crate::trace::open(&spec)?;
            return trace_references(reader.as_mut(), *max_refs);
        }
        Ok(RefArray {
            refs: self.references()?,
            file_pages: self.file_pages(),
            anon_pages: self.anon_pages(),
        })
    }

    /// The references, encoded as page | WRITE_BIT | ANON_BIT.
    pub fn references(&self) -> Result<Vec<u64>> {
        if let Workload::Trace { .. } = self {
            return Ok(self.build()?.refs);
        }
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
                first_stores(&mut out, 0..anon_pages);
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
            Workload::AnonLoop {
                anon_pages,
                refs,
                write_share,
                seed,
            } => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed);
                first_stores(&mut out, 0..anon_pages);
                for i in 0..refs {
                    out.push((i % anon_pages) | ANON_BIT | store_if(&mut rng, write_share));
                }
            }
            Workload::MixedZipf {
                file_pages,
                anon_pages,
                refs,
                anon_share,
                alpha,
                write_share,
                seed,
            } => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed);
                let mix = MixedPages::new(
                    file_pages,
                    anon_pages,
                    alpha,
                    anon_share,
                    write_share,
                    &mut rng,
                )?;
                first_stores(&mut out, 0..anon_pages);
                for _ in 0..refs {
                    out.push(mix.draw(&mut rng, 0, 0));
                }
            }
            Workload::MixedScan {
                anon_pages,
                scan_pages,
                hot_refs,
                periods,
                alpha,
                write_share,
                seed,
            } => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed);
                let anon = ZipfPages::new(anon_pages, alpha, &mut rng)?;
                first_stores(&mut out, 0..anon_pages);
                for _ in 0..periods {
                    for _ in 0..hot_refs {
                        out.push(anon.draw(&mut rng) | ANON_BIT | store_if(&mut rng, write_share));
                    }
                    out.extend(0..scan_pages);
                }
            }
            Workload::AppSwitch {
                apps,
                file_pages_per_app,
                anon_pages_per_app,
                phases,
                phase_refs,
                anon_share,
                alpha,
                write_share,
                seed,
            } => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed);
                let mix = MixedPages::new(
                    file_pages_per_app,
                    anon_pages_per_app,
                    alpha,
                    anon_share,
                    write_share,
                    &mut rng,
                )?;
                let mut launched = vec![false; apps as usize];
                let mut fg = 0u64;
                for phase in 0..phases {
                    if phase > 0 {
                        // another app than the one in the foreground
                        fg = (fg + 1 + rng.random_range(0..apps - 1)) % apps;
                    }
                    let (f0, a0) = (fg * file_pages_per_app, fg * anon_pages_per_app);
                    if !launched[fg as usize] {
                        launched[fg as usize] = true;
                        first_stores(&mut out, a0..a0 + anon_pages_per_app);
                    }
                    for _ in 0..phase_refs {
                        out.push(mix.draw(&mut rng, f0, a0));
                    }
                }
            }
            Workload::Trace { .. } => unreachable!("handled above"),
        }
        Ok(out)
    }
}

/// Reads a trace's accesses as references (module doc): at most `max_refs`
/// page references, file and anonymous pages numbered densely in the order
/// first referenced, the first reference to an anonymous page a store.
pub fn trace_references(
    reader: &mut dyn crate::trace::TraceReader,
    max_refs: Option<u64>,
) -> Result<RefArray> {
    let limit = max_refs.unwrap_or(u64::MAX);
    let mut ids: [HashMap<u64, u64>; 2] = [HashMap::new(), HashMap::new()];
    let mut refs = Vec::new();
    let mut batch = Vec::with_capacity(1 << 16);
    'read: loop {
        batch.clear();
        let more = reader.read_batch(&mut batch, 1 << 16)?;
        for rec in &batch {
            let Record::Access(a) = rec else { continue };
            let anon = a.kind == Kind::Anon;
            for k in 0..a.npages.max(1) as u64 {
                if refs.len() as u64 >= limit {
                    break 'read;
                }
                let map = &mut ids[anon as usize];
                let next = map.len() as u64;
                let mut first = false;
                let id = *map.entry(a.page.wrapping_add(k)).or_insert_with(|| {
                    first = true;
                    next
                });
                if id > PAGE_MASK {
                    return Err(Error::config(format!(
                        "kernel-check trace: more than {PAGE_MASK} distinct pages"
                    )));
                }
                let write = a.op == Op::Write || (anon && first);
                refs.push(id | if anon { ANON_BIT } else { 0 } | if write { WRITE_BIT } else { 0 });
            }
        }
        if !more {
            break;
        }
    }
    if refs.is_empty() {
        return Err(Error::config(
            "kernel-check trace: the trace has no page accesses",
        ));
    }
    Ok(RefArray {
        refs,
        file_pages: ids[0].len() as u64,
        anon_pages: ids[1].len() as u64,
    })
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
    let z = ZipfPages::new(pages, alpha, &mut rng)?;
    for _ in 0..refs {
        let page = z.draw(&mut rng);
        out.push(page | kind | store_if(&mut rng, write_share));
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
mod tests;
