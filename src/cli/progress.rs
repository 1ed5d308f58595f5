//! Progress of long runs on stderr: one line updated in place, drawn only when stderr is a
//! terminal (docs/cli.md), so that piped runs, CI logs and tests get nothing extra. The
//! line shown last is registered here, so that the signal watcher ([`super::interrupt`])
//! can clear it before it prints its own line and exits.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

/// The progress line on screen, if any.
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

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
    register(&bar);
    bar
}

/// Makes `bar` the line [`clear`] clears (for bars made elsewhere).
pub(super) fn register(bar: &ProgressBar) {
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    *shown = Some(bar.clone());
}

/// Clears the registered line for good (its redraws stop), so that a last line printed
/// on stderr stands alone. Does not wait for a lock another thread holds: a line left on
/// screen is better than no exit.
pub(super) fn clear() {
    if let Ok(mut shown) = SHOWN.try_lock()
        && let Some(bar) = shown.take()
    {
        bar.finish_and_clear();
    }
}
