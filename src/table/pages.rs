//! The memory a bucket array lives in: its own anonymous mapping, backed by transparent
//! huge pages when it spans one.
//!
//! Why not a `Box<[L]>`: the kernel allocates `futex_queues` (kernel/futex/core.c,
//! `futex_init()`, v6.16+: `kvzalloc_node`) from the direct map, which is mapped with
//! 2 MiB or 1 GiB pages, so a lookup of a random bucket in a 4 MiB table costs no TLB miss.
//! A `Box` of the same size comes from glibc `malloc`, which with `transparent_hugepage =
//! madvise` (the common distribution default) gets 4 KiB pages and, depending on glibc's
//! dynamic mmap threshold and on what was freed before, is either a fresh mapping or reused
//! heap memory with whatever pages it already had. Measured on a 2-vCPU KVM guest: eight
//! identical one-thread model runs on 65,536 aligned buckets varied by −6.5 … +1.9 % around
//! their median with a `Box`; the table's own mapping with `MADV_HUGEPAGE` makes every
//! table of one size get the same kind of pages in every run.
//!
//! Arrays smaller than a huge page use a plain mapping (4 KiB pages, as small kernel
//! tables fit in a few pages anyway). `madvise` failing (THP disabled) is not an error:
//! the table then has 4 KiB pages, as before.

use std::ops::Deref;
use std::ptr::NonNull;

/// The transparent huge page size: the kernel's `hpage_pmd_size` (2 MiB on x86-64 and on
/// arm64 with 4 KiB base pages, 32 MiB or 512 MiB with 16 or 64 KiB ones), 2 MiB if it
/// cannot be read. Read once per process.
fn huge_page() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|n| n.is_power_of_two() && (4096..=1 << 30).contains(n))
            .unwrap_or(2 << 20)
    })
}

/// A fixed-size array of `L` in its own anonymous mapping (see the module docs).
pub(crate) struct PageArray<L> {
    /// First element; the mapping starts here (aligned to `huge_page()` for large arrays).
    ptr: NonNull<L>,
    len: usize,
    /// Bytes mapped from `ptr` (what `munmap` gets).
    mapped: usize,
}

// SAFETY: a PageArray owns its elements like a Box<[L]> does; sending or sharing it is
// sending or sharing the elements.
unsafe impl<L: Send> Send for PageArray<L> {}
// SAFETY: as above; `&PageArray` only hands out `&[L]`.
unsafe impl<L: Sync> Sync for PageArray<L> {}

impl<L> std::fmt::Debug for PageArray<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageArray")
            .field("len", &self.len)
            .field("mapped", &self.mapped)
            .finish()
    }
}

impl<L: Default> PageArray<L> {
    /// `len` default elements, or [`NoMemory`] if the size overflows `isize` or the
    /// kernel refuses the mapping (the kernel's `kvzalloc` failing: `-ENOMEM`), so that a
    /// table too big for the machine is an error its caller reports, not a panic.
    /// `L::default()` must not panic (the bucket layouts' defaults are plain zeroed
    /// atomics); a panic there would leak the mapping, never expose uninitialised memory.
    pub(crate) fn new(len: usize) -> Result<Self, NoMemory> {
        let size = std::mem::size_of::<L>();
        assert!(
            std::mem::align_of::<L>() <= 4096,
            "page-aligned mappings hold any element up to page alignment"
        );
        // Every size below, up to the mapping's total with its alignment slack, fits in an
        // isize (what `slice::from_raw_parts` and `mmap` need), so the multiple-of and the
        // additions cannot wrap.
        let bytes = len
            .checked_mul(size)
            .filter(|&b| b <= isize::MAX as usize - 2 * huge_page())
            .ok_or(NoMemory {
                buckets: len,
                bytes: len.saturating_mul(size),
                // What mmap itself answers for a length no address space holds.
                errno: libc::ENOMEM,
            })?;
        if bytes == 0 {
            return Ok(PageArray {
                ptr: NonNull::dangling(),
                len,
                mapped: 0,
            });
        }
        let huge = bytes >= huge_page();
        let mapped = if huge {
            bytes.div_ceil(huge_page()) * huge_page()
        } else {
            bytes
        };
        let base = map_anonymous(mapped, huge).map_err(|e| NoMemory {
            buckets: len,
            bytes,
            errno: e.raw_os_error().unwrap_or(libc::ENOMEM),
        })?;
        let ptr = base.cast::<L>();
        for i in 0..len {
            // SAFETY: the mapping holds `mapped >= len * size` bytes, is page-aligned (so
            // aligned for L, asserted above), and element i has not been written yet; the
            // writes go to memory nothing else references.
            unsafe { ptr.as_ptr().add(i).write(L::default()) };
        }
        Ok(PageArray { ptr, len, mapped })
    }
}

