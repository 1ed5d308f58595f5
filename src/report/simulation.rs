//! The report's prediction section: the simulator's 240-thread hasher sweep on the seed
//! thread's 256-CPU box (`sim::sweep`, three replications each, 80 % intervals from
//! `sim::uncertainty`) and its validation against the published 2024 tables.
//!
//! A hasher is set apart from jhash2 only where the 80 % interval of their ratio, from
//! the replications of one run with common random numbers, lies wholly beyond the
//! out-of-sample error ([`super::context::SimError`]): the interval alone shares every
//! hash cost between the replications and would tell 1 % apart.

use super::answers::{self, HashVerdict, MAX_WIDTH};
use super::context::{Context, Depth, PUBLISHED_TABLES};
use super::section::{Section, code_block, write_plot};
use crate::render::plot::{Band, Line, Plot};
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::sim::sweep::SimRecord;
use crate::sim::uncertainty::{Ratio, ratio};
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// Per hasher, the min and max of `predicted / published` on the eight-algorithm table.
fn validation_range(ctx: &Context, algo: &str) -> Option<(f64, f64)> {
    let v: Vec<f64> = ctx
        .validation
        .iter()
        .filter(|r| r.table == PUBLISHED_TABLES[1] && r.algo == algo)
        .map(|r| r.ratio)
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (!v.is_empty()).then_some((lo, hi))
}

/// The simulator's prediction of the seed thread's 240-thread table on its 256-CPU box,
/// and the validation error against the published tables.
pub fn simulation_section(
    ctx: &Context,
    verdicts: &[HashVerdict],
    dir: &Path,
) -> Result<Section, ReportError> {
    let records = sim_hasher_sweep(ctx)?;
    // A hasher that fails a distribution test or `futexhash check` is shown with the
    // failure wherever it is ranked, and never set apart as a gain without it.
    let warn = |name: &str| {
        verdicts
            .iter()
            .find(|v| v.name == name)
            .and_then(HashVerdict::warning)
    };
    let rms = |table: &str| {
        crate::sim::validate::rms_log_error(ctx.validation.iter().filter(|r| r.table == table))
    };
    let err = ctx.sim_error();
    let mut s = Section {
        key: "simulation".into(),
        ..Section::default()
    };
    let _ = write!(
        s.markdown,
        "## Prediction: the seed thread's 256-CPU box\n\nA discrete-event simulation of 240 \
         threads running perf's loop on a 2-node, 256-CPU machine, calibrated on two rows \
         (global hash and 4 slots) of the published 240-thread table; cells are predicted \
         mean ops/s per thread. Every simulated figure in this report carries {} \
         (`futexhash sim validate` prints every row).\n\n{}",
        err.provenance(),
        code_block(&sim_table(ctx, &records, &warn).render_within(MAX_WIDTH, 1))
    );
    interval_sentence(&records, &mut s);
    let failing: Vec<String> = ctx
        .hashers
        .iter()
        .filter_map(|h| warn(h.name()).map(|w| format!("{} {w}", h.name())))
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(
            s.markdown,
            "(F) = fails a distribution test on this run's keys or a check of `futexhash \
             check`: {}.",
            failing.join("; ")
        );
    }
    let ratios = ratios_to_jhash2(&records);
    s.markdown
        .push_str(&apart_sentence(ctx, &ratios, &warn, &err));
    ratio_plot(ctx, &ratios, &warn, &err, dir, &mut s)?;
    validation_plot(ctx, dir, &mut s)?;
    s.figures = json!({
        "profile": ctx.seed_box.name,
        "sim_error": err,
        "rms_log_error": {
            PUBLISHED_TABLES[0]: rms(PUBLISHED_TABLES[0]),
            PUBLISHED_TABLES[1]: rms(PUBLISHED_TABLES[1]),
            PUBLISHED_TABLES[2]: rms(PUBLISHED_TABLES[2]),
        },
        "predicted": records.iter().map(|r| json!({
            "algo": r.bench.algo, "buckets": r.bench.buckets, "threads": r.bench.threads,
            "ops_per_sec": r.bench.ops_per_sec, "ops_per_sec_lo": r.ops_per_sec_lo,
            "ops_per_sec_hi": r.ops_per_sec_hi, "latency_ns_p99": r.bench.latency_ns_p99,
        })).collect::<Vec<_>>(),
        "ratio_to_jhash2": ratios.iter().map(|(a, b, r)| json!({
            "algo": a, "buckets": b, "ratio": r.ratio, "lo": r.lo, "hi": r.hi,
            "told_apart": r.told_apart,
        })).collect::<Vec<_>>(),
        "validation": ctx.validation.iter().map(|r| json!({
            "table": r.table, "algo": r.algo, "buckets": r.buckets, "published": r.published,
            "predicted": r.predicted, "fitted": r.fitted,
        })).collect::<Vec<_>>(),
    });
    Ok(s)
}

