//! A progress bar on standard error for long runs: drawn only when standard error is a terminal
//! and only once the work has lasted more than a moment, so pipes, files and quick runs stay clean.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this never shows a bar.
const DELAY: Duration = Duration::from_millis(400);

/// A progress bar that stays hidden until [`DELAY`] has passed (and forever off a terminal).
pub(crate) struct Progress {
    bar: ProgressBar,
    start: Instant,
    terminal: bool,
    shown: AtomicBool,
}

impl Progress {
    /// A bar for `total` units of work named `unit`.
    pub(crate) fn new(total: u64, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template =
            format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} (eta {{eta}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar,
            start: Instant::now(),
            terminal: std::io::stderr().is_terminal() && !super::quiet(),
            shown: AtomicBool::new(false),
        }
    }

    /// Records `n` more units done.
    pub(crate) fn inc(&self, n: u64) {
        self.bar.inc(n);
        if self.terminal
            && self.start.elapsed() >= DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// What a bar counted by the end of its work: units done, units announced, and its unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counted {
    /// Units reported done.
    pub done: u64,
    /// Units the bar was made for.
    pub total: u64,
    /// The unit as shown, e.g. `simulations (20 runs x 12 per run)`.
    pub unit: String,
}

/// Runs `work` with a bar counting (run, pair) simulations when the request has more than one run:
/// `runs x pairs` in all, only pairs that are simulated (not the stated skips).
pub(crate) fn with_runs_bar<T>(
    request: &crate::sim::request::Request,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T,
) -> T {
    with_bar(
        request.scenario.runs as u64,
        request.pairs.len() as u64,
        work,
    )
}

/// Runs `work` with a bar of `runs x per_run` simulations (none when `runs` is 1; hidden off a
/// terminal and with `--quiet`).
pub(crate) fn with_bar<T>(
    runs: u64,
    per_run: u64,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T,
) -> T {
    with_bar_counted(runs, per_run, work).0
}

/// [`with_bar`], also returning what the bar counted (`None`: no bar for one run).
pub(crate) fn with_bar_counted<T>(
    runs: u64,
    per_run: u64,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T,
) -> (T, Option<Counted>) {
    if runs <= 1 {
        return (work(&|_| {}), None);
    }
    let unit = format!("simulations ({runs} runs x {per_run} per run)");
    let bar = Progress::new(runs * per_run, &unit);
    let r = work(&|n| bar.inc(n));
    let counted = Counted {
        done: bar.bar.position(),
        total: bar.bar.length().unwrap_or(0),
        unit,
    };
    bar.finish();
    (r, Some(counted))
}

#[cfg(test)]
mod tests {
    //! The bar counts real work: every simulation the analyses report is announced, and no more
    //! (skipped pairs are not counted). No timing: only the counts at the end.
    use super::*;
    use crate::analysis::{advise, compare, whatif};
    use crate::input::scenario::Scenario;
    use crate::model::catalog::Catalog;
    use crate::sim::simulate::run_request;

    fn scenario() -> Scenario {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tool-change.toml");
        Scenario::load(&path).unwrap()
    }

    fn full(c: Option<Counted>, runs: u64, per_run: u64) {
        let c = c.expect("a bar for more than one run");
        assert_eq!(c.total, runs * per_run, "{c:?}");
        assert_eq!(c.done, c.total, "the bar ends full: {c:?}");
        assert_eq!(
            c.unit,
            format!("simulations ({runs} runs x {per_run} per run)")
        );
    }

    #[test]
    fn every_command_s_bar_ends_at_the_work_it_announced() {
        let catalog = Catalog::embedded().unwrap();
        let models = ["claude-opus-4.8".to_string(), "kimi-k3".to_string()];
        let runs = 5;
        // compare: Kimi offers no explicit caching: those pairs are skipped and not counted.
        let request = compare::selection(&models, &[])
            .overrides(Some(runs), None)
            .resolve(&catalog, scenario())
            .unwrap();
        assert!(!request.skipped.is_empty());
        let pairs = request.pairs.len() as u64;
        let (r, c) = with_bar_counted(runs, pairs, |p| {
            compare::compare_request_with_progress(&request, p)
        });
        r.unwrap();
        full(c, runs, pairs);
        // run: the same count through the Monte Carlo of every pair.
        let (r, c) = with_bar_counted(runs, pairs, |p| run_request(&request, p));
        r.unwrap();
        full(c, runs, pairs);
        // whatif: the baseline and the changed session of every pair.
        let request = whatif::selection_at(&models, &[], 25)
            .overrides(Some(runs), None)
            .resolve(&catalog, scenario())
            .unwrap();
        let change = whatif::ToolChange {
            remove: vec!["web_search".into()],
            ..Default::default()
        };
        let (changed, summary) = whatif::apply_change(&request.scenario, 25, &change).unwrap();
        let per_run = 2 * request.pairs.len() as u64;
        let (r, c) = with_bar_counted(runs, per_run, |p| {
            whatif::whatif_request_with_progress(&request, &changed, 25, summary, p)
        });
        r.unwrap();
        full(c, runs, per_run);
        // advise: every candidate and every dropped tool's session.
        let request = advise::selection(&models)
            .overrides(Some(runs), None)
            .resolve(&catalog, scenario())
            .unwrap();
        let per_run = advise::work_per_run(&request).unwrap();
        let candidates = advise::candidates(&request).unwrap().len() as u64;
        assert_eq!(per_run, candidates + 2 * advise::TOP_TOOLS as u64);
        let (r, c) = with_bar_counted(runs, per_run, |p| {
            advise::advise_request_with_progress(&request, p)
        });
        r.unwrap();
        full(c, runs, per_run);
        // One run: no bar at all.
        assert!(with_bar_counted(1, 7, |_| ()).1.is_none());
    }
}
