//! Fitting one sample to the distributions a scenario can hold ([`Quantity`]): fixed, exponential,
//! log-normal, gamma and uniform, by maximum likelihood, the family chosen by the Bayesian
//! information criterion (BIC), each parameter with a confidence interval and the chosen fit with a
//! Kolmogorov-Smirnov goodness-of-fit figure.
//!
//! Intervals: exact ones where the sampling distribution is known (exponential mean: chi-square;
//! log-normal mu: Student's t, sigma: chi-square; uniform bounds: the order statistics), Wald
//! intervals from the Fisher information for the gamma MLE. The KS p-value uses the Kolmogorov
//! distribution with Stephens' small-sample correction; since the parameters come from the same
//! sample, it is optimistic (Lilliefors), which is stated wherever it is shown.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, Gamma, Normal, StudentsT};
use statrs::function::gamma::{digamma, ln_gamma};

use crate::base::quantity::Quantity;

/// One fitted parameter: the estimate and its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ParamEstimate {
    /// Parameter name as written in the scenario (`mean`, `mu`, `sigma`, `shape`, `scale`, `min`,
    /// `max`, `value`, `per_hour`, `calls`).
    pub name: String,
    /// The estimate written to the scenario.
    pub estimate: f64,
    /// Lower end of the confidence interval.
    pub low: f64,
    /// Upper end of the confidence interval.
    pub high: f64,
}

impl ParamEstimate {
    /// Whether `x` lies within the interval (ends included).
    #[cfg(test)]
    pub(crate) fn covers(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// A family tried on the sample, with its fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Candidate {
    /// `exponential`, `log_normal`, `gamma` or `uniform`.
    pub family: &'static str,
    /// Log-likelihood at the maximum.
    pub log_likelihood: f64,
    /// BIC = k ln n - 2 ln L (lower is better).
    pub bic: f64,
}

/// A sample fitted to a scenario quantity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FittedQuantity {
    /// Values in the sample.
    pub n: usize,
    /// Sample mean.
    pub sample_mean: f64,
    /// The chosen family (`fixed` when every value is the same).
    pub family: &'static str,
    /// The fitted quantity, as written to the scenario.
    pub quantity: Quantity,
    /// Its parameters with their intervals.
    pub params: Vec<ParamEstimate>,
    /// Kolmogorov-Smirnov statistic of the chosen fit (`null` for a fixed value).
    pub ks_statistic: Option<f64>,
    /// Its asymptotic p-value (optimistic: parameters estimated from the same sample).
    pub ks_p_value: Option<f64>,
    /// Every family tried, best (lowest BIC) first.
    pub candidates: Vec<Candidate>,
}

/// Fewest values a family is fitted to: below, the sample is stated as its mean (fixed), with its
/// range as the interval (two values say nothing about a distribution's shape, and the uniform
/// bounds' interval is unbounded below five).
pub(crate) const MIN_FIT_VALUES: usize = 5;

/// The families [`fit_quantity`] may choose.
pub(crate) const FAMILIES: [&str; 4] = ["exponential", "log_normal", "gamma", "uniform"];

/// Quantiles used by the intervals at one confidence level.
struct Level {
    /// 1 - confidence.
    alpha: f64,
    /// Standard normal quantile at 1 - alpha/2.
    z: f64,
}

impl Level {
    fn new(confidence: f64) -> Level {
        let alpha = 1.0 - confidence;
        let z = Normal::new(0.0, 1.0).map_or(1.96, |n| n.inverse_cdf(1.0 - alpha / 2.0));
        Level { alpha, z }
    }

    /// Chi-square quantiles (alpha/2, 1 - alpha/2) with `df` degrees of freedom.
    fn chi2(&self, df: f64) -> (f64, f64) {
        match ChiSquared::new(df) {
            Ok(c) => (
                c.inverse_cdf(self.alpha / 2.0),
                c.inverse_cdf(1.0 - self.alpha / 2.0),
            ),
            Err(_) => (f64::NAN, f64::NAN),
        }
    }

    /// Student's t quantile at 1 - alpha/2 with `df` degrees of freedom.
    fn t(&self, df: f64) -> f64 {
        StudentsT::new(0.0, 1.0, df).map_or(self.z, |t| t.inverse_cdf(1.0 - self.alpha / 2.0))
    }
}

