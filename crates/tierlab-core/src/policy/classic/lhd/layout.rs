//! LHD's tables and entries: the constants of the model (libCacheSim's), a resident object's
//! two entries ([`Stamp`], [`Cold`]) and how a stamp indexes the densities table.

use crate::trace::columns::{FLAG_ANON, FLAG_WRITE};
use crate::trace::Kind;

pub(super) const HIT_AGE_CLASSES: usize = 16;
/// libCacheSim's row of the objects' application (id 1) in its 16 x 16 class table.
pub(super) const CLASS_ROW: usize = 16;
pub(super) const MAX_AGE: usize = 20_000;
/// The oldest (coarsened) age: an object this old ranks lowest.
pub(super) const LAST_AGE: usize = MAX_AGE - 1;
/// Entries of a per-class, per-age table.
pub(super) const TABLE: usize = HIT_AGE_CLASSES * MAX_AGE;
/// The densities table's row stride: the power of two at or above `MAX_AGE`, so that a stamp's
/// row bits become the row's offset by a mask and a shift (no multiply), and a row's offset and
/// a clamped age are disjoint bits (their `|` is below the table's size: no bounds test). The
/// columns from `MAX_AGE` up are never read nor written (allocated zeroed, so never touched).
pub(super) const STRIDE_LOG2: u32 = usize::BITS - (MAX_AGE - 1).leading_zeros();
pub(super) const STRIDE: usize = 1 << STRIDE_LOG2;
const _: () = assert!(STRIDE >= MAX_AGE && STRIDE / 2 < MAX_AGE);
pub(super) const ACCS_PER_RECONFIGURATION: u64 = 1 << 20;
pub(super) const EWMA_DECAY: f32 = 0.9;
pub(super) const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
pub(super) const EXPLORER_BUDGET_FRACTION: f64 = 0.01;
pub(super) const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
pub(super) const WARMUP_CANDIDATES: usize = 8;
pub(super) const WARMUP_RECONFIGURATIONS: u32 = 50;
/// Candidates drawn (and prefetched) before the first of them is ranked.
pub(super) const BATCH: usize = 32;
/// At most this many of the next eviction's draws are foreseen and their tags prefetched.
pub(super) const FORESEE: usize = 32;
/// The end of an eviction prefetches the samples of the eviction this many ahead.
pub(super) const AHEAD: usize = 2;
/// Resident objects from which the end of an eviction prefetches the rest ([`Cold`], 16 bytes)
/// of the next evictions' samples as well as their stamps: 1 MB of it, a common L2 size (below
/// it the entries stay cached between evictions).
pub(super) const COLD_PREFETCH_MIN: usize = (1 << 20) / std::mem::size_of::<Cold>();

/// Bits of a [`Stamp`] below its timestamp.
pub(super) const FLAG_BITS: u32 = 8;
/// A [`Stamp`]'s flags: the page-mode frame's kind (set for [`Kind::Anon`]) and dirty bit, the
/// class in the 4 bits from `CLASS_SHIFT` up, and the explorer bit just above them, so that the
/// 5 bits from `CLASS_SHIFT` are the object's row of the densities table (`16 * explorer +
/// class`, see `LhdCore::densities`).
/// The two frame bits are the reference's own flags' (`FLAG_ANON`, `FLAG_WRITE`), so that an
/// insertion's frame bits are the flags masked.
pub(super) const KIND_BIT: u64 = FLAG_ANON as u64;
pub(super) const DIRTY_BIT: u64 = FLAG_WRITE as u64;
const _: () = assert!(KIND_BIT | DIRTY_BIT == 3 && KIND_BIT != DIRTY_BIT);
pub(super) const CLASS_SHIFT: u32 = 3;
pub(super) const EXPLORER_BIT: u64 = (HIT_AGE_CLASSES as u64) << CLASS_SHIFT;
/// Rows of the densities table: one per class, then the same + 1 for explorers.
pub(super) const ROWS: usize = 2 * HIT_AGE_CLASSES;
/// A stamp's row bits (class and explorer) in place.
pub(super) const ROW_BITS: u64 = ((ROWS - 1) as u64) << CLASS_SHIFT;
/// Entries of the densities table.
pub(super) const DENSITIES: usize = ROWS * STRIDE;
/// The frame's bits, kept when a hit re-stamps an object.
pub(super) const FRAME_BITS: u64 = KIND_BIT | DIRTY_BIT;
const _: () = assert!(EXPLORER_BIT << 1 <= 1 << FLAG_BITS);

/// What ranking a resident object reads, in one word: the time of its last access (hit or
/// insertion) above `FLAG_BITS` bits that hold its class ([`hit_age_class`] of its last two hit
/// ages, kept so that ranking needs no computation of it), whether it is an explorer, and in
/// page mode its frame's kind and dirty bit. A sample is one 8-byte load, from an array a
/// quarter of the size of the 32-byte tags it was read from before (see `LhdCore::age` for how
/// the age is taken from the word without unpacking it). Timestamps stay below `2^56` (they count
/// accesses).
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamp(pub(super) u64);

