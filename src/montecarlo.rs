//! Monte Carlo: many runs of a stochastic scenario for one (model, strategy), summarised.
//!
//! Runs are independent (every draw depends only on the seed, the run and the session), so they are
//! simulated in parallel with rayon. Determinism does not depend on the thread count: runs are
//! grouped in fixed chunks of [`CHUNK_RUNS`] consecutive runs, each chunk is accumulated in run
//! order, and chunk accumulators are merged in chunk order.
//!
//! Memory does not grow with the number of runs beyond one `f64` per run (the run totals, kept for
//! exact percentiles; 80 MB at the 10-million-run limit):
//! - the curve is kept at no more than [`MAX_CURVE_POINTS`] call numbers (every call when there are
//!   fewer), with a streaming mean per point;
//! - curve percentiles come from the first runs only, as many as fit in [`CURVE_SAMPLE_VALUES`]
//!   values (at least 419 runs; all runs when they fit). Runs are independent and identically
//!   distributed, so the first K runs are a uniform random sample of them; the reported
//!   `curve_percentile_runs` says how many were used. A streaming sketch (P², t-digest) would cover
//!   every run, but is approximate for any N and harder to make bit-for-bit independent of the
//!   thread count; exact order statistics of a large fixed sample are simpler to reason about;
//! - at most [`BATCH_CHUNKS`] chunk accumulators are alive at once.

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::{Prepared, Workspace};
use crate::error::{Error, Result};
use crate::stats::{quantile_sorted, Summary, Welford};

/// Consecutive runs accumulated together by one task.
pub const CHUNK_RUNS: u64 = 16;
/// Chunks simulated in parallel before their results are merged (bounds memory in flight).
pub const BATCH_CHUNKS: u64 = 64;
/// Most call numbers at which the cumulative curve is reported.
pub const MAX_CURVE_POINTS: usize = 10_000;
/// Most stored curve values (8 bytes each) used for curve percentiles.
pub const CURVE_SAMPLE_VALUES: usize = 1 << 22;
/// Most runs of one Monte Carlo.
pub const MAX_RUNS: u64 = 10_000_000;

/// The cumulative cost after a given number of calls, across runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Call number in time order across all sessions (1-based).
    pub call: u64,
    /// Mean over all runs.
    pub mean: f64,
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// Monte Carlo summary of one (model, strategy).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonteCarlo {
    /// Number of runs.
    pub runs: u64,
    /// Mean total cost.
    pub mean_usd: f64,
    /// Median total cost.
    pub median_usd: f64,
    /// 5th percentile of the total cost.
    pub p5_usd: f64,
    /// 95th percentile of the total cost.
    pub p95_usd: f64,
    /// Lower end of the 95% confidence interval of the mean (Student's t); `null` with one run.
    pub ci95_low_usd: Option<f64>,
    /// Upper end of the 95% confidence interval of the mean; `null` with one run.
    pub ci95_high_usd: Option<f64>,
    /// Runs whose curves give the curve percentiles (the first ones; all runs when they fit).
    pub curve_percentile_runs: u64,
    /// The cumulative curve at each call number (or at most [`MAX_CURVE_POINTS`] evenly spaced ones).
    pub curve: Vec<CurvePoint>,
}

/// Call numbers (1-based) at which the curve is kept: every call, or evenly spaced ones ending with
/// the last call.
pub fn curve_calls(calls_per_run: usize) -> Vec<u64> {
    let l = calls_per_run as u64;
    let points = calls_per_run.min(MAX_CURVE_POINTS) as u64;
    (1..=points).map(|i| (i * l).div_ceil(points)).collect()
}

struct ChunkAcc {
    totals: Vec<f64>,
    curve: Vec<Welford>,
    samples: Vec<f64>,
}

/// Runs `runs` simulations (runs 0..runs) and summarises them; `progress` is told how many runs
/// have been completed each time a batch is merged.
pub fn monte_carlo(
    prepared: &Prepared,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MonteCarlo> {
    if runs == 0 || runs > MAX_RUNS {
        return Err(Error::invalid(
            "Monte Carlo",
            "runs",
            format!("value {runs} must be between 1 and {MAX_RUNS}"),
        ));
    }
    let calls = curve_calls(prepared.calls_per_run());
    let points = calls.len();
    let sample_runs = runs.min((CURVE_SAMPLE_VALUES / points.max(1)).max(1) as u64);
    let mut totals: Vec<f64> = Vec::with_capacity(runs as usize);
    let mut curve = vec![Welford::default(); points];
    let mut samples: Vec<f64> = Vec::with_capacity(sample_runs as usize * points);

    let chunks = runs.div_ceil(CHUNK_RUNS);
    let mut next_chunk = 0;
    while next_chunk < chunks {
        let end = (next_chunk + BATCH_CHUNKS).min(chunks);
        let accs: Vec<ChunkAcc> = (next_chunk..end)
            .into_par_iter()
            .map(|c| {
                Workspace::with_thread_local(|ws| {
                    let first = c * CHUNK_RUNS;
                    let last = (first + CHUNK_RUNS).min(runs);
                    let mut acc = ChunkAcc {
                        totals: Vec::with_capacity((last - first) as usize),
                        curve: vec![Welford::default(); points],
                        samples: Vec::new(),
                    };
                    for run in first..last {
                        let keep = run < sample_runs;
                        let mut k: u64 = 0;
                        let mut pi = 0;
                        let total = prepared.run(run, ws, |b| {
                            k += 1;
                            if calls.get(pi) == Some(&k) {
                                acc.curve[pi].push(b.cumulative_usd);
                                if keep {
                                    acc.samples.push(b.cumulative_usd);
                                }
                                pi += 1;
                            }
                        });
                        acc.totals.push(total);
                    }
                    acc
                })
            })
            .collect();
        for acc in &accs {
            totals.extend_from_slice(&acc.totals);
            for (w, a) in curve.iter_mut().zip(&acc.curve) {
                w.merge(a);
            }
            samples.extend_from_slice(&acc.samples);
        }
        progress(((end * CHUNK_RUNS).min(runs)) - next_chunk * CHUNK_RUNS);
        next_chunk = end;
    }

    let s = Summary::of(&mut totals).ok_or_else(|| {
        Error::Unsupported("Monte Carlo produced no runs (internal error)".into())
    })?;
    let mut column = Vec::with_capacity(sample_runs as usize);
    let curve = calls
        .iter()
        .enumerate()
        .map(|(pi, &call)| {
            column.clear();
            column.extend(samples.iter().skip(pi).step_by(points.max(1)).copied());
            column.sort_unstable_by(f64::total_cmp);
            let q = |p| quantile_sorted(&column, p).unwrap_or(f64::NAN);
            CurvePoint {
                call,
                mean: curve[pi].mean,
                p5: q(0.05),
                median: q(0.5),
                p95: q(0.95),
            }
        })
        .collect();
    Ok(MonteCarlo {
        runs,
        mean_usd: s.mean,
        median_usd: s.median,
        p5_usd: s.p5,
        p95_usd: s.p95,
        ci95_low_usd: s.ci95.map(|c| c.0),
        ci95_high_usd: s.ci95.map(|c| c.1),
        curve_percentile_runs: sample_runs,
        curve,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_calls_cover_every_call_or_spread_evenly() {
        assert_eq!(curve_calls(5), vec![1, 2, 3, 4, 5]);
        let c = curve_calls(25_000);
        assert_eq!(c.len(), MAX_CURVE_POINTS);
        assert_eq!(*c.last().unwrap(), 25_000);
        assert!(c.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 3));
    }
}
