//! `futexhash attack leak|channel|flood` (docs/cli.md, "attack"; the library side
//! is [`crate::attack`], its loops over configurations [`crate::attack::records`], user
//! docs in `docs/security.md`).

use super::{CliError, OutputArgs, args};
use crate::attack::channel::Scenario;
use crate::attack::flood::{self, Placement, VictimWorkload};
use crate::attack::oracle::{AttackTable, CandidateSpace, DEFAULT_SPACE_BITS, MAX_SPACE_BITS};
use crate::attack::records::{
    self, ChannelRecord, ChannelRequest, FloodRecord, FloodRequest, LeakRecord, LeakRequest,
    REAL_SLOTS, TableSizes, drawn_key,
};
use crate::bench::interrupt;
use crate::hashers::{HashKey, KeyHasher};
use crate::render::{Format, MAIL_WIDTH, TextTable, output};
use crate::table::{Aligned, kernel_per_node_size, merged_default_slots, possible_cpus};
use serde::Serialize;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub(super) struct AttackArgs {
    #[command(subcommand)]
    cmd: AttackCmd,
}

#[derive(Debug, clap::Subcommand)]
enum AttackCmd {
    /// Leak the attacker's own mm pointer from bucket collisions (KernelSnitch).
    Leak(LeakArgs),
    /// Park waiters in a victim's buckets and measure its wait/wake throughput.
    Flood(FloodArgs),
    /// Measure the timing channel: wake on an occupied vs an empty bucket (model table).
    Channel(ChannelArgs),
}

/// Largest table `attack` builds or models: 2^24 buckets (slots), as `bench`, `sim` and
/// `dist`, and the kernel's own global size for the most CPUs `--cpus` takes (65536).
const MAX_TABLE: u64 = 1 << 24;

/// Options shared by the subcommands: tables and their sizes.
#[derive(Debug, Clone, clap::Args)]
struct TableArgs {
    /// Tables: global (the hash covers mm and address), private (the v6.16+ per-process
    /// table: address only), or a comma list.
    #[arg(long, value_name = "LIST", default_value = "global,private")]
    table: String,
    /// Buckets of the global table, a power of two in 2..=2^24 (16777216); default the
    /// kernel's size for --cpus, roundup_pow_of_two(256 x CPUs).
    #[arg(long, value_name = "N", value_parser = args::number)]
    buckets: Option<u64>,
    /// Slots of the private table, a power of two in 2..=2^24 (16777216); default the
    /// kernel's automatic size for a process with --cpus threads.
    #[arg(long, value_name = "N", value_parser = args::number)]
    slots: Option<u64>,
    /// CPU count for the kernel's default sizes (default: this machine's); refused when
    /// every size the run uses is given.
    #[arg(long, value_name = "N", value_parser = args::number)]
    cpus: Option<u64>,
}

/// Which size flags a subcommand reads for the private table design: `leak` and `channel`
/// hash private keys into the private table only (`--slots`); `flood` also aims its
/// computed placement at the global table's buckets (`--buckets`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum PrivateReads {
    Slots,
    SlotsAndBuckets,
}

/// The table sentence of a preamble: the size of each table the run attacks, and where
/// that size came from (a flag, or the kernel's default for a CPU count).
fn describe(t: &TableSizes, a: &TableArgs, private_reads: PrivateReads) -> String {
    let cpus_from = if a.cpus.is_some() {
        "CPU count from --cpus"
    } else {
        "this machine's CPU count"
    };
    let mut parts = Vec::new();
    if reads_buckets(&t.kinds, private_reads) {
        parts.push(match a.buckets {
            Some(_) => format!("global table {} buckets (--buckets)", t.buckets),
            None => format!(
                "global table {} buckets (the kernel's size for {} CPUs, \
                 roundup_pow_of_two(256 x {}); {cpus_from})",
                t.buckets, t.cpus, t.cpus
            ),
        });
    }
    if t.kinds.contains(&AttackTable::Private) {
        parts.push(match a.slots {
            Some(_) => format!("private table {} slots (--slots)", t.slots),
            None => format!(
                "private table {} slots (the kernel's automatic size for a process with {} \
                 threads on {} CPUs; {cpus_from})",
                t.slots, t.cpus, t.cpus
            ),
        });
    }
    parts.join(", ")
}