/// A bucket array the kernel would not map: how many buckets, how many bytes, and the
/// `errno` of `mmap` (`ENOMEM` also for a size no address space holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMemory {
    /// Buckets asked for.
    pub buckets: usize,
    /// Bytes they need.
    pub bytes: usize,
    /// Why the mapping failed.
    pub errno: i32,
}

impl std::fmt::Display for NoMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot map a table of {} buckets ({:.1} MiB): {}",
            self.buckets,
            self.bytes as f64 / (1u64 << 20) as f64,
            std::io::Error::from_raw_os_error(self.errno)
        )
    }
}

impl std::error::Error for NoMemory {}

/// Maps `bytes` of zeroed anonymous memory; with `huge`, aligned to `huge_page()` and
/// advised to use transparent huge pages before the first touch.
fn map_anonymous(bytes: usize, huge: bool) -> std::io::Result<NonNull<u8>> {
    let extra = if huge { huge_page() } else { 0 };
    let total = bytes + extra;
    // SAFETY: an anonymous private mapping at an address of the kernel's choice aliases no
    // Rust object; the result is checked for MAP_FAILED.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let start = raw as usize;
    let aligned = if huge {
        start.next_multiple_of(huge_page())
    } else {
        start
    };
    if huge {
        let head = aligned - start;
        let tail = extra - head;
        // SAFETY: both ranges lie inside the mapping just created and outside the
        // [aligned, aligned + bytes) range kept; nothing references them.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
            }
            // Advice only: a kernel without THP returns EINVAL and the table keeps 4 KiB
            // pages, which is still correct.
            libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
    }
    Ok(NonNull::new(aligned as *mut u8).expect("mmap does not return null on success"))
}

impl<L> Deref for PageArray<L> {
    type Target = [L];
    #[inline(always)]
    fn deref(&self) -> &[L] {
        // SAFETY: `ptr` points at `len` initialised elements (or is dangling with len 0,
        // which from_raw_parts allows for a well-aligned pointer) owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<L> Drop for PageArray<L> {
    fn drop(&mut self) {
        // SAFETY: the elements were initialised in `new` and are dropped once, here; then
        // the mapping created in `new` (exactly `mapped` bytes from `ptr`) is removed, and
        // no reference to it outlives `self`.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ));
            if self.mapped > 0 {
                libc::munmap(self.ptr.as_ptr().cast(), self.mapped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    #[derive(Default)]
    #[repr(align(64))]
    struct Counted(u64);
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn large_arrays_start_on_a_huge_page_and_every_element_is_default_and_dropped() {
        DROPS.store(0, Ordering::Relaxed);
        let n = (huge_page() / 64) * 2 + 3; // just over two huge pages
        let a = PageArray::<Counted>::new(n).unwrap();
        assert_eq!(a.len(), n);
        assert_eq!(a.as_ptr() as usize % huge_page(), 0);
        assert!(a.iter().all(|c| c.0 == 0));
        assert_eq!(a.mapped, 3 * huge_page());
        drop(a);
        assert_eq!(DROPS.load(Ordering::Relaxed), n);
    }

    #[test]
    fn small_and_empty_arrays() {
        let a = PageArray::<u32>::new(5).unwrap();
        assert_eq!(&*a, &[0, 0, 0, 0, 0]);
        assert_eq!(a.as_ptr() as usize % 4096, 0);
        let e = PageArray::<u32>::new(0).unwrap();
        assert!(e.is_empty());
    }

    #[test]
    fn a_table_no_address_space_holds_is_an_enomem_error_not_a_panic() {
        // 2^59 eight-byte buckets: 4 EiB, past any x86-64 or arm64 user address space
        // (47–52 bits), so mmap refuses it with ENOMEM whatever the overcommit mode.
        let e = PageArray::<u64>::new(1 << 59).unwrap_err();
        assert_eq!(
            (e.buckets, e.bytes, e.errno),
            (1 << 59, 1 << 62, libc::ENOMEM)
        );
        let text = e.to_string();
        assert!(
            text.starts_with("cannot map a table of 576460752303423488 buckets"),
            "{text}"
        );
        // A size whose byte count overflows isize is the same error, before any mmap.
        let e = PageArray::<u64>::new(usize::MAX / 4).unwrap_err();
        assert_eq!(e.errno, libc::ENOMEM);
    }
}
