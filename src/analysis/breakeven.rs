//! Pure formulas: when a cache write pays for itself, and how likely the next call finds an entry
//! still alive.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Exp, Gamma, LogNormal, Uniform};

use crate::base::quantity::Quantity;

/// When caching a prefix pays: one write followed by `n` reads against `1 + n` uncached sends.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BreakEven {
    /// Prefix tokens considered.
    pub prefix_tokens: u64,
    /// The mode's minimum cacheable prefix.
    pub min_tokens: u64,
    /// Whether the prefix is long enough to be cached at all.
    pub cacheable: bool,
    /// Write price relative to base input.
    pub write_multiplier: f64,
    /// Read price relative to base input.
    pub read_multiplier: f64,
    /// `(w - 1) / (1 - r)`: caching is cheaper once reads per write exceed this (absent when reads
    /// cost as much as base input, so caching never pays).
    pub threshold_reads: Option<f64>,
    /// The smallest whole number of reads per write at which caching is strictly cheaper (absent when
    /// it never is, including a prefix below the minimum).
    pub reads_needed: Option<u64>,
    /// Input dollars saved per write when `reads_needed` reads follow it (0 when it never pays).
    pub saving_usd_at_reads_needed: f64,
}

/// Solves `w + n r < 1 + n` for the smallest whole `n` (reads per write) for a prefix of
/// `prefix_tokens` at `usd_per_token` base input. A prefix below `min_tokens` is never cached.
pub(crate) fn break_even(
    prefix_tokens: u64,
    min_tokens: u64,
    write_multiplier: f64,
    read_multiplier: f64,
    usd_per_token: f64,
) -> BreakEven {
    let cacheable = prefix_tokens >= min_tokens && prefix_tokens > 0;
    let (w, r) = (write_multiplier, read_multiplier);
    let threshold = if r < 1.0 {
        Some(((w - 1.0) / (1.0 - r)).max(0.0))
    } else {
        None
    };
    let reads_needed = match threshold {
        Some(t) if cacheable => {
            // Strict inequality: at exactly the threshold caching only ties.
            let mut n = t.floor() as u64;
            while w + n as f64 * r >= 1.0 + n as f64 {
                n += 1;
            }
            Some(n)
        }
        _ => None,
    };
    let saving = reads_needed.map_or(0.0, |n| {
        let n = n as f64;
        prefix_tokens as f64 * ((1.0 + n) - (w + n * r)) * usd_per_token
    });
    BreakEven {
        prefix_tokens,
        min_tokens,
        cacheable,
        write_multiplier: w,
        read_multiplier: r,
        threshold_reads: threshold,
        reads_needed,
        saving_usd_at_reads_needed: saving,
    }
}

/// How a probability was obtained.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// A fixed gap: exactly 0 or 1.
    Exact,
    /// The distribution's closed-form CDF (statrs).
    Analytic,
}

