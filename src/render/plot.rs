//! SVG line plots for the reports and the `--plot` options: one line (with point markers)
//! per series, an optional log2 x axis (table sizes, thread counts) labelled `2^k`, written
//! atomically.
//!
//! Rules every plot follows, so that it reads at a glance:
//! - the y axis turns logarithmic (ticks at 1-2-5 × 10^k) when the data spans more than
//!   10× ([`YScale::Auto`]), so one large series does not flatten the others; its range
//!   reaches a labelled tick below the lowest value and one above the highest, so no
//!   series lies beyond the last label;
//! - at most [`MAX_SERIES_PER_PANEL`] series share a panel; more are faceted into panels
//!   stacked vertically with the same axes;
//! - colours are the Okabe–Ito colour-blind-safe palette (Okabe & Ito, "Color Universal
//!   Design", 2008) without its yellow, which is too light on white; markers also cycle
//!   shape, so lines stay distinct in grey print;
//! - the legend sits right of the data area, never on it; the y title sits left of tick
//!   labels whose area is sized for them;
//! - a line that would hide an earlier one of its panel is dashed, and its legend entry
//!   says which one it lies on and how close they are (`overlaps`);
//! - the title is never clipped: too wide for one line it takes two ([`title_lines`]),
//!   too long for two it ends in "…" at a word;
//! - count axes ([`Plot::integer_y`], integral x values) get integer ticks only;
//! - runs that repeat draw error bars ([`Line::spread`]), and a reference band
//!   ([`Plot::band`], e.g. the random-expectation interval) is shaded and included in the y
//!   range, so noise inside the band is not zoomed into apparent signal.
//!
//! Drawn with `plotters`' SVG backend into a string (no system fonts needed: the SVG keeps
//! text as `<text>` elements and plotters estimates label sizes), then written whole with
//! [`write_atomic`](super::write_atomic).

use plotters::element::{Cross, TriangleMarker};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;
use std::path::Path;

/// One named line: `(x, y)` points in x order.
pub type Series = (String, Vec<(f64, f64)>);

/// Size of a one-panel plot in pixels (data area plus legend column).
pub const PLOT_SIZE: (u32, u32) = (1000, 560);

/// Width of the legend column right of the data area, at least.
const LEGEND_WIDTH: u32 = 240;

/// The widest the legend column grows for long names (the plot widens with it).
const MAX_LEGEND_WIDTH: u32 = 520;

/// The legend column's width for `p`: wide enough for its longest name at the 13 px
/// sans-serif legend font (about 7 px per character, plus the swatch), so no name is
/// clipped, within [`LEGEND_WIDTH`]..=[`MAX_LEGEND_WIDTH`].
pub fn legend_width(p: &Plot) -> u32 {
    // Notes are in the 11 px font: about 6 px per character.
    let axes = Axes::of(p);
    let notes = panels_of(p)
        .iter()
        .flat_map(|(lines, _)| overlap_notes(&axes, lines))
        .flatten()
        .map(|n| (6 * n.chars().count() as u32).div_ceil(7))
        .max()
        .unwrap_or(0) as usize;
    let longest = p
        .lines
        .iter()
        .map(|l| l.name.chars().count())
        .chain(p.band.iter().map(|b| b.name.chars().count()))
        .chain(p.reference.iter().map(|r| r.1.chars().count()))
        .chain(p.spread_legend.iter().map(|s| s.chars().count()))
        .chain(p.levels_legend.iter().map(|s| s.chars().count()))
        .chain(p.levels_interval_legend.iter().map(|s| s.chars().count()))
        .chain(std::iter::once(notes))
        .max()
        .unwrap_or(0) as u32;
    (48 + 7 * longest).clamp(LEGEND_WIDTH, MAX_LEGEND_WIDTH)
}

/// The title's font size (plotters' nominal size; the SVG's `font-size` is this ÷ 1.24).
const TITLE_FONT: u32 = 22;

/// Pixels the title keeps clear of the plot's left and right edges.
const TITLE_MARGIN: u32 = 10;

/// The widest a character of a `nominal`-size font is taken to be, in pixels: 0.6 em of
/// the SVG's `font-size` (`nominal` ÷ 1.24). DejaVu Sans, a wide sans-serif, averages
/// about 0.5 em over the digits, lower case and punctuation of titles, so a line this
/// estimate fits fits in narrower fonts too.
fn char_px(nominal: u32) -> f64 {
    0.6 * nominal as f64 / 1.24
}

/// The title as drawn on a plot `width` pixels wide: one line when it fits; else two
/// lines broken at the space that balances them best; when even two lines are too short,
/// the second ends at the last word that fits, followed by "…". A title is never clipped
/// by the edge of the plot.
pub fn title_lines(title: &str, width: u32) -> Vec<String> {
    let max = ((width.saturating_sub(2 * TITLE_MARGIN)) as f64 / char_px(TITLE_FONT)) as usize;
    let len = |s: &str| s.chars().count();
    if len(title) <= max {
        return vec![title.to_string()];
    }
    // Every space is a candidate break: (first line, rest).
    let breaks: Vec<(&str, &str)> = title
        .char_indices()
        .filter(|&(_, c)| c == ' ')
        .map(|(i, _)| (title[..i].trim_end(), title[i + 1..].trim_start()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .collect();
    if let Some((a, b)) = breaks
        .iter()
        .filter(|(a, b)| len(a) <= max && len(b) <= max)
        .min_by_key(|(a, b)| len(a).max(len(b)))
    {
        return vec![a.to_string(), b.to_string()];
    }
    // Too long for two lines: fill the first, end the second with an ellipsis.
    match breaks.iter().rev().find(|(a, _)| len(a) <= max) {
        Some((a, b)) => vec![a.to_string(), ellipsis(b, max)],
        None => vec![ellipsis(title, max)],
    }
}

/// `s` cut after its last whole word that leaves room for " …" within `max` characters
/// (mid-word only when its first word alone is too long), then "…".
fn ellipsis(s: &str, max: usize) -> String {
    let room = max.saturating_sub(2);
    let head = s
        .char_indices()
        .filter(|&(i, c)| c == ' ' && s[..i].chars().count() <= room)
        .map(|(i, _)| s[..i].trim_end_matches([' ', ',', ';', ':']))
        .rfind(|h| !h.is_empty());
    match head {
        Some(h) => format!("{h} …"),
        None => format!("{}…", cut(s, max.saturating_sub(1))),
    }
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Dash plus gap, in pixels, of a line drawn over an earlier one it coincides with: the
/// first such line of a panel has dashes of 7 px, each further one 2 px shorter (at least
/// 1), all starting together, so when several coincide each shows a part of every period.
const DASH_PERIOD: u32 = 14;

/// Height of each panel when a plot is faceted.
const FACET_HEIGHT: u32 = 420;

/// Series per panel; more are faceted.
pub const MAX_SERIES_PER_PANEL: usize = 8;

/// Okabe–Ito without yellow (#F0E442), plus a mid grey as the eighth colour.
const PALETTE: [RGBColor; MAX_SERIES_PER_PANEL] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(0, 0, 0),       // black
    RGBColor(120, 120, 120), // grey
];

/// The colour of series `i` within its panel.
pub fn series_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// How the y axis is scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum YScale {
    /// Logarithmic when every value is positive and the largest is more than 10× the
    /// smallest; linear otherwise.
    #[default]
    Auto,
    /// Always linear.
    Linear,
    /// Always logarithmic (non-positive values are skipped).
    Log,
}

/// One line of a plot.
#[derive(Clone, Debug, Default)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// Empty, or one `(low, high)` per point: drawn as an error bar (e.g. min–max over
    /// repeated runs).
    pub spread: Vec<(f64, f64)>,
    /// Empty, or one `(low, high)` of x per point: drawn as a horizontal error bar (a
    /// measured cost on the x axis).
    pub x_spread: Vec<(f64, f64)>,
    /// Draw the points only (a scatter of unrelated items), no connecting line.
    pub markers_only: bool,
}

