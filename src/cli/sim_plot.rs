//! `sim --plot`: the sweep's records as an SVG line plot over the private table's slots,
//! each rate with its 80 % prediction interval as an error bar.

use super::CliError;
use crate::render::plot::{Level, Line, Plot, plot_svg};
use crate::sim::sweep::SimRecord;
use std::path::Path;

/// The legend row of the error bars.
pub const INTERVAL_LEGEND: &str = "bars: 80 % prediction interval";

/// The legend row of the global-hash levels, one per line.
pub const GLOBAL_LEGEND: &str = "dashed, in the colour of each line: its global hash";

/// The legend row of the global-hash level shared by every line (their rates within 0.5 %).
pub const GLOBAL_SHARED_LEGEND: &str =
    "dashed black: the global hash (of every line, within 0.5 %)";

/// The legend row of the global-hash levels' intervals.
pub const GLOBAL_INTERVAL_LEGEND: &str =
    "shaded: 80 % interval of the global hash (grey: of all together)";

/// The sweep's plot: one line per hasher, thread count and (with several presets)
/// kernel over the private table's slots, points in slot order (a size reached twice, as
/// `-b auto,512` can, drawn once), each point with its record's 80 % prediction interval
/// (`ops_per_sec_lo`…`ops_per_sec_hi`) as an error bar. Each line's global-hash rate,
/// which has no place on a slots axis, is a [`Level`] of that line: dashed across the
/// axis in its colour, in its panel, its interval shaded (one black level for all when
/// they are within 0.5 %). `None` when no private table was simulated.
pub fn sim_plot(records: &[SimRecord], title: &str) -> Option<Plot> {
    let kernels = kernels(records);
    let label = |r: &SimRecord| {
        let mut l = format!("{} t={}", r.bench.algo, r.bench.threads);
        if kernels.len() > 1 {
            l.push_str(&format!(" {}", r.kernel));
        }
        l
    };
    let mut lines: Vec<Line> = Vec::new();
    for r in records.iter().filter(|r| r.bench.buckets > 0) {
        let point = (r.bench.buckets as f64, r.bench.ops_per_sec);
        let bar = (r.ops_per_sec_lo, r.ops_per_sec_hi);
        let l = label(r);
        match lines.iter_mut().find(|s| s.name == l) {
            Some(s) if s.points.iter().any(|p| p.0 == point.0) => {}
            Some(s) => {
                s.points.push(point);
                s.spread.push(bar);
            }
            None => lines.push(Line {
                spread: vec![bar],
                ..Line::new(l, vec![point])
            }),
        }
    }
    if lines.is_empty() {
        return None;
    }
    for s in &mut lines {
        let mut both: Vec<((f64, f64), (f64, f64))> = s
            .points
            .iter()
            .copied()
            .zip(s.spread.iter().copied())
            .collect();
        both.sort_by(|a, b| a.0.0.total_cmp(&b.0.0));
        (s.points, s.spread) = both.into_iter().unzip();
    }
    // Each line's global-hash rate has no place on a slots axis: a dashed level across
    // it in the line's colour, in its panel; one black level for all when they coincide
    // (within 0.5 %), its interval shaded.
    let mut levels: Vec<Level> = Vec::new();
    for r in records.iter().filter(|r| r.bench.buckets == 0) {
        let l = label(r);
        if !lines.iter().any(|s| s.name == l) || levels.iter().any(|g| g.of == l) {
            continue;
        }
        levels.push(Level {
            of: l,
            y: r.bench.ops_per_sec,
            interval: Some((r.ops_per_sec_lo, r.ops_per_sec_hi)),
        });
    }
    let (lo, hi) = levels.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), g| {
        (lo.min(g.y), hi.max(g.y))
    });
    let shared = levels.len() > 1 && hi <= lo * 1.005;
    if shared {
        let ilo = levels
            .iter()
            .filter_map(|g| g.interval.map(|i| i.0))
            .fold(f64::INFINITY, f64::min);
        let ihi = levels
            .iter()
            .filter_map(|g| g.interval.map(|i| i.1))
            .fold(f64::NEG_INFINITY, f64::max);
        levels = vec![Level {
            of: String::new(),
            y: (lo * hi).sqrt(),
            interval: (ilo <= ihi).then_some((ilo, ihi)),
        }];
    }
    let levels_legend = (!levels.is_empty()).then(|| {
        if shared {
            GLOBAL_SHARED_LEGEND.to_string()
        } else {
            GLOBAL_LEGEND.to_string()
        }
    });
    Some(Plot {
        title: format!("simulated: {title}"),
        x_label: "private hash slots".into(),
        y_label: "ops/sec per thread".into(),
        lines,
        log2_x: true,
        spread_legend: Some(INTERVAL_LEGEND.into()),
        levels,
        levels_legend,
        levels_interval_legend: Some(GLOBAL_INTERVAL_LEGEND.into()),
        ..Plot::default()
    })
}

