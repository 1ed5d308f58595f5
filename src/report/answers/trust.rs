//! How far a machine profile's predictions have been tested: the simulator's out-of-sample
//! error (`Context::sim_error`) was measured on boxes calibrated on their own futex
//! measurements (`sim validate --cv`), so it says nothing about a profile no futex
//! measurement calibrated, such as `skl-2s-112`, built from hardware figures only. The
//! answers that use such a profile say so in their caveat, and the decisions that rest on
//! it are `low` (no error figure to decide on).
//!
//! Where a box of the published A/B runs of a734d9fca84e has a profile of that name, its
//! measured private ÷ global rate is held against this run's prediction for the same cell
//! (docs/sim.md, "The exam": the model put 512 slots near the global hash where the box
//! ran them at less than half of it).

use super::*;
use crate::render::fmt_grouped;
use crate::sim::profile::MachineProfile;
use crate::sim::validate::{AbRow, NEW_BOXES, TABLE_A734};
use serde::Serialize;
use std::path::Path;

/// Whether a profile was produced by calibration on futex measurements: `sim calibrate`
/// records its misfit to its rows (`calibration_rms_ln`); profiles calibrated before that
/// field existed, and seed 003's box (fitted by the validation's bisection), say so in
/// their name — "calibrated on rows …", "fitted on '…'" — while hand-built profiles say
/// "not fitted" or "template". A profile whose name was edited by hand is judged by what
/// it says.
pub fn calibrated(profile: &MachineProfile) -> bool {
    profile.calibration_rms_ln.is_some()
        || profile.name.contains("calibrated on rows")
        || profile.name.contains("fitted on '")
}

/// The published box a profile is named after: a box of [`NEW_BOXES`] whose machine name is
/// one of the profile name's `:`-separated fields (`skl-2s-112: 2 x 28-core …`, and the
/// report's `profile skl-2s-112: …` prefix).
pub fn published_box(name: &str) -> Option<&'static str> {
    NEW_BOXES.iter().map(|(_, machine)| *machine).find(|m| {
        name.split(':')
            .any(|f| f.trim() == *m || f.trim() == format!("profile {m}"))
    })
}

/// One published cell against this run's prediction of it: the kernel's automatic size
/// against the global hash, at the published thread count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exam {
    /// The published box (`skl-2s-112`).
    pub machine: String,
    /// Threads of the published runs.
    pub threads: u32,
    /// Private slots of the published `autosize` row.
    pub slots: u64,
    /// Its published ops/s per thread (the patch's parent kernel, `baseline`).
    pub measured_private: f64,
    /// The published global hash, same kernel.
    pub measured_global: f64,
    /// This run's private ÷ global at the same threads and slots, when simulated.
    pub predicted: Option<f64>,
}

impl Exam {
    /// From the A/B table's rows of `machine` and this run's curves of the profile.
    pub fn of(rows: &[AbRow], machine: &str, curves: &[SlotCurve]) -> Option<Exam> {
        let row = |config: &str| {
            rows.iter()
                .find(|r| r.machine == machine && r.config == config)
        };
        let (auto, global) = (row("autosize")?, row("shared")?);
        let predicted = curves
            .iter()
            .find(|c| c.threads == auto.threads as usize)
            .and_then(|c| c.at(auto.buckets).map(|p| p.ops / c.global.ops));
        Some(Exam {
            machine: machine.to_string(),
            threads: auto.threads,
            slots: auto.buckets,
            measured_private: auto.baseline,
            measured_global: global.baseline,
            predicted,
        })
    }

    /// The measured private ÷ global.
    pub fn measured(&self) -> f64 {
        self.measured_private / self.measured_global
    }
}

/// A profile's calibration status, with the published cell it was examined on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileTrust {
    /// [`profile_label`](super::profile_label): how sentences name it.
    pub label: String,
    /// [`calibrated`].
    pub calibrated: bool,
    /// The published box it is named after ([`published_box`]).
    pub published_box: Option<String>,
    /// That box's cell against this run ([`Exam`]), or why it could not be read.
    pub exam: Option<Result<Exam, String>>,
}