impl Line {
    /// A line without error bars.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Line {
            name: name.into(),
            points,
            spread: Vec::new(),
            x_spread: Vec::new(),
            markers_only: false,
        }
    }
}

/// A shaded reference band: `(x, low, high)` in x order, with its legend text.
#[derive(Clone, Debug, Default)]
pub struct Band {
    /// Legend text (e.g. "random: 99.7 % interval").
    pub name: String,
    /// `(x, low, high)`.
    pub points: Vec<(f64, f64, f64)>,
}

/// A plot description; render with [`plot_svg_string`] or [`plot_svg`].
#[derive(Clone, Debug, Default)]
pub struct Plot {
    /// Caption above the plot.
    pub title: String,
    /// X axis title.
    pub x_label: String,
    /// Y axis title.
    pub y_label: String,
    /// The lines (faceted by [`MAX_SERIES_PER_PANEL`]).
    pub lines: Vec<Line>,
    /// Place x at `log2(x)` with ticks `2^k` (x must be positive).
    pub log2_x: bool,
    /// Y scaling.
    pub y_scale: YScale,
    /// The y values are counts: integer ticks only.
    pub integer_y: bool,
    /// A shaded reference band, always inside the y range.
    pub band: Option<Band>,
    /// A horizontal reference line `(y, legend text)`, always inside the y range.
    pub reference: Option<(f64, String)>,
    /// Panels by meaning: `(title, n)` puts the next `n` lines in a panel of that title
    /// (split again above [`MAX_SERIES_PER_PANEL`]). Empty: panels of
    /// [`MAX_SERIES_PER_PANEL`] lines in order.
    pub facets: Vec<(String, usize)>,
    /// Legend text for the error bars ([`Line::spread`]), e.g. "bars: 80 % prediction
    /// interval": a legend row of its own, under the lines.
    pub spread_legend: Option<String>,
    /// Empty, or the names of the y values 0, 1, 2, …: the y axis is then categorical
    /// (a verdict's pass, warn, fail), linear, with ticks at those values only, each
    /// labelled with its name instead of its number.
    pub y_categories: Vec<String>,
    /// Horizontal reference levels drawn in the panel of the line they belong to, dashed,
    /// across the whole x axis, in that line's colour (`of` naming no line: in black, in
    /// every panel). Their legend is one row, [`Plot::levels_legend`], not one per level.
    pub levels: Vec<Level>,
    /// The legend row of [`Plot::levels`] (e.g. "dashed, in its line's colour: the global
    /// hash"); a second row names their intervals when any is drawn.
    pub levels_legend: Option<String>,
    /// The legend row of the levels' shaded intervals, drawn when any level has one.
    pub levels_interval_legend: Option<String>,
}

/// A horizontal reference level of one line ([`Plot::levels`]): a rate that has no place on
/// the x axis (the global hash on a private-slots axis), drawn across it to read against.
#[derive(Clone, Debug, Default)]
pub struct Level {
    /// The [`Line::name`] it belongs to (its panel and colour); no line's name: black.
    pub of: String,
    /// The level.
    pub y: f64,
    /// Its interval `(low, high)`, shaded in the line's colour across the axis when the
    /// level is the only one in its panel (several shaded bands on top of each other would
    /// hide which is whose); else drawn as one grey band over all of them.
    pub interval: Option<(f64, f64)>,
}

/// The lines of each panel with the panel's title (`None`: numbered by its series).
fn panels_of(p: &Plot) -> Vec<(&[Line], Option<&str>)> {
    if p.lines.is_empty() {
        return vec![(&[], None)];
    }
    if p.facets.is_empty() || p.facets.iter().map(|f| f.1).sum::<usize>() != p.lines.len() {
        return p
            .lines
            .chunks(MAX_SERIES_PER_PANEL)
            .map(|c| (c, None))
            .collect();
    }
    let mut out = Vec::new();
    let mut at = 0;
    for (title, n) in &p.facets {
        for c in p.lines[at..at + n].chunks(MAX_SERIES_PER_PANEL) {
            out.push((c, Some(title.as_str())));
        }
        at += n;
    }
    out
}

fn to_io(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// Whether the y axis of `values` is drawn logarithmically under `scale`.
pub fn use_log_y(scale: YScale, values: impl IntoIterator<Item = f64>) -> bool {
    match scale {
        YScale::Linear => false,
        YScale::Log => true,
        YScale::Auto => {
            let (mut lo, mut hi, mut any) = (f64::INFINITY, 0.0f64, false);
            for v in values.into_iter().filter(|v| v.is_finite()) {
                if v <= 0.0 {
                    return false;
                }
                lo = lo.min(v);
                hi = hi.max(v);
                any = true;
            }
            any && hi > 10.0 * lo
        }
    }
}

/// Tick values between `lo` and `hi` (data units): 1-2-5 × 10^k on a log axis (only powers
/// of ten when that still gives three ticks over many decades); on a linear axis about six
/// steps of 1, 2 or 5 × 10^k, at least 1 when `integer`.
pub fn ticks(lo: f64, hi: f64, log: bool, integer: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Vec::new();
    }
    if log {
        if lo <= 0.0 {
            return Vec::new();
        }
        let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let mantissas = log_mantissas(lo, hi);
        let mut out = Vec::new();
        for k in k0..=k1 {
            for m in mantissas {
                let v = m * 10f64.powi(k);
                if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) && (!integer || v >= 1.0) {
                    out.push(v);
                }
            }
        }
        return out;
    }
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    if integer {
        step = step.max(1.0).round();
    }
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + i as f64 * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .take(50)
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect()
}

