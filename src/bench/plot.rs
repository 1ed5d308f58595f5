//! A minimal SVG plot for `futexhash bench --plot`: operations/sec against hash buckets
//! on a log2 axis, one line per series (algorithm or backend, and thread count). The
//! global hash (`buckets = 0`) cannot sit on a log axis, so it is drawn as a dashed
//! horizontal line across the plot.
//!
//! (A generic line-plot helper is planned in `report::plot`; this one is local to `bench`
//! until that lands.)

use plotters::prelude::*;
use std::path::Path;

/// One plotted line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (buckets, ops/sec) points; buckets 0 is the global hash.
    pub points: Vec<(u64, f64)>,
}

/// Renders the series as an SVG document.
pub fn render_svg(title: &str, y_label: &str, series: &[Series]) -> Result<String, String> {
    let finite = |v: f64| v.is_finite() && v >= 0.0;
    let sized: Vec<u64> = series
        .iter()
        .flat_map(|s| s.points.iter().filter(|p| p.0 > 0).map(|p| p.0))
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|&v| finite(v))
        .collect();
    if ys.is_empty() {
        return Err("nothing to plot".into());
    }
    // x in log2(buckets); without any sized point, show a nominal 1..2^17 range.
    let (mut x_lo, mut x_hi) = sized.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &b| {
        let l = (b as f64).log2();
        (lo.min(l), hi.max(l))
    });
    if sized.is_empty() {
        (x_lo, x_hi) = (1.0, 17.0);
    }
    if x_hi - x_lo < 1.0 {
        x_hi = x_lo + 1.0;
    }
    let y_hi = ys.iter().cloned().fold(0.0, f64::max) * 1.1 + 1.0;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        let e = |e: &dyn std::fmt::Display| e.to_string();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(90)
            .build_cartesian_2d(x_lo - 0.25..x_hi + 0.25, 0.0..y_hi)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("hash buckets (log2 axis; dashed: global hash)")
            .y_desc(y_label)
            .x_labels(((x_hi - x_lo) as usize + 2).min(40))
            .x_label_formatter(&|x| {
                // Ticks only at whole powers of two.
                if (x - x.round()).abs() < 1e-6 {
                    format!("{}", 2f64.powf(x.round()) as u64)
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| crate::report::fmt_grouped(*y, 0))
            .draw()
            .map_err(|x| e(&x))?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let mut pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| p.0 > 0 && finite(p.1))
                .map(|p| ((p.0 as f64).log2(), p.1))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|x| e(&x))?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|x| e(&x))?;
            for &(_, v) in s.points.iter().filter(|p| p.0 == 0 && finite(p.1)) {
                // Dashed line for the global hash: short segments across the x range.
                let mut x = x_lo - 0.25;
                let step = (x_hi - x_lo + 0.5) / 60.0;
                let mut segs = Vec::new();
                while x < x_hi + 0.25 {
                    segs.push(PathElement::new(
                        [(x, v), ((x + step * 0.6).min(x_hi + 0.25), v)],
                        color.stroke_width(1),
                    ));
                    x += step;
                }
                chart.draw_series(segs).map_err(|x| e(&x))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))?;
    }
    Ok(svg)
}

/// Renders and writes the plot to `path` atomically.
pub fn write_svg(path: &Path, title: &str, y_label: &str, series: &[Series]) -> Result<(), String> {
    let svg = render_svg(title, y_label, series)?;
    crate::report::write_atomic(Some(path), svg.as_bytes())
        .map_err(|e| format!("cannot write plot '{}': {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_the_labels_and_points() {
        let s = vec![
            Series {
                label: "kernel t=2".into(),
                points: vec![(2, 1000.0), (16, 5000.0), (1024, 9000.0), (0, 8000.0)],
            },
            Series {
                label: "other".into(),
                points: vec![(2, 500.0)],
            },
        ];
        let svg = render_svg("ops", "ops/sec", &s).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("kernel t=2") && svg.contains("other"));
        assert!(svg.contains("1024"), "x tick labels show bucket counts");
        assert!(svg.matches("<circle").count() >= 4);
    }

    #[test]
    fn empty_is_an_error() {
        assert!(render_svg("t", "y", &[]).is_err());
    }
}