/// Whether a run over the designs `kinds` reads the global table's size.
fn reads_buckets(kinds: &[AttackTable], private_reads: PrivateReads) -> bool {
    kinds.contains(&AttackTable::Global)
        || (kinds.contains(&AttackTable::Private) && private_reads == PrivateReads::SlotsAndBuckets)
}

impl TableArgs {
    /// The table designs and sizes asked for; refuses, before any work, a size out of
    /// range and a size flag the run does not read (`--slots` without the private table,
    /// `--buckets` without a design that reads it, `--cpus` when every size read is given).
    fn check(&self, private_reads: PrivateReads) -> Result<TableSizes, CliError> {
        args::no_repeats("table", &self.table)?;
        let mut kinds = Vec::new();
        for t in self.table.split(',').map(str::trim) {
            let k = match t {
                "global" => AttackTable::Global,
                "private" => AttackTable::Private,
                _ => {
                    return Err(CliError::Usage(format!(
                        "--table '{t}' is not a table; allowed: global, private (or a comma list)"
                    )));
                }
            };
            kinds.push(k);
        }
        let reads_slots = kinds.contains(&AttackTable::Private);
        let reads_buckets = reads_buckets(&kinds, private_reads);
        if let Some(s) = self.slots
            && !reads_slots
        {
            return Err(CliError::Usage(format!(
                "--slots {s} sizes the private table, which --table {} does not attack; \
                 drop --slots or add private to --table",
                self.table
            )));
        }
        if let Some(b) = self.buckets
            && !reads_buckets
        {
            return Err(CliError::Usage(format!(
                "--buckets {b} sizes the global table, which --table {} does not attack; \
                 drop --buckets or add global to --table",
                self.table
            )));
        }
        let cpus = match self.cpus {
            None => possible_cpus(),
            Some(n @ 1..=65536) => n as usize,
            Some(n) => {
                return Err(CliError::Usage(format!("--cpus {n} must be in 1..=65536")));
            }
        };
        if let Some(n) = self.cpus
            && (!reads_buckets || self.buckets.is_some())
            && (!reads_slots || self.slots.is_some())
        {
            return Err(CliError::Usage(format!(
                "--cpus {n} only sets the default table sizes, and every size this run uses \
                 is given; drop --cpus"
            )));
        }
        let pow2 = |v: u64, what: &str| -> Result<usize, CliError> {
            if v < 2 || !v.is_power_of_two() || v > MAX_TABLE {
                return Err(CliError::Usage(format!(
                    "--{what} {v} must be a power of two in 2..={MAX_TABLE} (2^24)"
                )));
            }
            Ok(v as usize)
        };
        let buckets = match self.buckets {
            Some(b) => pow2(b, "buckets")?,
            None => kernel_per_node_size(cpus, 1),
        };
        let slots = match self.slots {
            Some(s) => pow2(s, "slots")?,
            None => merged_default_slots(cpus, cpus, kernel_per_node_size(cpus, 1)),
        };
        Ok(TableSizes {
            kinds,
            buckets,
            slots,
            cpus,
        })
    }
}

/// Refuses, before any work, model tables that need more memory than this process may
/// still use (`flood` and `channel` build them; `leak` only computes bucket indices): one
/// global table of `buckets`, and with the private design one table of `slots` for each of
/// the two processes, each bucket a 64-byte line ([`Aligned`]). Without this a table too
/// large for the limits ends the run in a failed mapping.
fn check_table_memory(t: &TableSizes) -> Result<(), CliError> {
    let line = std::mem::size_of::<Aligned>() as u64;
    let private = if t.kinds.contains(&AttackTable::Private) {
        2 * t.slots as u64
    } else {
        0
    };
    let lines = t.buckets as u64 + private;
    // Each table's mapping is made a huge page (2 MiB on x86-64) longer while it is aligned.
    let slack = if private > 0 { 3 } else { 1 } * (2u64 << 20);
    let what = if private > 0 {
        format!(
            "a global table of {} buckets and two private tables of {} slots ({line} bytes each)",
            t.buckets, t.slots
        )
    } else {
        format!(
            "a global table of {} buckets ({line} bytes each)",
            t.buckets
        )
    };
    crate::limits::Limits::current()
        .check_memory(lines * line + slack, &what)
        .map_err(|e| CliError::Usage(format!("{e}; ask for smaller tables")))
}

