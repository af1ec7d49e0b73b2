//! Amounts that are either fixed or drawn from a distribution (tokens per call, seconds between
//! calls). Sampling uses statrs distributions and a caller-provided seeded RNG.

use rand::Rng;
use serde::Serialize;
use statrs::distribution::{Exp, Gamma, LogNormal, Uniform};
use statrs::statistics::Distribution as _;

use crate::error::{Error, Result};

/// A non-negative amount: fixed, or drawn per use from a distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "snake_case")]
pub enum Quantity {
    /// Always this value.
    Fixed {
        /// The value.
        value: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean (> 0).
        mean: f64,
    },
    /// Log-normal given by the mean and standard deviation of the underlying normal.
    LogNormal {
        /// Mean of ln(X).
        mu: f64,
        /// Standard deviation of ln(X) (> 0).
        sigma: f64,
    },
    /// Uniform on [min, max].
    Uniform {
        /// Lower bound (>= 0).
        min: f64,
        /// Upper bound (> min).
        max: f64,
    },
    /// Gamma with shape k and scale theta.
    Gamma {
        /// Shape (> 0).
        shape: f64,
        /// Scale (> 0).
        scale: f64,
    },
}

impl Quantity {
    /// A fixed amount.
    pub fn fixed(value: f64) -> Self {
        Quantity::Fixed { value }
    }

    /// Whether every draw gives the same value.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Quantity::Fixed { .. })
    }

    /// The expected value.
    pub fn mean(&self) -> f64 {
        match *self {
            Quantity::Fixed { value } => value,
            Quantity::Exponential { mean } => mean,
            Quantity::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Quantity::Uniform { min, max } => (min + max) / 2.0,
            Quantity::Gamma { shape, scale } => shape * scale,
        }
    }

    /// Draws one value (never negative).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        use rand::distributions::Distribution;
        let x = match *self {
            Quantity::Fixed { value } => return value,
            // Parameters were validated when the quantity was built, so construction cannot fail;
            // fall back to the mean rather than panic if it ever did.
            Quantity::Exponential { mean } => {
                Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(mean)
            }
            Quantity::LogNormal { mu, sigma } => LogNormal::new(mu, sigma)
                .map(|d| d.sample(rng))
                .unwrap_or_else(|_| self.mean()),
            Quantity::Uniform { min, max } => {
                Uniform::new(min, max).map(|d| d.sample(rng)).unwrap_or(min)
            }
            Quantity::Gamma { shape, scale } => Gamma::new(shape, 1.0 / scale)
                .map(|d| d.sample(rng))
                .unwrap_or_else(|_| self.mean()),
        };
        x.max(0.0)
    }

    /// A sampler with the distribution built once, for hot loops: draws exactly what
    /// [`Quantity::sample`] draws from the same RNG state.
    pub fn sampler(&self) -> Sampler {
        match *self {
            Quantity::Fixed { value } => Sampler::Fixed(value),
            Quantity::Exponential { mean } => match Exp::new(1.0 / mean) {
                Ok(d) => Sampler::Exp(d),
                Err(_) => Sampler::Fixed(mean),
            },
            Quantity::LogNormal { mu, sigma } => match LogNormal::new(mu, sigma) {
                Ok(d) => Sampler::LogNormal(d),
                Err(_) => Sampler::Fixed(self.mean()),
            },
            Quantity::Uniform { min, max } => match Uniform::new(min, max) {
                Ok(d) => Sampler::Uniform(d),
                Err(_) => Sampler::Fixed(min),
            },
            Quantity::Gamma { shape, scale } => match Gamma::new(shape, 1.0 / scale) {
                Ok(d) => Sampler::Gamma(d),
                Err(_) => Sampler::Fixed(self.mean()),
            },
        }
    }

    /// Builds a quantity from TOML: a number, or a table `{ dist = "...", ... }`.
    pub fn from_toml(v: &toml::Value, file: &str, field: &str) -> Result<Self> {
        let bad = |problem: String| Error::invalid(file, field, problem);
        let num = |t: &toml::Table, key: &str| -> Result<f64> {
            let x = match t.get(key) {
                Some(toml::Value::Float(f)) => *f,
                Some(toml::Value::Integer(i)) => *i as f64,
                Some(other) => return Err(bad(format!("`{key}` must be a number, got {other}"))),
                None => return Err(bad(format!("`{key}` is missing"))),
            };
            if !x.is_finite() {
                return Err(bad(format!("`{key}` = {x} is not a finite number")));
            }
            Ok(x)
        };
        let q = match v {
            toml::Value::Integer(i) => Quantity::fixed(*i as f64),
            toml::Value::Float(f) => Quantity::fixed(*f),
            toml::Value::Table(t) => {
                let dist = t
                    .get("dist")
                    .and_then(toml::Value::as_str)
                    .ok_or_else(|| bad("a distribution table needs `dist` = exponential, log_normal, uniform or gamma".into()))?;
                let allowed: &[&str] = match dist {
                    "exponential" => &["dist", "mean"],
                    "log_normal" => &["dist", "mu", "sigma"],
                    "uniform" => &["dist", "min", "max"],
                    "gamma" => &["dist", "shape", "scale"],
                    other => return Err(bad(format!("unknown distribution `{other}`; use exponential, log_normal, uniform or gamma"))),
                };
                if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
                    return Err(bad(format!(
                        "unknown key `{k}` for {dist} (expected {})",
                        allowed[1..].join(", ")
                    )));
                }
                match dist {
                    "exponential" => Quantity::Exponential {
                        mean: num(t, "mean")?,
                    },
                    "log_normal" => Quantity::LogNormal {
                        mu: num(t, "mu")?,
                        sigma: num(t, "sigma")?,
                    },
                    "uniform" => Quantity::Uniform {
                        min: num(t, "min")?,
                        max: num(t, "max")?,
                    },
                    _ => Quantity::Gamma {
                        shape: num(t, "shape")?,
                        scale: num(t, "scale")?,
                    },
                }
            }
            other => {
                return Err(bad(format!(
                    "expected a number or a distribution table, got {other}"
                )))
            }
        };
        q.validate().map_err(bad)?;
        Ok(q)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        let ok = match *self {
            Quantity::Fixed { value } => value.is_finite() && value >= 0.0,
            Quantity::Exponential { mean } => mean > 0.0 && Exp::new(1.0 / mean).is_ok(),
            Quantity::LogNormal { mu, sigma } => {
                sigma > 0.0
                    && LogNormal::new(mu, sigma).is_ok_and(|d| d.mean().is_some_and(f64::is_finite))
            }
            Quantity::Uniform { min, max } => min >= 0.0 && max > min,
            Quantity::Gamma { shape, scale } => shape > 0.0 && scale > 0.0,
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                Quantity::Fixed { value } => format!("value {value} must be a finite number >= 0"),
                Quantity::Exponential { mean } => format!("exponential mean {mean} must be > 0"),
                Quantity::LogNormal { sigma, .. } => {
                    format!("log_normal sigma {sigma} must be > 0 (and the mean finite)")
                }
                Quantity::Uniform { min, max } => {
                    format!("uniform needs 0 <= min < max, got min {min}, max {max}")
                }
                Quantity::Gamma { shape, scale } => {
                    format!("gamma shape {shape} and scale {scale} must be > 0")
                }
            })
        }
    }
}

