//! Progress of long runs on stderr: one line updated in place, drawn only when stderr is a
//! terminal (docs/cli.md), so that piped runs, CI logs and tests get nothing extra.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// How often a shown line is redrawn without news, so that its clock moves during a
/// step of a minute.
const TICK: Duration = Duration::from_millis(200);

/// A line `PREFIX: MESSAGE (elapsed)` whose message says the step in progress (set it with
/// `set_message`); hidden when stderr is not a terminal.
pub(super) fn steps(prefix: &str) -> ProgressBar {
    let bar = shown(prefix, None, "{prefix}: {msg} {spinner} ({elapsed})");
    bar.set_message("starting");
    bar
}

/// A line `PREFIX: N of TOTAL UNIT done [bar] (elapsed)` counted with `inc`; hidden when
/// stderr is not a terminal.
pub(super) fn counter(prefix: &str, total: u64, unit: &str) -> ProgressBar {
    let template = format!(
        "{{prefix}}: {{pos}} of {{len}} {unit} done [{{bar:30}}] {{spinner}} ({{elapsed}})"
    );
    shown(prefix, Some(total), &template)
}

fn shown(prefix: &str, total: Option<u64>, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .progress_chars("=> ");
    let bar = match total {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    }
    .with_style(style)
    .with_prefix(prefix.to_string());
    bar.enable_steady_tick(TICK);
    bar
}
