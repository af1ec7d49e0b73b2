//! Monte Carlo: many runs of a stochastic scenario for one (model, strategy), summarised.
//!
//! Runs are independent (every draw depends only on the seed, the run and the session), so they are
//! simulated in parallel with rayon. Determinism does not depend on the thread count: runs are
//! grouped in fixed chunks of `CHUNK_RUNS` consecutive runs, each chunk is accumulated in run
//! order, and chunk accumulators are merged in chunk order.
//!
//! Memory does not grow with the number of runs beyond one `f64` per run (the run totals, kept for
//! exact percentiles; 80 MB at the 10-million-run limit):
//! - the curve is kept at no more than `MAX_CURVE_POINTS` call numbers (every call when there are
//!   fewer), with a streaming mean per point;
//! - curve percentiles come from the first runs only, as many as fit in `CURVE_SAMPLE_VALUES`
//!   values (at least 419 runs; all runs when they fit). Runs are independent and identically
//!   distributed, so the first K runs are a uniform random sample of them; the reported
//!   `curve_percentile_runs` says how many were used. A streaming sketch (P², t-digest) would cover
//!   every run, but is approximate for any N and harder to make bit-for-bit independent of the
//!   thread count; exact order statistics of a large fixed sample are simpler to reason about;
//! - at most `BATCH_CHUNKS` chunk accumulators are alive at once.

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::sim::billing::CallBill;
use crate::sim::engine::{Prepared, PreparedSet, Workspace};
use crate::sim::stats::{quantile_sorted, Summary, Welford};

/// Consecutive runs accumulated together by one task.
pub(crate) const CHUNK_RUNS: u64 = 16;
/// Chunks simulated in parallel before their results are merged (bounds memory in flight).
pub(crate) const BATCH_CHUNKS: u64 = 64;
/// Most call numbers at which the cumulative curve is reported.
pub(crate) const MAX_CURVE_POINTS: usize = 10_000;
/// Most stored curve values (8 bytes each) used for curve percentiles.
pub(crate) const CURVE_SAMPLE_VALUES: usize = 1 << 22;
/// Most runs of one Monte Carlo.
pub(crate) use crate::input::scenario::MAX_RUNS;

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
#[non_exhaustive]
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
    /// The cumulative curve at each call number (or at most `MAX_CURVE_POINTS` evenly spaced ones).
    pub curve: Vec<CurvePoint>,
}

/// Call numbers (1-based) at which the curve is kept: every call, or evenly spaced ones ending with
/// the last call.
pub(crate) fn curve_calls(calls_per_run: usize) -> Vec<u64> {
    let l = calls_per_run as u64;
    let points = calls_per_run.min(MAX_CURVE_POINTS) as u64;
    (1..=points).map(|i| (i * l).div_ceil(points)).collect()
}

struct ChunkAcc {
    totals: Vec<f64>,
    curve: Vec<Welford>,
    samples: Vec<f64>,
}

/// Collects the bills of the runs of one chunk, per member.
struct Recorder<'c> {
    /// Call numbers where the curve is kept.
    calls: &'c [u64],
    /// Whether the current run's curve is kept whole (for the percentiles).
    keep: bool,
    /// Bills seen in the current run, per member.
    seen: Vec<u64>,
    /// Next curve point, per member.
    next_point: Vec<usize>,
    accs: Vec<ChunkAcc>,
    /// Run 0's bills per member, when the caller keeps them and this chunk holds run 0.
    first: Option<Vec<Vec<CallBill>>>,
}

impl Recorder<'_> {
    fn start_run(&mut self, keep: bool) {
        self.keep = keep;
        self.seen.fill(0);
        self.next_point.fill(0);
    }

    /// Takes member `m`'s next bill of the current run (each member's bills come in time order).
    #[inline]
    fn record(&mut self, m: usize, b: &CallBill) {
        self.seen[m] += 1;
        let pi = self.next_point[m];
        if self.calls.get(pi) == Some(&self.seen[m]) {
            let acc = &mut self.accs[m];
            acc.curve[pi].push(b.cumulative_usd);
            if self.keep {
                acc.samples.push(b.cumulative_usd);
            }
            self.next_point[m] = pi + 1;
        }
    }

    fn end_run(&mut self, totals: &[f64]) {
        for (acc, &t) in self.accs.iter_mut().zip(totals) {
            acc.totals.push(t);
        }
    }
}

