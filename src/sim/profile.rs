//! Machine profiles (`data/machines/*.toml`): the topology and the cost parameters of the
//! simulator, either fitted by `futexhash sim calibrate` or written by hand.

use crate::sim::SimError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Largest CPU count a profile may have.
pub const MAX_CPUS: u32 = 65536;
/// Largest cost, in ns, of any one step of an operation.
pub const MAX_COST_NS: f64 = 1e9;

/// Topology and costs of one machine. Costs are nanoseconds per operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// Free text: which machine, how it was calibrated.
    pub name: String,
    /// Online CPUs.
    pub cpus: u32,
    /// NUMA nodes; CPUs are split evenly, node `n` holding CPUs `n·C/N .. (n+1)·C/N`.
    pub nodes: u32,
    /// Work outside the bucket lock: syscall entry/exit, `get_futex_key()`, the loop.
    pub outside_ns: f64,
    /// Bucket lock hold time: compare the futex word, unlock.
    pub hold_ns: f64,
    /// Lock hand-off when the lock's cache line moves to another CPU of the same node.
    pub handoff_local_ns: f64,
    /// Lock hand-off across nodes.
    pub handoff_remote_ns: f64,
    /// Cache-line migration of an uncontended bucket last locked by another CPU of the same
    /// node. Not fitted.
    #[serde(default)]
    pub line_miss_ns: f64,
    /// The same migration across nodes (with home snooping: also from or to a line homed
    /// on another node), as a core-to-core latency matrix measures it: one line moved by
    /// one atomic. Not fitted; when absent, `line_miss_ns` times the hand-off's
    /// `handoff_remote_ns / handoff_local_ns`. A hand-off moves several lines (the lock
    /// word, the next MCS node, the bucket), so its cross-node ratio need not be one
    /// line's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_miss_remote_ns: Option<f64>,
    /// Home snooping: the coherence directory of a line sits with its home memory, so a
    /// transfer between two CPUs of one node is local only when the line's memory is on
    /// that node too; otherwise it costs as much as a transfer across nodes. Published AMD
    /// EPYC matrices are consistent with it (2 × EPYC 7R13: 107 ns between core complexes
    /// of one socket, 200 ns on the other socket's, 197 ns across sockets;
    /// `nviennot/core-to-core-latency`). False:
    /// source snooping (the requester snoops its peers itself; assumed of 2-socket Xeon E5
    /// in their Early Snoop mode), where only the two CPUs' nodes matter.
    #[serde(default)]
    pub home_snoop: bool,
    /// Hardware threads per core (SMT). CPUs are numbered as Linux numbers them on x86:
    /// CPU `c` is on core `c % cores`, so CPUs `c` and `c + cores` are siblings.
    #[serde(default = "one")]
    pub threads_per_core: u32,
    /// How much longer a thread's own work takes while its SMT sibling is busy (1 = no
    /// effect). Needed when `threads_per_core > 1`.
    #[serde(default)]
    pub smt_slowdown: Option<f64>,
    /// Ticket lock only: extra hand-off time per spinning waiter (every waiter re-reads the
    /// lock word after each release; Boyd-Wickizer et al. 2012). Needed by `--lock ticket`.
    #[serde(default)]
    pub ticket_spinner_ns: Option<f64>,
    /// Queued (MCS) lock: extra hand-off time per waiter in the queue (small: each waiter
    /// spins on its own node).
    #[serde(default)]
    pub queue_spinner_ns: f64,
    /// One atomic read-modify-write on a cache line this CPU already owns (the per-CPU
    /// reference of 6.17+, and the RMW itself on the shared 6.16 reference).
    #[serde(default = "atomic_default")]
    pub atomic_ns: f64,
    /// Scheduler time slice for threads sharing a CPU (see `docs/sim.md` for why the
    /// simulated slice is shorter than the kernel's 3 ms base slice).
    #[serde(default = "slice_default")]
    pub timeslice_ns: f64,
    /// RMS of ln(simulated / measured) over the rows `sim calibrate` fitted this profile
    /// on; absent from profiles written by hand. A profile that misses its own rows
    /// carries that misfit into every interval, on top of the model error
    /// ([`super::uncertainty::profile_uncertainty`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_rms_ln: Option<f64>,
    /// How far the two fitted costs move between repeated runs of the calibration rows
    /// (`sim calibrate --runs`: each run refitted alone). Absent when the calibration had
    /// one run per row; its intervals then carry the seed box's relative spread, the only
    /// one measured ([`super::uncertainty::profile_uncertainty`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_runs: Option<RunRefits>,
    /// Cost of one hash per hasher name, measured on this machine. Hashers without an
    /// entry are timed on the machine running the simulator.
    #[serde(default)]
    pub hash_ns: BTreeMap<String, f64>,
}

