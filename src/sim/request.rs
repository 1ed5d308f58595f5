//! One `sim` or `sim calibrate` invocation as a value, so that the front end builds it from
//! its flags and calls the library once: [`SimRequest`] is a sweep simulated under every
//! configuration of the design axes (one per kernel preset), [`CalibrationRequest`] the
//! fit of a template's free costs to measured rows of a CSV. The model itself is
//! [`super::sweep`] and [`super::calibrate`]; this module only gathers their inputs and
//! runs them in the order the front end promises (everything refused before anything is
//! timed or simulated).

use super::calibrate::{
    Calibration, DEFAULT_NOISE, FIT_SIMULATIONS_PER_ROW, Observation, Scenario, calibrate,
    check_calibration, check_reachable, global_hash_size, largest_trial,
};
use super::hashcost::{HashCost, hash_cost, measure_hash_ns};
use super::profile::{MachineProfile, Topology, read_sysfs_topology};
use super::sweep::{SimOptions, SimRecord, SimSweep, check_sweep, run_sweep_until, stated_hash_ns};
use super::uncertainty::{REPLICATIONS, refit_spread};
use super::validate::{
    PublishedTable, hasher_for_column, parse_published, perf_keys_per_thread, read_table_text,
};
use super::{Design, SimLength, SimOp, Work};
use crate::hashers::KeyHasher;
use crate::sim::SimError;
use crate::workload::PERF_FUTEXES;
use std::path::{Path, PathBuf};

/// Futex words per thread as the simulated perf heap layout allows (1 ..= 1024).
pub fn futexes_per_thread(f: u64) -> Result<usize, SimError> {
    if (1..=PERF_FUTEXES as u64).contains(&f) {
        Ok(f as usize)
    } else {
        Err(SimError::BadRequest(format!(
            "futexes per thread '{f}' must be 1..={PERF_FUTEXES} for the simulated perf heap layout"
        )))
    }
}

/// A `sim` sweep on one profile, simulated once per configuration of the design axes.
#[derive(Debug)]
pub struct SimRequest<'a> {
    /// The machine.
    pub profile: &'a MachineProfile,
    /// Threads, futexes, hashers, loop, node and length (the same for every configuration).
    pub sweep: SimSweep,
    /// One per kernel preset asked for, in order (or one without a preset); the first is
    /// the base of an A/B comparison.
    pub configs: Vec<SimOptions>,
}

impl SimRequest<'_> {
    /// What the sweep would refuse under any of the configurations, checked before any
    /// hash is timed: those [`check_sweep`] refuses, and a request beyond the simulator's
    /// clock or longer than [`super::MAX_SIMULATED_OPS`] in all ([`super::check_length`]).
    pub fn check(&self) -> Result<(), SimError> {
        // The profile and designs first: a length is judged at the profile's costs.
        self.profile.validate()?;
        for o in &self.configs {
            super::check_design(self.profile, &o.design)?;
        }
        super::check_length(
            self.profile,
            &self.sweep.threads,
            stated_hash_ns(self.profile, &self.sweep.hashers),
            self.sweep.len,
            &self.work(),
        )?;
        for o in &self.configs {
            check_sweep(self.profile, &self.sweep, o)?;
        }
        Ok(())
    }

    /// The threads the request simulates in all: every configuration's threads, each
    /// configuration simulated [`REPLICATIONS`] times.
    pub fn work(&self) -> Work {
        let sizes: usize = self
            .configs
            .iter()
            .map(|o| o.slots.as_ref().map_or(self.sweep.buckets.len(), Vec::len))
            .sum();
        let per_size = self.sweep.hashers.len() as u64
            * self.sweep.threads.iter().map(|&t| t as u64).sum::<u64>();
        let configs = sizes * self.sweep.hashers.len() * self.sweep.threads.len();
        let threads: Vec<String> = self.sweep.threads.iter().map(usize::to_string).collect();
        Work {
            threads: REPLICATIONS as u64 * sizes as u64 * per_size,
            counted: format!(
                "{configs} configuration(s) of {} thread(s), each simulated {REPLICATIONS} times",
                threads.join("/")
            ),
        }
    }

    /// How many configurations [`Self::run_until`] simulates (its ticks), counted with the
    /// first configuration's table sizes.
    pub fn runs(&self) -> usize {
        self.configs.len()
            * self.sweep.threads.len()
            * self.configs[0].slots.as_ref().map_or(0, Vec::len)
            * self.sweep.hashers.len()
    }

    /// The first thread count above the CPUs the threads may run on, with that CPU count:
    /// those threads share CPUs in time slices.
    pub fn time_sliced(&self) -> Option<(usize, u32)> {
        let p = self.profile;
        let cpus = self
            .sweep
            .node
            .map_or(p.cpus, |n| p.node_cpus(n).len() as u32);
        self.sweep
            .threads
            .iter()
            .find(|&&t| t > cpus as usize)
            .map(|&t| (t, cpus))
    }

    /// The records of every configuration in turn; `tick` after each simulated
    /// configuration. Once `stop` says so no further one starts, those in progress give
    /// up within milliseconds ([`super::simulate_until`]), and what finished is returned
    /// (nothing, when none had).
    pub fn run_until(
        &self,
        tick: impl Fn() + Sync,
        stop: impl Fn() -> bool + Sync,
    ) -> Result<Vec<SimRecord>, SimError> {
        let mut records = Vec::new();
        for o in &self.configs {
            if stop() {
                break;
            }
            records.extend(run_sweep_until(self.profile, &self.sweep, o, &tick, &stop)?);
        }
        Ok(records)
    }
}