/// The median cell's 80 % prediction interval, as a factor.
fn interval_sentence(records: &[SimRecord], s: &mut Section) {
    let mut widths: Vec<f64> = records
        .iter()
        .filter(|r| r.ops_per_sec_lo > 0.0)
        .map(|r| (r.ops_per_sec_hi / r.ops_per_sec_lo).sqrt())
        .collect();
    widths.sort_by(f64::total_cmp);
    if let Some(w) = widths.get(widths.len() / 2) {
        let _ = writeln!(
            s.markdown,
            "Each cell's 80 % prediction interval (replications, calibration spread and the \
             out-of-sample error combined) spans ×/÷ {w:.2} around it at the median cell \
             (`report.json`: `ops_per_sec_lo`, `ops_per_sec_hi`)."
        );
    }
}

/// Which hashers the simulation sets apart from jhash2, or that it ranks none.
fn apart_sentence(
    ctx: &Context,
    ratios: &[(String, u64, Ratio)],
    warn: &dyn Fn(&str) -> Option<String>,
    err: &super::context::SimError,
) -> String {
    let mut out = String::new();
    // Which hashers the simulation sets apart from jhash2: where the 80 % interval of
    // their ratio (replications with common random numbers) lies wholly beyond the
    // out-of-sample error. The interval alone is too narrow to rank hashers by: the
    // replications share every hash cost, so it leaves out how far each hasher's own
    // column can be off (`sim validate` on the eight-algorithm table, quoted per hasher).
    let tol = err.value;
    let beyond = |r: &Ratio| r.lo > 1.0 + tol || r.hi < 1.0 / (1.0 + tol);
    let pct = |x: f64| (x - 1.0) * 100.0;
    let mut apart = Vec::new();
    let mut ranged = false;
    let mut locality = false;
    for h in &ctx.hashers {
        if h.name() == "jhash2" {
            continue;
        }
        let best = ratios
            .iter()
            .filter(|(a, _, r)| *a == h.name() && beyond(r))
            .max_by(|a, b| (a.2.ratio.ln().abs()).total_cmp(&b.2.ratio.ln().abs()));
        if let Some((_, b, r)) = best {
            let note = match validation_range(ctx, h.name()) {
                Some((lo, hi)) => {
                    ranged = true;
                    format!(
                        " (but `sim validate` puts this column at {lo:.2}–{hi:.2}× the published one)"
                    )
                }
                None => String::new(),
            };
            let w = warn(h.name()).map_or(String::new(), |w| format!(" — it {w}"));
            if r.ratio > 1.0 && !w.is_empty() {
                locality = true;
            }
            apart.push(format!(
                "{} {:+.0} % at {b} slots (80 % interval {:+.0} to {:+.0} %){note}{w}",
                h.name(),
                pct(r.ratio),
                pct(r.lo),
                pct(r.hi)
            ));
        }
    }
    let largest = ratios
        .iter()
        .filter(|(a, _, _)| a != "jhash2")
        .max_by(|a, b| (a.2.ratio.ln().abs()).total_cmp(&b.2.ratio.ln().abs()));
    if apart.is_empty() {
        let _ = write!(
            out,
            "\nNo hasher's rate ÷ jhash2's lies, with its 80 % interval, beyond the \
             simulator's {} out-of-sample error at any table size",
            err.pct()
        );
        if let Some((a, b, r)) = largest {
            let _ = write!(
                out,
                " (the largest difference: {a} {:+.0} % at {b} slots, interval {:+.0} to \
                 {:+.0} %)",
                pct(r.ratio),
                pct(r.lo),
                pct(r.hi)
            );
        }
        let _ = writeln!(out, ", so the simulation ranks none of them.");
    } else {
        out.push_str(&set_apart_sentence(&err.pct(), &apart, ranged));
        if locality {
            let _ = writeln!(
                out,
                "\nA hasher that fails a distribution test or a check and still comes out \
                 faster here is no candidate: {}.",
                answers::PERF_LOCALITY
            );
        }
    }
    out
}