/// The spread of a calibration's fitted costs over the published or measured runs behind
/// its rows: the rows refitted on each run alone, the sample sd of the fitted logarithms
/// divided by √runs (the standard error of the fit on the runs' mean, which is the fit the
/// profile holds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRefits {
    /// Runs refitted (at least two).
    pub runs: u32,
    /// Standard error of `ln(outside_ns)`.
    pub outside_se_ln: f64,
    /// Standard error of `ln(handoff_local_ns)` (the remote hand-off keeps its ratio).
    pub handoff_se_ln: f64,
    /// The refits move the two costs in opposite directions (their log covariance is
    /// negative).
    pub opposite: bool,
}

fn one() -> u32 {
    1
}

/// A locked RMW on an owned line is ~20 cycles on x86 (Agner Fog's instruction tables:
/// `LOCK XADD`, 18–20 cycles on Intel cores from Nehalem to Skylake): about 7 ns at 3 GHz.
fn atomic_default() -> f64 {
    7.0
}

/// 100 µs: long against one operation (≤ 2 µs), so slicing effects keep their ratio to
/// the op time; short enough that a simulated run covers many slices.
fn slice_default() -> f64 {
    100_000.0
}

impl MachineProfile {
    /// The profile's hash cost figure for `hasher`, if it has one.
    pub fn hash_cost(&self, hasher: &str) -> Option<f64> {
        self.hash_ns.get(hasher).copied()
    }

    /// Physical cores.
    pub fn cores(&self) -> u32 {
        (self.cpus / self.threads_per_core.max(1)).max(1)
    }

    /// The core of `cpu` (Linux x86 numbering: siblings are `cores` apart).
    pub fn core_of(&self, cpu: u32) -> u32 {
        cpu % self.cores()
    }

    /// The NUMA node of `cpu`: cores are split evenly over the nodes.
    pub fn node_of(&self, cpu: u32) -> u32 {
        let per = (self.cores() / self.nodes.max(1)).max(1);
        (self.core_of(cpu) / per).min(self.nodes.max(1) - 1)
    }

    /// The SMT slowdown factor (1 without SMT).
    pub fn smt_factor(&self) -> f64 {
        if self.threads_per_core > 1 {
            self.smt_slowdown.unwrap_or(1.0)
        } else {
            1.0
        }
    }

    /// A line migration across nodes: `line_miss_remote_ns`, else `line_miss_ns` scaled
    /// by the hand-off's remote/local ratio.
    pub fn line_miss_remote(&self) -> f64 {
        self.line_miss_remote_ns
            .unwrap_or(self.line_miss_ns * self.remote_ratio())
    }

    /// `handoff_remote_ns / handoff_local_ns` (1 when the local cost is 0).
    pub fn remote_ratio(&self) -> f64 {
        if self.handoff_local_ns > 0.0 {
            self.handoff_remote_ns / self.handoff_local_ns
        } else {
            1.0
        }
    }

    /// The CPUs of node `node`, in CPU-number order (first threads of its cores, then
    /// their siblings, as `taskset -pc` lists them: e.g. `64-127,192-255`).
    pub fn node_cpus(&self, node: u32) -> Vec<u32> {
        (0..self.cpus)
            .filter(|&c| self.node_of(c) == node)
            .collect()
    }