/// The hashers whose cost the profile does not state, so that the sweep timed them here:
/// `(name, ns)`, each hasher once, in record order.
pub fn timed_hash_costs(records: &[SimRecord]) -> Vec<(&str, f64)> {
    let mut out: Vec<(&str, f64)> = Vec::new();
    for r in records.iter().filter(|r| r.hash_ns_source == "measured") {
        if !out.iter().any(|(a, _)| *a == r.bench.algo) {
            out.push((&r.bench.algo, r.hash_ns));
        }
    }
    out
}

/// The measured rows `sim calibrate` fits: a CSV of the `data/published/` or `bench` form,
/// the rate column chosen and each row's relative noise.
#[derive(Clone, Debug)]
pub struct MeasuredTable {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its rows.
    pub table: PublishedTable,
    /// The rate column used (index into `table.columns`).
    pub column: usize,
    /// Per row: the rate's relative noise.
    pub noise: Vec<f64>,
}

impl MeasuredTable {
    /// Reads `path` and picks the rate column named `column` (the first without a name).
    pub fn read(path: &Path, column: Option<&str>) -> Result<Self, SimError> {
        // Read once, within the size bound, for the rows and their noise.
        let text = read_table_text(path)?;
        let table = parse_published(path, &text)?;
        let column = match column {
            None => 0,
            Some(name) => table
                .columns
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| {
                    SimError::BadRequest(format!(
                        "column '{name}' is not in '{}'; columns: {}",
                        path.display(),
                        table.columns.join(", ")
                    ))
                })?,
        };
        let noise = read_noise(&text, table.rows.len());
        Ok(MeasuredTable {
            path: path.to_path_buf(),
            table,
            column,
            noise,
        })
    }

    /// The hasher the measured kernel used as the column's name says it, else `jhash2`.
    pub fn hasher_name(&self) -> &'static str {
        hasher_for_column(&self.table.columns[self.column]).unwrap_or("jhash2")
    }

    /// Data row `i` (0-based) as an observation of the chosen column.
    fn observation(&self, i: usize) -> Result<Observation, SimError> {
        self.observation_of(i, &[self.column])
    }

    /// Data row `i` (0-based) as an observation of the arithmetic mean of `columns` (perf
    /// prints means: the mean of runs is the mean of all their operations).
    fn observation_of(&self, i: usize, columns: &[usize]) -> Result<Observation, SimError> {
        let (b, r) = self.table.rows.get(i).ok_or_else(|| {
            SimError::BadRequest(format!(
                "row {i} does not exist: '{}' has {} data rows (0-based)",
                self.path.display(),
                self.table.rows.len()
            ))
        })?;
        Ok(Observation {
            buckets: *b,
            ops_per_sec: columns.iter().map(|&c| r[c]).sum::<f64>() / columns.len() as f64,
            noise: self.noise[i],
        })
    }

    /// The indices of the rate columns named in `names` (`["all"]`: every rate column),
    /// at least two, each once.
    pub fn run_columns(&self, names: &[&str]) -> Result<Vec<usize>, SimError> {
        let all = &self.table.columns;
        // A run is named by its column: an empty or repeated name in the header would make
        // `--runs` (and the profile's name, which lists the runs) ambiguous.
        for (i, h) in all.iter().enumerate() {
            if h.trim().is_empty() || all[..i].contains(h) {
                return Err(SimError::BadRequest(format!(
                    "--runs: column {} of '{}' is named '{h}', {}; give every run column its own name",
                    i + 2,
                    self.path.display(),
                    if h.trim().is_empty() {
                        "an empty name"
                    } else {
                        "a name an earlier column has"
                    }
                )));
            }
        }
        let cols: Vec<usize> = if names == ["all"] {
            (0..all.len()).collect()
        } else {
            names
                .iter()
                .map(|n| {
                    all.iter().position(|h| h == n).ok_or_else(|| {
                        SimError::BadRequest(format!(
                            "--runs column '{n}' is not in '{}'; columns: {}",
                            self.path.display(),
                            all.join(", ")
                        ))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        if let Some((_, &c)) = cols
            .iter()
            .enumerate()
            .find(|(i, c)| cols[..*i].contains(c))
        {
            return Err(SimError::BadRequest(format!(
                "--runs names column '{}' twice; name each run column once",
                all[c]
            )));
        }
        if cols.len() < 2 {
            return Err(SimError::BadRequest(format!(
                "--runs must name at least two rate columns of '{}' (columns: {}), or 'all'",
                self.path.display(),
                all.join(", ")
            )));
        }
        Ok(cols)
    }

    /// The file's name, for the fitted profile's (a control character in it as `?`: a
    /// profile name is one line of printable text, [`MachineProfile::validate`]).
    fn file_name(&self) -> String {
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        name.chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    }
}

/// Per data row, the relative noise of the rate: `stderr_pct / 100` from a bench CSV
/// (the file's `text`), else [`DEFAULT_NOISE`].
fn read_noise(text: &str, rows: usize) -> Vec<f64> {
    let fallback = vec![DEFAULT_NOISE; rows];
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return fallback;
    };
    let Some(col) = header.split(',').position(|h| h.trim() == "stderr_pct") else {
        return fallback;
    };
    let v: Vec<f64> = lines
        .map(|l| {
            l.split(',')
                .nth(col)
                .and_then(|x| x.trim().parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x > 0.0)
                .map_or(DEFAULT_NOISE, |x| x / 100.0)
        })
        .collect();
    if v.len() == rows { v } else { fallback }
}

/// A `sim calibrate`: fit `template`'s free costs to rows of a measurement of perf's
/// failing-wait loop (global hash for bucket 0, aligned buckets, queued lock).
pub struct CalibrationRequest<'a, H: ?Sized> {
    /// The measurement.
    pub measured: MeasuredTable,
    /// Its data rows to fit (0-based, at least two).
    pub rows: Vec<usize>,
    /// Threads of the measurement.
    pub threads: usize,
    /// CPUs of the machine.
    pub cpus: u32,
    /// NUMA nodes of the machine.
    pub nodes: u32,
    /// The node the threads ran pinned to, if one.
    pub node: Option<u64>,
    /// Futex words per thread of the measurement.
    pub futexes: u64,
    /// The profile whose fixed costs are kept; its topology is replaced by `cpus`, `nodes`.
    pub template: MachineProfile,
    /// The hasher the measured kernel used.
    pub hasher: &'a H,
    /// Its name as asked for, for the fitted profile's name.
    pub algo: &'a str,
    /// Simulated operations per thread.
    pub len: SimLength,
    /// Rate columns that are repeated runs of one measurement ([`MeasuredTable::run_columns`]),
    /// or none. With runs, the profile is fitted on their mean and refitted on each run
    /// alone, and carries the refits' spread ([`crate::sim::profile::RunRefits`]).
    pub runs: Vec<usize>,
}

/// What a calibration gives.
#[derive(Clone, Debug)]
pub struct Calibrated {
    /// The fit (its `profile` unnamed).
    pub fit: Calibration,
    /// With runs: why their spread was not written into the profile, when it was not.
    pub runs_not_used: Option<String>,
    /// The fitted profile, named after what it was fitted to.
    pub profile: MachineProfile,
    /// The hash cost the fit used.
    pub hash: HashCost,
    /// Rows fitted.
    pub rows: usize,
}

impl<H: KeyHasher + ?Sized> std::fmt::Debug for CalibrationRequest<'_, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CalibrationRequest")
            .field("measured", &self.measured)
            .field("rows", &self.rows)
            .field("threads", &self.threads)
            .field("cpus", &self.cpus)
            .field("nodes", &self.nodes)
            .field("node", &self.node)
            .field("futexes", &self.futexes)
            .field("template", &self.template.name)
            .field("hasher", &self.hasher.name())
            .field("len", &self.len)
            .finish()
    }
}

