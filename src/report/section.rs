//! One section of the report (its Markdown, plots and `report.json` figures) and the two
//! writers every section uses: a code block and a plot with its Markdown reference.

use crate::render::plot::{Plot, plot_svg};
use crate::report::ReportError;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One section of the report: Markdown text, the plots it refers to (already written),
/// and its figures for `report.json`.
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Key in `report.json`.
    pub key: String,
    /// Markdown, starting with a `##` heading.
    pub markdown: String,
    /// Files written for it.
    pub files: Vec<PathBuf>,
    /// Its figures.
    pub figures: Value,
}

/// `text` as a fenced code block.
pub fn code_block(text: &str) -> String {
    format!("```\n{text}```\n")
}

/// Writes `plot` as `dir/file` and refers to it from `section`'s Markdown.
pub fn write_plot(
    dir: &Path,
    file: &str,
    plot: &Plot,
    section: &mut Section,
) -> Result<(), ReportError> {
    write_plot_into(dir, file, plot, &mut section.markdown, &mut section.files)
}

/// Writes `plot` as `dir/file`, appends its Markdown reference to `text` and its path to
/// `files`: what a section and an answer both do with a plot.
pub fn write_plot_into(
    dir: &Path,
    file: &str,
    plot: &Plot,
    text: &mut String,
    files: &mut Vec<PathBuf>,
) -> Result<(), ReportError> {
    let path = dir.join(file);
    plot_svg(&path, plot).map_err(|source| ReportError::Plot {
        path: path.clone(),
        source,
    })?;
    let _ = writeln!(text, "\n![{}]({file})\n", plot.title);
    files.push(path);
    Ok(())
}