#[derive(Debug, clap::Args)]
struct LeakArgs {
    /// Hashers of the table: a comma list (see `futexhash list`), `seed` or `all`.
    #[arg(long, value_name = "LIST")]
    algo: String,
    #[command(flatten)]
    tables: TableArgs,
    /// log2 of the candidate space for mm: the first 2^N 64-byte aligned addresses of the
    /// direct map 0xffff888000000000 (30 = 64 GiB of RAM).
    #[arg(long, value_name = "N", value_parser = args::number, default_value_t = DEFAULT_SPACE_BITS as u64)]
    space_bits: u64,
    /// Seed: draws the secret mm (and the kernel's hash key unless --hash-key is given).
    #[arg(long, value_name = "S", value_parser = args::number, default_value = "1")]
    seed: u64,
    /// The kernel's key for the keyed hashers (32 hex digits); default: drawn from --seed,
    /// unknown to the attacker.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    hash_key: Option<HashKey>,
    /// The key the attacker assumes for keyed hashers (a guess; the same as --hash-key
    /// models a leaked key). Without it, the attacker has no key and cannot test candidates
    /// of a keyed hasher; with it, it scans with that key (one full scan).
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    attacker_key: Option<HashKey>,
    /// Most probes (timing decisions) per attack.
    #[arg(long, value_name = "N", value_parser = args::number, default_value = "4194304")]
    max_probes: u64,
    #[command(flatten)]
    out: OutputArgs,
}

fn render<T: Serialize>(
    out: &OutputArgs,
    records: &[T],
    table: impl FnOnce() -> String,
) -> Result<(), CliError> {
    let text = match out.format {
        Format::Table => table(),
        Format::Csv => output::to_csv(records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Json => output::to_json(records).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    // Only once the records are rendered: a signal watcher (leak, channel) that abandons
    // the run before this writes nothing.
    super::interrupt::claim_output();
    out.emit(&text)
}

fn run_leak(a: LeakArgs) -> Result<(), CliError> {
    args::no_repeated_hashers(&a.algo)?;
    if a.hash_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--hash-key")?;
    }
    if a.attacker_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--attacker-key")?;
    }
    let tables = a.tables.check(PrivateReads::Slots)?;
    if a.space_bits == 0 || a.space_bits > MAX_SPACE_BITS as u64 {
        return Err(CliError::Usage(format!(
            "--space-bits {} must be in 1..={MAX_SPACE_BITS}",
            a.space_bits
        )));
    }
    if a.max_probes == 0 {
        return Err(CliError::usage("--max-probes 0 must be at least 1"));
    }
    let space = CandidateSpace::direct_map(a.space_bits as u32).map_err(CliError::usage)?;
    let kernel_key = a.hash_key.unwrap_or_else(|| drawn_key(a.seed));
    let kernel = args::algo_list(&a.algo, kernel_key)?;
    let attacker = args::algo_list(&a.algo, a.attacker_key.unwrap_or(HashKey::DEFAULT))?;
    a.out.check()?;
    // The records are written when every attack is done (a scan of the candidate space
    // takes seconds to minutes): an interruption keeps nothing.
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let records = records::leak_records(&LeakRequest {
        kernel: &kernel,
        attacker: &attacker,
        kernel_key,
        attacker_key: a.attacker_key,
        tables: &tables,
        space,
        seed: a.seed,
        max_probes: a.max_probes,
    });
    let keyed = kernel.iter().any(|h| h.keyed());
    render(&a.out, &records, || {
        let mut lines = vec![
            format!(
                "candidate space for mm: 2^{} values, {:#x} + {} x 64 bytes (direct map, no \
                 KASLR); secret mm drawn with seed {}",
                space.bits,
                space.base,
                space.len(),
                a.seed,
            ),
            format!(
                "{}; probes are timing decisions (`attack channel` gives samples per \
                 decision)",
                describe(&tables, &a.tables, PrivateReads::Slots)
            ),
        ];
        if keyed {
            lines.push(format!(
                "keyed hashers: kernel key {}, attacker {}",
                if a.hash_key.is_some() {
                    "given"
                } else {
                    "drawn from the seed"
                },
                match a.attacker_key {
                    None => "has no key and cannot test candidates",
                    Some(k) if k == kernel_key => "has the kernel's key",
                    Some(_) => "tests candidates with another key",
                },
            ));
        }
        format!("{}\n{}", paragraphs(&lines), leak_table(&records))
    })
}