fn param(name: &str, estimate: f64, low: f64, high: f64) -> ParamEstimate {
    ParamEstimate {
        name: name.into(),
        estimate,
        low: low.min(estimate),
        high: high.max(estimate),
    }
}

/// Trigamma (the derivative of digamma): recurrence up to x >= 6, then the asymptotic series.
pub(crate) fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    acc + inv
        + inv2 / 2.0
        + inv * inv2 * (1.0 / 6.0 - inv2 * (1.0 / 30.0 - inv2 * (1.0 / 42.0 - inv2 / 30.0)))
}

/// Maximum-likelihood gamma shape for `s = ln(mean) - mean(ln x)` (> 0): Minka's starting point,
/// then Newton's method on `ln k - digamma(k) = s`.
fn gamma_shape(s: f64) -> f64 {
    let mut k = (3.0 - s + ((s - 3.0).powi(2) + 24.0 * s).sqrt()) / (12.0 * s);
    for _ in 0..100 {
        let f = k.ln() - digamma(k) - s;
        let df = 1.0 / k - trigamma(k);
        let next = k - f / df;
        let next = if next > 0.0 { next } else { k / 2.0 };
        if (next - k).abs() <= 1e-12 * k {
            return next;
        }
        k = next;
    }
    k
}

/// One family's fit: the quantity, its parameters and its log-likelihood.
struct FamilyFit {
    quantity: Quantity,
    params: Vec<ParamEstimate>,
    log_likelihood: f64,
    k: f64,
}

fn fit_family(family: &str, xs: &[f64], level: &Level) -> Option<FamilyFit> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let mean = sum / n;
    let positive = xs.iter().all(|&x| x > 0.0);
    match family {
        "exponential" if mean > 0.0 => {
            // 2 n mean / m ~ chi-square(2n).
            let (lo, hi) = level.chi2(2.0 * n);
            Some(FamilyFit {
                quantity: Quantity::Exponential { mean },
                params: vec![param("mean", mean, 2.0 * sum / hi, 2.0 * sum / lo)],
                log_likelihood: -n * mean.ln() - n,
                k: 1.0,
            })
        }
        "log_normal" if positive && xs.len() >= 3 => {
            let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
            let mu = logs.iter().sum::<f64>() / n;
            let ss: f64 = logs.iter().map(|l| (l - mu).powi(2)).sum();
            if ss <= 0.0 {
                return None;
            }
            let sigma_mle = (ss / n).sqrt();
            let s = (ss / (n - 1.0)).sqrt();
            let half = level.t(n - 1.0) * s / n.sqrt();
            let (lo, hi) = level.chi2(n - 1.0);
            Some(FamilyFit {
                quantity: Quantity::LogNormal { mu, sigma: s },
                params: vec![
                    param("mu", mu, mu - half, mu + half),
                    param("sigma", s, (ss / hi).sqrt(), (ss / lo).sqrt()),
                ],
                log_likelihood: -logs.iter().sum::<f64>()
                    - n * sigma_mle.ln()
                    - n / 2.0 * (2.0 * std::f64::consts::PI).ln()
                    - n / 2.0,
                k: 2.0,
            })
        }
        "gamma" if positive && xs.len() >= 3 => {
            let mean_log = xs.iter().map(|x| x.ln()).sum::<f64>() / n;
            let s = mean.ln() - mean_log;
            if !(s > 0.0 && s.is_finite()) {
                return None;
            }
            let shape = gamma_shape(s);
            let scale = mean / shape;
            // Inverse of the Fisher information of (shape, scale), n observations.
            let det = shape * trigamma(shape) - 1.0;
            if det.is_nan() || det <= 0.0 {
                return None;
            }
            let sd_shape = (shape / (n * det)).sqrt();
            let sd_scale = (scale * scale * trigamma(shape) / (n * det)).sqrt();
            let ll = (shape - 1.0) * n * mean_log
                - sum / scale
                - n * shape * scale.ln()
                - n * ln_gamma(shape);
            Some(FamilyFit {
                quantity: Quantity::Gamma { shape, scale },
                params: vec![
                    param(
                        "shape",
                        shape,
                        (shape - level.z * sd_shape).max(0.0),
                        shape + level.z * sd_shape,
                    ),
                    param(
                        "scale",
                        scale,
                        (scale - level.z * sd_scale).max(0.0),
                        scale + level.z * sd_scale,
                    ),
                ],
                log_likelihood: ll,
                k: 2.0,
            })
        }
        "uniform" if xs.len() >= 2 => {
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let width = max - min;
            if width.is_nan() || width <= 0.0 {
                return None;
            }
            // (b - max) / (b - a) ~ Beta(1, n): below u with probability 1 - (1 - u)^n, and the same
            // for min - a. Each end gets the whole alpha on its one open side.
            let u = 1.0 - level.alpha.powf(1.0 / n);
            let reach = width * u / (1.0 - 2.0 * u).max(f64::EPSILON);
            Some(FamilyFit {
                quantity: Quantity::Uniform { min, max },
                params: vec![
                    param("min", min, (min - reach).max(0.0), min),
                    param("max", max, max, max + reach),
                ],
                log_likelihood: -n * width.ln(),
                k: 2.0,
            })
        }
        _ => None,
    }
}

