//! Large zero-filled arrays of integers on transparent huge pages ([`HugeZeroed`]), for metadata
//! indexed at random by a hash (W-TinyLFU's sketch and doorkeeper): a lookup anywhere in several
//! megabytes otherwise needs a page-table walk as well as the cache line (about one 4 KB page
//! translation per lookup, beyond what the CPU's TLB holds), and at 2 MB a page the whole array
//! is a few TLB entries.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Types for which all-zero bytes are a valid value (plain integers).
///
/// # Safety
/// Implement only for types whose every bit pattern of zeros is a valid value.
pub unsafe trait Zeroable: Copy {}
// SAFETY: integers.
unsafe impl Zeroable for u8 {}
// SAFETY: integers.
unsafe impl Zeroable for u32 {}
// SAFETY: integers.
unsafe impl Zeroable for u64 {}

/// Huge page size (x86-64 and most Linux targets' PMD size).
const HUGE: usize = 2 << 20;

/// A fixed-length zero-filled array. From 2 MB up it is allocated 2 MB-aligned (through the
/// global allocator, so heap accounting still sees it), advised to Linux as a huge-page
/// region before it is first written, then zeroed, so the kernel backs it with 2 MB pages
/// when it has them (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise` or `always`);
/// smaller arrays, and other systems, get an ordinary zeroed allocation. The contents are the
/// same either way: only the speed of random lookups differs.
pub struct HugeZeroed<T: Zeroable> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: it owns its elements like a `Box<[T]>`.
unsafe impl<T: Zeroable + Send> Send for HugeZeroed<T> {}
// SAFETY: as above.
unsafe impl<T: Zeroable + Sync> Sync for HugeZeroed<T> {}

impl<T: Zeroable> HugeZeroed<T> {
    /// `len` zeros.
    pub fn new(len: usize) -> Self {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("array size overflows");
        if bytes == 0 {
            return HugeZeroed {
                ptr: NonNull::dangling(),
                len,
                layout: Layout::new::<()>(),
            };
        }
        let huge = bytes >= HUGE && cfg!(target_os = "linux");
        let align = if huge {
            HUGE
        } else {
            std::mem::align_of::<T>()
        };
        let layout = Layout::from_size_align(bytes, align).expect("array layout");
        // SAFETY: `layout` has a non-zero size.
        let p = unsafe {
            if huge {
                alloc(layout)
            } else {
                alloc_zeroed(layout)
            }
        };
        let Some(ptr) = NonNull::new(p.cast::<T>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        if huge {
            #[cfg(target_os = "linux")]
            // SAFETY: the range is our own allocation, 2 MB-aligned; the advice only changes how
            // the kernel backs it (an error, e.g. no THP support, leaves it as it was).
            unsafe {
                libc::madvise(p.cast(), bytes, libc::MADV_HUGEPAGE);
            }
            // SAFETY: `bytes` bytes at `p` are ours; zeros are a valid `T`.
            unsafe { std::ptr::write_bytes(p, 0, bytes) };
        }
        HugeZeroed { ptr, len, layout }
    }
}

impl<T: Zeroable> Drop for HugeZeroed<T> {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) }
        }
    }
}

impl<T: Zeroable> Deref for HugeZeroed<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized elements (or a dangling pointer with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for HugeZeroed<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_of_every_size_reads_and_writes() {
        for len in [0usize, 1, 1000, (2 << 20) / 8, (5 << 20) / 8 + 3] {
            let mut a = HugeZeroed::<u64>::new(len);
            assert_eq!(a.len(), len);
            assert!(a.iter().all(|&x| x == 0));
            if len > 1 {
                a[len - 1] = 7;
                a[0] += 1;
                assert_eq!((a[0], a[1], a[len - 1]), (1, 0, 7));
                assert_eq!(a.iter().sum::<u64>(), 8);
            }
        }
    }
}
