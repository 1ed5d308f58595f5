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
use crate::hashers::HashKey;
use crate::render::{Format, MAIL_WIDTH, TextTable, output};
use crate::table::{kernel_per_node_size, merged_default_slots, possible_cpus};
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

/// Options shared by the subcommands: tables and their sizes.
#[derive(Debug, Clone, clap::Args)]
struct TableArgs {
    /// Tables: global (the hash covers mm and address), private (the v6.16+ per-process
    /// table: address only), or a comma list.
    #[arg(long, value_name = "LIST", default_value = "global,private")]
    table: String,
    /// Buckets of the global table (a power of two); default the kernel's size for --cpus,
    /// roundup_pow_of_two(256 x CPUs).
    #[arg(long, value_name = "N", value_parser = args::number)]
    buckets: Option<u64>,
    /// Slots of the private table (a power of two >= 2); default the kernel's automatic
    /// size for a process with --cpus threads.
    #[arg(long, value_name = "N", value_parser = args::number)]
    slots: Option<u64>,
    /// CPU count for the kernel's sizes (default: this machine's).
    #[arg(long, value_name = "N", value_parser = args::number)]
    cpus: Option<u64>,
}

/// One sentence stating the table sizes.
fn describe(t: &TableSizes) -> String {
    format!(
        "global table {} buckets (kernel size for {} CPUs: roundup_pow_of_two(256 x {})), \
         private table {} slots",
        t.buckets, t.cpus, t.cpus, t.slots
    )
}

impl TableArgs {
    fn check(&self) -> Result<TableSizes, CliError> {
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
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        let cpus = match self.cpus {
            None => possible_cpus(),
            Some(n @ 1..=65536) => n as usize,
            Some(n) => {
                return Err(CliError::Usage(format!("--cpus {n} must be in 1..=65536")));
            }
        };
        let pow2 = |v: u64, what: &str, min: u64| -> Result<usize, CliError> {
            if v < min || !v.is_power_of_two() || v > 1 << 31 {
                return Err(CliError::Usage(format!(
                    "--{what} {v} must be a power of two in {min}..=2^31"
                )));
            }
            Ok(v as usize)
        };
        let buckets = match self.buckets {
            Some(b) => pow2(b, "buckets", 2)?,
            None => kernel_per_node_size(cpus, 1),
        };
        let slots = match self.slots {
            Some(s) => pow2(s, "slots", 2)?,
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
    let tables = a.tables.check()?;
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
    render(&a.out, &records, || {
        format!(
            "candidate space for mm: 2^{} values, {:#x} + {} x 64 bytes (direct map, no KASLR); \
             {}; secret mm drawn with seed {}; probes are timing decisions \
             (`attack channel` gives samples per decision); keyed hashers: kernel key {}, \
             attacker {}\n{}",
            space.bits,
            space.base,
            space.len(),
            describe(&tables),
            a.seed,
            if a.hash_key.is_some() {
                "given"
            } else {
                "drawn from the seed"
            },
            match a.attacker_key {
                None => "has no key and cannot test candidates".to_string(),
                Some(k) if k == kernel_key => "has the kernel's key".to_string(),
                Some(_) => "tests candidates with another key".to_string(),
            },
            leak_table(&records)
        )
    })
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
    t.render_within(MAIL_WIDTH, 1)
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
    /// The key the attacker assumes when computing placements for keyed hashers.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key, default_value = "000102030405060708090a0b0c0d0e0f")]
    attacker_key: HashKey,
    #[command(flatten)]
    out: OutputArgs,
}

fn list<T: Copy + PartialEq>(
    s: &str,
    what: &str,
    allowed: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, CliError> {
    let mut v = Vec::new();
    for p in s.split(',').map(str::trim) {
        let x = parse(p).ok_or_else(|| {
            CliError::Usage(format!("--{what} '{p}' is not allowed; allowed: {allowed}"))
        })?;
        if !v.contains(&x) {
            v.push(x);
        }
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
    let tables = a.tables.check()?;
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
    let kernel_key = a.hash_key.unwrap_or_else(|| drawn_key(a.seed));
    let kernel = args::algo_list(&a.algo, kernel_key)?;
    let attacker = args::algo_list(&a.algo, a.attacker_key)?;
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
        same_key: kernel_key == a.attacker_key,
        tables: &tables,
        placements: &placements,
        workloads: &workloads,
        attacker_keys: a.attacker_keys as usize,
        duration: Duration::from_millis(a.duration_ms),
        reps: a.reps as usize,
        victim_mm,
        attacker_mm,
    };
    let records = records::flood_records(&req, interrupt::requested)
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    render(&a.out, &records, || {
        format!(
            "{}\n{}",
            wrap(&flood_header(&a, &req, real_slots), 100),
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
    format!(
        "model table, real threads; {}; victim mm {:#x}, attacker mm \
         {:#x} (seed {}); computed placement assumes both mm values known \
         (the leak gives only the attacker's own); discovered placement needs neither mm \
         nor key, only a table shared with the victim; {threads}; this process's real \
         futex hash: {}. shared: attacker waiters in the victim's buckets; control: \
         victim rate alone / with as many waiters that share no bucket with it, median of \
         {} repetitions; slowdown: beyond the control, exp(mean ln(control rate / \
         attacked rate)), shown only when that log exceeds 4 null sd (the sd over the \
         repetitions of ln(alone / control), at least {}), else not separable",
        describe(req.tables),
        req.victim_mm,
        req.attacker_mm,
        a.seed,
        match real_slots {
            Some(n) => format!("{n} private slots (set so the parked threads' real futexes stay out of the victim's way)"),
            None => "unchanged (no PR_FUTEX_HASH): the victim's real park/unpark may share chains with the parked threads".into(),
        },
        a.reps,
        flood::MIN_NULL_SD,
    )
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
    t.render_within(MAIL_WIDTH, 1)
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
    let tables = a.tables.check()?;
    let scenarios = list(
        &a.scenario,
        "scenario",
        "cross, self (or a comma list)",
        Scenario::by_name,
    )?;
    let mut waiters = Vec::new();
    for w in a.waiters.split(',').map(str::trim) {
        match args::number(w) {
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
        format!(
            "model table, real parked threads; {}; {} timed wakes per class, hit and miss \
             alternating, monotonic clock around each call (its cost is in both classes); \
             probes per decision: majority vote of independent samples at the held-out \
             single-sample accuracy; AUC control: the same probes with nobody parked; \
             excess: parked minus control AUC, mean of {} blocks each with its own control, \
             ± its standard error; separable when the AUC and the excess both clear 4 \
             standard errors\n{}",
            describe(&tables),
            a.samples,
            records.first().map_or(0, |r| r.blocks),
            channel_table(&records)
        )
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
    t.render_within(MAIL_WIDTH, 1)
}