impl Stamp {
    #[inline(always)]
    pub(super) fn new(timestamp: u64, class: usize, explorer: bool, frame: u64) -> Stamp {
        debug_assert!(timestamp < 1 << (64 - FLAG_BITS) && class < HIT_AGE_CLASSES);
        Stamp(
            (timestamp << FLAG_BITS)
                | ((class as u64) << CLASS_SHIFT)
                | ((explorer as u64) * EXPLORER_BIT)
                | (frame & FRAME_BITS),
        )
    }

    #[inline(always)]
    pub(super) fn timestamp(self) -> u64 {
        self.0 >> FLAG_BITS
    }

    #[inline(always)]
    pub(super) fn class(self) -> usize {
        (self.0 >> CLASS_SHIFT) as usize & (HIT_AGE_CLASSES - 1)
    }

    /// The row of the densities table: the class, 16 more for an explorer.
    #[inline(always)]
    pub(super) fn row(self) -> usize {
        (self.0 >> CLASS_SHIFT) as usize & (ROWS - 1)
    }

    #[inline(always)]
    pub(super) fn explorer(self) -> bool {
        self.0 & EXPLORER_BIT != 0
    }

    /// The offset of its row in the densities table, `row() * STRIDE`, from the bits in place.
    #[inline(always)]
    pub(super) fn row_offset(self) -> usize {
        let offset = ((self.0 & ROW_BITS) << (STRIDE_LOG2 - CLASS_SHIFT)) as usize;
        debug_assert_eq!(offset, self.row() * STRIDE);
        offset
    }
}

/// The frame bits of a page of kind `kind`, dirty or not.
#[inline(always)]
pub(super) fn frame_bits(kind: Kind, dirty: bool) -> u64 {
    ((kind == Kind::Anon) as u64 * KIND_BIT) | ((dirty as u64) * DIRTY_BIT)
}

/// The rest of a resident object, read on its hits and when it is evicted: 16 bytes, aligned so
/// that it is one load. The last two hit ages are coarsened ages (at most `MAX_AGE`). `page` is
/// the page-mode frame's page (what the sink is told on eviction, with the stamp's kind and dirty
/// bit), unused with object sizes.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct Cold {
    pub(super) page: u64,
    pub(super) key: u32,
    pub(super) last_hit_age: u16,
    pub(super) last_last_hit_age: u16,
}

/// The class of an object whose last two hit ages (coarsened) sum to `age`: the number of
/// doublings that bring `age` to `MAX_AGE` or more, at most 15; 15 for 0 (libCacheSim's
/// `hitAgeClass`, a loop of doublings, computed here from the leading zeros; tested against it).
#[inline]
pub(super) const fn hit_age_class(age: u64) -> usize {
    const MAX: u64 = MAX_AGE as u64;
    if age == 0 {
        return HIT_AGE_CLASSES - 1;
    }
    if age >= MAX {
        return 0;
    }
    // `age << log` has `MAX`'s bit length; one doubling more if it is still below `MAX`.
    let log = age.leading_zeros() - MAX.leading_zeros();
    let log = (log + ((age << log) < MAX) as u32) as usize;
    if log < HIT_AGE_CLASSES - 1 {
        log
    } else {
        HIT_AGE_CLASSES - 1
    }
}

/// The explorers' rows of the densities table: each class's + 1.
pub(super) fn explorer_rows(densities: &mut [f32; DENSITIES]) {
    let (classes, explorers) = densities.split_at_mut(HIT_AGE_CLASSES * STRIDE);
    for (e, c) in explorers.chunks_mut(STRIDE).zip(classes.chunks(STRIDE)) {
        for (e, &d) in e[..MAX_AGE].iter_mut().zip(&c[..MAX_AGE]) {
            *e = d + 1.0;
        }
    }
}

/// A zeroed table of `N` entries on the heap (its pages are not touched until written).
pub(super) fn zeroed<const N: usize>() -> Box<[f32; N]> {
    vec![0.0; N]
        .into_boxed_slice()
        .try_into()
        .expect("N entries")
}

/// Random candidates of an eviction after `reconfigurations` reconfigurations.
pub(super) fn candidates_after(assoc: usize, reconfigurations: u32) -> usize {
    if reconfigurations > WARMUP_RECONFIGURATIONS {
        assoc
    } else {
        assoc.min(WARMUP_CANDIDATES)
    }
}

/// [`LhdCore::age`] with `now` in a stamp's form (every flag bit set).
#[inline(always)]
pub(super) fn age_of(now: u64, shift: u32, s: Stamp) -> usize {
    let age = (now - s.0) >> (shift + FLAG_BITS);
    (age as usize).min(LAST_AGE)
}

/// The page-mode rank of `s`: one load from its row of `densities` (an explorer's row holds the
/// density + 1, the last column `f32::MIN`), at the offset of the row's bits or'ed with the
/// clamped age (disjoint bits, below the table's size).
#[inline(always)]
pub(super) fn unit_rank(densities: &[f32; DENSITIES], now: u64, shift: u32, s: Stamp) -> f32 {
    densities[s.row_offset() | age_of(now, shift, s)]
}
