//! `futexhash attack leak|channel|flood` (docs/cli.md, "attack"; the library side
//! is [`crate::attack`], user docs in `docs/security.md`).

use super::{CliError, OutputArgs, args};
use crate::attack::channel::{self, ChannelConfig, Scenario};
use crate::attack::flood::{self, FloodConfig, Placement, VictimWorkload};
use crate::attack::leak::{self, LeakConfig};
use crate::attack::oracle::{
    AttackTable, BucketMap, CandidateSpace, DEFAULT_SPACE_BITS, MAX_SPACE_BITS,
};
use crate::bench::interrupt;
use crate::hashers::{HashKey, KeyHasher, Scope};
use crate::render::{Format, TextTable, output};
use crate::rng::SplitMix64;
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

/// The tables and sizes, checked.
struct Tables {
    kinds: Vec<AttackTable>,
    buckets: usize,
    slots: usize,
    cpus: usize,
}

impl Tables {
    fn size(&self, t: AttackTable) -> usize {
        match t {
            AttackTable::Global => self.buckets,
            AttackTable::Private => self.slots,
        }
    }

    /// One sentence stating the table sizes.
    fn describe(&self) -> String {
        format!(
            "global table {} buckets (kernel size for {} CPUs: roundup_pow_of_two(256 x {})), \
             private table {} slots",
            self.buckets, self.cpus, self.cpus, self.slots
        )
    }
}

