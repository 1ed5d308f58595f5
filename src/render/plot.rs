//! SVG line plots for the reports: one line (with point markers) per series, an optional
//! log2 x axis (table sizes, thread counts) labelled `2^k`, written atomically.
//!
//! Drawn with `plotters`' SVG backend into a string (no system fonts needed: the SVG keeps
//! text as `<text>` elements and plotters estimates label sizes), then written whole with
//! [`write_atomic`](super::write_atomic). Used by `futexhash dist --plot` and reusable by the
//! `bench` and `report` commands.

use plotters::prelude::*;
use std::io;
use std::path::Path;

/// One named line: `(x, y)` points in x order.
pub type Series = (String, Vec<(f64, f64)>);

/// Plot size in pixels.
pub const PLOT_SIZE: (u32, u32) = (900, 560);

fn to_io(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// A y tick label: thousands separators for large values, three decimals for small ones.
fn y_tick(y: f64) -> String {
    if y.abs() >= 1000.0 {
        super::fmt_grouped(y, 0)
    } else {
        format!("{y:.3}")
    }
}

/// Renders the plot as an SVG document. With `log2_x`, x values must be positive; they are
/// placed at `log2(x)` and the ticks read `2^k`. Non-finite y values are skipped.
pub fn line_plot_svg_string(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log2_x: bool,
) -> io::Result<String> {
    let tx = |x: f64| if log2_x { x.log2() } else { x };
    let pts: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|(_, p)| {
            p.iter()
                .filter(|(x, y)| y.is_finite() && x.is_finite() && (!log2_x || *x > 0.0))
                .map(|&(x, y)| (tx(x), y))
                .collect()
        })
        .collect();
    let all = pts.iter().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(y1.abs() * 1e-3).max(1e-9);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PLOT_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(to_io)?;
        let xfmt = |x: &f64| {
            if log2_x {
                format!("2^{}", x.round() as i64)
            } else {
                format!("{x}")
            }
        };
        let n_x = if log2_x {
            ((x1 - x0).round() as usize + 1).min(20)
        } else {
            10
        };
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_labels(n_x)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&|y: &f64| y_tick(*y))
            .draw()
            .map_err(to_io)?;
        for (i, ((name, _), p)) in series.iter().zip(&pts).enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))
                .map_err(to_io)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart
                .draw_series(p.iter().map(|&pt| Circle::new(pt, 3, color.filled())))
                .map_err(to_io)?;
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(to_io)?;
        }
        root.present().map_err(to_io)?;
    }
    Ok(svg)
}

/// Renders the plot (see [`line_plot_svg_string`]) and writes it atomically to `path`.
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
mod tests {
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