/// Sentences of a preamble, each starting a line and wrapped at the mail width.
fn paragraphs(sentences: &[String]) -> String {
    sentences
        .iter()
        .map(|s| wrap(s, MAIL_WIDTH))
        .collect::<Vec<_>>()
        .join("\n")
}

fn leak_table(records: &[LeakRecord]) -> String {
    let mut t = TextTable::new([
        "algo",
        "table",
        "buckets",
        "probes",
        "collisions",
        "candidates left",
        "bits leaked",
        "mm recovered",
        "stop",
        "seconds",
    ]);
    for r in records {
        t.push(vec![
            r.algo.clone(),
            r.table.to_string(),
            r.buckets.to_string(),
            r.probes.to_string(),
            r.collisions_observed.to_string(),
            r.candidates_left.to_string(),
            format!("{:.2}", r.bits_leaked),
            if r.mm_recovered {
                r.mm_guess.clone()
            } else {
                "no".into()
            },
            r.stop.to_string(),
            format!("{:.2}", r.seconds),
        ]);
    }
    // A row is read by its hasher and table: both are repeated when the table is split.
    t.render_within(MAIL_WIDTH, 2)
}

pub(super) fn run(a: AttackArgs) -> Result<(), CliError> {
    match a.cmd {
        AttackCmd::Leak(l) => run_leak(l),
        AttackCmd::Flood(f) => run_flood(f),
        AttackCmd::Channel(c) => run_channel(c),
    }
}

#[derive(Debug, clap::Args)]
struct FloodArgs {
    /// Hashers of the table: a comma list (see `futexhash list`), `seed` or `all`.
    #[arg(long, value_name = "LIST")]
    algo: String,
    #[command(flatten)]
    tables: TableArgs,
    /// Waiters the attacker parks (one parked thread each).
    #[arg(long, value_name = "N", value_parser = args::number, default_value = "1024")]
    attacker_keys: u64,
    /// How the attacker picks its addresses: computed (its hash model, both mm values
    /// assumed known), discovered (probing against the victim's waiters: no mm, no key),
    /// blind; or a comma list.
    /// A control row (waiters that share no bucket with the victim's) is always measured
    /// too, interleaved with the others, and every row is judged against it.
    #[arg(long, value_name = "LIST", default_value = "computed,discovered")]
    placement: String,
    /// Victim workload: pingpong (wait/wake handoff between two threads), wake (wakes on
    /// words nobody waits on), or a comma list.
    #[arg(long, value_name = "LIST", default_value = "wake,pingpong")]
    victim: String,
    /// Length of one measured run, milliseconds.
    #[arg(long, value_name = "MS", value_parser = args::number, default_value = "200")]
    duration_ms: u64,
    /// Repetitions (each: alone, control, every placement); the medians are reported, and a
    /// verdict needs at least 2.
    #[arg(long, value_name = "N", value_parser = args::number, default_value = "3")]
    reps: u64,
    /// Seed: draws both mm values (and the kernel's hash key unless --hash-key is given).
    #[arg(long, value_name = "S", value_parser = args::number, default_value = "1")]
    seed: u64,
    /// The kernel's key for the keyed hashers (32 hex digits); default: drawn from --seed.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    hash_key: Option<HashKey>,
    /// The key the attacker assumes when computing placements for keyed hashers (default
    /// 000102030405060708090a0b0c0d0e0f); refused when no hasher of --algo is keyed.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    attacker_key: Option<HashKey>,
    #[command(flatten)]
    out: OutputArgs,
}

