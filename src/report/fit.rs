//! `pcsim fit`'s check of its scenario as one line of text.

use crate::analysis::fit::{FitCheck, HistoryFit};

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

/// The sessions by model, when the history's sessions ran on several, and what the check
/// simulated: the mix, or (`--model`) every session on one model. `None` for one model.
pub(crate) fn models_line(f: &HistoryFit) -> Option<String> {
    if f.session_models.len() < 2 {
        return None;
    }
    let mix = f
        .session_models
        .iter()
        .map(|m| {
            format!(
                "{} {} session{} ({} call{})",
                m.model,
                m.sessions,
                if m.sessions == 1 { "" } else { "s" },
                m.calls,
                if m.calls == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some(if f.one_model {
        format!(
            "session models: {mix}; --model {}: every session fitted and simulated on it, the logged calls each billed at its own model's prices",
            f.model
        )
    } else {
        format!(
            "session models: {mix}; the check simulates this mix ({}), the logged calls each billed at its own model's prices",
            f.check_models
                .iter()
                .map(|(m, k)| format!("{k} on {m}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