/// The cumulative distribution function of a quantity at `x`.
pub(crate) fn cdf(q: &Quantity, x: f64) -> f64 {
    match *q {
        Quantity::Fixed { value } => f64::from(x >= value),
        Quantity::Exponential { mean } => 1.0 - (-x.max(0.0) / mean).exp(),
        Quantity::LogNormal { mu, sigma } if x > 0.0 => {
            Normal::new(mu, sigma).map_or(f64::NAN, |d| d.cdf(x.ln()))
        }
        Quantity::LogNormal { .. } => 0.0,
        Quantity::Gamma { shape, scale } => {
            Gamma::new(shape, 1.0 / scale).map_or(f64::NAN, |d| d.cdf(x.max(0.0)))
        }
        Quantity::Uniform { min, max } => ((x - min) / (max - min)).clamp(0.0, 1.0),
    }
}

/// Kolmogorov-Smirnov statistic of `sorted` against `q`: the largest distance between the sample's
/// and the fitted distribution functions (ties counted together).
pub(crate) fn ks_statistic(sorted: &[f64], q: &Quantity) -> f64 {
    let n = sorted.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let x = sorted[i];
        let mut j = i;
        while j < sorted.len() && sorted[j] == x {
            j += 1;
        }
        let f = cdf(q, x);
        d = d
            .max((j as f64 / n - f).abs())
            .max((f - i as f64 / n).abs());
        i = j;
    }
    d
}