/// The mantissas of a log axis's ticks over `lo`..`hi` (both positive): 1-2-5 over two to
/// four decades, powers of ten alone over more, finer within one.
fn log_mantissas(lo: f64, hi: f64) -> &'static [f64] {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = (k1 - k0).max(1);
    if decades > 4 {
        &[1.0]
    } else if decades > 1 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    }
}

/// The nearest value of `mantissas` × 10^k at or below `v` (`up`: at or above), at least
/// 1 when `integer`; `None` when there is none.
fn log_tick_beyond(v: f64, mantissas: &[f64], up: bool, integer: bool) -> Option<f64> {
    let k = v.log10().floor() as i32;
    let candidates = (k - 1..=k + 1)
        .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
        .filter(|t| !integer || *t >= 1.0);
    if up {
        candidates
            .filter(|t| *t >= v * (1.0 - 1e-9))
            .min_by(f64::total_cmp)
    } else {
        candidates
            .filter(|t| *t <= v * (1.0 + 1e-9))
            .max_by(f64::total_cmp)
    }
}

/// A log axis over the data's `lo`..`hi` (positive): the range and its ticks, the range
/// widened until a labelled tick lies at or below `lo` and one at or above `hi`, so no
/// series lies beyond the last label where its value could not be read. Padded 5 % of the
/// span in log space (at least 0.02 decades) beyond those ticks.
fn log_axis(lo: f64, hi: f64, integer: bool) -> ((f64, f64), Vec<f64>) {
    let (mut a, mut b) = (lo.log10(), hi.log10());
    let mut out = ((1.0, 10.0), Vec::new());
    // A coarser tick set (more decades) can drop the tick just found: a few rounds settle.
    for _ in 0..6 {
        let pad = ((b - a) * 0.05).max(0.02);
        let range = (10f64.powf(a - pad), 10f64.powf(b + pad));
        let t = ticks(range.0, range.1, true, integer);
        let below = t.first().is_some_and(|v| *v <= lo * (1.0 + 1e-9));
        let above = t.last().is_some_and(|v| *v >= hi * (1.0 - 1e-9));
        out = (range, t);
        if below && above {
            break;
        }
        let m = log_mantissas(range.0, range.1);
        if !below && let Some(v) = log_tick_beyond(lo, m, false, integer) {
            a = a.min(v.log10());
        }
        if !above && let Some(v) = log_tick_beyond(hi, m, true, integer) {
            b = b.max(v.log10());
        }
    }
    out
}

/// A y tick label: thousands separators from 1000 up, else as many decimals as the tick
/// spacing needs (at most 4); `spacing = 0` (log axes) takes the decimals the value
/// itself needs (0.005, 0.5, 1.5, 20).
pub fn tick_label(v: f64, spacing: f64) -> String {
    if v.abs() >= 1000.0 {
        return super::fmt_grouped(v, 0);
    }
    if spacing == 0.0 {
        for d in 0..=4 {
            let s = format!("{v:.d$}");
            if (s.parse::<f64>().unwrap_or(f64::NAN) - v).abs() <= v.abs() * 1e-9 {
                return s;
            }
        }
        return format!("{v:.4}");
    }
    let decimals = if spacing > 0.0 {
        (-(spacing.log10().floor())).clamp(0.0, 4.0) as usize
    } else {
        3
    };
    format!("{v:.decimals$}")
}

/// The y range `(lo, hi)` in data units covering every point, error bar, band and
/// reference, padded 5 % (in log space on a log axis); a log axis is then widened to
/// labelled ticks around the data ([`log_axis`]).
fn y_range(p: &Plot, log: bool) -> (f64, f64) {
    let ok = |v: &f64| v.is_finite() && (!log || *v > 0.0);
    let mut vals: Vec<f64> = Vec::new();
    for l in &p.lines {
        vals.extend(l.points.iter().map(|pt| pt.1));
        vals.extend(l.spread.iter().flat_map(|s| [s.0, s.1]));
    }
    if let Some(b) = &p.band {
        vals.extend(b.points.iter().flat_map(|b| [b.1, b.2]));
    }
    if let Some((y, _)) = &p.reference {
        vals.push(*y);
    }
    for l in &p.levels {
        vals.push(l.y);
        vals.extend(l.interval.iter().flat_map(|i| [i.0, i.1]));
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.into_iter().filter(ok) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        log_axis(lo, hi, p.integer_y).0
    } else {
        // Positive data spread over more than half its top starts at zero, so bar-like
        // comparisons are not exaggerated; data bunched far from zero keeps its zoom (the
        // caller's band shows how much of that is noise).
        let lo = if lo >= 0.0 && lo < 0.5 * hi { 0.0 } else { lo };
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-3).max(1e-9);
        let lo = if lo >= 0.0 && lo - pad < 0.0 {
            0.0
        } else {
            lo - pad
        };
        (lo, hi + pad)
    }
}

/// The data-to-chart mapping every panel of one plot shares: the axis transforms, the
/// padded ranges and the y ticks.
struct Axes {
    log2_x: bool,
    log_y: bool,
    /// Every x is integral (and x is linear): integer x ticks only.
    integer_x: bool,
    /// The x range in chart units (after `log2`), padded 3 %.
    x: (f64, f64),
    /// The y range in data units, from [`y_range`].
    y: (f64, f64),
    /// The y ticks in data units.
    ticks: Vec<f64>,
    /// The linear tick step (0 on a log axis), which sets the tick labels' precision.
    spacing: f64,
    /// [`Plot::y_categories`]: the label of tick `k` (at y = k) when not empty.
    categories: Vec<String>,
}

impl Axes {
    fn of(p: &Plot) -> Axes {
        let log_y = p.y_categories.is_empty()
            && use_log_y(
                p.y_scale,
                p.lines.iter().flat_map(|l| l.points.iter().map(|pt| pt.1)),
            );
        let mut a = Axes {
            log2_x: p.log2_x,
            log_y,
            integer_x: false,
            x: (0.0, 1.0),
            y: y_range(p, log_y),
            ticks: Vec::new(),
            spacing: 0.0,
            categories: p.y_categories.clone(),
        };
        let mut xs: Vec<f64> = p
            .lines
            .iter()
            .flat_map(|l| {
                l.points
                    .iter()
                    .map(|pt| pt.0)
                    .chain(l.x_spread.iter().flat_map(|s| [s.0, s.1]))
            })
            .chain(p.band.iter().flat_map(|b| b.points.iter().map(|b| b.0)))
            .filter(|x| a.x_ok(*x))
            .collect();
        xs.sort_by(f64::total_cmp);
        let (x0, x1) = match (xs.first(), xs.last()) {
            (Some(lo), Some(hi)) => (a.tx(*lo), a.tx(*hi)),
            _ => (0.0, 1.0),
        };
        a.integer_x = !p.log2_x && xs.iter().all(|x| x.fract() == 0.0);
        a.x = if x1 - x0 < 1e-12 {
            // One x: in the middle, a step (a doubling on a log2 axis) either side.
            (x0 - 1.0, x0 + 1.0)
        } else {
            let xpad = (x1 - x0) * 0.03;
            (x0 - xpad, x1 + xpad)
        };
        if !a.categories.is_empty() {
            // Every category, whatever the data hold, a third of a step beyond the ends.
            let last = (a.categories.len() - 1) as f64;
            a.y = (-0.35, last + 0.35);
            a.ticks = (0..a.categories.len()).map(|k| k as f64).collect();
            a.spacing = 1.0;
            return a;
        }
        a.ticks = ticks(a.y.0, a.y.1, log_y, p.integer_y);
        a.spacing = if log_y {
            0.0
        } else {
            a.ticks
                .windows(2)
                .map(|w| w[1] - w[0])
                .next()
                .unwrap_or(1.0)
        };
        a
    }