impl ProfileTrust {
    /// `profile` with its curves from this run; the A/B table is read from `data_dir` only
    /// when the profile is named after one of its boxes.
    pub fn of(profile: &MachineProfile, curves: &[SlotCurve], data_dir: &Path) -> ProfileTrust {
        let boxed = published_box(&profile.name);
        let exam = boxed.map(|m| {
            crate::sim::validate::read_ab_table(&data_dir.join(TABLE_A734))
                .map_err(|e| e.to_string())
                .and_then(|rows| {
                    Exam::of(&rows, m, curves).ok_or_else(|| {
                        format!("{TABLE_A734} has no autosize and shared rows of {m}")
                    })
                })
        });
        ProfileTrust {
            label: super::profile_label(profile),
            calibrated: calibrated(profile),
            published_box: boxed.map(str::to_string),
            exam,
        }
    }

    /// The caveat's sentences for an uncalibrated profile (`None` for a calibrated one):
    /// untested, and where a published cell of its box exists, how the model fared on it.
    /// `tol` is the out-of-sample error the exam's miss is compared with.
    pub fn caveat(&self, tol: f64) -> Option<String> {
        if self.calibrated {
            return None;
        }
        let mut s = format!(
            "{} was not calibrated on any futex measurement of its box (its name says how it \
             was built), while the simulator's out-of-sample error was measured on boxes \
             calibrated on their own runs: its predictions are untested on a futex \
             measurement, and no error figure applies to them.",
            sentence_start(&self.label)
        );
        match &self.exam {
            Some(Ok(e)) => {
                s.push_str(&format!(
                    " On this very box the published runs ({TABLE_A734}, the kernel before \
                     a734d9fca84e) put {} private slots, the kernel's automatic size, at {:.2} \
                     of the global hash at {} threads ({} vs {} ops/s per thread)",
                    e.slots,
                    e.measured(),
                    e.threads,
                    fmt_grouped(e.measured_private, 0),
                    fmt_grouped(e.measured_global, 0)
                ));
                match e.predicted {
                    Some(p) => s.push_str(&format!(
                        ", where this run's model gives {p:.2}, {:.2}× the measured figure, {} \
                         the {} out-of-sample error (docs/sim.md, \"The exam\": the prediction \
                         committed before those runs were read, on the same cell).",
                        p / e.measured(),
                        if crate::report::spread::differs(p, e.measured(), tol) {
                            "beyond"
                        } else {
                            "within"
                        },
                        crate::report::context::error_pct(tol)
                    )),
                    None => s.push_str(
                        "; this run did not simulate that cell (docs/sim.md, \"The exam\": the \
                         model's prediction of it failed).",
                    ),
                }
            }
            Some(Err(why)) => s.push_str(&format!(
                " Its box's published runs could not be read to show how the model fared on \
                 them ({why})."
            )),
            None => {}
        }
        Some(s)
    }

    /// A decision computed on this profile: unchanged when it was calibrated; otherwise
    /// `low` (the confidence rule's "no figure to decide on": the out-of-sample error is not
    /// this profile's), with the caveat in its evidence.
    pub fn qualify(&self, mut d: Decision) -> Decision {
        if self.calibrated {
            return d;
        }
        // The decision table's short form of the caveat: one clause for the exam. No error
        // band is quoted for it: the simulator's error was measured on calibrated boxes.
        let mut why = format!(
            "{} is uncalibrated: no futex measurement of its box calibrated it, so its \
             predictions are untested and carry no measured accuracy",
            sentence_start(&self.label)
        );
        if let Some(Ok(e)) = &self.exam {
            match e.predicted {
                Some(p) => why.push_str(&format!(
                    "; on this very box the model gives {p:.2} of the global hash for {} slots \
                     at {} threads where the published runs measured {:.2} ({} vs {} ops/s, \
                     {TABLE_A734})",
                    e.slots,
                    e.threads,
                    e.measured(),
                    fmt_grouped(e.measured_private, 0),
                    fmt_grouped(e.measured_global, 0)
                )),
                None => why.push_str(&format!(
                    "; on this very box the published runs measured {} slots at {:.2} of the \
                     global hash at {} threads ({TABLE_A734})",
                    e.slots,
                    e.measured(),
                    e.threads
                )),
            }
        }
        why.push('.');
        d.confidence = Confidence::Low;
        d.evidence = format!("{} {why}", d.evidence);
        d.would_change_if = format!(
            "{}; or {} were calibrated on futex measurements of its box (`sim calibrate`)",
            d.would_change_if, self.label
        );
        d
    }
}