/// The kernel presets of `records`, in order of first appearance ("" without `--kernel`).
fn kernels(records: &[SimRecord]) -> Vec<&str> {
    let mut kernels: Vec<&str> = Vec::new();
    for r in records {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    kernels
}

/// [`sim_plot`] of the records for `path`; a usage error when there is nothing on the
/// slots axis (found before anything is written, so that the refusal writes nothing).
pub fn plot_of(path: &Path, records: &[SimRecord], title: &str) -> Result<Plot, CliError> {
    sim_plot(records, title).ok_or_else(|| {
        CliError::Usage(format!(
            "--plot '{}': no private table was simulated (every -b resolved to the global hash), and the plot's axis is the private table's slots; the rates are in the table",
            path.display()
        ))
    })
}

/// Writes `plot` (the [`plot_of`] `records`) to `path`, with a note for each kernel that
/// ran only the global hash.
pub fn write_plot(path: &Path, records: &[SimRecord], plot: &Plot) -> Result<(), CliError> {
    for k in kernels(records) {
        if !records.iter().any(|r| r.kernel == k && r.bench.buckets > 0) {
            eprintln!(
                "futexhash: note: --plot: kernel {} ran only the global hash here; its rates are in the table, not on the plot",
                if k.is_empty() { "(none)" } else { k }
            );
        }
    }
    plot_svg(path, plot)
        .map_err(|e| CliError::Usage(format!("cannot write plot '{}': {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::plot::plot_svg_string;

    /// A simulated jhash2 record at `buckets` (0: the global hash) with `rate` and its
    /// interval `lo`…`hi`.
    fn rec(kernel: &str, buckets: u64, rate: f64, lo: f64, hi: f64) -> SimRecord {
        let mut r =
            crate::cli::sim_ab::tests::rec(kernel, 240, &buckets.to_string(), buckets, rate);
        r.ops_per_sec_lo = lo;
        r.ops_per_sec_hi = hi;
        r.replications = vec![rate];
        r
    }

    /// A `<polyline>`: stroke colour, stroke width, points in pixels.
    type Polyline = (String, u32, Vec<(i32, i32)>);

    /// An error bar's stem in pixels: x, top, bottom.
    type Stem = (i32, i32, i32);

    /// The SVG's `<polyline>`s.
    fn polylines(svg: &str) -> Vec<Polyline> {
        let attr = |tag: &str, name: &str| -> String {
            let at = tag.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
            tag[at..].split('"').next().unwrap().to_string()
        };
        svg.split("<polyline")
            .skip(1)
            .map(|t| {
                let tag = &t[..t.find("/>").unwrap()];
                let points = attr(tag, "points")
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (
                    attr(tag, "stroke"),
                    attr(tag, "stroke-width").parse().unwrap(),
                    points,
                )
            })
            .collect()
    }

    /// The error bars' stems: thin vertical segments in a series colour (not the grid's
    /// grey, the axes' and the legend's black), as `(x, top, bottom)`; and the y axis's
    /// extent `(top, bottom)`.
    fn stems(svg: &str) -> (Vec<Stem>, (i32, i32)) {
        let lines = polylines(svg);
        let axis = lines
            .iter()
            .filter(|(c, _, p)| c == "#000000" && p.len() == 2 && p[0].0 == p[1].0)
            .map(|(_, _, p)| (p[0].1.min(p[1].1), p[0].1.max(p[1].1)))
            .max_by_key(|(top, bottom)| bottom - top)
            .expect("a y axis");
        let stems = lines
            .iter()
            .filter(|(c, w, p)| {
                c != "#000000"
                    && c != "#DCDCDC"
                    && *w == 1
                    && p.len() == 2
                    && p[0].0 == p[1].0
                    && p[0].1 != p[1].1
            })
            .map(|(_, _, p)| (p[0].0, p[0].1.min(p[1].1), p[0].1.max(p[1].1)))
            .collect();
        (stems, axis)
    }

    #[test]
    fn every_rate_is_drawn_with_its_80_percent_interval() {
        let recs = [
            rec("", 16, 85_000.0, 64_000.0, 112_000.0),
            rec("", 256, 1_000_000.0, 760_000.0, 1_300_000.0),
            rec("", 64, 330_000.0, 250_000.0, 430_000.0),
            rec("", 0, 1_870_000.0, 1_450_000.0, 2_330_000.0),
        ];
        let plot = sim_plot(&recs, "p").unwrap();
        // The private line in slot order, each point with its own record's interval.
        assert_eq!(
            plot.lines[0].points,
            [(16.0, 85_000.0), (64.0, 330_000.0), (256.0, 1_000_000.0)]
        );
        assert_eq!(
            plot.lines[0].spread,
            [
                (64_000.0, 112_000.0),
                (250_000.0, 430_000.0),
                (760_000.0, 1_300_000.0)
            ]
        );
        // The global hash: a level across the axis with its interval, not a bar.
        assert_eq!(plot.levels.len(), 1);
        assert_eq!(plot.levels[0].y, 1_870_000.0);
        assert_eq!(plot.levels[0].interval, Some((1_450_000.0, 2_330_000.0)));
        let svg = plot_svg_string(&plot).unwrap();
        // One bar per private record.
        let (stems, (top, bottom)) = stems(&svg);
        assert_eq!(stems.len(), 3, "{stems:?}");
        // Every bar inside the y axis: the range spans every interval.
        for (x, t, b) in &stems {
            assert!(
                *t >= top && *b <= bottom,
                "bar at x={x}: {t}..{b} outside {top}..{bottom}"
            );
        }
        assert!(svg.contains(INTERVAL_LEGEND), "the legend names the bars");
    }

    #[test]
    fn one_size_sits_mid_axis_and_the_axis_spans_its_interval() {
        // `sim --profile seed-256cpu -t 240 -b 16`: 84,943 ops/s, interval 64,330 …
        // 112,162 (the run's own interval table). The y axis was 84,700–84,870.
        let recs = [rec("", 16, 84_943.0, 64_330.0, 112_162.0)];
        let svg = plot_svg_string(&sim_plot(&recs, "p").unwrap()).unwrap();
        let (stems, (top, bottom)) = stems(&svg);
        assert_eq!(stems.len(), 1);
        let (x, t, b) = stems[0];
        assert!(t >= top && b <= bottom, "{t}..{b} outside {top}..{bottom}");
        // The bar covers most of the axis: the axis is not zoomed past the interval.
        assert!(
            (b - t) as f64 > 0.7 * (bottom - top) as f64,
            "{t}..{b} of {top}..{bottom}"
        );
        // The x axis: 2^3 to 2^5, the one point in its middle.
        let x_axis = polylines(&svg)
            .into_iter()
            .filter(|(c, _, p)| c == "#000000" && p.len() == 2 && p[0].1 == p[1].1)
            .map(|(_, _, p)| (p[0].0, p[1].0))
            .max_by_key(|(l, r)| r - l)
            .unwrap();
        assert!(
            ((x_axis.0 + x_axis.1) / 2 - x).abs() <= 1,
            "{x} on {x_axis:?}"
        );
        assert!(
            svg.contains(">\n2^3\n<") && svg.contains(">\n2^5\n<"),
            "x ticks"
        );
    }

    #[test]
    fn a_kernel_whose_global_hash_equals_another_s_stays_visible() {
        // `sim --profile seed-256cpu -t 240 --kernel 6.17,6.16-rc,7.2 -b auto,0,256`: the
        // A/B table's rates (its interval ±24 %). 6.17's and 6.16-rc's global hash differ
        // by 13 / 1,322,040 = 0.00098 %: one line hid the other.
        let iv = |k, b, r: f64| rec(k, b, r, r * 0.76, r * 1.24);
        let recs = [
            iv("6.17", 1024, 1_275_601.0),
            iv("6.17", 0, 1_322_027.0),
            iv("6.17", 256, 943_291.0),
            iv("6.16-rc", 1024, 10_449.0),
            iv("6.16-rc", 0, 1_322_040.0),
            iv("6.16-rc", 256, 10_510.0),
            iv("7.2", 1024, 1_720_641.0),
            iv("7.2", 0, 1_877_295.0),
            iv("7.2", 256, 1_025_907.0),
        ];
        let plot = sim_plot(&recs, "p").unwrap();
        // Each kernel's global hash is a level of its own line, in that line's colour,
        // so the two that coincide are still told apart (by colour), and none is a line.
        let of: Vec<&str> = plot.levels.iter().map(|l| l.of.as_str()).collect();
        assert_eq!(
            of,
            [
                "jhash2 t=240 6.17",
                "jhash2 t=240 6.16-rc",
                "jhash2 t=240 7.2"
            ]
        );
        assert_eq!(plot.lines.len(), 3);
        let svg = plot_svg_string(&plot).unwrap();
        assert!(svg.contains(GLOBAL_LEGEND));
        // Three dashed levels, each in its line's colour: blue, orange, green.
        for colour in ["#0072B2", "#E69F00", "#009E73"] {
            let dashes = polylines(&svg)
                .into_iter()
                .filter(|(c, w, p)| c == colour && *w == 1 && p.len() == 2 && p[0].1 == p[1].1)
                .count();
            assert!(dashes > 10, "{colour}: {dashes}");
        }
    }

    /// `sim --profile seed-256cpu -t 240 -b 0,16..4096 --algo seed --plot`: eight
    /// hashers. Their global hashes were eight more lines, in a second panel of their own
    /// with one error bar at an arbitrary x; now they are levels in the private curves'
    /// panel, one legend row for them and one for their interval.
    #[test]
    fn the_global_hash_shares_the_panel_of_the_private_curves() {
        let algos = [
            "jhash2",
            "jhash2-addr",
            "xxhash",
            "hash_long",
            "crc32c",
            "crc32",
            "siphash",
            "hsiphash",
        ];
        let mut recs = Vec::new();
        for (k, a) in algos.iter().enumerate() {
            let g = 1_800_000.0 + 10_000.0 * k as f64;
            for (b, r) in [(0, g), (16, 85_000.0), (256, 1_000_000.0), (4096, g)] {
                let mut x = rec("", b, r, r * 0.8, r * 1.2);
                x.bench.algo = a.to_string();
                recs.push(x);
            }
        }
        let plot = sim_plot(&recs, "p").unwrap();
        assert_eq!(plot.lines.len(), 8);
        assert_eq!(plot.levels.len(), 8);
        let svg = plot_svg_string(&plot).unwrap();
        assert!(!svg.contains("panel 2"), "one panel");
        assert!(!svg.contains("global hash</text>") && !svg.contains("t=240 global"));
        assert_eq!(svg.matches(GLOBAL_LEGEND).count(), 1);
        assert_eq!(svg.matches(GLOBAL_INTERVAL_LEGEND).count(), 1);
        // One bar per private point, none for the global hash (the seventh line is
        // black, which `stems` takes for an axis: seven lines' bars are counted).
        let (stems, _) = stems(&svg);
        assert_eq!(stems.len(), 7 * 3, "{stems:?}");
        // Coinciding global hashes (within 0.5 %) are one black level.
        for r in recs.iter_mut().filter(|r| r.bench.buckets == 0) {
            r.bench.ops_per_sec = 1_800_000.0;
        }
        let plot = sim_plot(&recs, "p").unwrap();
        assert_eq!(plot.levels.len(), 1);
        assert_eq!(plot.levels[0].of, "");
        let svg = plot_svg_string(&plot).unwrap();
        assert!(svg.contains(GLOBAL_SHARED_LEGEND));
    }

    #[test]
    fn without_a_private_table_there_is_no_plot() {
        assert!(sim_plot(&[rec("", 0, 1.0, 0.5, 2.0)], "p").is_none());
    }
}