impl TableArgs {
    fn check(&self) -> Result<Tables, CliError> {
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
        Ok(Tables {
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

#[derive(Serialize)]
struct LeakRecord {
    algo: String,
    table: &'static str,
    /// The hasher the table used (the private table: the `-addr` form when there is one).
    table_hasher: String,
    buckets: usize,
    candidate_space_bits: u32,
    probes: u64,
    collisions_observed: usize,
    candidates_left: u64,
    bits_leaked: f64,
    mm_recovered: bool,
    keyed: bool,
    /// Keyed hashers: `none` (the attacker has no key and cannot test candidates), `other`
    /// (it tests with a wrong key), `same` (it has the kernel's key); unkeyed: `n/a`.
    attacker_key: &'static str,
    stop: &'static str,
    scans: u32,
    mm: String,
    mm_guess: String,
    seconds: f64,
    seed: u64,
}

/// The kernel's secret key drawn from the seed (a different stream from the mm draw).
fn drawn_key(seed: u64) -> HashKey {
    let mut r = SplitMix64::new(seed ^ 0x6b65_795f_6b65_795f);
    HashKey {
        k0: r.next_u64(),
        k1: r.next_u64(),
    }
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
    let attacker_key = a.attacker_key.unwrap_or(HashKey::DEFAULT);
    let attacker = args::algo_list(&a.algo, attacker_key)?;
    a.out.check()?;
    let base_cfg = LeakConfig {
        max_probes: a.max_probes,
        ..Default::default()
    };
    let mut records = Vec::new();
    for (kh, ah) in kernel.iter().zip(&attacker) {
        let cfg = LeakConfig {
            can_test: !kh.keyed() || a.attacker_key.is_some(),
            ..base_cfg
        };
        let key_state = match (kh.keyed(), a.attacker_key) {
            (false, _) => "n/a",
            (true, None) => "none",
            (true, Some(k)) if k == kernel_key => "same",
            (true, Some(_)) => "other",
        };
        for &t in &tables.kinds {
            // The kernel's private table hashes the address word only (`jhash2-addr`): use
            // the hasher's addr form when the registry has one; otherwise the key is hashed
            // with mm = 0 (`BucketMap`), which leaves mm out all the same.
            let addr_pair = match (t, kh.scope()) {
                (AttackTable::Private, Scope::Full) => {
                    let name = format!("{}-addr", kh.name());
                    match (
                        args::algo_list(&name, kernel_key),
                        args::algo_list(&name, attacker_key),
                    ) {
                        (Ok(k), Ok(at)) => Some((k, at)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let (tk, ta) = match &addr_pair {
                Some((k, at)) => (&k[0], &at[0]),
                None => (kh, ah),
            };
            let size = tables.size(t);
            let table = BucketMap::new(tk, t, size).expect("checked size");
            let model = BucketMap::new(ta, t, size).expect("checked size");
            let r = leak::run(table, &model, &space, a.seed, &cfg);
            records.push(LeakRecord {
                algo: kh.name().to_string(),
                table: t.as_str(),
                table_hasher: tk.name().to_string(),
                buckets: size,
                candidate_space_bits: space.bits,
                probes: r.outcome.probes,
                collisions_observed: r.outcome.observations.collided.len(),
                candidates_left: r.outcome.candidates_left,
                bits_leaked: (r.bits_leaked * 100.0).round() / 100.0,
                mm_recovered: r.mm_recovered,
                keyed: kh.keyed(),
                attacker_key: key_state,
                stop: r.outcome.stop.as_str(),
                scans: r.outcome.scans,
                mm: format!("{:#x}", r.secret),
                mm_guess: r.outcome.guess.map_or(String::new(), |g| format!("{g:#x}")),
                seconds: (r.seconds * 1000.0).round() / 1000.0,
                seed: a.seed,
            });
        }
    }
    render(&a.out, &records, || {
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
        for r in &records {
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
        format!(
            "candidate space for mm: 2^{} values, {:#x} + {} x 64 bytes (direct map, no KASLR); \
             {}; secret mm drawn with seed {}; probes are timing decisions \
             (`attack channel` gives samples per decision); keyed hashers: kernel key {}, \
             attacker {}\n{}",
            space.bits,
            space.base,
            space.len(),
            tables.describe(),
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
            t.render()
        )
    })
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

#[derive(Serialize)]
struct FloodRecord {
    algo: String,
    table: &'static str,
    buckets: usize,
    attacker_keys: usize,
    placement: &'static str,
    victim_workload: &'static str,
    victim_ops_per_sec: f64,
    victim_ops_per_sec_alone: f64,
    victim_slowdown: f64,
    /// The control's `alone / control` slowdown (its waiters share no victim bucket).
    control_slowdown: f64,
    /// `exp(mean ln(control rate / attacked rate))`: the slowdown beyond the control's.
    slowdown_vs_control: f64,
    /// Sample sd of `ln(alone / control)` over the repetitions (none with one repetition).
    null_sd: Option<f64>,
    /// Whether `ln(slowdown_vs_control)` exceeds 4 null sd.
    separable: bool,
    /// `separable`, `not separable`, or `control` (the control row itself).
    verdict: &'static str,
    victim_slowdown_cpu: f64,
    victim_wake_ns_p99: f64,
    victim_wake_ns_p99_alone: f64,
    keys_in_victim_buckets: usize,
    placement_probes: u64,
    keyed: bool,
    /// Keyed hashers: whether the attacker's assumed key is the kernel's (`same`/`other`).
    attacker_key: &'static str,
    running_threads: usize,
    parked_threads: usize,
    cpus: usize,
}

/// Private futex hash slots this process asks the real kernel for during `flood`.
const REAL_SLOTS: u64 = 8192;

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
    let space = CandidateSpace::direct_map(DEFAULT_SPACE_BITS).map_err(CliError::usage)?;
    let mut rng = SplitMix64::new(a.seed);
    let victim_mm = space.draw(&mut rng);
    let mut attacker_mm = space.draw(&mut rng);
    while attacker_mm == victim_mm {
        attacker_mm = space.draw(&mut rng);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The model's waiters block for real (std's park is a futex(2) wait), so all the
    // parked attacker threads sit in *this process's* real futex hash too, and the
    // victim's real park/unpark would walk their chains. Give this process a real private
    // hash large enough to keep those chains short (Linux 6.16+; best effort).
    let real_slots = match crate::bench::kernel::set_slots(REAL_SLOTS) {
        Ok(()) => crate::bench::kernel::get_slots().ok(),
        Err(_) => None,
    };
    // SIGINT/SIGTERM: the configuration running finishes, the rest are skipped, what
    // finished is printed and written, and the exit status is 130 (as `bench`).
    interrupt::install();
    let mut records = Vec::new();
    'all: for (kh, ah) in kernel.iter().zip(&attacker) {
        for &t in &tables.kinds {
            for &workload in &workloads {
                if interrupt::requested() {
                    break 'all;
                }
                let cfg = FloodConfig {
                    table: t,
                    buckets: tables.buckets,
                    slots: tables.slots,
                    attacker_keys: a.attacker_keys as usize,
                    placement: placements[0],
                    workload,
                    duration: Duration::from_millis(a.duration_ms),
                    reps: a.reps as usize,
                    victim_mm,
                    attacker_mm,
                };
                let set = flood::run_set(kh, ah, &cfg, &placements)
                    .map_err(|e| CliError::Runtime(e.to_string()))?;
                let round = |x: f64, d: f64| (x * d).round() / d;
                for j in set {
                    let r = &j.result;
                    records.push(FloodRecord {
                        algo: kh.name().to_string(),
                        table: t.as_str(),
                        buckets: tables.size(t),
                        attacker_keys: cfg.attacker_keys,
                        placement: j.placement.as_str(),
                        victim_workload: workload.as_str(),
                        victim_ops_per_sec: r.victim_ops_per_sec.round(),
                        victim_ops_per_sec_alone: r.victim_ops_per_sec_alone.round(),
                        victim_slowdown: round(r.victim_slowdown, 1000.0),
                        control_slowdown: round(j.control_slowdown, 1000.0),
                        slowdown_vs_control: round(j.verdict.slowdown_vs_control, 1000.0),
                        null_sd: Some(j.verdict.null_sd)
                            .filter(|x| x.is_finite())
                            .map(|x| round(x, 10000.0)),
                        separable: j.verdict.separable,
                        verdict: match (j.placement, j.verdict.separable) {
                            (Placement::Control, _) => "control",
                            (_, true) => "separable",
                            (_, false) => "not separable",
                        },
                        victim_slowdown_cpu: round(r.victim_slowdown_cpu, 1000.0),
                        victim_wake_ns_p99: r.victim_wake_ns_p99,
                        victim_wake_ns_p99_alone: r.victim_wake_ns_p99_alone,
                        keys_in_victim_buckets: r.keys_in_victim_buckets,
                        placement_probes: r.placement_probes,
                        keyed: kh.keyed(),
                        attacker_key: match (kh.keyed(), kernel_key == a.attacker_key) {
                            (false, _) => "n/a",
                            (true, true) => "same",
                            (true, false) => "other",
                        },
                        running_threads: r.running_threads,
                        parked_threads: cfg.attacker_keys,
                        cpus,
                    });
                }
            }
        }
    }
    render(&a.out, &records, || {
        // Seven columns: 94 wide with the longest hasher name (hash_long_old-addr); the
        // rates, alone / attacked ratios, null sd, per CPU second figures and wake latencies
        // are in the CSV and JSON records.
        let mut t = TextTable::new([
            "algo",
            "table",
            "placement",
            "victim",
            "shared",
            "control",
            "slowdown",
        ]);
        for r in &records {
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
        let text = format!(
            "model table, real threads; {}; victim mm {victim_mm:#x}, attacker mm \
             {attacker_mm:#x} (seed {}); computed placement assumes both mm values known \
             (the leak gives only the attacker's own); discovered placement needs neither mm \
             nor key, only a table shared with the victim; {threads}; this process's real \
             futex hash: {}. shared: attacker waiters in the victim's buckets; control: \
             victim rate alone / with as many waiters that share no bucket with it, median of \
             {} repetitions; slowdown: beyond the control, exp(mean ln(control rate / \
             attacked rate)), shown only when that log exceeds 4 null sd (the sd over the \
             repetitions of ln(alone / control), at least {}), else not separable",
            tables.describe(),
            a.seed,
            match real_slots {
                Some(n) => format!("{n} private slots (set so the parked threads' real futexes stay out of the victim's way)"),
                None => "unchanged (no PR_FUTEX_HASH): the victim's real park/unpark may share chains with the parked threads".into(),
            },
            a.reps,
            flood::MIN_NULL_SD,
        );
        format!("{}\n{}", wrap(&text, 100), t.render())
    })?;
    if interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
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

#[derive(Serialize)]
struct ChannelRecord {
    backend: &'static str,
    algo: String,
    table: &'static str,
    buckets: usize,
    scenario: &'static str,
    waiters: usize,
    samples: usize,
    same_bucket: bool,
    hit_ns_median: f64,
    miss_ns_median: f64,
    auc: f64,
    auc_control: f64,
    separable: bool,
    accuracy: f64,
    probes_per_decision_99: Option<u64>,
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
    let space = CandidateSpace::direct_map(DEFAULT_SPACE_BITS).map_err(CliError::usage)?;
    let mut rng = SplitMix64::new(a.seed);
    let victim_mm = space.draw(&mut rng);
    let attacker_mm = space.draw(&mut rng);
    let mut records = Vec::new();
    for h in &hashers {
        for &t in &tables.kinds {
            for &scenario in &scenarios {
                for &k in &waiters {
                    let cfg = ChannelConfig {
                        table: t,
                        buckets: tables.buckets,
                        slots: tables.slots,
                        waiters: k,
                        samples: a.samples as usize,
                        scenario,
                        victim_mm,
                        attacker_mm,
                    };
                    let r = channel::run(h, &cfg).map_err(|e| CliError::Runtime(e.to_string()))?;
                    let round = |x: f64| (x * 10000.0).round() / 10000.0;
                    records.push(ChannelRecord {
                        backend: "model",
                        algo: h.name().to_string(),
                        table: t.as_str(),
                        buckets: tables.size(t),
                        scenario: scenario.as_str(),
                        waiters: k,
                        samples: cfg.samples,
                        same_bucket: r.same_bucket,
                        hit_ns_median: r.hit_ns_median,
                        miss_ns_median: r.miss_ns_median,
                        auc: round(r.sep.auc),
                        auc_control: round(r.auc_control),
                        separable: r.sep.separable,
                        accuracy: round(r.sep.accuracy),
                        probes_per_decision_99: r.sep.probes_per_decision_99,
                    });
                }
            }
        }
    }
    render(&a.out, &records, || {
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
            "accuracy",
            "probes per decision (99%)",
        ]);
        for r in &records {
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
                format!("{:.3}", r.accuracy),
                r.probes_per_decision_99
                    .map_or("not separable".to_string(), |n| n.to_string()),
            ]);
        }
        format!(
            "model table, real parked threads; {}; {} timed wakes per class, hit and miss \
             alternating, monotonic clock around each call (its cost is in both classes); \
             probes per decision: majority vote of independent samples at the held-out \
             single-sample accuracy; AUC control: the same probes with nobody parked\n{}",
            tables.describe(),
            a.samples,
            t.render()
        )
    })
}