/// Asymptotic p-value of a KS statistic `d` on `n` values (Kolmogorov distribution, Stephens'
/// correction `(sqrt n + 0.12 + 0.11 / sqrt n) d`).
pub(crate) fn ks_p_value(d: f64, n: usize) -> f64 {
    let sn = (n as f64).sqrt();
    let lambda = (sn + 0.12 + 0.11 / sn) * d;
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    for j in 1..=100 {
        let j = j as f64;
        let term = (-2.0 * j * j * lambda * lambda).exp();
        sum += if j as u64 % 2 == 1 { term } else { -term };
        if term < 1e-12 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// Fits `values` (non-negative, finite) to the families in `families` (all of [`FAMILIES`] when
/// empty), choosing by BIC; a sample whose values are all equal is `fixed`. `None` for an empty
/// sample. Intervals are at `confidence` (e.g. 0.95).
pub(crate) fn fit_quantity(
    values: &[f64],
    confidence: f64,
    families: &[&str],
) -> Option<FittedQuantity> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let fixed = FittedQuantity {
        n,
        sample_mean: mean,
        family: "fixed",
        quantity: Quantity::fixed(sorted[0]),
        params: vec![param("value", sorted[0], sorted[0], sorted[0])],
        ks_statistic: None,
        ks_p_value: None,
        candidates: Vec::new(),
    };
    if sorted[0] == sorted[n - 1] {
        return Some(fixed);
    }
    if n < MIN_FIT_VALUES {
        return Some(FittedQuantity {
            quantity: Quantity::fixed(mean),
            params: vec![param("value", mean, sorted[0], sorted[n - 1])],
            ..fixed
        });
    }
    let level = Level::new(confidence);
    let families: &[&str] = if families.is_empty() {
        &FAMILIES
    } else {
        families
    };
    let mut fits: Vec<(&'static str, FamilyFit, f64)> = FAMILIES
        .iter()
        .filter(|f| families.contains(f))
        .filter_map(|&f| {
            let fit = fit_family(f, &sorted, &level)?;
            let bic = fit.k * (n as f64).ln() - 2.0 * fit.log_likelihood;
            bic.is_finite().then_some((f, fit, bic))
        })
        .collect();
    fits.sort_by(|a, b| a.2.total_cmp(&b.2));
    let candidates = fits
        .iter()
        .map(|(f, fit, bic)| Candidate {
            family: f,
            log_likelihood: fit.log_likelihood,
            bic: *bic,
        })
        .collect();
    let Some((family, best, _)) = fits.into_iter().next() else {
        // No family fits (e.g. a zero among two values): the mean, stated as fixed.
        return Some(FittedQuantity {
            quantity: Quantity::fixed(mean),
            params: vec![param("value", mean, sorted[0], sorted[n - 1])],
            ..fixed
        });
    };
    let d = ks_statistic(&sorted, &best.quantity);
    Some(FittedQuantity {
        n,
        sample_mean: mean,
        family,
        quantity: best.quantity,
        params: best.params,
        ks_statistic: Some(d),
        ks_p_value: Some(ks_p_value(d, n)),
        candidates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(q: &Quantity, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| q.sample(&mut rng)).collect()
    }

    #[test]
    fn trigamma_matches_known_values() {
        // psi1(1) = pi^2/6, psi1(1/2) = pi^2/2; the series' first omitted term at x = 6 is
        // 5 / (66 x^11), about 2e-10.
        let pi2 = std::f64::consts::PI.powi(2);
        assert!(
            (trigamma(1.0) - pi2 / 6.0).abs() < 1e-9,
            "{}",
            trigamma(1.0)
        );
        assert!(
            (trigamma(0.5) - pi2 / 2.0).abs() < 1e-9,
            "{}",
            trigamma(0.5)
        );
    }

    #[test]
    fn each_family_is_recognised_and_its_parameters_covered() {
        // 99.9% intervals on 2,000 draws: each true parameter is inside unless the code is wrong
        // (a 0.1% event per parameter, fixed seeds).
        let cases = [
            Quantity::Exponential { mean: 40.0 },
            Quantity::LogNormal {
                mu: 6.5,
                sigma: 0.6,
            },
            Quantity::Gamma {
                shape: 4.0,
                scale: 60.0,
            },
            Quantity::Uniform {
                min: 200.0,
                max: 2000.0,
            },
        ];
        for (i, q) in cases.iter().enumerate() {
            let f = fit_quantity(&draws(q, 2000, 7 + i as u64), 0.999, &[]).unwrap();
            let truth = serde_json::to_value(q).unwrap();
            assert_eq!(truth["dist"], f.family, "{q:?}: {f:?}");
            for p in &f.params {
                let t = truth[&p.name].as_f64().unwrap();
                assert!(p.covers(t), "{q:?}: {p:?} misses {t}");
            }
            assert!(f.ks_p_value.unwrap() > 0.01, "{q:?}: {f:?}");
        }
    }

    #[test]
    fn a_wrong_family_has_a_poor_goodness_of_fit() {
        let xs = draws(
            &Quantity::Uniform {
                min: 100.0,
                max: 900.0,
            },
            1000,
            3,
        );
        let f = fit_quantity(&xs, 0.95, &["exponential"]).unwrap();
        assert!(f.ks_p_value.unwrap() < 1e-6, "{f:?}");
    }

    #[test]
    fn equal_values_are_fixed_and_an_empty_sample_is_none() {
        let f = fit_quantity(&[5.0, 5.0, 5.0], 0.95, &[]).unwrap();
        assert_eq!(f.quantity, Quantity::fixed(5.0));
        // Too few values for a shape: their mean, with their range.
        let f = fit_quantity(&[8000.0, 12000.0], 0.95, &[]).unwrap();
        assert_eq!(f.quantity, Quantity::fixed(10_000.0));
        assert_eq!((f.params[0].low, f.params[0].high), (8000.0, 12000.0));
        assert!(fit_quantity(&[], 0.95, &[]).is_none());
    }
}
