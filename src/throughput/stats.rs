//! Throughput statistics exactly as `perf bench futex hash` reports them
//! (`tools/perf/util/stat.c`: `avg_stats`, `stddev_stats`, `rel_stddev_stats`).
//!
//! perf's "stddev" is the standard error of the mean: the sample standard deviation of the
//! per-thread rates (Welford, divisor `n - 1`) divided by `sqrt(n)`; the `(+- X%)` it prints
//! is that figure relative to the mean, in percent. With fewer than two threads it is 0.

/// Mean and spread of per-thread operation rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThroughputStats {
    /// Number of per-thread rates.
    pub n: usize,
    /// Mean per-thread rate (what perf prints as "Averaged N operations/sec").
    pub mean: f64,
    /// Sample standard deviation of the rates (divisor `n - 1`; 0 when `n < 2`).
    pub stddev: f64,
    /// Standard error of the mean, `stddev / sqrt(n)`.
    pub stderr: f64,
    /// Sum of the rates (the machine-wide rate).
    pub total: f64,
}

impl ThroughputStats {
    /// Statistics of `rates` (one per thread). An empty slice gives all zeros.
    pub fn from_rates(rates: &[f64]) -> Self {
        let n = rates.len();
        if n == 0 {
            return ThroughputStats {
                n,
                mean: 0.0,
                stddev: 0.0,
                stderr: 0.0,
                total: 0.0,
            };
        }
        // Welford's online mean/variance, as perf's update_stats().
        let (mut mean, mut m2) = (0.0f64, 0.0f64);
        for (i, &x) in rates.iter().enumerate() {
            let delta = x - mean;
            mean += delta / (i + 1) as f64;
            m2 += delta * (x - mean);
        }
        let stddev = if n < 2 {
            0.0
        } else {
            (m2 / (n - 1) as f64).sqrt()
        };
        ThroughputStats {
            n,
            mean,
            stddev,
            stderr: stddev / (n as f64).sqrt(),
            total: rates.iter().sum(),
        }
    }

    /// perf's `rel_stddev_stats`: the standard error in percent of the mean (0 if the mean
    /// is 0).
    pub fn stderr_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.stderr / self.mean
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn hand_computed_two_rates() {
        // rates 100, 300: mean 200; deviations ±100; s² = (100²+100²)/1 = 20000;
        // s = 141.421356…; stderr = s/√2 = 100; 100/200 = 50 %.
        let s = ThroughputStats::from_rates(&[100.0, 300.0]);
        assert_eq!(s.n, 2);
        assert!(close(s.mean, 200.0));
        assert!(close(s.stddev, 20000f64.sqrt()));
        assert!(close(s.stderr, 100.0));
        assert!(close(s.stderr_pct(), 50.0));
        assert!(close(s.total, 400.0));
    }

    #[test]
    fn hand_computed_four_rates() {
        // 2, 4, 4, 6: mean 4; squared deviations 4+0+0+4 = 8; s² = 8/3;
        // stderr = sqrt(8/3)/2 = 0.816496…; in percent of 4: 20.412414…
        let s = ThroughputStats::from_rates(&[2.0, 4.0, 4.0, 6.0]);
        assert!(close(s.mean, 4.0));
        assert!(close(s.stderr, (8.0f64 / 3.0).sqrt() / 2.0));
        assert!(close(s.stderr_pct(), 20.412_414_523_193_15));
        assert!(close(s.total, 16.0));
    }

    #[test]
    fn single_and_empty() {
        let one = ThroughputStats::from_rates(&[1234.0]);
        assert_eq!((one.mean, one.stddev, one.stderr_pct()), (1234.0, 0.0, 0.0));
        let none = ThroughputStats::from_rates(&[]);
        assert_eq!((none.mean, none.total, none.stderr_pct()), (0.0, 0.0, 0.0));
    }

    #[test]
    fn equal_rates_have_no_spread() {
        let s = ThroughputStats::from_rates(&[5e6; 8]);
        assert!(close(s.mean, 5e6));
        assert!(s.stderr_pct().abs() < 1e-9);
    }
}
