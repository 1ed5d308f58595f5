//! Security figures for the futex hash: how much an unprivileged process can learn through
//! bucket collisions, how well the timing channel that reveals them separates, and how much
//! a process that knows the hash can slow another one down by parking waiters in its buckets.
//!
//! Background: KernelSnitch (Maar, Gruss et al., "KernelSnitch: Side-Channel Attacks on
//! Kernel Data Structures", NDSS 2025) showed that the time of a futex operation depends on
//! whether its hash bucket is occupied (`futex_wake()` returns early when
//! `futex_hb_waiters_pending()` sees no waiters, kernel/futex/waitwake.c), and that the
//! global futex hash — unkeyed `jhash2` over `(mm, address)`, kernel/futex/core.c
//! `__futex_hash()` — turns bucket collisions among the attacker's own futexes into the
//! kernel address of its `mm_struct`. Since Linux 6.16 a multi-threaded process gets a
//! private hash table that hashes the address only (`__futex_hash_private()`); single-threaded
//! processes and `PR_FUTEX_HASH_SET_SLOTS 0` still use the global table.
//!
//! - [`oracle`]: the candidate space for `mm`, the table as a function `(mm, address) →
//!   bucket`, and the collision oracle that holds the secret `mm`.
//! - [`leak`]: the attacker that turns collision observations into candidates for its `mm`,
//!   and the harness that draws the secret and scores the result.
//! - [`channel`]: the timing channel itself, measured with real threads on the model table.
//! - [`flood`]: a victim's wait/wake throughput while an attacker parks waiters in its
//!   buckets, measured with real threads on the model table.
//! - [`records`]: the three run over every configuration asked for, one serialisable
//!   record each (what `futexhash attack` prints).
//!
//! `docs/security.md` has the threat model and the measured figures.

pub mod channel;
pub mod flood;
pub mod leak;
pub mod oracle;
pub mod records;