/// Probability that a gap drawn from `gap` is shorter than `ttl_seconds`, i.e. that the next call of a
/// session lands while the previous call's cache entry is alive (entries expire at write + TTL, and a
/// read at exactly the expiry misses, as in the engine).
pub(crate) fn p_within_ttl(gap: &Quantity, ttl_seconds: f64) -> (f64, Method) {
    let t = ttl_seconds;
    let analytic = |p: Option<f64>| (p.unwrap_or(f64::NAN), Method::Analytic);
    match *gap {
        Quantity::Fixed { value } => (if value < t { 1.0 } else { 0.0 }, Method::Exact),
        Quantity::Exponential { mean } => analytic(Exp::new(1.0 / mean).ok().map(|d| d.cdf(t))),
        Quantity::LogNormal { mu, sigma } => {
            analytic(LogNormal::new(mu, sigma).ok().map(|d| d.cdf(t)))
        }
        Quantity::Uniform { min, max } => analytic(Uniform::new(min, max).ok().map(|d| d.cdf(t))),
        Quantity::Gamma { shape, scale } => {
            analytic(Gamma::new(shape, 1.0 / scale).ok().map(|d| d.cdf(t)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The same probability by sampling `n` gaps: the cross-check of [`p_within_ttl`]'s closed forms.
    fn p_within_ttl_sampled<R: Rng + ?Sized>(
        gap: &Quantity,
        ttl_seconds: f64,
        n: usize,
        rng: &mut R,
    ) -> f64 {
        if n == 0 {
            return f64::NAN;
        }
        let sampler = gap.sampler();
        let hits = (0..n).filter(|_| sampler.sample(rng) < ttl_seconds).count();
        hits as f64 / n as f64
    }

    #[test]
    fn break_even_solves_the_inequality() {
        // w 1.25, r 0.1: (1.25 - 1) / 0.9 = 0.278, so one read pays: 1.25 + 0.1 = 1.35 < 2.
        let b = break_even(4000, 1024, 1.25, 0.1, 5e-6);
        assert_eq!(b.reads_needed, Some(1));
        assert!((b.threshold_reads.unwrap() - 0.25 / 0.9).abs() < 1e-12);
        // 4000 tokens x (2 - 1.35) x $5/M = $0.013.
        assert!((b.saving_usd_at_reads_needed - 4000.0 * 0.65 * 5e-6).abs() < 1e-12);
        // w 2 (1 h tier): (2 - 1) / 0.9 = 1.11, so two reads: 2 + 0.2 = 2.2 < 3 but 2.1 > 2.
        assert_eq!(break_even(4000, 1024, 2.0, 0.1, 5e-6).reads_needed, Some(2));
        // No write fee: one read is needed to be strictly cheaper (at zero reads it ties).
        assert_eq!(break_even(4000, 1024, 1.0, 0.2, 1e-6).reads_needed, Some(1));
        // Exactly on the threshold ties, so one more read is needed: w 1.5, r 0.5 -> 1 read ties
        // (1.5 + 0.5 = 2), two reads pay (2.5 < 3).
        let tie = break_even(4000, 0, 1.5, 0.5, 1e-6);
        assert_eq!(tie.threshold_reads, Some(1.0));
        assert_eq!(tie.reads_needed, Some(2));
    }

    #[test]
    fn break_even_never_below_minimum_or_with_full_price_reads() {
        let small = break_even(655, 1024, 1.25, 0.1, 5e-6);
        assert!(!small.cacheable);
        assert_eq!(small.reads_needed, None);
        assert_eq!(small.saving_usd_at_reads_needed, 0.0);
        let no_discount = break_even(4000, 1024, 1.25, 1.0, 5e-6);
        assert_eq!(no_discount.threshold_reads, None);
        assert_eq!(no_discount.reads_needed, None);
    }

    #[test]
    fn ttl_probability_matches_closed_forms_and_sampling() {
        // Exponential mean 120 s, TTL 300 s: 1 - e^-2.5.
        let q = Quantity::Exponential { mean: 120.0 };
        let (p, m) = p_within_ttl(&q, 300.0);
        assert_eq!(m, Method::Analytic);
        assert!((p - (1.0 - (-2.5f64).exp())).abs() < 1e-12, "{p}");
        // Uniform 0..600 s, TTL 300 s: one half.
        let (p, _) = p_within_ttl(
            &Quantity::Uniform {
                min: 0.0,
                max: 600.0,
            },
            300.0,
        );
        assert!((p - 0.5).abs() < 1e-12);
        // Fixed gaps are exact, and a gap equal to the TTL misses.
        assert_eq!(
            p_within_ttl(&Quantity::fixed(299.0), 300.0),
            (1.0, Method::Exact)
        );
        assert_eq!(p_within_ttl(&Quantity::fixed(300.0), 300.0).0, 0.0);
        // Log-normal and gamma: the analytic CDF agrees with sampling.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for q in [
            Quantity::LogNormal {
                mu: 5.0,
                sigma: 1.0,
            },
            Quantity::Gamma {
                shape: 2.0,
                scale: 100.0,
            },
        ] {
            let (p, _) = p_within_ttl(&q, 300.0);
            let s = p_within_ttl_sampled(&q, 300.0, 40_000, &mut rng);
            assert!((p - s).abs() < 0.01, "{q:?}: analytic {p} vs sampled {s}");
            assert!(p > 0.05 && p < 0.95, "{q:?}: {p}");
        }
    }
}
