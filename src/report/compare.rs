//! `compare`'s report as text: the CSV (one row per model and strategy) and the terminal table
//! (one run, or the means of `--runs N`).

use std::fmt::Write as _;

use crate::analysis::compare::CompareReport;
use crate::analysis::percent;
use crate::base::text::{field, saving_percent, usd, usd_number, TextTable};
use crate::report::share_text;
use crate::report::skip_lines;

impl CompareReport {
    /// Column names of [`CompareReport::csv`].
    pub(crate) const CSV_COLUMNS: [&'static str; 10] = [
        "model",
        "strategy",
        "strategy_requested",
        "total_usd",
        "saving_usd",
        "saving_percent",
        "cache_write_tokens",
        "cache_read_tokens",
        "uncached_tokens",
        "prompt_tokens",
    ];

    /// One CSV row per (model, strategy).
    pub fn csv(&self) -> String {
        let mut out = Self::CSV_COLUMNS.join(",");
        out.push('\n');
        for c in &self.comparisons {
            for o in &c.strategies {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{:.3},{},{},{},{}",
                    field(&c.model),
                    field(&o.strategy),
                    field(&o.strategy_requested),
                    usd_number(o.total_usd),
                    usd_number(o.saving_usd),
                    o.saving_percent,
                    o.cache_write_tokens,
                    o.cache_read_tokens,
                    o.uncached_tokens,
                    o.prompt_tokens
                );
            }
        }
        out
    }

    /// The terminal table, then the stated skips.
    pub fn table(&self) -> String {
        if self.runs > 1 {
            return self.table_of_runs();
        }
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "total USD",
                "saving USD",
                "saving %",
                "cache write",
                "cache read",
                "hit %",
            ],
            &[false, false, true, true, true, true, true, true],
        );
        for c in &self.comparisons {
            for o in &c.strategies {
                let mark = if o.strategy == c.cheapest && o.strategy != "none" {
                    " *"
                } else {
                    ""
                };
                t.row(vec![
                    c.model.clone(),
                    format!("{}{mark}", o.strategy),
                    usd(o.total_usd),
                    usd(o.saving_usd),
                    saving_percent(o.saving_percent),
                    o.cache_write_tokens.to_string(),
                    o.cache_read_tokens.to_string(),
                    format!("{:.1}", o.cache_hit_ratio * 100.0),
                ]);
            }
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls, seed {}); * = cheapest per model\n",
            crate::base::terminal::escape_inline(&self.scenario),
            self.sessions,
            self.calls_per_session,
            self.seed
        );
        out.push_str(&t.render());
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    /// The table of `--runs N`: means, the range of 90% of runs, and how often each verdict holds.
    fn table_of_runs(&self) -> String {
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "total USD (mean)",
                "saving USD (mean)",
                "saving, 90% of runs",
                "saving %",
                "saves in",
                "cheapest in",
            ],
            &[false, false, true, true, true, true, true, true],
        );
        for c in &self.comparisons {
            let none = c
                .strategies
                .iter()
                .find(|o| o.strategy == "none")
                .and_then(|o| o.runs.as_ref())
                .map_or(c.none_usd, |r| r.total_usd.mean);
            for o in &c.strategies {
                let Some(r) = &o.runs else { continue };
                let mark = if o.strategy == c.cheapest && o.strategy != "none" {
                    " *"
                } else {
                    ""
                };
                let baseline = o.strategy == "none";
                t.row(vec![
                    c.model.clone(),
                    format!("{}{mark}", o.strategy),
                    usd(r.total_usd.mean),
                    usd(r.saving_usd.mean),
                    if baseline {
                        String::new()
                    } else {
                        format!("[{}, {}]", usd(r.saving_usd.p5), usd(r.saving_usd.p95))
                    },
                    saving_percent(percent(r.saving_usd.mean, none)),
                    if baseline {
                        String::new()
                    } else {
                        share_text(r.share_saving)
                    },
                    share_text(r.share_cheapest),
                ]);
            }
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls), {} runs from seed {}: means over the runs, each run's saving against its own no-caching total; * = cheapest mean per model\n",
            self.scenario, self.sessions, self.calls_per_session, self.runs, self.seed
        );
        out.push_str(&t.render());
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}
