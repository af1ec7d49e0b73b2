//! Statistics of Monte Carlo results: streaming mean and variance (Welford, mergeable in a fixed
//! order so results do not depend on the thread count), percentiles of samples, and the Student-t
//! confidence interval of a mean. Pure functions, no I/O.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Streaming count, mean and sum of squared deviations (Welford's algorithm).
///
/// Constant samples give a variance of exactly zero (the update adds `x - mean = 0`), so a
/// deterministic scenario reports a zero-width interval rather than rounding noise.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Welford {
    /// Number of samples.
    pub n: u64,
    /// Mean of the samples.
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
}

impl Welford {
    /// Adds one sample.
    #[inline]
    pub(crate) fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Adds the samples summarised by `other` (Chan et al.'s pairwise update). Merging the same parts
    /// in the same order always gives the same bits.
    pub(crate) fn merge(&mut self, other: &Welford) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *other;
            return;
        }
        let n = self.n + other.n;
        let d = other.mean - self.mean;
        let w = other.n as f64 / n as f64;
        self.mean += d * w;
        self.m2 += other.m2 + d * d * self.n as f64 * w;
        self.n = n;
    }

    /// Sample variance (n - 1 in the denominator); `None` with fewer than two samples.
    pub(crate) fn variance(&self) -> Option<f64> {
        (self.n >= 2).then(|| (self.m2 / (self.n - 1) as f64).max(0.0))
    }

    /// Sample standard deviation.
    pub(crate) fn std_dev(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    /// Two-sided 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom);
    /// `None` with fewer than two samples.
    pub(crate) fn ci95(&self) -> Option<(f64, f64)> {
        let sd = self.std_dev()?;
        let half = t_quantile_975(self.n - 1) * sd / (self.n as f64).sqrt();
        Some((self.mean - half, self.mean + half))
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (1.96 for large `df`).
pub(crate) fn t_quantile_975(df: u64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1) as f64)
        .map(|t| t.inverse_cdf(0.975))
        // df >= 1 is always a valid parameter; the normal quantile is the limit should it not be.
        .unwrap_or(1.959_963_984_540_054)
}

/// The `q` quantile (0..=1) of sorted samples, interpolating linearly between order statistics
/// (the common "type 7" definition: the median of 1, 2, 3, 4 is 2.5). `None` for no samples.
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Summary of a sample: mean, median, 5th and 95th percentiles, 95% interval of the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// Number of samples.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 95% confidence interval of the mean (`None` with one sample).
    pub ci95: Option<(f64, f64)>,
}

impl Summary {
    /// Summarises samples (sorted in place); `None` for no samples. The mean is accumulated in the
    /// given order before sorting, so it is the same as a streaming mean over the runs.
    pub(crate) fn of(samples: &mut [f64]) -> Option<Summary> {
        let mut w = Welford::default();
        for &x in samples.iter() {
            w.push(x);
        }
        samples.sort_unstable_by(f64::total_cmp);
        Some(Summary {
            n: w.n,
            mean: w.mean,
            median: quantile_sorted(samples, 0.5)?,
            p5: quantile_sorted(samples, 0.05)?,
            p95: quantile_sorted(samples, 0.95)?,
            ci95: if w.n >= 2 { w.ci95() } else { None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use statrs::distribution::Normal;

    #[test]
    fn constant_samples_have_zero_width() {
        let mut w = Welford::default();
        for _ in 0..1000 {
            w.push(0.1234567);
        }
        assert_eq!(w.mean, 0.1234567);
        assert_eq!(w.variance(), Some(0.0));
        assert_eq!(w.ci95(), Some((0.1234567, 0.1234567)));
        let mut v = vec![3.3; 17];
        let s = Summary::of(&mut v).unwrap();
        assert_eq!((s.mean, s.median, s.p5, s.p95), (3.3, 3.3, 3.3, 3.3));
        assert_eq!(s.ci95, Some((3.3, 3.3)));
    }

    #[test]
    fn mean_variance_and_quantiles_of_known_samples() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        v.reverse();
        let s = Summary::of(&mut v).unwrap();
        assert_eq!(s.mean, 50.5);
        assert_eq!(s.median, 50.5);
        // Type-7 quantiles: h = 99 q; p5 = 1 + 4.95, p95 = 1 + 94.05.
        assert!((s.p5 - 5.95).abs() < 1e-12, "{}", s.p5);
        assert!((s.p95 - 95.05).abs() < 1e-12, "{}", s.p95);
        // Variance of 1..=100 with n - 1: 100 * 101 / 12 = 841.666...
        let mut w = Welford::default();
        (1..=100).for_each(|x| w.push(f64::from(x)));
        assert!((w.variance().unwrap() - 841.666_666_666_666_6).abs() < 1e-9);
        let (lo, hi) = w.ci95().unwrap();
        let half = t_quantile_975(99) * (841.666_666_666_666_6f64).sqrt() / 10.0;
        assert!((hi - lo - 2.0 * half).abs() < 1e-9);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Student's t 97.5% points: df 1 = 12.706, df 10 = 2.228, df 30 = 2.042; normal 1.960.
        assert!((t_quantile_975(1) - 12.706).abs() < 1e-3);
        assert!((t_quantile_975(10) - 2.228).abs() < 1e-3);
        assert!((t_quantile_975(30) - 2.042).abs() < 1e-3);
        assert!((t_quantile_975(1_000_000) - 1.960).abs() < 1e-3);
    }

    #[test]
    fn merge_equals_one_pass() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1009) as f64 / 3.0)
            .collect();
        let mut all = Welford::default();
        xs.iter().for_each(|&x| all.push(x));
        let mut merged = Welford::default();
        for part in xs.chunks(64) {
            let mut w = Welford::default();
            part.iter().for_each(|&x| w.push(x));
            merged.merge(&w);
        }
        assert_eq!(merged.n, all.n);
        assert!((merged.mean - all.mean).abs() < 1e-12);
        assert!((merged.m2 - all.m2).abs() / all.m2 < 1e-12);
    }

    #[test]
    fn interval_covers_a_known_normal_mean_about_95_percent_of_the_time() {
        use rand::distr::Distribution;
        let d = Normal::new(10.0, 3.0).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let mut w = Welford::default();
            for _ in 0..20 {
                w.push(d.sample(&mut rng));
            }
            let (lo, hi) = w.ci95().unwrap();
            covered += usize::from(lo <= 10.0 && 10.0 <= hi);
        }
        // Binomial(2000, 0.95): sd 0.49 points; 93-97% is over four standard deviations wide.
        let rate = covered as f64 / trials as f64;
        assert!((0.93..=0.97).contains(&rate), "coverage {rate}");
    }
}
