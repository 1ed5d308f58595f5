//! The `kernel` backend: the real `futex(2)` system call of the running kernel, and its
//! per-process private futex hash (`prctl(PR_FUTEX_HASH, ...)`, Linux 6.16+,
//! `kernel/futex/core.c: futex_hash_prctl()` and `futex_hash_allocate()`; perf's
//! `tools/perf/bench/futex.c` drives it the same way).
//!
//! `PR_FUTEX_HASH_SET_SLOTS` takes 0 (use the global hash: irreversible for the process) or
//! a power of two ≥ 2 (a private table of that many buckets); the 4th argument must be 0.
//! In Linux 6.18 the private table hashes only the address words of the key
//! (`__futex_hash_private()`: `jhash2(&key->private.address, 2, key->both.offset)`, the
//! seed's `jhash2-addr`), the global table the whole key (`jhash2`, 4 words + offset). A
//! user-chosen size wins over the kernel's automatic sizing on thread creation. Because
//! each setting sticks to the process, every configuration runs in a child process
//! ([`super::child`]).
//!
//! Shared futexes (no `FUTEX_PRIVATE_FLAG`, `-S`) are keyed by mm + address with the
//! "mm shared" offset bit for anonymous memory, and such keys always use the global hash,
//! whatever the slot setting (`__futex_hash()` takes the private hash only for the
//! process's own private keys).

use super::options::BenchError;
use super::runner::{Backend, Worker};
use std::sync::atomic::AtomicU32;

pub use crate::machine::{
    ASSUME_NO_PRIVATE_HASH_ENV, PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, PR_FUTEX_HASH_SET_SLOTS,
    get_slots, private_hash_supported,
};

/// The value the hash workload expects (never the word's value, which is 0).
const WAIT_EXPECTED: u32 = 1234;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0)`.
pub fn set_slots(slots: u64) -> Result<(), i32> {
    let n = libc::c_ulong::try_from(slots).map_err(|_| libc::EINVAL)?;
    // SAFETY: prctl with integer arguments only; no memory is passed to the kernel.
    let rc = unsafe {
        libc::prctl(
            PR_FUTEX_HASH,
            PR_FUTEX_HASH_SET_SLOTS,
            n,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc < 0 { Err(errno()) } else { Ok(()) }
}

/// Possible NUMA nodes (`/sys/devices/system/node/possible`, e.g. `0` or `0-3`; 1 if it
/// cannot be read): the global hash has one table per node since Linux 6.16.
pub fn possible_nodes() -> usize {
    let Ok(s) = std::fs::read_to_string("/sys/devices/system/node/possible") else {
        return 1;
    };
    let count: usize = s
        .trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(r.parse::<usize>().is_ok()),
        })
        .sum();
    count.max(1)
}

/// The kernel backend for one process: private or shared futexes.
#[derive(Clone, Copy, Debug)]
pub struct KernelBackend {
    /// Use shared futexes (no `FUTEX_PRIVATE_FLAG`), as perf's `-S`.
    pub shared: bool,
}

/// A thread's futex words and the futex op codes to use on them.
#[derive(Debug)]
pub struct KernelWorker<'a> {
    words: &'a [AtomicU32],
    wait_op: libc::c_int,
    wake_op: libc::c_int,
}

impl KernelWorker<'_> {
    #[inline]
    fn futex(&self, idx: usize, op: libc::c_int, val: u32) -> libc::c_long {
        let addr = self.words[idx].as_ptr();
        // SAFETY: `addr` points to a live, aligned 4-byte word owned by this worker (the
        // kernel only reads it for WAIT and only hashes its address for WAKE); the
        // timeout, uaddr2 and val3 arguments are unused by FUTEX_WAIT/FUTEX_WAKE and null.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                addr,
                op,
                val,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0u32,
            )
        }
    }
}

impl Worker for KernelWorker<'_> {
    #[inline]
    fn wait_fail(&mut self, idx: usize) -> bool {
        let rc = self.futex(idx, self.wait_op, WAIT_EXPECTED);
        rc == -1 && errno() == libc::EAGAIN
    }

    #[inline]
    fn wake(&mut self, idx: usize) -> bool {
        self.futex(idx, self.wake_op, 1) == 0
    }
}

impl Backend for KernelBackend {
    type Worker<'a> = KernelWorker<'a>;

    fn worker<'a>(&'a self, _thread: usize, words: &'a [AtomicU32]) -> KernelWorker<'a> {
        let flag = if self.shared {
            0
        } else {
            libc::FUTEX_PRIVATE_FLAG
        };
        KernelWorker {
            words,
            wait_op: libc::FUTEX_WAIT | flag,
            wake_op: libc::FUTEX_WAKE | flag,
        }
    }
}

/// Explains why `PR_FUTEX_HASH_SET_SLOTS` failed.
pub(crate) fn set_slots_error(slots: u64, e: i32) -> BenchError {
    let os = std::io::Error::from_raw_os_error(e);
    match e {
        libc::EINVAL => BenchError::usage(format!(
            "the kernel refused {slots} private hash slots ({os}): it takes 0 (global \
                 hash) or a power of two >= 2"
        )),
        libc::ENOMEM => BenchError::usage(format!(
            "the kernel could not allocate {slots} private hash slots ({os})"
        )),
        libc::EBUSY => BenchError::runtime(format!(
            "the kernel refused to change the private hash to {slots} slots now ({os}): the \
             process already switched to the global hash or a resize is in flight"
        )),
        _ => BenchError::runtime(format!(
            "prctl(PR_FUTEX_HASH, SET_SLOTS, {slots}) failed: {os}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::runner::allocate_words;

    #[test]
    fn wait_fails_with_eagain_and_wake_wakes_nobody() {
        for shared in [false, true] {
            let words = allocate_words(1, 4);
            let b = KernelBackend { shared };
            let mut w = b.worker(0, &words[0]);
            for i in 0..4 {
                assert!(w.wait_fail(i), "wait on word {i} (shared {shared})");
                assert!(w.wake(i), "wake on word {i} (shared {shared})");
            }
        }
    }

    #[test]
    fn set_slots_errors_are_explained() {
        let e = set_slots_error(3, libc::EINVAL);
        assert!(e.usage && e.message.contains("power of two"));
        let e = set_slots_error(16, libc::EBUSY);
        assert!(!e.usage && e.message.contains("global hash"));
    }
}