impl<H: KeyHasher + ?Sized> CalibrationRequest<'_, H> {
    /// Everything refused first (the template on this topology, the node, the futexes, the
    /// rows, a length beyond the clock or the work limit), then the hash cost (timed here
    /// unless the template states it), then the fit.
    pub fn run(&self) -> Result<Calibrated, SimError> {
        self.run_with(&mut |_| {})
    }

    /// [`Self::run`], saying before each step what it starts: `hash cost`, then `fit I
    /// of N` (N = 1, or with runs the fit on their mean and one refit per run), for a
    /// front end's progress line.
    pub fn run_with(&self, step: &mut dyn FnMut(&str)) -> Result<Calibrated, SimError> {
        let template = self.machine()?;
        let cpus: Vec<u32> = match self.node {
            Some(n) if n >= u64::from(self.nodes) => {
                return Err(SimError::BadRequest(format!(
                    "--node {n} does not exist with --nodes {}",
                    self.nodes
                )));
            }
            Some(n) => template.node_cpus(n as u32),
            None => (0..template.cpus).collect(),
        };
        let futexes = futexes_per_thread(self.futexes)?;
        let scenario = Scenario {
            keys_per_thread: perf_keys_per_thread(self.threads, futexes, 1)
                .map_err(SimError::BadRequest)?,
            cpus,
            global_buckets: global_hash_size(template.cpus),
            op: SimOp::WaitFail,
            design: Design::default(),
            global_nodes: 1,
            mechanisms: Default::default(),
        };
        let rows_of = |columns: &[usize]| -> Result<Vec<Observation>, SimError> {
            self.rows
                .iter()
                .map(|&i| {
                    if columns.is_empty() {
                        self.measured.observation(i)
                    } else {
                        self.measured.observation_of(i, columns)
                    }
                })
                .collect()
        };
        let obs = rows_of(&self.runs)?;
        let per_run: Vec<Vec<Observation>> = self
            .runs
            .iter()
            .map(|&c| rows_of(&[c]))
            .collect::<Result<_, _>>()?;
        // Every row within reach as it is fitted (the mean of the runs) and in each run
        // alone, named as the request gave it, before anything is simulated.
        let columns = &self.measured.table.columns;
        let reachable = |set: &[Observation], what: &str| {
            self.rows.iter().zip(set).try_for_each(|(&i, o)| {
                check_reachable(&template, &scenario, o)
                    .map_err(|e| SimError::BadRequest(format!("row {i}{what}: {e}")))
            })
        };
        reachable(
            &obs,
            &if self.runs.is_empty() {
                String::new()
            } else {
                format!(
                    " (mean of runs {})",
                    self.runs
                        .iter()
                        .map(|&c| columns[c].as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            },
        )?;
        for (run, &c) in per_run.iter().zip(&self.runs) {
            reachable(run, &format!(" of run {}", columns[c]))?;
        }
        check_calibration(&template, &scenario, &obs)?;
        for run in &per_run {
            check_calibration(&template, &scenario, run)?;
        }
        // The fits' length, before the hash is timed: within the clock at the largest
        // costs any fit may try (the hash counted as free here, and checked again once
        // timed), and within the work limit at the most simulations a fit may run.
        let fits = 1 + per_run.len();
        let mut every_row = obs.clone();
        every_row.extend(per_run.iter().flatten().cloned());
        let trial = largest_trial(&template, &every_row);
        let work = Work {
            threads: fits as u64 * FIT_SIMULATIONS_PER_ROW * obs.len() as u64 * self.threads as u64,
            counted: format!(
                "{} threads, {} rows, each row simulated up to {FIT_SIMULATIONS_PER_ROW} times in each of {fits} fit(s)",
                self.threads,
                obs.len()
            ),
        };
        super::check_length(&trial, &[self.threads], 0.0, self.len, &work)?;
        // The measured kernel's hash: the template's figure only if the template is this
        // machine's; otherwise timed here.
        step("hash cost");
        let hash = hash_cost(&template, self.hasher)?;
        super::check_clock(&trial, self.threads, hash.ns, self.len)?;
        step(&format!("fit 1 of {fits}"));
        let fit = calibrate(&template, &scenario, self.hasher, hash.ns, &obs, self.len)?;
        let mut profile = fit.profile.clone();
        profile.name = self.fitted_name();
        let mut runs_not_used = None;
        if !per_run.is_empty() {
            let refits: Vec<Calibration> = per_run
                .iter()
                .zip(&self.runs)
                .enumerate()
                .map(|(i, (run, &c))| {
                    step(&format!("fit {} of {fits}", i + 2));
                    calibrate(&template, &scenario, self.hasher, hash.ns, run, self.len).map_err(
                        |e| match e {
                            SimError::BadRequest(m) => {
                                SimError::BadRequest(format!("run {}: {m}", columns[c]))
                            }
                            e => e,
                        },
                    )
                })
                .collect::<Result<_, _>>()?;
            // A cost the rows do not determine keeps the template's value in every fit: the
            // refits then agree by construction (a spread of 0), or one run's fit wanders
            // where another's is pinned (a spread of thousands of per cent). Neither is a
            // measurement of that cost, so the runs' spread is kept only when every fit
            // determined both.
            let every = || std::iter::once(&fit).chain(&refits);
            let undetermined: Vec<&str> = [
                ("outside_ns", every().all(|c| c.outside.determined)),
                ("the hand-off", every().all(|c| c.handoff.determined)),
            ]
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| *n)
            .collect();
            if undetermined.is_empty() {
                let fits: Vec<MachineProfile> = refits.into_iter().map(|c| c.profile).collect();
                profile.calibration_runs = refit_spread(&fits);
            } else {
                runs_not_used = Some(format!(
                    "the runs' spread is not used: {} is not determined by every run's rows, so its spread over the runs measures nothing; the profile's intervals carry the seed box's spread",
                    undetermined.join(" and ")
                ));
            }
        }
        Ok(Calibrated {
            fit,
            runs_not_used,
            profile,
            hash,
            rows: obs.len(),
        })
    }

    /// The template on the measured machine's topology, checked.
    fn machine(&self) -> Result<MachineProfile, SimError> {
        self.template.on_topology(self.cpus, self.nodes)
    }

    fn fitted_name(&self) -> String {
        format!(
            "{} CPUs, {} node(s): calibrated on rows {} ({} threads, {}) of {}",
            self.cpus,
            self.nodes,
            self.rows
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
            self.threads,
            self.algo,
            self.measured.file_name()
        ) + &if self.runs.is_empty() {
            String::new()
        } else {
            let t = &self.measured.table.columns;
            format!(
                ", mean of runs {}",
                self.runs
                    .iter()
                    .map(|&c| t[c].as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
    }
}

/// `sim profile --this-machine`: a template of the machine this runs on — CPUs, cores,
/// threads per core and nodes from `system` (`/sys/devices/system`), the `hashers`' costs
/// timed here, and starting costs for `sim calibrate` to fit (they are not measurements:
/// the name says so). Refused when the topology does not make a valid profile.
pub fn this_machine_template<H: KeyHasher + ?Sized>(
    system: &Path,
    hashers: &[&H],
) -> Result<(MachineProfile, Topology), SimError> {
    let topo = read_sysfs_topology(system)?;
    let mut prof = MachineProfile::minimal(
        &format!(
            "this machine: {} CPUs, {} cores, {} node(s) (sysfs); costs are a template until `sim calibrate` fits them",
            topo.cpus, topo.cores, topo.nodes
        ),
        topo.cpus,
        topo.nodes,
    );
    prof.threads_per_core = topo.threads_per_core;
    if prof.threads_per_core > 1 {
        // Intel's Hyper-Threading figure (see seed003_box_template), until measured.
        prof.smt_slowdown = Some(2.0 / 1.3);
    }
    // Starting points of the fit only: the 2-CPU development VM's order of magnitude.
    prof.outside_ns = 250.0;
    prof.hold_ns = 30.0;
    prof.handoff_local_ns = 50.0;
    prof.handoff_remote_ns = if topo.nodes > 1 { 200.0 } else { 50.0 };
    prof.line_miss_ns = 20.0;
    prof.ticket_spinner_ns = Some(20.0);
    for h in hashers {
        let ns = measure_hash_ns(*h)?;
        prof.hash_ns
            .insert(h.name().to_string(), (ns * 1000.0).round() / 1000.0);
    }
    prof.validate().map_err(|e| {
        SimError::Machine(format!(
            "the topology read from sysfs does not make a profile: {e}"
        ))
    })?;
    Ok((prof, topo))
}