    fn tx(&self, x: f64) -> f64 {
        if self.log2_x { x.log2() } else { x }
    }

    fn ty(&self, y: f64) -> f64 {
        if self.log_y { y.log10() } else { y }
    }

    /// The y tick label: the category's name on a categorical axis, else the number.
    fn y_label(&self, y: f64) -> String {
        match self.categories.get(y.round().max(0.0) as usize) {
            Some(name) if (y - y.round()).abs() < 1e-9 => name.clone(),
            _ => tick_label(y, self.spacing),
        }
    }

    fn x_ok(&self, x: f64) -> bool {
        x.is_finite() && (!self.log2_x || x > 0.0)
    }

    fn y_ok(&self, y: f64) -> bool {
        y.is_finite() && (!self.log_y || y > 0.0)
    }

    /// The x tick label: `2^k` on a log2 axis, integers only on an integral one.
    fn x_label(&self, x: f64) -> String {
        if self.log2_x {
            format!("2^{}", x.round() as i64)
        } else if self.integer_x {
            if (x - x.round()).abs() < 1e-9 {
                format!("{}", x.round() as i64)
            } else {
                String::new()
            }
        } else {
            format!("{x}")
        }
    }
}

/// For each line of a panel, the earlier line of the panel it would hide, if any, with
/// the largest relative difference of their y values. A later line is drawn over an
/// earlier one; the two coincide when they have as many drawable points and each pair is
/// within 0.5 % of the axis span in x and in y (about 2 px of a 440 px axis, the width of
/// a line): the earlier one would be in the legend but not to be seen.
fn overlaps(a: &Axes, lines: &[Line]) -> Vec<Option<(usize, f64)>> {
    let drawn = |l: &Line| -> Vec<(f64, f64)> {
        l.points
            .iter()
            .copied()
            .filter(|&(x, y)| a.x_ok(x) && a.y_ok(y))
            .collect()
    };
    let (sx, sy) = (a.x.1 - a.x.0, a.ty(a.y.1) - a.ty(a.y.0));
    let pts: Vec<Vec<(f64, f64)>> = lines.iter().map(drawn).collect();
    (0..lines.len())
        .map(|j| {
            (0..j).find_map(|i| {
                let (u, v) = (&pts[i], &pts[j]);
                let close = !u.is_empty()
                    && u.len() == v.len()
                    && u.iter().zip(v).all(|(p, q)| {
                        (a.tx(p.0) - a.tx(q.0)).abs() <= 0.005 * sx
                            && (a.ty(p.1) - a.ty(q.1)).abs() <= 0.005 * sy
                    });
                close.then(|| {
                    let rel = u
                        .iter()
                        .zip(v)
                        .map(|(p, q)| {
                            let m = p.1.abs().max(q.1.abs());
                            if m == 0.0 { 0.0 } else { (p.1 - q.1).abs() / m }
                        })
                        .fold(0.0, f64::max);
                    (i, rel)
                })
            })
        })
        .collect()
}

/// The legend's note under each line that [`overlaps`] an earlier one: it is dashed, so
/// the earlier one shows between its dashes, and the note says which one and how close
/// ("dashed: on top of NAME (within 0.00099 %)", the difference rounded up to two
/// significant digits, or "(same values)"; a markers-only series has no line to dash:
/// "on top of NAME (…)").
fn overlap_notes(a: &Axes, lines: &[Line]) -> Vec<Option<String>> {
    overlaps(a, lines)
        .into_iter()
        .zip(lines)
        .map(|(o, line)| {
            o.map(|(i, rel)| {
                let how = if rel == 0.0 {
                    "same values".to_string()
                } else {
                    format!("within {} %", round_up_2sig(rel * 100.0))
                };
                let dashed = if line.markers_only { "" } else { "dashed: " };
                format!("{dashed}on top of {} ({how})", lines[i].name)
            })
        })
        .collect()
}

/// `v > 0` rounded up to two significant digits, as text: 0.000983 → "0.00099",
/// 1.21 → "1.3", 12.1 → "13".
fn round_up_2sig(v: f64) -> String {
    let decimals = |v: f64| (1 - v.log10().floor() as i32).max(0);
    let scale = 10f64.powi(decimals(v));
    let r = (v * scale * (1.0 - 1e-12)).ceil() / scale;
    // Rounding up may reach the next power of ten (0.00099999 → 0.001): two digits of it.
    format!("{r:.0$}", decimals(r) as usize)
}

type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// Renders the plot as an SVG document. Non-finite values are skipped (and non-positive
/// ones on a log axis, and non-positive x with `log2_x`).
pub fn plot_svg_string(p: &Plot) -> io::Result<String> {
    let axes = Axes::of(p);
    let panels = panels_of(p);
    let height = if panels.len() == 1 {
        PLOT_SIZE.1
    } else {
        FACET_HEIGHT * panels.len() as u32 + 40
    };
    let mut svg = String::new();
    {
        let legend_w = legend_width(p);
        let width = PLOT_SIZE.0 - LEGEND_WIDTH + legend_w;
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let body = draw_title(&root, &p.title, width)?;
        let areas = body.split_evenly((panels.len(), 1));
        let mut first_index = 0usize;
        for (panel_no, (area, &(lines, facet))) in areas.iter().zip(&panels).enumerate() {
            let (data_area, legend_area) = area.split_horizontally(width - legend_w);
            let notes = overlap_notes(&axes, lines);
            draw_panel(&root, &data_area, p, &axes, lines, &notes)?;
            draw_legend(&legend_area, p, lines, &notes)?;
            if panels.len() > 1 {
                let title = match facet {
                    Some(t) => t.to_string(),
                    None => format!(
                        "panel {}: series {}–{}",
                        panel_no + 1,
                        first_index + 1,
                        first_index + lines.len()
                    ),
                };
                legend_area
                    .draw(&Text::new(
                        title,
                        (10, 8),
                        ("sans-serif", 13).into_font().color(&BLACK.mix(0.7)),
                    ))
                    .map_err(to_io)?;
            }
            first_index += lines.len();
        }
        root.present().map_err(to_io)?;
    }
    Ok(svg)
}

