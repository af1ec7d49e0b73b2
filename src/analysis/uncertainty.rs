//! How sure a verdict is: figures over Monte Carlo runs (`--runs N`) of `compare`, `whatif` and
//! `advise`, as a mean with its spread, and the share of runs in which a verdict holds. Every run
//! simulates all candidates on the same timeline (same arrivals, gaps and message sizes), so
//! differences are paired run by run: a saving's interval is that of the per-run savings, not the
//! difference of two independent intervals.

use serde::Serialize;

use crate::sim::engine::{PreparedSet, Workspace};
use crate::sim::stats::Summary;

/// A figure over runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Number of runs.
    pub runs: u64,
    /// Mean over the runs.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// 5th percentile: 90% of runs lie between `p5` and `p95`.
    pub p5: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Lower end of the 95% confidence interval of the mean (Student's t); `null` with one run.
    pub ci95_low: Option<f64>,
    /// Upper end of that interval.
    pub ci95_high: Option<f64>,
}

impl Interval {
    /// The interval of `samples` (reordered); `None` when there are none.
    pub(crate) fn of(samples: &mut [f64]) -> Option<Interval> {
        let s = Summary::of(samples)?;
        Some(Interval {
            runs: s.n,
            mean: s.mean,
            median: s.median,
            p5: s.p5,
            p95: s.p95,
            ci95_low: s.ci95.map(|c| c.0),
            ci95_high: s.ci95.map(|c| c.1),
        })
    }

    /// The interval of `f` applied to each item.
    pub(crate) fn over<T>(items: &[T], f: impl Fn(&T) -> f64) -> Option<Interval> {
        let mut v: Vec<f64> = items.iter().map(f).collect();
        Interval::of(&mut v)
    }

    /// `mean [p5, p95]` with `fmt` for each figure.
    pub(crate) fn show(&self, fmt: impl Fn(f64) -> String) -> String {
        format!("{} [{}, {}]", fmt(self.mean), fmt(self.p5), fmt(self.p95))
    }
}

/// The share (0..=1) of `items` for which `holds` is true (0 for none).
pub(crate) fn share<T>(items: &[T], holds: impl Fn(&T) -> bool) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    items.iter().filter(|x| holds(x)).count() as f64 / items.len() as f64
}

/// Each run's total dollars of every member of `set`, for runs `0..runs`: `totals[run][member]`.
/// All members of a run share its timeline.
pub(crate) fn run_totals(
    set: &PreparedSet,
    runs: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> crate::error::Result<Vec<Vec<f64>>> {
    let members = set.members().len() as u64;
    crate::sim::montecarlo::map_runs(runs, members, progress, &|run, ws: &mut Workspace| {
        set.run(run, ws, |_, _| {})
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_and_share_of_known_samples() {
        let mut v: Vec<f64> = (1..=101).map(f64::from).collect();
        let i = Interval::of(&mut v).unwrap();
        assert_eq!(i.runs, 101);
        assert_eq!(i.mean, 51.0);
        assert_eq!(i.median, 51.0);
        assert_eq!(i.p5, 6.0);
        assert_eq!(i.p95, 96.0);
        assert!(i.ci95_low.unwrap() < 51.0 && i.ci95_high.unwrap() > 51.0);
        assert_eq!(share(&v, |x| *x > 51.0), 50.0 / 101.0);
        assert_eq!(share::<f64>(&[], |_| true), 0.0);
        assert!(Interval::of(&mut []).is_none());
    }
}