/// A [`Quantity`] with its distribution built (see [`Quantity::sampler`]).
#[derive(Debug, Clone, Copy)]
pub enum Sampler {
    /// Always this value.
    Fixed(f64),
    /// Exponential.
    Exp(Exp),
    /// Log-normal.
    LogNormal(LogNormal),
    /// Uniform.
    Uniform(Uniform),
    /// Gamma.
    Gamma(Gamma),
}

impl Sampler {
    /// Draws one value (never negative).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        use rand::distributions::Distribution;
        let x = match self {
            Sampler::Fixed(v) => return *v,
            Sampler::Exp(d) => d.sample(rng),
            Sampler::LogNormal(d) => d.sample(rng),
            Sampler::Uniform(d) => d.sample(rng),
            Sampler::Gamma(d) => d.sample(rng),
        };
        x.max(0.0)
    }
}

/// `x.round() as u64` (halves away from zero; negative and NaN give 0, huge values saturate)
/// without a libm call: the per-call amounts of the engine are rounded with it.
#[inline]
pub fn round_u64(x: f64) -> u64 {
    let t = x as u64;
    // Exact: for x >= 1 the truncation is within a factor 2 of x (Sterbenz); below 1 it is 0.
    // Branch-free: whether a draw rounds up is a coin flip the branch predictor cannot learn.
    t.saturating_add(u64::from(x - t as f64 >= 0.5))
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_u64_is_round_as_u64() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            1e19,
            1.8e19,
            1e300,
            f64::INFINITY,
            -0.7,
            -3.5,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        xs.extend((0..100_000).map(|_| rng.gen::<f64>() * 10f64.powi(rng.gen_range(-3..12))));
        xs.extend((0..10_000).map(|i| f64::from(i) / 2.0));
        for x in xs {
            assert_eq!(round_u64(x), x.round() as u64, "{x}");
        }
    }

    #[test]
    fn sampler_draws_what_sample_draws() {
        for s in [
            "{ dist = \"exponential\", mean = 10 }",
            "{ dist = \"uniform\", min = 5, max = 15 }",
            "{ dist = \"gamma\", shape = 0.7, scale = 5 }",
            "{ dist = \"log_normal\", mu = 2.0, sigma = 0.5 }",
            "7.25",
        ] {
            let q = parse(s).unwrap();
            let mut a = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let mut b = a.clone();
            let sampler = q.sampler();
            for _ in 0..1000 {
                assert_eq!(q.sample(&mut a), sampler.sample(&mut b), "{s}");
            }
        }
    }

    use super::*;
    use rand::SeedableRng;

    fn parse(s: &str) -> Result<Quantity> {
        let t: toml::Table = toml::from_str(&format!("q = {s}")).unwrap();
        Quantity::from_toml(&t["q"], "s.toml", "session.gap_seconds")
    }

    #[test]
    fn parses_and_samples_near_the_mean() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for s in [
            "{ dist = \"exponential\", mean = 10 }",
            "{ dist = \"uniform\", min = 5, max = 15 }",
            "{ dist = \"gamma\", shape = 2, scale = 5 }",
            "{ dist = \"log_normal\", mu = 2.0, sigma = 0.5 }",
        ] {
            let q = parse(s).unwrap();
            let n = 20_000;
            let m: f64 = (0..n).map(|_| q.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!(
                (m - q.mean()).abs() / q.mean() < 0.03,
                "{s}: sample mean {m} vs {}",
                q.mean()
            );
        }
    }

    #[test]
    fn invalid_parameters_name_the_field() {
        for s in [
            "{ dist = \"exponential\", mean = -1 }",
            "{ dist = \"log_normal\", mu = 1, sigma = 0 }",
            "{ dist = \"uniform\", min = 3, max = 1 }",
            "-4",
            "{ dist = \"poisson\", mean = 1 }",
            "{ dist = \"gamma\", shape = 1 }",
        ] {
            let e = parse(s).unwrap_err().to_string();
            assert!(
                e.contains("s.toml") && e.contains("session.gap_seconds"),
                "{s}: {e}"
            );
        }
    }
}
