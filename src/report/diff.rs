//! `diff`'s report as text: the terminal table and the CSV of two scenarios or two tool lists.

use crate::analysis::diff::*;
use crate::base::text::{field, saving_percent, usd, usd_number, TextTable};
use std::fmt::Write as _;

impl DiffReport {
    /// The terminal table.
    pub(crate) fn table(&self) -> String {
        let mut out = String::new();
        match self {
            DiffReport::Tools {
                a,
                b,
                tools,
                models,
                ..
            } => {
                let _ = writeln!(out, "A: {a}\nB: {b}\ntools: {}", tools.line());
                let mut t = TextTable::new(
                    &[
                        "model",
                        "tokens A",
                        "tokens B",
                        "USD/call A",
                        "USD/call B",
                        "saving/call",
                        "saving %",
                    ],
                    &[false, true, true, true, true, true, true],
                );
                for m in models {
                    t.row(vec![
                        m.model.clone(),
                        m.tokens_a.to_string(),
                        m.tokens_b.to_string(),
                        usd(m.usd_per_call_a),
                        usd(m.usd_per_call_b),
                        usd(m.saving_usd_per_call),
                        saving_percent(m.saving_percent),
                    ]);
                }
                out.push_str(&t.render());
                out.push_str("saving: what B saves per call against A at the base input rate (negative: B costs more)\n");
            }
            DiffReport::Scenarios {
                a,
                b,
                tools,
                runs,
                rows,
                skipped,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "A: {a}\nB: {b}\ntools at call 1: {}\n{}",
                    tools.line(),
                    if *runs > 1 {
                        format!("totals are means over {runs} runs; [p5, p95] beside them")
                    } else {
                        "totals of one run of each scenario's seed".to_string()
                    }
                );
                let mut t = TextTable::new(
                    &[
                        "model",
                        "strategy",
                        "A USD",
                        "B USD",
                        "saving USD",
                        "saving %",
                    ],
                    &[false, false, true, true, true, true],
                );
                let cell = |x: f64, r: &Option<[f64; 2]>| match r {
                    Some([lo, hi]) => format!("{} [{}, {}]", usd(x), usd(*lo), usd(*hi)),
                    None => usd(x),
                };
                for r in rows {
                    t.row(vec![
                        r.model.clone(),
                        r.strategy.clone(),
                        cell(r.total_usd_a, &r.range_usd_a),
                        cell(r.total_usd_b, &r.range_usd_b),
                        usd(r.saving_usd),
                        saving_percent(r.saving_percent),
                    ]);
                }
                out.push_str(&t.render());
                out.push_str("saving: what B saves against A (negative: B costs more)\n");
                for line in crate::report::skip_lines(skipped) {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        out
    }

    /// One CSV row per model (tools) or per (model, strategy) (scenarios).
    pub(crate) fn csv(&self) -> String {
        let mut out = String::new();
        match self {
            DiffReport::Tools { models, .. } => {
                out.push_str("model,tokens_a,tokens_b,usd_per_call_a,usd_per_call_b,saving_usd_per_call,saving_percent\n");
                for m in models {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{},{:.3}",
                        field(&m.model),
                        m.tokens_a,
                        m.tokens_b,
                        usd_number(m.usd_per_call_a),
                        usd_number(m.usd_per_call_b),
                        usd_number(m.saving_usd_per_call),
                        m.saving_percent
                    );
                }
            }
            DiffReport::Scenarios { rows, .. } => {
                out.push_str("model,strategy,total_usd_a,total_usd_b,saving_usd,saving_percent\n");
                for r in rows {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{:.3}",
                        field(&r.model),
                        field(&r.strategy),
                        usd_number(r.total_usd_a),
                        usd_number(r.total_usd_b),
                        usd_number(r.saving_usd),
                        r.saving_percent
                    );
                }
            }
        }
        out
    }
}

impl ToolListDiff {
    fn line(&self) -> String {
        let few = |v: &[String]| {
            let mut s: Vec<&str> = v.iter().take(5).map(String::as_str).collect();
            if v.len() > 5 {
                s.push("...");
            }
            s.join(", ")
        };
        let mut parts = vec![format!("{} -> {} tools", self.tools_a, self.tools_b)];
        for (what, v) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !v.is_empty() {
                parts.push(format!("{} {what} ({})", v.len(), few(v)));
            }
        }
        parts.join("; ")
    }
}
