//! `pcsim fit` as text: the fitted history's terminal table and the check of its scenario in one line.

use crate::analysis::fit::{FitCheck, HistoryFit};

use super::usd;
use crate::analysis::fit::*;
use crate::analysis::fitdist::{FittedQuantity, ParamEstimate};
use crate::base::text::TextTable;
use std::fmt::Write as _;

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

impl HistoryFit {
    /// The fit as a text report: what was read, then one row per parameter with its interval and
    /// the goodness of fit of its distribution.
    // Over 120 lines: the fit report's text in the order it prints, one table row per fitted field;
    // a list of rows, not logic to split.
    pub(crate) fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} calls, {} sessions on {} ({} to {} calls each)",
            self.origin,
            self.calls_logged,
            self.calls.sessions,
            self.sessions_on(),
            self.calls.min,
            self.calls.max
        );
        let _ = writeln!(
            s,
            "stable prefix: {} tokens ({}) = tool block {} + system prompt {}\n",
            self.prefix_tokens,
            match self.prefix_source {
                PrefixSource::Given => "given",
                PrefixSource::InferredFromCacheReads => "inferred from cache reads",
                PrefixSource::Unknown => "not inferable: the tool block",
            },
            self.tool_block_tokens,
            self.system_tokens
        );
        let pct = format!("{}% interval", self.confidence * 100.0);
        let mut t = TextTable::new(
            &[
                "parameter",
                "distribution",
                "n",
                "param",
                "estimate",
                &pct,
                "KS D",
                "KS p",
            ],
            &[false, false, true, false, true, true, true, true],
        );
        let num = |x: f64| {
            if x.abs() >= 100.0 {
                format!("{x:.1}")
            } else {
                format!("{x:.4}")
            }
        };
        let row = |t: &mut TextTable,
                   name: &str,
                   dist: &str,
                   n: String,
                   p: &ParamEstimate,
                   ks: (String, String)| {
            t.row(vec![
                name.to_string(),
                dist.to_string(),
                n,
                p.name.clone(),
                num(p.estimate),
                format!("[{}, {}]", num(p.low), num(p.high)),
                ks.0,
                ks.1,
            ]);
        };
        let ks = |q: &FittedQuantity| match (q.ks_statistic, q.ks_p_value) {
            (Some(d), Some(p)) => (format!("{d:.3}"), format!("{p:.3}")),
            _ => ("-".into(), "-".into()),
        };
        row(
            &mut t,
            "calls",
            if self.calls.min == self.calls.max {
                "fixed"
            } else {
                "mean"
            },
            self.calls.sessions.to_string(),
            &self.calls.mean,
            ("-".into(), "-".into()),
        );
        for f in &self.fields {
            let name = f.field.trim_start_matches("session.");
            match &f.fit {
                Some(q) => {
                    for (i, p) in q.params.iter().enumerate() {
                        let (nm, d, k) = if i == 0 {
                            (name, q.family, ks(q))
                        } else {
                            ("", "", (String::new(), String::new()))
                        };
                        let n = if i == 0 {
                            q.n.to_string()
                        } else {
                            String::new()
                        };
                        row(&mut t, nm, d, n, p, k);
                    }
                }
                None => t.row(vec![
                    name.to_string(),
                    "no data".into(),
                    "0".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]),
            }
        }
        if let (Some(p), Some(g)) = (&self.arrivals.per_hour, &self.arrivals.gaps) {
            row(&mut t, "arrivals", "poisson", g.n.to_string(), p, ks(g));
        }
        s.push_str(&t.render());
        let _ = writeln!(
            s,
            "\nKS: Kolmogorov-Smirnov distance of the sample to the chosen distribution, with its p-value (optimistic: the parameters come from the same sample). Families by BIC among {}.",
            crate::analysis::fitdist::FAMILIES.join(", ")
        );
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
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