    /// This profile's costs on another machine's topology (`sim calibrate` with a template
    /// of a different box): CPUs and nodes from the measured machine, SMT kept only where
    /// the template's threads per core still divide them. Checked.
    pub fn on_topology(&self, cpus: u32, nodes: u32) -> Result<MachineProfile, SimError> {
        let mut p = self.clone();
        if p.cpus != cpus || p.nodes != nodes {
            p.cpus = cpus;
            p.nodes = nodes;
            if p.validate().is_err() {
                p.threads_per_core = 1;
            }
        }
        p.validate().map_err(|e| {
            SimError::BadRequest(format!("template with --cpus {cpus} --nodes {nodes}: {e}"))
        })?;
        Ok(p)
    }

    /// Checks that the numbers make sense; the error names the bad field.
    pub fn validate(&self) -> Result<(), SimError> {
        // The name goes into the table's `#` comment lines and every record's `machine`
        // field: one line of printable text, or it breaks both (a newline starts a table
        // row, a tab or escape garbles it).
        if let Some((at, c)) = self.name.chars().enumerate().find(|(_, c)| c.is_control()) {
            return Err(SimError::BadRequest(format!(
                "name {:?} has the control character U+{:04X} at character {}: a profile name is one line of printable text",
                self.name,
                c as u32,
                at + 1
            )));
        }
        if self.cpus == 0 || self.nodes == 0 || self.cpus % self.nodes != 0 || self.cpus > MAX_CPUS
        {
            return Err(SimError::BadRequest(format!(
                "cpus ({}) must be a positive multiple of nodes ({}), at most {MAX_CPUS}",
                self.cpus, self.nodes
            )));
        }
        let tpc = self.threads_per_core;
        if tpc == 0 || self.cpus % tpc != 0 || (self.cpus / tpc) % self.nodes != 0 {
            return Err(SimError::BadRequest(format!(
                "threads_per_core ({tpc}) must divide cpus ({}) into cores that split evenly over {} node(s)",
                self.cpus, self.nodes
            )));
        }
        if tpc > 1 && self.smt_slowdown.is_none() {
            return Err(SimError::BadRequest(format!(
                "threads_per_core = {tpc} needs smt_slowdown (how much a busy sibling slows a thread)"
            )));
        }
        if let Some(f) = self.smt_slowdown
            && !(f.is_finite() && (1.0..=4.0).contains(&f))
        {
            return Err(SimError::BadRequest(format!(
                "smt_slowdown = {f} must be from 1 to 4"
            )));
        }
        if !(self.timeslice_ns.is_finite() && (1000.0..=1e8).contains(&self.timeslice_ns)) {
            return Err(SimError::BadRequest(format!(
                "timeslice_ns = {} must be from 1000 to 1e8",
                self.timeslice_ns
            )));
        }
        let costs = [
            ("outside_ns", self.outside_ns),
            ("hold_ns", self.hold_ns),
            ("handoff_local_ns", self.handoff_local_ns),
            ("handoff_remote_ns", self.handoff_remote_ns),
            ("line_miss_ns", self.line_miss_ns),
            (
                "line_miss_remote_ns",
                self.line_miss_remote_ns.unwrap_or_default(),
            ),
            ("queue_spinner_ns", self.queue_spinner_ns),
            ("atomic_ns", self.atomic_ns),
            (
                "ticket_spinner_ns",
                self.ticket_spinner_ns.unwrap_or_default(),
            ),
        ];
        // Every operation takes time: with no cost outside the lock nor inside it the
        // simulated rate is bounded only by the event loop's tick (10^15 per second).
        if self.outside_ns + self.hold_ns <= 0.0 {
            return Err(SimError::BadRequest(format!(
                "outside_ns ({}) + hold_ns ({}) must be above 0 ns: an operation takes time",
                self.outside_ns, self.hold_ns
            )));
        }
        if let Some(r) = self.calibration_rms_ln
            && !(r.is_finite() && (0.0..=10.0).contains(&r))
        {
            return Err(SimError::BadRequest(format!(
                "calibration_rms_ln = {r} must be a log-scale error from 0 to 10"
            )));
        }
        if let Some(r) = &self.calibration_runs {
            if r.runs < 2 {
                return Err(SimError::BadRequest(format!(
                    "calibration_runs: runs = {} must be at least 2 (a spread needs two runs)",
                    r.runs
                )));
            }
            for (what, v) in [
                ("outside_se_ln", r.outside_se_ln),
                ("handoff_se_ln", r.handoff_se_ln),
            ] {
                if !(v.is_finite() && (0.0..=10.0).contains(&v)) {
                    return Err(SimError::BadRequest(format!(
                        "calibration_runs: {what} = {v:.6e} must be a log-scale error from 0 to 10"
                    )));
                }
            }
        }
        let hashes = self.hash_ns.iter().map(|(k, v)| (k.as_str(), *v));
        for (what, v) in costs.into_iter().chain(hashes) {
            // Costs are summed in picoseconds in u64; one second per operation is far
            // beyond any machine and keeps every sum far from overflow.
            if !(v.is_finite() && (0.0..=MAX_COST_NS).contains(&v)) {
                return Err(SimError::BadRequest(format!(
                    "{what} = {v} must be a number of nanoseconds from 0 to {MAX_COST_NS:e}"
                )));
            }
        }
        Ok(())
    }

