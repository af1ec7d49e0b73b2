//! A progress bar on standard error for long runs: drawn only when standard error is a terminal
//! and only once the work has lasted more than a moment, so pipes, files and quick runs stay clean.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this never shows a bar.
const DELAY: Duration = Duration::from_millis(400);

/// A progress bar that stays hidden until [`DELAY`] has passed (and forever off a terminal).
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    terminal: bool,
    shown: AtomicBool,
}

impl Progress {
    /// A bar for `total` units of work named `unit`.
    pub fn new(total: u64, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template =
            format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} (eta {{eta}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar,
            start: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
            shown: AtomicBool::new(false),
        }
    }

    /// Records `n` more units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        if self.terminal
            && self.start.elapsed() >= DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Runs `work` with a bar counting (run, pair) simulations when the request has more than one run:
/// `runs x pairs` in all, only pairs that are simulated (not the stated skips).
pub fn with_runs_bar<T>(
    request: &pcsim::sim::request::Request,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T,
) -> T {
    with_bar(
        request.scenario.runs as u64,
        request.pairs.len() as u64,
        work,
    )
}

/// Runs `work` with a bar of `runs x pairs` simulations (none when `runs` is 1 or with `--quiet`).
pub fn with_bar<T>(runs: u64, pairs: u64, work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T) -> T {
    if runs <= 1 {
        return work(&|_| {});
    }
    let bar = Progress::new(
        runs * pairs,
        &format!("simulations ({runs} runs x {pairs} pairs)"),
    );
    let r = work(&|n| bar.inc(n));
    bar.finish();
    r
}