/// How a sentence about one simulated curve may speak of its predictions: `Validated`
/// when the profile was calibrated on futex measurements (the out-of-sample error applies
/// and "within ±X" may be said), else `Unvalidated` with the profile's published cell,
/// if any, to hold the prediction against.
#[derive(Clone, Copy, Debug)]
pub enum Validity<'a> {
    /// Calibrated: the out-of-sample error applies.
    Validated,
    /// No futex measurement calibrated it: no error figure applies.
    Unvalidated(Option<&'a Exam>),
}

impl<'a> Validity<'a> {
    /// The validity of the curve labelled `label` among `trust` (a profile not among them
    /// is taken as calibrated: the seed box and the tests' hand-made curves).
    pub fn of(trust: &'a [ProfileTrust], label: &str) -> Validity<'a> {
        match trust.iter().find(|t| t.label == label) {
            Some(t) if !t.calibrated => Validity::Unvalidated(match &t.exam {
                Some(Ok(e)) => Some(e),
                _ => None,
            }),
            _ => Validity::Validated,
        }
    }

    /// Whether the out-of-sample error applies.
    pub fn validated(&self) -> bool {
        matches!(self, Validity::Validated)
    }

    /// For an unvalidated profile whose published cell is `slots` at `threads`: what the
    /// published runs measured there against `predicted` (this run's private ÷ global),
    /// and whether the prediction failed there — it differs from the measurement by more
    /// than `tol`, the error of calibrated boxes, the most lenient yardstick the report
    /// has. `None` for a validated profile or another cell.
    pub fn exam_clause(
        &self,
        threads: usize,
        slots: u64,
        predicted: f64,
        tol: f64,
    ) -> Option<String> {
        let Validity::Unvalidated(Some(e)) = self else {
            return None;
        };
        if e.threads as usize != threads || e.slots != slots {
            return None;
        }
        let measured = e.measured();
        let cell = format!(
            "the published runs on this very box measured {slots} private slots at {:.2} of \
             the global hash at {threads} threads ({} vs {} ops/s per thread, {TABLE_A734})",
            measured,
            fmt_grouped(e.measured_private, 0),
            fmt_grouped(e.measured_global, 0)
        );
        Some(
            if crate::report::spread::differs(predicted, measured, tol) {
                format!(
                    "{cell}: the prediction ({predicted:.2}) failed there, where the private hash \
                 {}",
                    if measured < 1.0 {
                        format!(
                            "cost {} of the global hash's throughput",
                            crate::report::answers::shared::pct(1.0 - measured)
                        )
                    } else {
                        format!(
                            "ran {} faster than the global hash",
                            crate::report::answers::shared::pct(measured - 1.0)
                        )
                    }
                )
            } else {
                format!(
                    "{cell}, within {} of the prediction ({predicted:.2}), the error of calibrated \
                 boxes",
                    crate::report::context::error_pct(tol)
                )
            },
        )
    }
}

/// `label` with its first letter capitalised, to open a sentence ("Profile skl-2s-112 …").
fn sentence_start(label: &str) -> String {
    let mut c = label.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// Caveat sentences for every uncalibrated profile among `trust`, joined.
pub fn caveats(trust: &[ProfileTrust], tol: f64) -> String {
    trust
        .iter()
        .filter_map(|t| t.caveat(tol))
        .map(|s| format!(" {s}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::curve;
    use super::*;
    use crate::report::spread::Spread;

    #[test]
    fn calibration_is_read_from_the_profile_and_the_names_the_calibrations_write() {
        // The names of data/machines/*.toml and of the report's seed box, copied here.
        for name in [
            "256 CPUs, 2 node(s): calibrated on rows 0,2 (240 threads, jhash2) of \
             buckets-240threads-256cpu.csv",
            "seed thread 256-CPU 2-node box, calibrated on rows 0 and 2 of \
             buckets-240threads-256cpu.csv",
            "seed 003 80-core 8-node box, fitted on 'large table+aligned' at 32 and \
             'baseline' at 64 threads of seed003-2013-80core-threads.csv",
            "profile this-vm: 2 CPUs, 1 node(s): calibrated on rows 0,1 (2 threads, jhash2) \
             of this-vm-kernel-t2.csv",
        ] {
            assert!(calibrated(&MachineProfile::minimal(name, 4, 1)), "{name}");
        }
        for name in [
            "profile skl-2s-112: skl-2s-112: 2 x 28-core Skylake-SP, 2 threads a core, from \
             published hardware figures (not fitted)",
            "2-CPU KVM guest (template)",
            "seed 002 2-node IVB-EP (costs of seed-256cpu.toml; remote/local 2.5)",
        ] {
            assert!(!calibrated(&MachineProfile::minimal(name, 4, 1)), "{name}");
        }
        // `sim calibrate` records its misfit, whatever the name says.
        let mut fitted = MachineProfile::minimal("my box", 4, 1);
        assert!(!calibrated(&fitted));
        fitted.calibration_rms_ln = Some(0.0);
        assert!(calibrated(&fitted));
        assert_eq!(
            published_box("profile skl-2s-112: skl-2s-112: 2 x 28-core Skylake-SP"),
            Some("skl-2s-112")
        );
        assert_eq!(
            published_box("profile skl-2s-112: something else"),
            Some("skl-2s-112")
        );
        assert_eq!(published_box("profile mine: skl-2s-1120 lookalike"), None);
    }

    fn rows() -> Vec<AbRow> {
        let r = |config: &str, buckets: u64, baseline: f64| AbRow {
            machine: "skl-2s-112".into(),
            threads: 112,
            config: config.into(),
            buckets,
            baseline,
            patched: baseline,
        };
        vec![r("shared", 0, 1_571_857.0), r("autosize", 512, 646_390.0)]
    }

    #[test]
    fn an_unvalidated_profile_is_never_said_to_match_within_an_error() {
        // skl-2s-112 at 112 threads: the model puts 512 slots (the automatic size,
        // roundup_pow_of_two(4 × 112)) at 98 % of the global hash; the published runs
        // measured 646,390 / 1,571,857 = 0.41.
        let mut c = curve(100.0, &[(256, 96.0), (512, 98.0), (1024, 99.0)]);
        c.threads = 112;
        c.profile = "profile skl-2s-112 (112 CPUs, 2 node(s))".into();
        let exam = Exam::of(&rows(), "skl-2s-112", std::slice::from_ref(&c)).unwrap();
        let v = Validity::Unvalidated(Some(&exam));
        let s = crate::report::answers::default_and_limit_sentence(&c, 112, 0.202, v);
        assert!(!s.contains("within ±") && !s.contains("matches"), "{s}");
        assert!(
            s.contains("unvalidated: no futex measurement calibrated"),
            "{s}"
        );
        // 1 − 0.4112 = 59 %.
        assert!(
            s.contains(
                "the merged auto policy (512 slots) is predicted at 98 % of the global hash \
                 (the published runs on this very box measured 512 private slots at 0.41 of \
                 the global hash at 112 threads (646,390 vs 1,571,857 ops/s per thread, \
                 a734d9fca84e-perf-bench-futex-hash.csv): the prediction (0.98) failed there, \
                 where the private hash cost 59 % of the global hash's throughput)"
            ),
            "{s}"
        );
        assert!(
            s.contains("rises by no more than 20.2 % (the calibrated boxes' error, used here only as a threshold)"),
            "{s}"
        );
        let n = crate::report::answers::NoisyFigures {
            global_ops: Spread::single(1.0),
            global_p99: Spread::single(1.0),
            private_ops: Spread::single(1.0),
            private_p99: Spread::single(1.0),
            shared_global: None,
            shared_private: None,
            victim_buckets: None,
        };
        let g = crate::report::answers::global_vs_private_sentence(&c, 112, 0.202, &n, "m", v);
        assert!(
            !g.contains("costs no throughput") && !g.contains("within ±"),
            "{g}"
        );
        assert!(
            g.contains(
                "the model puts the 512-slot auto-sized private hash at 98 % of the global hash"
            ) && g
                // Before the first "; ": what the answer keeps of a second profile.
                .split_once("; ")
                .map_or(g.as_str(), |x| x.0)
                .contains("the prediction (0.98) failed there"),
            "{g}"
        );
        // Calibrated, the same curve is said to match within the error.
        let g = crate::report::answers::global_vs_private_sentence(
            &c,
            112,
            0.202,
            &n,
            "m",
            Validity::Validated,
        );
        assert!(
            g.contains("costs no throughput against the global hash within ±20.2 %"),
            "{g}"
        );
        // Unvalidated, with a published cell near the prediction: no failure claimed.
        let mut near = exam.clone();
        near.measured_private = 0.97 * near.measured_global;
        let s = Validity::Unvalidated(Some(&near))
            .exam_clause(112, 512, 0.98, 0.202)
            .unwrap();
        assert!(
            s.contains("within 20.2 % of the prediction") && !s.contains("failed"),
            "{s}"
        );
        assert_eq!(Validity::Validated.exam_clause(112, 512, 0.98, 0.202), None);
        assert_eq!(
            Validity::Unvalidated(Some(&exam)).exam_clause(64, 512, 0.98, 0.202),
            None
        );
    }

    #[test]
    fn an_uncalibrated_profile_is_untested_and_its_exam_is_quoted() {
        // This run's curve at 112 threads: 512 slots at 95 of the global 100.
        let mut c = curve(100.0, &[(256, 90.0), (512, 95.0)]);
        c.threads = 112;
        let t = ProfileTrust {
            label: "profile skl-2s-112 (112 CPUs, 2 node(s))".into(),
            calibrated: false,
            published_box: Some("skl-2s-112".into()),
            exam: Some(Ok(Exam::of(&rows(), "skl-2s-112", &[c]).unwrap())),
        };
        let s = t.caveat(0.165).unwrap();
        // 646,390 / 1,571,857 = 0.4112 (by hand).
        assert!(s.contains("untested on a futex measurement"), "{s}");
        assert!(
            s.contains(
                "512 private slots, the kernel's automatic size, at 0.41 of the global \
                        hash at 112 threads (646,390 vs 1,571,857 ops/s per thread)"
            ),
            "{s}"
        );
        // 0.95 / 0.4112 = 2.31×, beyond 16.5 %; a model at 0.45 would be within it.
        assert!(
            s.contains("this run's model gives 0.95, 2.31× the measured figure, beyond the 16.5 %"),
            "{s}"
        );
        let mut near = t.clone();
        if let Some(Ok(e)) = near.exam.as_mut() {
            e.predicted = Some(0.45);
        }
        let s = near.caveat(0.165).unwrap();
        assert!(s.contains("0.45, 1.09× the measured figure, within"), "{s}");
        // Its decisions are low, whatever the curve said.
        let d = Decision {
            decision: "private_default_slots",
            value: "256".into(),
            confidence: Confidence::High,
            evidence: "e.".into(),
            would_change_if: "w".into(),
        };
        let q = t.qualify(d.clone());
        assert_eq!(q.confidence, Confidence::Low);
        assert!(
            q.evidence
                .starts_with("e. Profile skl-2s-112 (112 CPUs, 2 node(s)) is uncalibrated")
                && q.evidence.contains(
                    "the model gives 0.95 of the global hash for 512 slots at 112 threads where \
                     the published runs measured 0.41 (646,390 vs 1,571,857 ops/s"
                ),
            "{}",
            q.evidence
        );
        assert!(
            q.would_change_if.contains("`sim calibrate`"),
            "{}",
            q.would_change_if
        );
        // A calibrated profile: no caveat, the decision as it was.
        let cal = ProfileTrust {
            calibrated: true,
            ..t.clone()
        };
        assert_eq!(cal.caveat(0.165), None);
        assert_eq!(cal.qualify(d.clone()), d);
        // Uncalibrated, named after no published box: untested, no figures.
        let plain = ProfileTrust {
            published_box: None,
            exam: None,
            ..t
        };
        let s = plain.caveat(0.165).unwrap();
        assert!(s.contains("untested") && !s.contains("0.41"), "{s}");
    }
}