    /// A profile with the given topology, no SMT and every cost zero except the defaults
    /// (a starting point for templates and tests).
    pub fn minimal(name: &str, cpus: u32, nodes: u32) -> Self {
        MachineProfile {
            name: name.into(),
            cpus,
            nodes,
            outside_ns: 0.0,
            hold_ns: 0.0,
            handoff_local_ns: 0.0,
            handoff_remote_ns: 0.0,
            line_miss_ns: 0.0,
            line_miss_remote_ns: None,
            home_snoop: false,
            threads_per_core: 1,
            smt_slowdown: None,
            ticket_spinner_ns: None,
            queue_spinner_ns: 0.0,
            atomic_ns: atomic_default(),
            timeslice_ns: slice_default(),
            calibration_rms_ln: None,
            calibration_runs: None,
            hash_ns: BTreeMap::new(),
        }
    }

    /// Reads and validates a profile file.
    pub fn load(path: &Path) -> Result<Self, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SimError::Data(format!("cannot read profile '{}': {e}", path.display()))
        })?;
        let p: MachineProfile = toml::from_str(&text).map_err(|e| {
            // The message names the field ("missing field `cpus`"); the span says where.
            let at = e.span().map_or(String::new(), |sp| {
                // A missing field's span is the whole table: no line to point at.
                if e.message().starts_with("missing field") {
                    return String::new();
                }
                let start = sp.start.min(text.len());
                let line = text[..start].matches('\n').count() + 1;
                // The key of that line, when the error is in its value, under the table
                // it is in (a top-level key written below `[hash_ns]` is read as a hash
                // cost, and must be named as one).
                let lines: Vec<&str> = text.lines().take(line).collect();
                let table = lines
                    .iter()
                    .rev()
                    .map(|l| l.trim())
                    .find(|l| l.starts_with('[') && l.ends_with(']'))
                    .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim());
                let key = lines.last().and_then(|l| l.split_once('='));
                match key.map(|(k, _)| k.trim()).filter(|k| !k.is_empty()) {
                    // Unless the message names a field itself ("unknown field `x`"): then
                    // the span is the table, not a value.
                    Some(k) if !e.message().contains("field `") => match table {
                        Some(t) => format!(" (field `{t}.{k}`, line {line})"),
                        None => format!(" (field `{k}`, line {line})"),
                    },
                    _ => format!(" (line {line})"),
                }
            });
            SimError::Data(format!(
                "profile '{}' is not valid: {}{at}",
                path.display(),
                e.message().trim()
            ))
        })?;
        p.validate()
            .and_then(|()| p.check_hash_names())
            .map_err(|e| SimError::Data(format!("profile '{}': {e}", path.display())))?;
        Ok(p)
    }

    /// Checks that every `[hash_ns]` name of a profile file is a built-in hasher: a typo
    /// (`jhsah2`) would otherwise be ignored and the hasher timed here instead. Only files
    /// are checked ([`MachineProfile::load`]): a run adds the measured costs of its `so:`
    /// and `c:` hashers under their labels to the profile it uses, which
    /// [`MachineProfile::validate`] must accept.
    pub fn check_hash_names(&self) -> Result<(), SimError> {
        let names = crate::hashers::all_names();
        match self.hash_ns.keys().find(|k| !names.contains(&k.as_str())) {
            Some(k) => Err(SimError::BadRequest(format!(
                "[hash_ns] names '{k}', which is not a built-in hasher; valid: {}",
                names.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// The profile as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("profile serialises")
    }
}

/// A machine's topology as Linux's sysfs describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Online CPUs.
    pub cpus: u32,
    /// Distinct (package, core) pairs among them.
    pub cores: u32,
    /// `cpus / cores`.
    pub threads_per_core: u32,
    /// NUMA nodes with CPUs (1 without `node/`).
    pub nodes: u32,
}

/// Parses a sysfs CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > MAX_CPUS {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// Reads the topology under `system` (normally `/sys/devices/system`): `cpu/online`,
/// each CPU's `topology/{physical_package_id,core_id}`, and `node/node*/cpulist`.
pub fn read_sysfs_topology(system: &Path) -> Result<Topology, SimError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| SimError::Machine(format!("cannot read '{}': {e}", p.display())))
    };
    let online_path = system.join("cpu/online");
    let online = parse_cpu_list(&read(&online_path)?)
        .ok_or_else(|| SimError::Machine(format!("cannot parse '{}'", online_path.display())))?;
    if online.is_empty() {
        return Err(SimError::Machine("no online CPUs in sysfs".into()));
    }
    let mut cores = std::collections::BTreeSet::new();
    for c in &online {
        let t = system.join(format!("cpu/cpu{c}/topology"));
        let pkg = read(&t.join("physical_package_id")).unwrap_or_default();
        let core = read(&t.join("core_id")).unwrap_or_else(|_| c.to_string());
        cores.insert((pkg.trim().to_string(), core.trim().to_string()));
    }
    let mut nodes = 0u32;
    if let Ok(dir) = std::fs::read_dir(system.join("node")) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(n) = name.strip_prefix("node")
                && n.parse::<u32>().is_ok()
                && read(&e.path().join("cpulist"))
                    .ok()
                    .and_then(|l| parse_cpu_list(&l))
                    .is_some_and(|l| !l.is_empty())
            {
                nodes += 1;
            }
        }
    }
    let cpus = online.len() as u32;
    let cores = (cores.len() as u32).max(1);
    Ok(Topology {
        cpus,
        cores,
        threads_per_core: (cpus / cores).max(1),
        nodes: nodes.max(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_topology_of_a_fake_two_node_smt_box() {
        // 8 CPUs = 2 packages x 2 cores x 2 threads, nodes = packages, Linux numbering
        // (siblings 4 apart), written out by hand.
        let root = std::env::temp_dir().join(format!("fh-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("cpu")).unwrap();
        std::fs::write(root.join("cpu/online"), "0-7\n").unwrap();
        for c in 0..8u32 {
            let t = root.join(format!("cpu/cpu{c}/topology"));
            std::fs::create_dir_all(&t).unwrap();
            let core = c % 4;
            std::fs::write(t.join("physical_package_id"), format!("{}\n", core / 2)).unwrap();
            std::fs::write(t.join("core_id"), format!("{}\n", core % 2)).unwrap();
        }
        for n in 0..2 {
            let d = root.join(format!("node/node{n}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("cpulist"),
                format!("{}-{},{}-{}\n", 2 * n, 2 * n + 1, 2 * n + 4, 2 * n + 5),
            )
            .unwrap();
        }
        let t = read_sysfs_topology(&root).unwrap();
        assert_eq!(
            t,
            Topology {
                cpus: 8,
                cores: 4,
                threads_per_core: 2,
                nodes: 2
            }
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn toml_round_trip_and_validation() {
        let p = MachineProfile {
            name: "x".into(),
            cpus: 4,
            nodes: 2,
            outside_ns: 1.0,
            hold_ns: 2.0,
            handoff_local_ns: 3.0,
            handoff_remote_ns: 4.0,
            line_miss_ns: 0.5,
            line_miss_remote_ns: None,
            ..MachineProfile::minimal("x", 4, 2)
        };
        let mut p = p;
        p.hash_ns = [("jhash2".to_string(), 5.0)].into();
        p.calibration_rms_ln = Some(0.0125);
        p.calibration_runs = Some(RunRefits {
            runs: 3,
            outside_se_ln: 0.01,
            handoff_se_ln: 0.125,
            opposite: true,
        });
        let back: MachineProfile = toml::from_str(&p.to_toml()).unwrap();
        assert_eq!(back, p);
        assert_eq!(p.hash_cost("jhash2"), Some(5.0));
        assert_eq!(p.hash_cost("crc32"), None);
        assert_eq!(p.node_cpus(1), vec![2, 3]);
        // The seed box's node 1 as `taskset -pc` printed it (seed 000): 64-127,192-255.
        let mut smt = MachineProfile::minimal("smt", 256, 2);
        smt.threads_per_core = 2;
        smt.smt_slowdown = Some(1.3);
        // Every cost zero: an operation would take no time.
        let zero = smt.validate().unwrap_err().to_string();
        assert!(zero.contains("outside_ns (0) + hold_ns (0)"), "{zero}");
        smt.hold_ns = 100.0;
        smt.validate().unwrap();
        let n1 = smt.node_cpus(1);
        let expect: Vec<u32> = (64..128).chain(192..256).collect();
        assert_eq!(n1, expect);
        smt.smt_slowdown = None;
        assert!(
            smt.validate()
                .unwrap_err()
                .to_string()
                .contains("smt_slowdown")
        );
        let mut bad = p.clone();
        bad.cpus = 3;
        assert!(bad.validate().unwrap_err().to_string().contains("cpus"));
        bad.cpus = 1 << 20;
        assert!(bad.validate().unwrap_err().to_string().contains("cpus"));
        bad = p.clone();
        bad.calibration_rms_ln = Some(f64::NAN);
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("calibration_rms_ln"), "{e}");
        for (runs, se) in [(1, 0.1), (3, -0.1), (3, f64::INFINITY)] {
            bad = p.clone();
            bad.calibration_runs = Some(RunRefits {
                runs,
                outside_se_ln: 0.01,
                handoff_se_ln: se,
                opposite: false,
            });
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains("calibration_runs"), "{runs} {se}: {e}");
            // Only the bad value is named.
            let named = if runs == 1 {
                "runs = 1"
            } else {
                "handoff_se_ln"
            };
            assert!(e.contains(named) && !e.contains("outside_se_ln"), "{e}");
        }
        bad = p.clone();
        bad.hold_ns = f64::NAN;
        assert!(bad.validate().unwrap_err().to_string().contains("hold_ns"));
        bad.hold_ns = 1e300;
        assert!(bad.validate().unwrap_err().to_string().contains("hold_ns"));
        bad = p;
        bad.hash_ns.insert("crc32".into(), f64::NAN);
        assert!(bad.validate().unwrap_err().to_string().contains("crc32"));
        // A name that is no built-in: refused in a file, with the valid names.
        bad.hash_ns = [("jhsah2".to_string(), 3.0)].into();
        bad.validate().unwrap();
        let e = bad.check_hash_names().unwrap_err().to_string();
        assert!(e.contains("'jhsah2'") && e.contains("jhash2-addr"), "{e}");
        bad.hash_ns = [("jhash2-addr".to_string(), 3.0)].into();
        bad.check_hash_names().unwrap();
        assert!(toml::from_str::<MachineProfile>("name='a'\ncpus=1").is_err());
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("3-1"), None);
    }
}
