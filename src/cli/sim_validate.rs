//! `futexhash sim validate`: the validation against every published seed table
//! ([`crate::sim::validate`]), and its leave-one-table-out form (`--cv`), printed as cells,
//! tables or the Markdown summary docs/sim.md quotes.

use super::sim_args::{LengthArgs, resolve_profile};
use super::{CliError, OutputArgs};
use crate::render::{Format, MAIL_WIDTH, TextTable, fmt_grouped, output};
use crate::sim::profile::MachineProfile;
use crate::sim::validate::{
    CV_TABLES, CrossValidation, RATIO_SIGN_THRESHOLD, SAS2024_BOXES, TABLE_A734, cv_stats,
    hasher_ratio_stats, is_unseen_box, machine_model_sd, machine_of, validate_cv_with,
};
use crate::sim::validate::{
    RunSpread, TABLE_240, TABLE_2013, ValidationRow, abs_log_error_quantile, column_order,
    read_runs, rms_log_error, run_spread, seed_box_template, validate_all_with,
};
use crate::sim::{Mechanisms, SimLength};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub(super) struct ValidateArgs {
    /// Directory holding the published CSVs.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Calibration rows of buckets-240threads-256cpu.csv.
    #[arg(long, value_name = "I,J", default_value = "0,2")]
    rows: String,
    /// Profile whose fixed costs are kept; its [hash_ns] costs, if any, are used for every
    /// prediction (a reproducible run: seed-256cpu-template) [default: the built-in
    /// two-socket template, hash costs timed here].
    #[arg(long, value_name = "PROFILE")]
    template: Option<String>,
    /// Print the Markdown error summary (one row per table, as docs/sim.md shows it)
    /// instead of the cells.
    #[arg(long)]
    summary: bool,
    /// Leave one table out: every published cell predicted by the model calibrated
    /// without its table (and without the template figures derived from it), with its
    /// 80 % interval (`lo`, `hi`); the summary adds the interval coverage.
    #[arg(long)]
    cv: bool,
    /// With --cv: switch these refinements of the model off (comma list of
    /// steady-state-lines, seeded-start-order, spinner-heap, key-set-means, home-snoop,
    /// separate-remote-migration, pending-bit, lone-waiter-in-migration,
    /// queue-behind-pending; each once), to measure what each does to the out-of-sample
    /// error.
    #[arg(long, value_name = "LIST")]
    ablate: Option<String>,
    #[command(flatten)]
    len: LengthArgs,
    #[command(flatten)]
    out: OutputArgs,
}

fn published_dir(arg: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match arg {
        Some(d) => Ok(d),
        None => crate::assets::published_dir().map_err(|e| CliError::Runtime(e.to_string())),
    }
}

fn two_rows(s: &str) -> Result<[usize; 2], CliError> {
    let v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::Usage(format!("--rows '{s}' must be two row numbers like 0,2")))?;
    match v[..] {
        [a, b] if a != b => Ok([a, b]),
        _ => Err(CliError::Usage(format!(
            "--rows '{s}' must name exactly two different rows, like 0,2"
        ))),
    }
}