/// The title's lines ([`title_lines`]) centred at the top of `root`; returns the area
/// below them.
fn draw_title<'b>(root: &Area<'b>, title: &str, width: u32) -> io::Result<Area<'b>> {
    // As plotters' `titled`: 5 px above and below a line of its estimated height (18 px
    // at 22), and 22 px for every further line.
    const PAD: i32 = 5;
    const LINE: i32 = 22;
    let lines = title_lines(title, width);
    let font = ("sans-serif", TITLE_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in lines.iter().enumerate() {
        root.draw(&Text::new(
            line.clone(),
            ((width / 2) as i32, PAD + LINE * i as i32),
            font.clone(),
        ))
        .map_err(to_io)?;
    }
    let height = 2 * PAD + 18 + LINE * (lines.len() as i32 - 1);
    Ok(root.split_vertically(height).1)
}

/// One panel's data area: axes and grid, then the band, the reference line and the lines
/// with their error bars, in that order (later ones on top).
fn draw_panel(
    root: &Area,
    data_area: &Area,
    p: &Plot,
    a: &Axes,
    lines: &[Line],
    notes: &[Option<String>],
) -> io::Result<()> {
    let mut chart = ChartBuilder::on(data_area)
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(96)
        .build_cartesian_2d(a.x.0..a.x.1, a.ty(a.y.0)..a.ty(a.y.1))
        .map_err(to_io)?;
    let n_x = if a.log2_x || a.integer_x {
        ((a.x.1 - a.x.0).round() as usize + 1).clamp(2, 20)
    } else {
        10
    };
    let xfmt = |x: &f64| a.x_label(*x);
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_labels(n_x)
        .y_labels(0)
        .disable_y_mesh()
        .x_label_formatter(&xfmt)
        .light_line_style(WHITE)
        .axis_desc_style(("sans-serif", 15))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(to_io)?;
    draw_y_grid(&mut chart, root, a)?;
    if let Some(b) = &p.band {
        draw_band(&mut chart, a, b)?;
    }
    if let Some((y, _)) = &p.reference {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(a.x.0, a.ty(*y)), (a.x.1, a.ty(*y))],
                BLACK.mix(0.6).stroke_width(1),
            )))
            .map_err(to_io)?;
    }
    draw_levels(&mut chart, p, a, lines)?;
    for (i, line) in lines.iter().enumerate() {
        // The how-manyth line of the panel drawn over another this one is (0: none).
        let dashed = notes[i]
            .as_ref()
            .map_or(0, |_| notes[..=i].iter().flatten().count());
        draw_line(&mut chart, a, line, i, dashed as u32)?;
    }
    Ok(())
}

/// The levels of this panel's lines ([`Plot::levels`]): their intervals first (one
/// level: shaded in its colour; several: one grey band from the lowest low to the
/// highest high), then each level dashed across the axis in its line's colour.
fn draw_levels(chart: &mut Chart, p: &Plot, a: &Axes, lines: &[Line]) -> io::Result<()> {
    let here: Vec<(&Level, RGBColor)> = p
        .levels
        .iter()
        .filter_map(|l| match lines.iter().position(|x| x.name == l.of) {
            Some(i) => Some((l, series_colour(i))),
            None if !p.lines.iter().any(|x| x.name == l.of) => Some((l, BLACK)),
            None => None,
        })
        .filter(|(l, _)| a.y_ok(l.y))
        .collect();
    let intervals: Vec<(f64, f64, RGBColor)> = here
        .iter()
        .filter_map(|(l, c)| l.interval.map(|i| (i.0, i.1, *c)))
        .filter(|i| a.y_ok(i.0) && a.y_ok(i.1))
        .collect();
    let shade = match intervals.as_slice() {
        [] => None,
        [(lo, hi, c)] => Some((*lo, *hi, c.mix(0.15))),
        many => Some((
            many.iter().map(|i| i.0).fold(f64::INFINITY, f64::min),
            many.iter().map(|i| i.1).fold(f64::NEG_INFINITY, f64::max),
            RGBColor(150, 150, 150).mix(0.25),
        )),
    };
    if let Some((lo, hi, c)) = shade {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a.x.0, a.ty(lo)), (a.x.1, a.ty(hi))],
                c.filled(),
            )))
            .map_err(to_io)?;
    }
    for (l, c) in &here {
        let y = a.ty(l.y);
        chart
            .draw_series(DashedLineSeries::new(
                [(a.x.0, y), (a.x.1, y)],
                6,
                4,
                c.stroke_width(1),
            ))
            .map_err(to_io)?;
    }
    Ok(())
}

