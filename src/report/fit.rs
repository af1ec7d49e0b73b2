//! `pcsim fit`'s check of its scenario as one line of text.

use crate::analysis::fit::FitCheck;

use super::usd;

/// The verdict: `check:` when the fitted scenario's p5–p95 holds the history's logged total,
/// `FAIL:` (with the distance of the runs' mean) when it does not.
pub(crate) fn check_line(c: &FitCheck) -> String {
    let range = format!(
        "{} to {} (p5 to p95 of {} runs, {})",
        usd(c.p5_usd),
        usd(c.p95_usd),
        c.runs,
        c.strategy
    );
    if c.reproduces {
        format!(
            "check: the history's logged total {} is within the fitted scenario's {range}",
            usd(c.logged_usd)
        )
    } else {
        format!(
            "FAIL: the history's logged total {} is outside the fitted scenario's {range}: this scenario does not reproduce the history ({:+.1}% from the runs' mean)",
            usd(c.logged_usd),
            (c.mean_usd / c.logged_usd - 1.0) * 100.0
        )
    }
}
