//! Plain-text tables for the terminal.

use std::fmt::Write as _;

pub(crate) use crate::base::text::TextTable;
use crate::base::text::{saving_percent, usd};
use crate::sim::simulate::RunReport;

/// The summary of a run: one line per (model, strategy), then skipped pairs.
pub(crate) fn run_summary(report: &RunReport) -> String {
    let mut t = TextTable::new(
        &[
            "model",
            "strategy",
            "calls",
            "prompt tok",
            "uncached",
            "cache write",
            "cache read",
            "hit %",
            "total USD",
            "saving %",
        ],
        &[false, false, true, true, true, true, true, true, true, true],
    );
    for r in &report.results {
        let none = report
            .results
            .iter()
            .find(|x| x.model == r.model && x.strategy == "none");
        let vs = match none {
            Some(n) if n.total_usd > 0.0 && r.strategy != "none" => {
                saving_percent((1.0 - r.total_usd / n.total_usd) * 100.0)
            }
            _ => "".into(),
        };
        t.row(vec![
            r.model.clone(),
            r.strategy.clone(),
            r.calls.len().to_string(),
            r.totals.prompt_tokens.to_string(),
            r.totals.uncached_tokens.to_string(),
            r.totals.cache_write_tokens.to_string(),
            r.totals.cache_read_tokens.to_string(),
            format!("{:.1}", r.totals.cache_hit_ratio * 100.0),
            usd(r.total_usd),
            vs,
        ]);
    }
    use crate::base::terminal::escape_inline;
    let mut out = format!("scenario: {}", escape_inline(&report.scenario));
    if !report.description.is_empty() {
        let _ = write!(out, " ({})", escape_inline(&report.description));
    }
    out.push('\n');
    out.push_str(&t.render());
    for s in &report.skipped {
        let _ = writeln!(
            out,
            "skipped {} / {}: {}",
            escape_inline(&s.model),
            escape_inline(&s.strategy),
            escape_inline(&s.reason)
        );
    }
    out.push_str(&montecarlo_summary(report));
    out
}

/// Monte Carlo lines (total cost over runs) when the results carry them; empty otherwise.
pub(crate) fn montecarlo_summary(report: &RunReport) -> String {
    let mut t = TextTable::new(
        &[
            "model", "strategy", "runs", "mean USD", "95% CI", "median", "p5", "p95",
        ],
        &[false, false, true, true, true, true, true, true],
    );
    let mut any = false;
    for r in &report.results {
        if let Some(mc) = &r.montecarlo {
            any = true;
            let ci = match (mc.ci95_low_usd, mc.ci95_high_usd) {
                (Some(lo), Some(hi)) => format!("{} .. {}", usd(lo), usd(hi)),
                _ => "-".into(),
            };
            t.row(vec![
                r.model.clone(),
                r.strategy.clone(),
                mc.runs.to_string(),
                usd(mc.mean_usd),
                ci,
                usd(mc.median_usd),
                usd(mc.p5_usd),
                usd(mc.p95_usd),
            ]);
        }
    }
    if any {
        format!(
            "\nMonte Carlo (total cost over runs; the table above is run 0):\n{}",
            t.render()
        )
    } else {
        String::new()
    }
}

/// Most sessions listed one by one in the text summary (all are in the JSON output).
pub(crate) const MAX_SESSIONS_LISTED: usize = 20;

/// Per-session totals of every result with 2 to [`MAX_SESSIONS_LISTED`] sessions; a pointer to the
/// JSON output for more; empty for one session.
pub(crate) fn per_session(report: &RunReport) -> String {
    let mut out = String::new();
    if report
        .results
        .iter()
        .any(|r| r.per_session.len() > MAX_SESSIONS_LISTED)
    {
        out.push_str("\nper-session totals: see `per_session` in --format json\n");
        return out;
    }
    for r in report.results.iter().filter(|r| r.per_session.len() > 1) {
        let _ = writeln!(
            out,
            "\n{} / {} per session (account total {})",
            crate::base::terminal::escape_inline(&r.model),
            crate::base::terminal::escape_inline(&r.strategy),
            usd(r.total_usd)
        );
        let mut t = TextTable::new(
            &[
                "session",
                "calls",
                "prompt",
                "uncached",
                "write",
                "read",
                "total USD",
            ],
            &[true; 7],
        );
        for s in &r.per_session {
            t.row(vec![
                s.session.to_string(),
                s.calls.to_string(),
                s.prompt_tokens.to_string(),
                s.uncached_tokens.to_string(),
                s.cache_write_tokens.to_string(),
                s.cache_read_tokens.to_string(),
                usd(s.total_usd),
            ]);
        }
        out.push_str(&t.render());
    }
    out
}

/// Per-call table of one result.
pub(crate) fn run_calls(report: &RunReport) -> String {
    let mut out = String::new();
    for r in &report.results {
        let _ = writeln!(
            out,
            "\n{} / {}",
            crate::base::terminal::escape_inline(&r.model),
            crate::base::terminal::escape_inline(&r.strategy)
        );
        let mut t = TextTable::new(
            &[
                "session",
                "call",
                "time s",
                "prompt",
                "uncached",
                "write",
                "read",
                "output",
                "cost USD",
                "cumulative USD",
            ],
            &[true; 10],
        );
        for c in &r.calls {
            t.row(vec![
                c.session.to_string(),
                c.call.to_string(),
                format!("{:.1}", c.time_s),
                c.prompt_tokens.to_string(),
                c.uncached_tokens.to_string(),
                c.cache_write_tokens.to_string(),
                c.cache_read_tokens.to_string(),
                c.output_tokens.to_string(),
                usd(c.cost_usd),
                usd(c.cumulative_usd),
            ]);
        }
        out.push_str(&t.render());
    }
    out
}