/// Values (run totals and kept curve values) a Monte Carlo of a set may hold at once: 64 MB.
/// [`monte_carlo_set`] simulates as many members together as fit in it.
pub(crate) const SET_MEMORY_VALUES: u64 = 1 << 23;

fn check_runs(runs: u64) -> Result<()> {
    if runs == 0 || runs > MAX_RUNS {
        return Err(Error::invalid(
            "Monte Carlo",
            "runs",
            format!("value {runs} must be between 1 and {MAX_RUNS}"),
        ));
    }
    Ok(())
}

/// Runs kept whole for the curve percentiles, out of `runs` with `points` curve points.
fn sample_runs(runs: u64, points: usize) -> u64 {
    runs.min((CURVE_SAMPLE_VALUES / points.max(1)).max(1) as u64)
}

/// Runs `runs` simulations (runs 0..runs) and summarises them; `progress` is told how many runs
/// have been completed each time a batch is merged.
pub fn monte_carlo(
    prepared: &Prepared,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MonteCarlo> {
    check_runs(runs)?;
    let (mut summaries, _) = monte_carlo_members(
        1,
        prepared.calls_per_run(),
        runs,
        progress,
        false,
        &|run, ws, rec| {
            let total = prepared.run(run, ws, |b| rec.record(0, b));
            rec.end_run(&[total]);
        },
    )?;
    Ok(summaries.remove(0))
}

/// [`monte_carlo`] of every member of `set`, each summary the same as the member's own: the
/// members are simulated together on one timeline per run ([`PreparedSet`]), as many at a time as
/// keep the accumulators within [`SET_MEMORY_VALUES`] (one at a time when even one does not fit).
/// `progress` counts runs of single members.
pub(crate) fn monte_carlo_set(
    set: &PreparedSet,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<MonteCarlo>> {
    Ok(monte_carlo_set_within(set, runs, progress, SET_MEMORY_VALUES, false)?.0)
}

/// [`monte_carlo_set`], also handing back every member's bills of run 0 (in member order), the run
/// a report shows call by call, so that run is not simulated a second time.
pub(crate) fn monte_carlo_set_with_first(
    set: &PreparedSet,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Vec<MonteCarlo>, Vec<Vec<CallBill>>)> {
    monte_carlo_set_within(set, runs, progress, SET_MEMORY_VALUES, true)
}

/// [`monte_carlo_set`] with a memory budget of `budget` values; with run 0's bills of every member
/// when `keep_first` (otherwise no bills).
fn monte_carlo_set_within(
    set: &PreparedSet,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
    budget: u64,
    keep_first: bool,
) -> Result<(Vec<MonteCarlo>, Vec<Vec<CallBill>>)> {
    check_runs(runs)?;
    let members = set.members();
    let Some(first) = members.first() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let points = curve_calls(first.calls_per_run()).len() as u64;
    let per_member = runs + sample_runs(runs, points as usize) * points;
    let group = (budget / per_member.max(1)).max(1) as usize;
    let mut out = Vec::with_capacity(members.len());
    let mut first_bills = Vec::new();
    for part in set.parts(group) {
        let (summaries, bills) = monte_carlo_members(
            part.members().len(),
            first.calls_per_run(),
            runs,
            progress,
            keep_first,
            &|run, ws, rec| {
                // Run 0 keeps its bills too when asked (a closure of its own, so the other runs'
                // loop is the same as without).
                let totals = if run == 0 && rec.first.is_some() {
                    part.run(run, ws, |m, b| {
                        rec.record(m, b);
                        if let Some(first) = rec.first.as_mut() {
                            first[m].push(*b);
                        }
                    })
                } else {
                    part.run(run, ws, |m, b| rec.record(m, b))
                };
                rec.end_run(&totals);
            },
        )?;
        out.extend(summaries);
        first_bills.extend(bills);
    }
    Ok((out, first_bills))
}

/// The Monte Carlo of `n` members whose runs `simulate` performs, handing each member's bills and
/// totals to the recorder; `calls_per_run` is one member's. With `keep_first`, the recorder of run
/// 0's chunk has room for that run's bills (`simulate` fills it), which come back with the
/// summaries (otherwise no bills come back).
fn monte_carlo_members(
    n: usize,
    calls_per_run: usize,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
    keep_first: bool,
    simulate: &(dyn Fn(u64, &mut Workspace, &mut Recorder) + Sync),
) -> Result<(Vec<MonteCarlo>, Vec<Vec<CallBill>>)> {
    let calls = curve_calls(calls_per_run);
    let points = calls.len();
    let sample_runs = sample_runs(runs, points);
    let mut totals: Vec<Vec<f64>> = (0..n).map(|_| Vec::with_capacity(runs as usize)).collect();
    let mut first_bills = Vec::new();
    let mut curve = vec![vec![Welford::default(); points]; n];
    let mut samples: Vec<Vec<f64>> = (0..n)
        .map(|_| Vec::with_capacity(sample_runs as usize * points))
        .collect();

    let chunks = runs.div_ceil(CHUNK_RUNS);
    let mut next_chunk = 0;
    while next_chunk < chunks {
        let end = (next_chunk + BATCH_CHUNKS).min(chunks);
        let recs: Vec<Recorder> = (next_chunk..end)
            .into_par_iter()
            .map(|c| {
                Workspace::with_thread_local(|ws| {
                    let first = c * CHUNK_RUNS;
                    let last = (first + CHUNK_RUNS).min(runs);
                    let mut rec = Recorder {
                        calls: &calls,
                        keep: false,
                        seen: vec![0; n],
                        next_point: vec![0; n],
                        accs: (0..n)
                            .map(|_| ChunkAcc {
                                totals: Vec::with_capacity((last - first) as usize),
                                curve: vec![Welford::default(); points],
                                samples: Vec::new(),
                            })
                            .collect(),
                        first: (keep_first && first == 0)
                            .then(|| (0..n).map(|_| Vec::with_capacity(calls_per_run)).collect()),
                    };
                    for run in first..last {
                        rec.start_run(run < sample_runs);
                        simulate(run, ws, &mut rec);
                    }
                    rec
                })
            })
            .collect();
        for rec in recs {
            if let Some(bills) = rec.first {
                first_bills = bills;
            }
            for (m, acc) in rec.accs.iter().enumerate() {
                totals[m].extend_from_slice(&acc.totals);
                for (w, a) in curve[m].iter_mut().zip(&acc.curve) {
                    w.merge(a);
                }
                samples[m].extend_from_slice(&acc.samples);
            }
        }
        progress((((end * CHUNK_RUNS).min(runs)) - next_chunk * CHUNK_RUNS) * n as u64);
        next_chunk = end;
    }

    let summaries = totals
        .iter_mut()
        .zip(&curve)
        .zip(&samples)
        .map(|((totals, curve), samples)| {
            summarise(runs, sample_runs, &calls, totals, curve, samples)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((summaries, first_bills))
}

/// Maps runs `0..runs` to values with `f` (given the run and this thread's workspace), in parallel
/// in chunks of [`CHUNK_RUNS`] runs, at most [`BATCH_CHUNKS`] chunks in flight; the values come back
/// in run order, the same whatever the thread count. `progress` is told `weight` units per run
/// done after each batch. For figures a run's totals do not give (pay-back calls, the cheapest of
/// several candidates in each run, paired differences): `f` runs one or more [`PreparedSet`]s of
/// the same timing on the run and reduces their bills to what is kept.
pub(crate) fn map_runs<T: Send>(
    runs: u64,
    weight: u64,
    progress: &(dyn Fn(u64) + Sync),
    f: &(dyn Fn(u64, &mut Workspace) -> T + Sync),
) -> Result<Vec<T>> {
    check_runs(runs)?;
    let chunks = runs.div_ceil(CHUNK_RUNS);
    let mut out = Vec::with_capacity(runs as usize);
    let mut next_chunk = 0;
    while next_chunk < chunks {
        let end = (next_chunk + BATCH_CHUNKS).min(chunks);
        let parts: Vec<Vec<T>> = (next_chunk..end)
            .into_par_iter()
            .map(|c| {
                Workspace::with_thread_local(|ws| {
                    let first = c * CHUNK_RUNS;
                    let last = (first + CHUNK_RUNS).min(runs);
                    (first..last).map(|run| f(run, ws)).collect()
                })
            })
            .collect();
        let before = out.len() as u64;
        for p in parts {
            out.extend(p);
        }
        progress((out.len() as u64 - before) * weight);
        next_chunk = end;
    }
    Ok(out)
}

/// One member's summary from its run totals, streaming curve means and kept curve values.
fn summarise(
    runs: u64,
    sample_runs: u64,
    calls: &[u64],
    totals: &mut [f64],
    curve: &[Welford],
    samples: &[f64],
) -> Result<MonteCarlo> {
    let points = calls.len();
    let s = Summary::of(totals)
        .ok_or_else(|| Error::Internal("Monte Carlo produced no runs".into()))?;
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

    /// The members of a set get the Monte Carlo each gets alone, bit for bit, whether they run all
    /// together, in groups, or one by one; progress counts every member's runs.
    #[test]
    fn a_set_summarises_each_member_as_alone() {
        use crate::input::scenario::Scenario;
        use crate::model::catalog::Catalog;
        use crate::model::strategy::Strategy;
        use crate::sim::engine::SimSetup;
        use std::sync::atomic::{AtomicU64, Ordering};
        let scenario = Scenario::from_toml_str(
            r#"
seed = 5
[tools]
synthetic = { count = 10, params = 3 }
[session]
calls = 12
system_tokens = 900
tool_result_tokens = { dist = "log_normal", mu = 6.0, sigma = 0.8 }
output_tokens = { dist = "gamma", shape = 2.0, scale = 100.0 }
gap_seconds = { dist = "exponential", mean = 200 }
[sessions]
count = 3
every_seconds = 5
"#,
            "mc.toml",
            std::path::Path::new("."),
        )
        .unwrap();
        let catalog = Catalog::embedded().unwrap();
        let resolved: Vec<_> = ["claude-opus-4.8", "kimi-k3", "gemini-3.6-flash", "gpt-5.6"]
            .iter()
            .flat_map(|id| {
                let m = catalog.model(id).unwrap();
                ["none", "cached"]
                    .iter()
                    .map(move |t| (m, Strategy::parse(t).unwrap().resolve(m).unwrap()))
            })
            .collect();
        let setups: Vec<SimSetup> = resolved
            .iter()
            .map(|(m, r)| SimSetup::new(m, r, scenario.first_token_seconds))
            .collect();
        let set = PreparedSet::new(&scenario, &setups);
        let runs = 40;
        let alone: Vec<MonteCarlo> = set
            .members()
            .iter()
            .map(|p| monte_carlo(p, runs, &|_| {}).unwrap())
            .collect();
        assert!(alone[1].p95_usd > alone[1].p5_usd, "a stochastic scenario");
        let per_member = runs + runs * 12;
        for budget in [u64::MAX, 2 * per_member, 1] {
            let done = AtomicU64::new(0);
            let together = monte_carlo_set_within(
                &set,
                runs,
                &|n| {
                    done.fetch_add(n, Ordering::Relaxed);
                },
                budget,
                true,
            )
            .unwrap();
            let (together, first) = together;
            assert_eq!(together, alone, "budget {budget}");
            assert_eq!(done.into_inner(), runs * setups.len() as u64);
            // Run 0's bills kept on the way are each member's own run 0, bill for bill.
            let own: Vec<Vec<CallBill>> = set
                .members()
                .iter()
                .map(|p| {
                    let mut bills = Vec::new();
                    p.run(0, &mut Workspace::new(), |b| bills.push(*b));
                    bills
                })
                .collect();
            assert!(own.iter().all(|b| !b.is_empty()));
            assert_eq!(first, own, "budget {budget}");
        }
    }

    #[test]
    fn curve_calls_cover_every_call_or_spread_evenly() {
        assert_eq!(curve_calls(5), vec![1, 2, 3, 4, 5]);
        let c = curve_calls(25_000);
        assert_eq!(c.len(), MAX_CURVE_POINTS);
        assert_eq!(*c.last().unwrap(), 25_000);
        assert!(c.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 3));
    }
}