/// Our own y grid and tick labels, at round values in data units (plotters' own ticks
/// are not round on a log axis).
fn draw_y_grid(chart: &mut Chart, root: &Area, a: &Axes) -> io::Result<()> {
    let grid = RGBColor(220, 220, 220);
    for &t in &a.ticks {
        let y = a.ty(t);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(a.x.0, y), (a.x.1, y)],
                grid.stroke_width(1),
            )))
            .map_err(to_io)?;
        let (px, py) = chart.backend_coord(&(a.x.0, y));
        root.draw(&Text::new(
            a.y_label(t),
            (px - 6, py),
            ("sans-serif", 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(to_io)?;
    }
    Ok(())
}

/// The shaded band: its low edge left to right, then its high edge back.
fn draw_band(chart: &mut Chart, a: &Axes, b: &Band) -> io::Result<()> {
    let mut poly: Vec<(f64, f64)> = b
        .points
        .iter()
        .filter(|b| a.x_ok(b.0) && a.y_ok(b.1))
        .map(|b| (a.tx(b.0), a.ty(b.1)))
        .collect();
    poly.extend(
        b.points
            .iter()
            .rev()
            .filter(|b| a.x_ok(b.0) && a.y_ok(b.2))
            .map(|b| (a.tx(b.0), a.ty(b.2))),
    );
    chart
        .draw_series(std::iter::once(Polygon::new(
            poly,
            RGBColor(150, 150, 150).mix(0.25).filled(),
        )))
        .map_err(to_io)?;
    Ok(())
}

/// Series `i`: its line (unless markers only; dashed when it lies on an earlier one, the
/// `dashed`-th such line of the panel, see [`DASH_PERIOD`]), markers, then horizontal and
/// vertical error bars.
fn draw_line(chart: &mut Chart, a: &Axes, line: &Line, i: usize, dashed: u32) -> io::Result<()> {
    let c = series_colour(i);
    let pts: Vec<(f64, f64)> = line
        .points
        .iter()
        .filter(|(x, y)| a.x_ok(*x) && a.y_ok(*y))
        .map(|&(x, y)| (a.tx(x), a.ty(y)))
        .collect();
    if !line.markers_only && dashed > 0 {
        let dash = 7u32.saturating_sub(2 * (dashed - 1)).max(1);
        chart
            .draw_series(DashedLineSeries::new(
                pts.iter().copied(),
                dash,
                DASH_PERIOD - dash,
                c.stroke_width(2),
            ))
            .map_err(to_io)?;
    } else if !line.markers_only {
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(to_io)?;
    }
    draw_markers(chart, &pts, i, c)?;
    let style = c.stroke_width(1);
    for (&(_, y), &(lo, hi)) in line.points.iter().zip(&line.x_spread) {
        if a.y_ok(y) && a.x_ok(lo) && a.x_ok(hi) {
            let (y, lo, hi) = (a.ty(y), a.tx(lo), a.tx(hi));
            draw_error_bar(chart, [(lo, y), (hi, y)], [(0, -4), (0, 4)], style)?;
        }
    }
    for (&(x, _), &(lo, hi)) in line.points.iter().zip(&line.spread) {
        if a.x_ok(x) && a.y_ok(lo) && a.y_ok(hi) {
            let (x, lo, hi) = (a.tx(x), a.ty(lo), a.ty(hi));
            draw_error_bar(chart, [(x, lo), (x, hi)], [(-4, 0), (4, 0)], style)?;
        }
    }
    Ok(())
}

/// One error bar from `ends[0]` to `ends[1]`, with a cap (the pixel offsets `cap`) at
/// each end.
fn draw_error_bar(
    chart: &mut Chart,
    ends: [(f64, f64); 2],
    cap: [(i32, i32); 2],
    style: ShapeStyle,
) -> io::Result<()> {
    chart
        .draw_series(std::iter::once(PathElement::new(ends.to_vec(), style)))
        .map_err(to_io)?;
    for end in ends {
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(end) + PathElement::new(cap.to_vec(), style),
            ))
            .map_err(to_io)?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Point markers of series `i`: the shape cycles circle, triangle, cross.
fn draw_markers(chart: &mut Chart, pts: &[(f64, f64)], i: usize, c: RGBColor) -> io::Result<()> {
    match i % 3 {
        0 => chart
            .draw_series(pts.iter().map(|&pt| Circle::new(pt, 3, c.filled())))
            .map(|_| ()),
        1 => chart
            .draw_series(pts.iter().map(|&pt| TriangleMarker::new(pt, 4, c.filled())))
            .map(|_| ()),
        _ => chart
            .draw_series(pts.iter().map(|&pt| Cross::new(pt, 4, c.stroke_width(2))))
            .map(|_| ()),
    }
    .map_err(to_io)
}

/// The legend column: one entry per line of this panel, then the band and reference.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Plot,
    lines: &[Line],
    notes: &[Option<String>],
) -> io::Result<()> {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    let row = |k: usize| 34 + 20 * k as i32;
    let mut k = 0usize;
    for (i, line) in lines.iter().enumerate() {
        let c = series_colour(i);
        let y = row(k);
        let swatch: &[[(i32, i32); 2]] = if notes[i].is_some() {
            &[[(8, y), (14, y)], [(28, y), (34, y)]]
        } else {
            &[[(8, y), (34, y)]]
        };
        if !line.markers_only {
            for seg in swatch {
                area.draw(&PathElement::new(seg.to_vec(), c.stroke_width(2)))
                    .map_err(to_io)?;
            }
        }
        match i % 3 {
            0 => area.draw(&Circle::new((21, y), 3, c.filled())),
            1 => area.draw(&TriangleMarker::new((21, y), 4, c.filled())),
            _ => area.draw(&Cross::new((21, y), 4, c.stroke_width(2))),
        }
        .map_err(to_io)?;
        area.draw(&Text::new(
            line.name.clone(),
            (40, y),
            font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(to_io)?;
        k += 1;
        if let Some(note) = &notes[i] {
            area.draw(&Text::new(
                note.clone(),
                (40, row(k) - 4),
                ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK.mix(0.75))
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(to_io)?;
            k += 1;
        }
    }
    if let Some(b) = &p.band {
        let y = row(k);
        area.draw(&Rectangle::new(
            [(8, y - 6), (34, y + 6)],
            RGBColor(150, 150, 150).mix(0.25).filled(),
        ))
        .map_err(to_io)?;
        area.draw(&Text::new(
            b.name.clone(),
            (40, y),
            font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(to_io)?;
        k += 1;
    }
    if let Some((_, name)) = &p.reference {
        let y = row(k);
        area.draw(&PathElement::new(vec![(8, y), (34, y)], BLACK.mix(0.6)))
            .map_err(to_io)?;
        area.draw(&Text::new(
            name.clone(),
            (40, y),
            font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(to_io)?;
        k += 1;
    }
    if let Some(name) = &p.levels_legend {
        let y = row(k);
        for seg in [[(8, y), (14, y)], [(18, y), (24, y)], [(28, y), (34, y)]] {
            area.draw(&PathElement::new(
                seg.to_vec(),
                BLACK.mix(0.7).stroke_width(1),
            ))
            .map_err(to_io)?;
        }
        area.draw(&Text::new(
            name.clone(),
            (40, y),
            font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(to_io)?;
        k += 1;
        if let Some(text) = &p.levels_interval_legend
            && p.levels.iter().any(|l| l.interval.is_some())
        {
            let y = row(k);
            area.draw(&Rectangle::new(
                [(8, y - 6), (34, y + 6)],
                RGBColor(150, 150, 150).mix(0.25).filled(),
            ))
            .map_err(to_io)?;
            area.draw(&Text::new(
                text.clone(),
                (40, y),
                font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(to_io)?;
            k += 1;
        }
    }
    if let Some(name) = &p.spread_legend {
        // An error bar as the lines draw it: a stem with a cap at each end.
        let y = row(k);
        let style = BLACK.stroke_width(1);
        for seg in [
            [(21, y - 7), (21, y + 7)],
            [(17, y - 7), (25, y - 7)],
            [(17, y + 7), (25, y + 7)],
        ] {
            area.draw(&PathElement::new(seg.to_vec(), style))
                .map_err(to_io)?;
        }
        area.draw(&Text::new(
            name.clone(),
            (40, y),
            font.pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(to_io)?;
    }
    Ok(())
}

/// Renders [`Plot`] and writes it atomically to `path`.
pub fn plot_svg(path: &Path, p: &Plot) -> io::Result<()> {
    let svg = plot_svg_string(p)?;
    super::write_atomic(Some(path), svg.as_bytes())
}

/// The plain form: named series, automatic y scale, no error bars or band.
pub fn line_plot_svg_string(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log2_x: bool,
) -> io::Result<String> {
    plot_svg_string(&Plot {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        lines: series
            .iter()
            .map(|(n, pts)| Line::new(n.clone(), pts.clone()))
            .collect(),
        log2_x,
        ..Plot::default()
    })
}

/// Renders the plain form (see [`line_plot_svg_string`]) and writes it atomically to `path`.
pub fn line_plot_svg(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log2_x: bool,
) -> io::Result<()> {
    let svg = line_plot_svg_string(title, x_label, y_label, series, log2_x)?;
    super::write_atomic(Some(path), svg.as_bytes())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn draws_every_series_with_log2_ticks() {
        let s = vec![
            (
                "alpha".to_string(),
                vec![(2.0, 1.0), (4.0, 2.0), (1024.0, 3.0)],
            ),
            ("beta".to_string(), vec![(2.0, 0.5), (1024.0, f64::NAN)]),
        ];
        let svg = line_plot_svg_string("t", "buckets", "ratio", &s, true).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("alpha") && svg.contains("beta"));
        assert!(svg.contains("2^10"), "log2 ticks");
        assert!(svg.contains("<polyline"));
    }

    #[test]
    fn log_axis_only_when_the_data_spans_more_than_ten_times() {
        assert!(use_log_y(YScale::Auto, [1.0, 10.5]));
        assert!(!use_log_y(YScale::Auto, [1.0, 9.5]));
        assert!(
            !use_log_y(YScale::Auto, [0.0, 123_000.0]),
            "zero forbids log"
        );
        assert!(!use_log_y(YScale::Linear, [1.0, 1e6]));
        assert!(use_log_y(YScale::Log, [1.0, 2.0]));
        assert!(!use_log_y(YScale::Auto, []));
    }

    #[test]
    fn the_legend_column_fits_the_longest_name() {
        let mut p = Plot {
            lines: vec![Line::new("a", vec![(1.0, 1.0)])],
            ..Plot::default()
        };
        assert_eq!(legend_width(&p), LEGEND_WIDTH);
        // 60 characters at ~7 px + 48 px of swatch: 468 px, and the SVG widens by 228.
        p.lines[0].name = "x".repeat(60);
        assert_eq!(legend_width(&p), 468);
        let svg = plot_svg_string(&p).unwrap();
        assert!(
            svg.contains(&format!("width=\"{}\"", PLOT_SIZE.0 + 228)),
            "{}",
            &svg[..200]
        );
        p.lines[0].name = "x".repeat(500);
        assert_eq!(legend_width(&p), MAX_LEGEND_WIDTH);
    }

    #[test]
    fn ticks_are_round_numbers() {
        // 1-2-5 per decade over three decades.
        assert_eq!(
            ticks(1.0, 1000.0, true, false),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        // Many decades: powers of ten only.
        assert_eq!(ticks(1.0, 1e6, true, false).len(), 7);
        // Linear 0..1: steps of 0.2 (1/6 rounded up to 2 × 10^-1).
        let t = ticks(0.0, 1.0, false, false);
        assert_eq!(t.len(), 6);
        assert!((t[1] - 0.2).abs() < 1e-12);
        // Counts 0..3 never get 0.5 steps.
        assert_eq!(ticks(0.0, 3.0, false, true), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(tick_label(0.2, 0.2), "0.2");
        assert_eq!(tick_label(12_500.0, 2500.0), "12,500");
        assert_eq!(tick_label(3.0, 1.0), "3");
        assert_eq!(tick_label(0.005, 0.0), "0.005");
        assert_eq!(tick_label(1.5, 0.0), "1.5");
        assert_eq!(tick_label(20.0, 0.0), "20");
    }

    #[test]
    fn a_log_axis_has_a_labelled_tick_below_and_above_every_series() {
        // The report's throughput.svg at 2 threads: the kernel's lowest 1,754,194 ops/s
        // lay below the lowest tick (2,000,000) and the model's 30 million above the
        // highest (20,000,000).
        let line = |name: &str, ys: &[f64]| {
            Line::new(
                name,
                ys.iter()
                    .enumerate()
                    .map(|(i, y)| (2f64.powi(i as i32), *y))
                    .collect(),
            )
        };
        let cases = [
            vec![
                line("model", &[30_000_000.0, 29_000_000.0]),
                line("kernel", &[1_754_194.0, 2_394_510.0]),
            ],
            // Many decades (powers of ten only), ends just past a power.
            vec![line("a", &[1.1, 3.0e5]), line("b", &[0.011, 2.0])],
            // Within one decade, forced log: the finer ticks.
            vec![line("a", &[2.05, 2.95])],
        ];
        for lines in cases {
            let p = Plot {
                lines,
                y_scale: YScale::Log,
                ..Plot::default()
            };
            let a = Axes::of(&p);
            let ys: Vec<f64> = p
                .lines
                .iter()
                .flat_map(|l| l.points.iter().map(|q| q.1))
                .collect();
            let (lo, hi) = (
                ys.iter().copied().fold(f64::INFINITY, f64::min),
                ys.iter().copied().fold(0.0, f64::max),
            );
            let (t0, t1) = (a.ticks[0], *a.ticks.last().unwrap());
            assert!(
                t0 <= lo && t1 >= hi,
                "ticks {:?} around {lo}..{hi}",
                a.ticks
            );
            assert!(
                a.y.0 <= t0 && a.y.1 >= t1,
                "range {:?} ticks {:?}",
                a.y,
                a.ticks
            );
            assert!(a.ticks.len() >= 2, "{:?}", a.ticks);
        }
    }

    #[test]
    fn many_series_are_faceted_and_the_palette_has_no_near_white() {
        let lines: Vec<Line> = (0..11)
            .map(|i| {
                Line::new(
                    format!("s{i}"),
                    vec![(1.0, i as f64), (2.0, i as f64 + 1.0)],
                )
            })
            .collect();
        let svg = plot_svg_string(&Plot {
            title: "t".into(),
            lines,
            ..Plot::default()
        })
        .unwrap();
        assert!(svg.contains("panel 2: series 9–11"), "faceted");
        for c in PALETTE {
            // Relative luminance (ITU-R BT.709) well below white's 1.0.
            let l = (0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64) / 255.0;
            assert!(l < 0.75, "{c:?} is too light on white");
        }
    }

    #[test]
    fn band_and_error_bars_widen_the_y_range() {
        let p = Plot {
            lines: vec![Line {
                x_spread: Vec::new(),
                name: "a".into(),
                points: vec![(1.0, 1.0), (2.0, 1.001)],
                spread: vec![(0.999, 1.001), (1.0, 1.002)],
                markers_only: false,
            }],
            band: Some(Band {
                name: "random".into(),
                points: vec![(1.0, 0.9, 1.1), (2.0, 0.95, 1.05)],
            }),
            ..Plot::default()
        };
        let (lo, hi) = y_range(&p, false);
        assert!(lo < 0.9 && hi > 1.1, "{lo}..{hi}");
        assert!(plot_svg_string(&p).unwrap().contains("random"));
    }

    /// The `<text>` elements of an SVG: (their attributes, their text unescaped).
    pub(crate) fn svg_texts(svg: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut rest = svg;
        while let Some(at) = rest.find("<text") {
            rest = &rest[at + 5..];
            let close = rest.find('>').expect("tag end");
            let end = rest.find("</text>").expect("text end");
            let text = rest[close + 1..end]
                .trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&apos;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
            out.push((rest[..close].to_string(), text));
            rest = &rest[end..];
        }
        out
    }

    /// The value of attribute `name` in `attrs`.
    pub(crate) fn attr(attrs: &str, name: &str) -> Option<f64> {
        let at = attrs.find(&format!(" {name}=\""))? + name.len() + 3;
        attrs[at..].split('"').next()?.parse().ok()
    }

    /// The width of the SVG document.
    fn svg_width(svg: &str) -> f64 {
        attr(&svg[..svg.find('>').unwrap()], "width").unwrap()
    }

    /// The title's lines as drawn: the texts at the top, centred, in the title's font.
    fn drawn_title(svg: &str) -> Vec<String> {
        svg_texts(svg)
            .into_iter()
            .filter(|(a, _)| {
                a.contains("text-anchor=\"middle\"")
                    && attr(a, "font-size") == Some(TITLE_FONT as f64 / 1.24)
            })
            .map(|(_, t)| t)
            .collect()
    }

    #[test]
    fn a_long_title_wraps_onto_two_lines_within_the_plot() {
        // The title `sim --plot` gave a profile calibrated with --runs (143 characters),
        // which was drawn as one centred line and lost both ends.
        let title = "simulated: 256 CPUs, 2 node(s): calibrated on rows 0,2 (240 threads, \
                     jhash2) of buckets-240threads-256cpu-runs.csv, mean of runs run1,run2,run3";
        let p = Plot {
            title: title.into(),
            lines: vec![Line::new("a", vec![(1.0, 1.0), (2.0, 2.0)])],
            ..Plot::default()
        };
        let svg = plot_svg_string(&p).unwrap();
        let lines = drawn_title(&svg);
        assert_eq!(lines.len(), 2, "{lines:?}");
        // Whole: the two lines are the title, broken at a space.
        assert_eq!(lines.join(" "), title);
        // Each line fits: centred at half the width, half its estimated width either side
        // stays inside the margins (0.6 em per character of the 17.7 px font).
        let width = svg_width(&svg);
        for l in &lines {
            let w = l.chars().count() as f64 * 0.6 * 22.0 / 1.24;
            assert!(w <= width - 20.0, "{l:?}: {w} px on a {width} px plot");
        }
        // A short title stays one line.
        let svg = plot_svg_string(&Plot {
            title: "short".into(),
            ..p.clone()
        })
        .unwrap();
        assert_eq!(drawn_title(&svg), ["short"]);
    }

    #[test]
    fn a_title_too_long_for_two_lines_ends_in_an_ellipsis_at_a_word() {
        let words: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
        let title = words.join(" ");
        let lines = title_lines(&title, PLOT_SIZE.0);
        assert_eq!(lines.len(), 2);
        let max = ((PLOT_SIZE.0 - 20) as f64 / (0.6 * 22.0 / 1.24)) as usize;
        assert_eq!(max, 92);
        assert!(lines.iter().all(|l| l.chars().count() <= max), "{lines:?}");
        let shown = lines.join(" ");
        let kept = shown.strip_suffix(" …").expect("ends in an ellipsis");
        // What is kept is whole words of the title, in order.
        assert!(title.starts_with(kept) && title[kept.len()..].starts_with(' '));
        // One word longer than a line is cut, with the ellipsis.
        let one = title_lines(&"x".repeat(200), PLOT_SIZE.0);
        assert_eq!(one, [format!("{}…", "x".repeat(91))]);
    }

    #[test]
    fn one_x_sits_in_the_middle_of_its_axis() {
        // Was 2^4 at the left edge of a 2^4..2^5 axis.
        let mut p = Plot {
            lines: vec![Line::new("a", vec![(16.0, 5.0)])],
            log2_x: true,
            ..Plot::default()
        };
        assert_eq!(Axes::of(&p).x, (3.0, 5.0));
        p.log2_x = false;
        p.lines[0].points = vec![(240.0, 5.0)];
        assert_eq!(Axes::of(&p).x, (239.0, 241.0));
    }

    #[test]
    fn a_line_on_top_of_another_is_dashed_and_noted() {
        let p = Plot {
            lines: vec![
                Line::new("a", vec![(1.0, 100.0), (2.0, 200.0)]),
                // 0.0005 / 100.0005 = 0.00049999…%: hidden under nothing, it hides a.
                Line::new("b", vec![(1.0, 100.0005), (2.0, 200.0)]),
                Line::new("c", vec![(1.0, 150.0), (2.0, 150.0)]),
            ],
            ..Plot::default()
        };
        let svg = plot_svg_string(&p).unwrap();
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.1).collect();
        let notes: Vec<&String> = texts.iter().filter(|t| t.contains("on top of")).collect();
        assert_eq!(notes, ["dashed: on top of a (within 0.00050 %)"]);
        // a: one polyline and one legend swatch; b in dashes (a swatch of two).
        let count = |c: RGBColor| {
            let stroke = format!(
                "stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"",
                c.0, c.1, c.2
            );
            svg.matches(&stroke).count()
        };
        assert_eq!(count(series_colour(0)), 2);
        assert!(count(series_colour(1)) >= 6, "{}", count(series_colour(1)));
        // Identical values say so.
        let mut q = p.clone();
        q.lines[1].points[0].1 = 100.0;
        let svg = plot_svg_string(&q).unwrap();
        assert!(svg.contains("dashed: on top of a (same values)"));
        // Points without a line are not dashed, and the note does not say they are.
        q.lines[1].markers_only = true;
        let svg = plot_svg_string(&q).unwrap();
        assert!(svg.contains(">\non top of a (same values)\n<"), "{svg}");
        assert_eq!(round_up_2sig(0.000_999_99), "0.0010");
        assert_eq!(round_up_2sig(1.21), "1.3");
        assert_eq!(round_up_2sig(12.1), "13");
    }

    #[test]
    fn writes_atomically_and_reports_bad_paths() {
        let dir = std::env::temp_dir().join(format!("futexhash-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.svg");
        line_plot_svg(&p, "t", "x", "y", &[("a".into(), vec![(1.0, 1.0)])], false).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("</svg>"));
        assert!(line_plot_svg(&dir.join("no/such/dir.svg"), "t", "x", "y", &[], false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
