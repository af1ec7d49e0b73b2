//! The terminal table and the CSV of a what-if report.

use std::fmt::Write as _;

use crate::analysis::whatif::*;
use crate::base::text::calls_word;
use crate::base::text::{field, saving_percent, usd, usd_number, TextTable};
use crate::report::share_text;
use crate::report::skip_lines;

impl WhatifReport {
    /// The table of `--runs N`: the saving as a mean with the range of 90% of runs, how often the
    /// change saves and pays back, and the pay-back calls over the runs in which it does.
    fn table_of_runs(&self) -> String {
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "saving USD (mean)",
                "saving, 90% of runs",
                "saves in",
                "pays back in",
                "pays back after (median [p5, p95])",
            ],
            &[false, false, true, true, true, true, true],
        );
        for o in &self.outcomes {
            let Some(r) = &o.runs else { continue };
            let calls = |x: f64| format!("{x:.0}");
            t.row(vec![
                o.model.clone(),
                o.strategy.clone(),
                usd(r.saving_usd.mean),
                format!("[{}, {}]", usd(r.saving_usd.p5), usd(r.saving_usd.p95)),
                share_text(r.share_saving),
                format!(
                    "{} ({} in session)",
                    share_text(r.share_pays_back_extrapolated),
                    share_text(r.share_pays_back)
                ),
                match &r.breakeven_calls_extrapolated {
                    Some(i) => format!(
                        "{} [{}, {}]",
                        calls_word(i.median.round() as u64),
                        calls(i.p5),
                        calls(i.p95)
                    ),
                    None => "never".into(),
                },
            ]);
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls), {} runs from seed {}; what if {}\n",
            self.scenario,
            self.sessions,
            self.calls_per_session,
            self.runs,
            self.seed,
            self.change.description
        );
        out.push_str(&t.render());
        out.push_str("saving: baseline minus changed, run by run on the same timeline (negative: the change costs more); pays back: calls from K until the change has paid for itself, beyond the session at the mean saving per call after K\n");
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    /// Column names of [`WhatifReport::csv`].
    pub(crate) const CSV_COLUMNS: [&'static str; 17] = [
        "model",
        "strategy",
        "tool_change_rule",
        "baseline_usd",
        "changed_usd",
        "extra_usd",
        "extra_percent",
        "baseline_cache_write_tokens",
        "changed_cache_write_tokens",
        "extra_cache_write_tokens",
        "write_at_change_tokens",
        "extra_usd_per_call_after",
        "breakeven_calls",
        "breakeven_calls_extrapolated",
        "append_saving_usd",
        "saving_usd",
        "saving_percent",
    ];

    /// One CSV row per outcome (empty cells for "never").
    pub fn csv(&self) -> String {
        let opt = |o: Option<u64>| o.map(|v| v.to_string()).unwrap_or_default();
        let mut out = Self::CSV_COLUMNS.join(",");
        out.push('\n');
        for o in &self.outcomes {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.3},{},{},{},{},{},{},{},{},{},{:.3}",
                field(&o.model),
                field(&o.strategy),
                o.tool_change_rule,
                usd_number(o.baseline_usd),
                usd_number(o.changed_usd),
                usd_number(o.extra_usd),
                o.extra_percent,
                o.baseline_cache_write_tokens,
                o.changed_cache_write_tokens,
                o.extra_cache_write_tokens,
                o.write_at_change_tokens,
                usd_number(o.extra_usd_per_call_after),
                opt(o.breakeven_calls),
                opt(o.breakeven_calls_extrapolated),
                o.append_saving_usd.map(usd_number).unwrap_or_default(),
                usd_number(o.saving_usd),
                o.saving_percent,
            );
        }
        out
    }

    /// The terminal table, one verdict per row below it, then the stated skips.
    pub fn table(&self) -> String {
        if self.runs > 1 {
            return self.table_of_runs();
        }
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "baseline USD",
                "changed USD",
                "saving USD",
                "saving %",
                "extra write",
                "write at K",
                "pays back",
            ],
            &[false, false, true, true, true, true, true, true, true],
        );
        for o in &self.outcomes {
            let pays = match (o.breakeven_calls, o.breakeven_calls_extrapolated) {
                (Some(b), _) => calls_word(b),
                (None, Some(x)) => format!("~{}*", calls_word(x)),
                (None, None) => "never".into(),
            };
            t.row(vec![
                o.model.clone(),
                o.strategy.clone(),
                usd(o.baseline_usd),
                usd(o.changed_usd),
                usd(o.saving_usd),
                saving_percent(o.saving_percent),
                o.extra_cache_write_tokens.to_string(),
                o.write_at_change_tokens.to_string(),
                pays,
            ]);
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls); what if {}\n",
            crate::base::terminal::escape_inline(&self.scenario),
            self.sessions,
            self.calls_per_session,
            crate::base::terminal::escape_inline(&self.change.description)
        );
        out.push_str(&t.render());
        out.push_str("pays back: calls counted from K until the change has paid for itself; * = beyond the session, at the mean saving per call after K\n");
        for o in &self.outcomes {
            let _ = writeln!(out, "{} / {}: {}", o.model, o.strategy, o.verdict);
            if let Some(v) = o.append_saving_usd {
                let _ = writeln!(
                    out,
                    "{} / {}: the append rule makes this change {} than the default rule",
                    o.model,
                    o.strategy,
                    if v >= 0.0 {
                        format!("{} cheaper", usd(v))
                    } else {
                        format!("{} dearer", usd(-v))
                    }
                );
            }
        }
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}
