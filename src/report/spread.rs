//! A figure measured several times (`report --repeat N`, or the answers' own repeats):
//! the median and the range of the runs, and how to say it in a table cell. The range is
//! what a difference must exceed before the report claims it.

use serde::Serialize;

/// Median and range of repeated measurements of one figure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Median of the runs.
    pub median: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Number of runs.
    pub runs: usize,
}

impl Spread {
    /// The spread of `values` (non-finite ones are dropped); `None` when nothing is left.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            runs: n,
        })
    }

    /// The median of `values` and their central 80 %: `min` and `max` are the 10th and
    /// 90th percentiles (nearest rank on the sorted values, index `round(0.1 × (n − 1))`
    /// and `round(0.9 × (n − 1))`), `runs` the number of values. For many short timing
    /// rounds spread over time, where the range of all of them would be set by the one
    /// round a preemption hit, and the half-range of a few back-to-back runs says nothing
    /// of the next minute's.
    pub fn central(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[(q * (v.len() - 1) as f64).round() as usize];
        Some(Spread {
            median: Spread::of(&v)?.median,
            min: at(0.1),
            max: at(0.9),
            runs: v.len(),
        })
    }

    /// Whether two figures are told apart: their intervals (`min`–`max`) do not overlap.
    pub fn told_apart(&self, other: &Spread) -> bool {
        self.max < other.min || other.max < self.min
    }

    /// `4.17 (4.15–5.10)`: the median and the interval, `decimals` decimals; the median
    /// alone for one run.
    pub fn fmt_interval(&self, decimals: usize) -> String {
        if self.runs > 1 {
            format!(
                "{:.decimals$} ({:.decimals$}–{:.decimals$})",
                self.median, self.min, self.max
            )
        } else {
            format!("{:.decimals$}", self.median)
        }
    }

    /// A single measurement (no spread).
    pub fn single(value: f64) -> Spread {
        Spread {
            median: value,
            min: value,
            max: value,
            runs: 1,
        }
    }

    /// Half the range relative to the median (0.03 = ±3 %); 0 for one run.
    pub fn rel_half_range(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / 2.0 / self.median.abs()
        }
    }

    /// `1,234,567 ±3 %` (integer, grouped, as ops/sec are printed); no ± for one run.
    pub fn fmt_grouped(&self) -> String {
        let m = crate::render::fmt_grouped(self.median, 0);
        if self.runs > 1 {
            format!("{m} ±{:.0}%", (self.rel_half_range() * 100.0).ceil())
        } else {
            m
        }
    }

    /// `5.34 ±0.10` with `decimals` decimals; no ± for one run.
    pub fn fmt_decimals(&self, decimals: usize) -> String {
        if self.runs > 1 {
            format!(
                "{:.decimals$} ±{:.decimals$}",
                self.median,
                (self.max - self.min) / 2.0
            )
        } else {
            format!("{:.decimals$}", self.median)
        }
    }
}

/// Whether `a` differs from the reference `b` by more than the relative tolerance `tol`:
/// `|a / b − 1| > tol`.
pub fn differs(a: f64, b: f64, tol: f64) -> bool {
    b != 0.0 && (a / b - 1.0).abs() > tol
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_range() {
        let s = Spread::of(&[3.0, 1.0, 2.0, f64::NAN]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.runs), (2.0, 1.0, 3.0, 3));
        assert_eq!(Spread::of(&[1.0, 2.0, 4.0, 3.0]).unwrap().median, 2.5);
        assert!(Spread::of(&[]).is_none());
        // (3 − 1) / 2 / 2 = 0.5.
        assert_eq!(s.rel_half_range(), 0.5);
    }

    #[test]
    fn cells() {
        let s = Spread::of(&[1_000_000.0, 1_020_000.0, 980_000.0]).unwrap();
        assert_eq!(s.fmt_grouped(), "1,000,000 ±2%");
        assert_eq!(Spread::single(1_234_567.4).fmt_grouped(), "1,234,567");
        assert_eq!(
            Spread::of(&[5.0, 5.2]).unwrap().fmt_decimals(2),
            "5.10 ±0.10"
        );
    }

    #[test]
    fn the_central_80_percent_and_overlap() {
        // 1..=11: median 6; ranks round(0.1 × 10) = 1 and round(0.9 × 10) = 9 → 2 and 10.
        let v: Vec<f64> = (1..=11).rev().map(f64::from).collect();
        let s = Spread::central(&v).unwrap();
        assert_eq!((s.median, s.min, s.max, s.runs), (6.0, 2.0, 10.0, 11));
        // One preempted round does not set the interval.
        let mut w = vec![4.0; 20];
        w.push(400.0);
        let s = Spread::central(&w).unwrap();
        assert_eq!((s.min, s.max), (4.0, 4.0));
        assert_eq!(s.fmt_interval(2), "4.00 (4.00–4.00)");
        assert!(Spread::central(&[f64::NAN]).is_none());
        let a = Spread::of(&[1.0, 2.0]).unwrap();
        let b = Spread::of(&[2.0, 3.0]).unwrap();
        let c = Spread::of(&[2.5, 3.0]).unwrap();
        assert!(
            !a.told_apart(&b) && !b.told_apart(&a),
            "touching intervals overlap"
        );
        assert!(a.told_apart(&c) && c.told_apart(&a));
    }

    #[test]
    fn differences_beyond_a_tolerance() {
        assert!(differs(1.06, 1.0, 0.05));
        assert!(!differs(1.04, 1.0, 0.05));
        assert!(differs(0.94, 1.0, 0.05));
        assert!(!differs(1.0, 0.0, 0.05));
    }
}