/// The sentence listing the hashers the simulation sets apart (`apart`, each clause with
/// its `sim validate` range where the published eight-algorithm table has the hasher);
/// `ranged`: at least one clause carries such a range. The sentence explaining the range
/// is printed only then: a hasher the published table lacks (a user's `--algo`) has none.
pub fn set_apart_sentence(err_pct: &str, apart: &[String], ranged: bool) -> String {
    let mut out = format!(
        "\nThe simulation sets these apart from jhash2 (the 80 % interval of the ratio, from \
         the replications of this run, lies wholly beyond the {err_pct} out-of-sample error; \
         the largest such difference per hasher): {}.",
        apart.join("; ")
    );
    if ranged {
        out.push_str(
            " The `sim validate` range given with a hasher says how far its column is off \
             the published one.",
        );
    }
    out.push('\n');
    out
}

/// sim-256cpu.svg: each hasher ÷ jhash2 with the 80 % interval of the ratio.
fn ratio_plot(
    ctx: &Context,
    ratios: &[(String, u64, Ratio)],
    warn: &dyn Fn(&str) -> Option<String>,
    err: &super::context::SimError,
    dir: &Path,
    s: &mut Section,
) -> Result<(), ReportError> {
    // The band the text sets a hasher apart by: a ratio whose whole interval lies outside
    // 1 ÷ (1 + error) .. 1 + error ([`apart_sentence`]).
    let tol = err.value;
    let mut sizes: Vec<u64> = ratios
        .iter()
        .map(|(_, b, _)| *b)
        .filter(|&b| b > 0)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let band = Band {
        name: format!("jhash2 ± the {} out-of-sample error", err.pct()),
        points: sizes
            .iter()
            .map(|&b| (b as f64, 1.0 / (1.0 + tol), 1.0 + tol))
            .collect(),
    };
    let lines: Vec<Line> = ctx
        .hashers
        .iter()
        .map(|h| {
            let mine: Vec<&(String, u64, Ratio)> = ratios
                .iter()
                .filter(|(a, b, _)| *a == h.name() && *b > 0)
                .collect();
            Line {
                x_spread: Vec::new(),
                name: match warn(h.name()) {
                    Some(_) => format!("{} (fails)", h.name()),
                    None => h.name().to_string(),
                },
                points: mine.iter().map(|(_, b, r)| (*b as f64, r.ratio)).collect(),
                spread: if h.name() == "jhash2" {
                    Vec::new()
                } else {
                    mine.iter().map(|(_, _, r)| (r.lo, r.hi)).collect()
                },
                markers_only: false,
            }
        })
        .collect();
    write_plot(
        dir,
        "sim-256cpu.svg",
        &Plot {
            title: "simulated 256-CPU box, 240 threads, each hasher ÷ jhash2 (bars: 80 % interval of the ratio)".into(),
            x_label: "private hash slots".into(),
            y_label: "ops/sec ÷ jhash2's".into(),
            log2_x: true,
            y_scale: crate::render::plot::YScale::Linear,
            reference: Some((1.0, "ratio 1 (as fast as jhash2)".into())),
            band: Some(band),
            lines,
            ..Plot::default()
        },
        s,
    )
}