fn list<T: Copy + PartialEq>(
    s: &str,
    what: &str,
    allowed: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, CliError> {
    args::no_repeats(what, s)?;
    let mut v = Vec::new();
    for p in s.split(',').map(str::trim) {
        let x = parse(p).ok_or_else(|| {
            CliError::Usage(format!("--{what} '{p}' is not allowed; allowed: {allowed}"))
        })?;
        v.push(x);
    }
    Ok(v)
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays
/// whole on its own line).
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines.join("\n")
}

fn run_flood(a: FloodArgs) -> Result<(), CliError> {
    args::no_repeated_hashers(&a.algo)?;
    if a.hash_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--hash-key")?;
    }
    if a.attacker_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--attacker-key")?;
    }
    let tables = a.tables.check(PrivateReads::SlotsAndBuckets)?;
    let placements = list(
        &a.placement,
        "placement",
        "computed, discovered, blind, control (or a comma list)",
        Placement::by_name,
    )?;
    let workloads = list(
        &a.victim,
        "victim",
        "pingpong, wake (or a comma list)",
        VictimWorkload::by_name,
    )?;
    if !(1..=8192).contains(&a.attacker_keys) {
        return Err(CliError::Usage(format!(
            "--attacker-keys {} must be in 1..=8192 (one parked thread each)",
            a.attacker_keys
        )));
    }
    if !(1..=60_000).contains(&a.duration_ms) {
        return Err(CliError::Usage(format!(
            "--duration-ms {} must be in 1..=60000",
            a.duration_ms
        )));
    }
    if !(1..=100).contains(&a.reps) {
        return Err(CliError::Usage(format!(
            "--reps {} must be in 1..=100",
            a.reps
        )));
    }
    // Before the hashers: a c: hasher is compiled and probed by algo_list.
    check_table_memory(&tables)?;
    let kernel_key = a.hash_key.unwrap_or_else(|| drawn_key(a.seed));
    let kernel = args::algo_list(&a.algo, kernel_key)?;
    let attacker_key = a.attacker_key.unwrap_or(HashKey::DEFAULT);
    let attacker = args::algo_list(&a.algo, attacker_key)?;
    a.out.check()?;
    let (victim_mm, attacker_mm) = records::flood_mms(a.seed);
    // The model's waiters block for real, so they sit in this process's real futex hash
    // too: give it a private table large enough to keep those chains short.
    let real_slots = records::switch_this_process_to_private_futex_hash(REAL_SLOTS);
    // SIGINT/SIGTERM: the configuration running finishes, the rest are skipped, what
    // finished is printed and written, and the exit status is 130 (as `bench`).
    interrupt::install();
    let req = FloodRequest {
        kernel: &kernel,
        attacker: &attacker,
        same_key: kernel_key == attacker_key,
        tables: &tables,
        placements: &placements,
        workloads: &workloads,
        attacker_keys: a.attacker_keys as usize,
        duration: Duration::from_millis(a.duration_ms),
        reps: a.reps as usize,
        victim_mm,
        attacker_mm,
    };
    // One line counting the configurations, on a terminal only (a run takes seconds per
    // configuration, minutes for `--algo all`).
    let pb = super::progress::counter(
        "attack flood",
        req.configurations() as u64,
        "configurations",
    );
    let records = records::flood_records(&req, || pb.inc(1), interrupt::requested);
    pb.finish_and_clear();
    let records = records.map_err(|e| CliError::Runtime(e.to_string()))?;
    render(&a.out, &records, || {
        format!(
            "{}\n{}",
            flood_header(&a, &req, real_slots),
            flood_table(&records)
        )
    })?;
    if interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// What the flood table's figures are, one paragraph.