pub(super) fn run(v: ValidateArgs) -> Result<(), CliError> {
    v.out.check()?;
    let rows = two_rows(&v.rows)?;
    let data = published_dir(v.data.clone())?;
    let template = match &v.template {
        Some(t) => resolve_profile(t)?,
        None => seed_box_template(),
    };
    let len = v.len.length()?;
    let published_runs = read_runs(&data)?;
    if v.ablate.is_some() && !v.cv {
        return Err(CliError::Usage(
            "--ablate applies to --cv only (the out-of-sample error is what it measures)".into(),
        ));
    }
    // Everything is printed when the validation is done: an interruption keeps nothing.
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    if v.cv {
        return run_cv(&v, &data, &template, len);
    }
    let bar = super::progress::steps("sim validate");
    let done = validate_all_with(&data, &template, rows, len, &mut |step| {
        bar.set_message(step.to_string())
    });
    super::interrupt::claim_output();
    bar.finish_and_clear();
    let (profile, old, results) = done?;
    let runs = runs_line(
        published_runs
            .as_ref()
            .and_then(|r| run_spread(r, &results))
            .as_ref(),
    );
    let text = if v.summary {
        validation_summary(&results, &runs)
    } else {
        match v.out.format {
            Format::Json => {
                output::to_json(&results).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Csv => {
                output::to_csv(&results).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Table => output::wrap_prose(
                &format!(
                    "{}{runs}{}# seed 003 box: {}: outside_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}\n",
                    validation_tables(&profile, &results),
                    order_line(&results, TABLE_2013),
                    old.name,
                    old.outside_ns,
                    old.handoff_local_ns,
                    old.handoff_remote_ns
                ),
                MAIL_WIDTH,
            ),
        }
    };
    v.out.emit(&text)
}

/// `--cv`: the leave-one-table-out validation, with the `--ablate` mechanisms off.
fn run_cv(
    v: &ValidateArgs,
    data: &Path,
    template: &MachineProfile,
    len: SimLength,
) -> Result<(), CliError> {
    let mut mech = Mechanisms::default();
    for name in v.ablate.iter().flat_map(|l| l.split(',')) {
        match mech.switch_mut(name.trim()) {
            Some(on) if !*on => {
                return Err(CliError::Usage(format!(
                    "--ablate names '{}' twice: name each mechanism once",
                    name.trim()
                )));
            }
            Some(on) => *on = false,
            None => {
                return Err(CliError::Usage(format!(
                    "--ablate '{name}' is not a mechanism: one of {}",
                    Mechanisms::NAMES.join(", ")
                )));
            }
        }
    }
    if v.rows != "0,2" {
        return Err(CliError::Usage(format!(
            "--rows '{}' does not apply to --cv: its protocol calibrates on rows 0,2 (docs/sim.md, \"Validation protocol\")",
            v.rows
        )));
    }
    let bar = super::progress::steps("sim validate --cv");
    let cv = validate_cv_with(data, template, len, mech, &mut |step| {
        bar.set_message(step.to_string())
    });
    super::interrupt::claim_output();
    bar.finish_and_clear();
    let cv = cv?;
    let text = if v.summary {
        cv_summary(&cv)
    } else {
        match v.out.format {
            Format::Json => {
                output::to_json(&cv.rows).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Csv => {
                output::to_csv(&cv.rows).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Table => output::wrap_prose(&cv_table(&cv), MAIL_WIDTH),
        }
    };
    v.out.emit(&text)
}

/// One Markdown row per table (and one for the three 2024 tables together): cells,
/// median and 90th percentile of |ln(predicted / published)| over the cells not fitted.
fn validation_summary(rows: &[ValidationRow], runs: &str) -> String {
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    let mut s = String::from(
        "| table | cells (fitted) | median \\|ln(pred/pub)\\| | p90 | max |\n|---|---:|---:|---:|---:|\n",
    );
    let mut line = |name: &str, these: Vec<&ValidationRow>| {
        let free: Vec<&ValidationRow> = these.iter().copied().filter(|r| !r.fitted).collect();
        s.push_str(&format!(
            "| {name} | {} ({}) | {:.3} | {:.3} | {:.3} |\n",
            these.len(),
            these.len() - free.len(),
            abs_log_error_quantile(free.iter().copied(), 0.5),
            abs_log_error_quantile(free.iter().copied(), 0.9),
            abs_log_error_quantile(free.iter().copied(), 1.0),
        ));
    };
    for t in &tables {
        line(t, rows.iter().filter(|r| r.table == *t).collect());
    }
    line(
        "all three 2024 tables",
        rows.iter()
            .filter(|r| r.table.ends_with("256cpu.csv"))
            .collect(),
    );
    s.push_str(runs);
    s.push_str(&order_line(rows, TABLE_2013));
    s
}

/// The `--cv --summary` Markdown: per held-out table and over every `cv` cell, the
/// error quantiles, the mean signed error and the 80 % intervals' coverage and width;
/// then each fold's line-transfer choice.
fn cv_summary(cv: &CrossValidation) -> String {
    let mut s = String::from(
        "| held-out table | cells cv (fit) | median \\|ln(pred/pub)\\| | p90 | mean signed | rms | 80 % coverage | median ln(hi/lo) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut line = |name: &str, these: Vec<&ValidationRow>| {
        let st = cv_stats(these.iter().copied());
        s.push_str(&format!(
            "| {name} | {} ({}) | {:.3} | {:.3} | {:+.3} | {:.3} | {:.0} % | {:.3} |\n",
            st.cells,
            these.len() - st.cells,
            st.median,
            st.p90,
            st.mean_signed,
            st.rms,
            100.0 * st.coverage,
            st.median_width,
        ));
    };
    for t in CV_TABLES {
        let these: Vec<&ValidationRow> = cv.rows.iter().filter(|r| r.table == t).collect();
        if !these.is_empty() {
            line(t, these);
        }
    }
    let is_new = |r: &ValidationRow| is_unseen_box(&r.table);
    line("all tables", cv.rows.iter().collect());
    line(
        "seed tables (the model was built on them)",
        cv.rows.iter().filter(|r| !is_new(r)).collect(),
    );
    if cv.new_boxes_scored || !cv.sas2024_scored.is_empty() {
        line(
            "boxes not used to build the model",
            cv.rows.iter().filter(|r| is_new(r)).collect(),
        );
    }
    for m in &cv.sas2024_scored {
        line(
            &format!("{m} (its three tables)"),
            cv.rows
                .iter()
                .filter(|r| machine_of(&r.table) == *m)
                .collect(),
        );
    }
    s.push_str(&format!(
        "\nmodel error of an unseen machine (rms of each machine's rms, every machine once; the sd of every `sim` interval): {:.3}\n",
        machine_model_sd(&cv.rows, None)
    ));
    for (what, these) in [
        (
            "seed tables",
            cv.rows.iter().filter(|r| !is_new(r)).collect::<Vec<_>>(),
        ),
        (
            "boxes not used to build the model",
            cv.rows.iter().filter(|r| is_new(r)).collect(),
        ),
    ] {
        if let Some(h) = hasher_ratio_stats(these) {
            s.push_str(&format!(
                "hasher comparisons, {what} (each hasher's rate over jhash2's at the same table and size): |ln(predicted ratio / published ratio)| median {:.3}, p90 {:.3} over {} pairs; where the published ratio is beyond ±{:.0} %, the predicted one is on the same side of 1 in {} of {}\n",
                h.median,
                h.p90,
                h.pairs,
                100.0 * RATIO_SIGN_THRESHOLD,
                h.sign_right,
                h.separated
            ));
        }
    }
    for b in SAS2024_BOXES
        .iter()
        .filter(|b| !cv.sas2024_scored.contains(&b.machine))
    {
        s.push_str(&format!(
            "{} is not scored: {}, {} and {} are not all in the data directory\n",
            b.machine, b.sweep, b.node_bound, b.hashers
        ));
    }
    if !cv.new_boxes_scored {
        s.push_str(&format!(
            "the boxes not used to build the model are not scored: {TABLE_A734} is not in the data directory\n"
        ));
    }
    let choices: Vec<String> = cv
        .line_choice
        .iter()
        .map(|(t, c)| format!("{t}: {c}"))
        .collect();
    s.push_str(&format!(
        "line transfers chosen in each fold (smallest median over the box's other tables): {}\n",
        choices.join("; ")
    ));
    s
}

/// `--cv` as a table: the cells per held-out table (predicted/published, `*` = fit cell),
/// each with its interval as ratios to the published figure, then the summary.
fn cv_table(cv: &CrossValidation) -> String {
    let mut s = String::new();
    for t in CV_TABLES {
        if !cv.rows.iter().any(|r| r.table == t) {
            continue;
        }
        let mut tt = TextTable::new(
            [
                "config",
                "x",
                "published",
                "predicted",
                "lo/pub",
                "pred/pub",
                "hi/pub",
                "inside",
            ]
            .map(String::from)
            .to_vec(),
        );
        for r in cv.rows.iter().filter(|r| r.table == t) {
            let (lo, hi) = (r.lo.unwrap_or(f64::NAN), r.hi.unwrap_or(f64::NAN));
            let decimals = if r.published < 100.0 { 2 } else { 0 };
            tt.push(vec![
                r.config.clone(),
                r.x.to_string(),
                fmt_grouped(r.published, decimals),
                fmt_grouped(r.predicted, decimals),
                format!("{:.2}", lo / r.published),
                format!("{:.2}{}", r.ratio, if r.role == "fit" { "*" } else { "" }),
                format!("{:.2}", hi / r.published),
                if lo <= r.published && r.published <= hi {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            ]);
        }
        s.push_str(&format!(
            "\n{t} (held out):\n{}",
            tt.render_within(MAIL_WIDTH, 1)
        ));
    }
    s.push('\n');
    s.push_str(&cv_summary(cv));
    s
}

/// One line: how much the published runs behind the 240-thread table disagree, and how
/// many predictions fall within them (empty without the runs file).
fn runs_line(spread: Option<&RunSpread>) -> String {
    let Some(r) = spread else {
        return String::new();
    };
    let widest: Vec<String> = r
        .spread
        .iter()
        .take(2)
        .map(|(b, d)| format!("{d:.3} ({b} slots)"))
        .collect();
    format!(
        "\n{TABLE_240}: its {} published runs per cell differ by ln(max/min) up to {}, a median of {:.3} over its {} cells; the prediction lies within the runs' range at {} of {} unfitted cells, and beyond it by a median of {:.3}\n",
        r.runs,
        widest.join(", then "),
        r.spread_median,
        r.spread.len(),
        r.inside.0,
        r.inside.1,
        r.beyond_median
    )
}

/// One line: at how many rows of a threads table the predicted columns come in the
/// published order, where not, and the closest call.
fn order_line(rows: &[ValidationRow], table: &str) -> String {
    let order = column_order(rows, table);
    if order.is_empty() {
        return String::new();
    }
    let wrong: Vec<String> = order
        .iter()
        .filter(|o| !o.right)
        .map(|o| {
            format!(
                "{} ({} predicted {:.3}× {})",
                o.x, o.closest.1, o.closest.2, o.closest.0
            )
        })
        .collect();
    let closest = order
        .iter()
        .min_by(|a, b| a.closest.2.total_cmp(&b.closest.2))
        .expect("non-empty");
    format!(
        "\n{table}: columns in the published order at {} of {} rows{}; closest pair: {} vs {} at {} ({:.3}×)\n",
        order.len() - wrong.len(),
        order.len(),
        if wrong.is_empty() {
            String::new()
        } else {
            format!(", not at {}", wrong.join(", "))
        },
        closest.closest.1,
        closest.closest.0,
        closest.x,
        closest.closest.2
    )
}

/// One table per published file: rows = buckets, per column `published / predicted /
/// ratio`; then the RMS log error per table.
fn validation_tables(profile: &MachineProfile, rows: &[ValidationRow]) -> String {
    let mut s = format!(
        "# profile: {}\n# fitted: outside_ns = {:.1}, hold_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}, line_miss_ns = {:.1}{}\n",
        profile.name,
        profile.outside_ns,
        profile.hold_ns,
        profile.handoff_local_ns,
        profile.handoff_remote_ns,
        profile.line_miss_ns,
        profile
            .line_miss_remote_ns
            .map_or(String::new(), |r| format!(", line_miss_remote_ns = {r:.1}"))
    );
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    for table in tables {
        let these: Vec<&ValidationRow> = rows.iter().filter(|r| r.table == table).collect();
        let mut algos: Vec<&str> = Vec::new();
        let mut buckets: Vec<u64> = Vec::new();
        for r in &these {
            if !algos.contains(&r.config.as_str()) {
                algos.push(&r.config);
            }
            if !buckets.contains(&r.x) {
                buckets.push(r.x);
            }
        }
        s.push_str(&format!(
            "\n{table}: predicted/published (RMS log error {:.3}; * = calibration row)\n",
            rms_log_error(these.iter().copied())
        ));
        let single = algos.len() == 1;
        let mut headers = vec![if table.contains("2013") {
            "threads".to_string()
        } else if table.contains("futex_numa") {
            "contenders/node".to_string()
        } else if table.contains("pinning") {
            "node mask".to_string()
        } else {
            "buckets".to_string()
        }];
        if single {
            headers.extend(["published".into(), "predicted".into(), "ratio".into()]);
        } else {
            headers.extend(algos.iter().map(|a| a.to_string()));
        }
        let mut t = TextTable::new(headers);
        for b in buckets {
            let mut row = vec![b.to_string()];
            for a in &algos {
                let Some(r) = these.iter().find(|r| r.x == b && r.config == *a) else {
                    row.push("-".into());
                    continue;
                };
                let ratio = format!("{:.2}{}", r.ratio, if r.fitted { "*" } else { "" });
                if single {
                    // Rates as integers; the futex_numa figure is a ratio (≈ 3).
                    let decimals = if r.published < 100.0 { 2 } else { 0 };
                    row.push(fmt_grouped(r.published, decimals));
                    row.push(fmt_grouped(r.predicted, decimals));
                }
                row.push(ratio);
            }
            t.push(row);
        }
        s.push_str(&t.render_within(MAIL_WIDTH, 1));
    }
    s
}