/// sim-validation.svg: published vs simulated jhash2 column, fitted cells and the
/// published runs' range.
fn validation_plot(ctx: &Context, dir: &Path, s: &mut Section) -> Result<(), ReportError> {
    // The published runs behind the 240-thread means, as the range each cell's runs span.
    let runs_band = crate::sim::validate::read_runs(&ctx.data_dir)
        .ok()
        .flatten()
        .map(|t| Band {
            name: "published runs' range".into(),
            points: t
                .rows
                .iter()
                .filter(|(b, v)| *b > 0 && !v.is_empty())
                .map(|(b, v)| {
                    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = v.iter().copied().fold(0.0, f64::max);
                    (*b as f64, lo, hi)
                })
                .collect(),
        });
    let published: Vec<&crate::sim::validate::ValidationRow> = ctx
        .validation
        .iter()
        .filter(|r| r.table == PUBLISHED_TABLES[0] && r.buckets > 0)
        .collect();
    write_plot(
        dir,
        "sim-validation.svg",
        &Plot {
            title: "published vs simulated, 240 threads, jhash2".into(),
            x_label: "private hash slots".into(),
            y_label: "ops/sec per thread".into(),
            log2_x: true,
            lines: vec![
                Line::new(
                    "published",
                    published
                        .iter()
                        .map(|r| (r.buckets as f64, r.published))
                        .collect(),
                ),
                Line::new(
                    "simulated",
                    published
                        .iter()
                        .map(|r| (r.buckets as f64, r.predicted))
                        .collect(),
                ),
                Line {
                    x_spread: Vec::new(),
                    name: "fitted cells (calibration)".into(),
                    points: published
                        .iter()
                        .filter(|r| r.fitted)
                        .map(|r| (r.buckets as f64, r.published))
                        .collect(),
                    spread: Vec::new(),
                    markers_only: true,
                },
            ],
            y_scale: crate::render::plot::YScale::Log,
            band: runs_band,
            reference: ctx
                .validation
                .iter()
                .find(|r| r.table == PUBLISHED_TABLES[0] && r.buckets == 0 && r.algo == "jhash2")
                .map(|r| {
                    (
                        r.published,
                        format!(
                            "global hash, published{}",
                            if r.fitted { " (fitted)" } else { "" }
                        ),
                    )
                }),
            ..Plot::default()
        },
        s,
    )
}

fn sim_table(
    ctx: &Context,
    records: &[SimRecord],
    warn: &dyn Fn(&str) -> Option<String>,
) -> TextTable {
    let mut headers = vec!["buckets".to_string()];
    headers.extend(ctx.hashers.iter().map(|h| match warn(h.name()) {
        Some(_) => format!("{} (F)", h.name()),
        None => h.name().to_string(),
    }));
    let mut t = TextTable::new(headers);
    let mut sizes: Vec<u64> = records.iter().map(|r| r.bench.buckets).collect();
    sizes.dedup();
    for b in sizes {
        let mut row = vec![b.to_string()];
        for h in &ctx.hashers {
            row.push(
                records
                    .iter()
                    .find(|r| r.bench.buckets == b && r.bench.algo == h.name())
                    .map_or("-".into(), |r| fmt_grouped(r.bench.ops_per_sec, 0)),
            );
        }
        t.push(row);
    }
    t
}

/// The simulator call of the prediction section: every hasher at 240 threads.
fn sim_hasher_sweep(ctx: &Context) -> Result<Vec<SimRecord>, ReportError> {
    use crate::sim::sweep::{SimOptions, SimSweep, run_sweep_with};
    let buckets: Vec<u64> = if ctx.depth == Depth::Quick {
        (1..=17).step_by(2).map(|k| 1u64 << k).collect()
    } else {
        (1..=17).map(|k| 1u64 << k).collect()
    };
    let sweep = SimSweep {
        threads: vec![240],
        futexes: 1024,
        buckets,
        hashers: ctx.hashers.clone(),
        op: crate::sim::SimOp::WaitFail,
        node: None,
        len: ctx.sim_len,
        seed: 1,
    };
    Ok(run_sweep_with(
        &ctx.seed_box,
        &sweep,
        &SimOptions::default(),
        || {},
    )?)
}

/// Every record's rate ÷ jhash2's at the same size, with its 80 % interval from the
/// replications ([`ratio`]): `(algo, buckets, ratio)`, jhash2's own (1, not told apart)
/// included.
fn ratios_to_jhash2(records: &[SimRecord]) -> Vec<(String, u64, Ratio)> {
    records
        .iter()
        .filter_map(|r| {
            let j = records
                .iter()
                .find(|x| x.bench.algo == "jhash2" && x.bench.buckets == r.bench.buckets)?;
            Some((
                r.bench.algo.clone(),
                r.bench.buckets,
                ratio(&r.replications, &j.replications),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_explained_only_where_one_is_printed() {
        let none = set_apart_sentence("16.5 %", &["mine +20 % at 128 slots".into()], false);
        assert!(none.contains("mine +20 % at 128 slots."), "{none}");
        assert!(!none.contains("sim validate"), "{none}");
        let with = set_apart_sentence(
            "16.5 %",
            &[
                "crc32 +20 % at 128 slots (but `sim validate` puts this column at 0.90–1.40× \
               the published one)"
                    .into(),
            ],
            true,
        );
        assert!(with.contains("The `sim validate` range given"), "{with}");
    }
}