fn flood_header(a: &FloodArgs, req: &FloodRequest, real_slots: Option<u64>) -> String {
    let cpus = records::available_cpus();
    let threads = if 2 > cpus {
        format!(
            "NOTE: 2 running victim threads exceed the {cpus} CPU(s): the figures include \
             the scheduler"
        )
    } else {
        format!(
            "2 victim threads run on {cpus} CPUs; the attacker's {} threads are parked \
             (not runnable)",
            a.attacker_keys
        )
    };
    paragraphs(&[
        format!(
            "model table, real threads; {}",
            describe(req.tables, &a.tables, PrivateReads::SlotsAndBuckets)
        ),
        format!(
            "victim mm {:#x}, attacker mm {:#x} (seed {}); computed placement assumes both mm \
             values known (the leak gives only the attacker's own); discovered placement \
             needs neither mm nor key, only a table shared with the victim",
            req.victim_mm, req.attacker_mm, a.seed,
        ),
        format!(
            "{threads}; this process's real futex hash: {}",
            match real_slots {
                Some(n) => format!(
                    "{n} private slots (set so the parked threads' real futexes stay out of \
                     the victim's way)"
                ),
                None => "unchanged (no PR_FUTEX_HASH): the victim's real park/unpark may \
                         share chains with the parked threads"
                    .into(),
            }
        ),
        format!(
            "shared: attacker waiters in the victim's buckets; control: victim rate alone / \
             with as many waiters that share no bucket with it, median of {} repetitions",
            a.reps
        ),
        format!(
            "slowdown: beyond the control, exp(mean ln(control rate / attacked rate)), shown \
             only when that log exceeds 4 null sd (the sd over the repetitions of ln(alone / \
             control), at least {}), else not separable",
            flood::MIN_NULL_SD
        ),
    ])
}

/// Seven columns: 94 wide with the longest hasher name (hash_long_old-addr); the rates,
/// alone / attacked ratios, null sd, per CPU second figures and wake latencies are in the
/// CSV and JSON records.
fn flood_table(records: &[FloodRecord]) -> String {
    let mut t = TextTable::new([
        "algo",
        "table",
        "placement",
        "victim",
        "shared",
        "control",
        "slowdown",
    ]);
    for r in records {
        t.push(vec![
            r.algo.clone(),
            r.table.to_string(),
            r.placement.to_string(),
            r.victim_workload.to_string(),
            format!("{}/{}", r.keys_in_victim_buckets, r.attacker_keys),
            format!("{:.2}x", r.control_slowdown),
            match (r.verdict, r.separable) {
                ("control", _) => "-".to_string(),
                (_, true) => format!("{:.2}x", r.slowdown_vs_control),
                (_, false) => "not separable".to_string(),
            },
        ]);
    }
    // A row is read by its first four columns: all are repeated when the table is split.
    t.render_within(MAIL_WIDTH, 4)
}

#[derive(Debug, clap::Args)]
struct ChannelArgs {
    /// Hashers of the table: a comma list (see `futexhash list`), `seed` or `all`.
    #[arg(long, value_name = "LIST", default_value = "jhash2")]
    algo: String,
    #[command(flatten)]
    tables: TableArgs,
    /// Threads parked in the probed bucket: a comma list.
    #[arg(long, value_name = "LIST", default_value = "1,8")]
    waiters: String,
    /// Whose waiters: cross (the victim's, probed by the attacker), self (the attacker's
    /// own, as in the leak), or a comma list.
    #[arg(long, value_name = "LIST", default_value = "cross,self")]
    scenario: String,
    /// Timed wakes per class (hit and miss).
    #[arg(long, value_name = "N", value_parser = args::number, default_value = "20000")]
    samples: u64,
    /// Seed: draws both mm values.
    #[arg(long, value_name = "S", value_parser = args::number, default_value = "1")]
    seed: u64,
    #[command(flatten)]
    out: OutputArgs,
}

fn run_channel(a: ChannelArgs) -> Result<(), CliError> {
    args::no_repeated_hashers(&a.algo)?;
    let tables = a.tables.check(PrivateReads::Slots)?;
    let scenarios = list(
        &a.scenario,
        "scenario",
        "cross, self (or a comma list)",
        Scenario::by_name,
    )?;
    let mut waiters = Vec::new();
    for w in a.waiters.split(',').map(str::trim) {
        match args::number(w) {
            Ok(n @ 1..=1024) if waiters.contains(&(n as usize)) => {
                return Err(CliError::Usage(format!(
                    "--waiters '{w}' is listed twice in '{}'",
                    a.waiters
                )));
            }
            Ok(n @ 1..=1024) => waiters.push(n as usize),
            _ => {
                return Err(CliError::Usage(format!(
                    "--waiters '{w}' must be a number in 1..=1024 (or a comma list)"
                )));
            }
        }
    }
    if !(100..=10_000_000).contains(&a.samples) {
        return Err(CliError::Usage(format!(
            "--samples {} must be in 100..=10000000",
            a.samples
        )));
    }
    // Before the hashers: a c: hasher is compiled and probed by algo_list.
    check_table_memory(&tables)?;
    let hashers = args::algo_list(&a.algo, drawn_key(a.seed))?;
    a.out.check()?;
    // The records are written when every measurement is done: an interruption keeps
    // nothing (its parked threads end with the process).
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let records = records::channel_records(&ChannelRequest {
        hashers: &hashers,
        tables: &tables,
        scenarios: &scenarios,
        waiters: &waiters,
        samples: a.samples as usize,
        seed: a.seed,
    })
    .map_err(|e| CliError::Runtime(e.to_string()))?;
    render(&a.out, &records, || {
        let lines = [
            format!(
                "model table, real parked threads; {}",
                describe(&tables, &a.tables, PrivateReads::Slots)
            ),
            format!(
                "{} timed wakes per class, hit and miss alternating, monotonic clock around \
                 each call (its cost is in both classes)",
                a.samples
            ),
            "probes per decision: majority vote of independent samples at the held-out \
             single-sample accuracy"
                .to_string(),
            format!(
                "AUC control: the same probes with nobody parked; excess: parked minus control \
                 AUC, mean of {} blocks each with its own control, ± its standard error; \
                 separable when the AUC and the excess both clear 4 standard errors",
                records.first().map_or(0, |r| r.blocks)
            ),
        ];
        format!("{}\n{}", paragraphs(&lines), channel_table(&records))
    })
}

fn channel_table(records: &[ChannelRecord]) -> String {
    let mut t = TextTable::new([
        "algo",
        "table",
        "scenario",
        "waiters",
        "same bucket",
        "hit ns (median)",
        "miss ns (median)",
        "AUC",
        "AUC control",
        "excess ± se",
        "accuracy",
        "probes per decision (99%)",
    ]);
    for r in records {
        t.push(vec![
            r.algo.clone(),
            r.table.to_string(),
            r.scenario.to_string(),
            r.waiters.to_string(),
            if r.same_bucket { "yes" } else { "no" }.to_string(),
            format!("{:.0}", r.hit_ns_median),
            format!("{:.0}", r.miss_ns_median),
            format!("{:.3}", r.auc),
            format!("{:.3}", r.auc_control),
            format!("{:+.3} ± {:.3}", r.auc_excess, r.auc_excess_se),
            format!("{:.3}", r.accuracy),
            match (r.separable, r.probes_per_decision_99) {
                (false, _) => "not separable".to_string(),
                (true, Some(n)) => n.to_string(),
                // Separable by rank, but no threshold rule beat a coin on the held-out half
                // (or the vote needs more than the largest count reported).
                (true, None) => "separable, no count".to_string(),
            },
        ]);
    }
    // A row is read by its hasher, table, scenario and waiter count: all are repeated
    // when the table is split.
    t.render_within(MAIL_WIDTH, 4)
}
