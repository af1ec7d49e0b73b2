//! The chart of an `advise` report: per model, the total of every placement simulated, against no
//! caching, with the recommendation marked.

use super::hbar::{grouped_bar_chart, Bar};
use super::style::group;
use super::{Axis, ChartFile, ChartOptions, ColourKey, Unit};
use crate::analysis::advise::AdviceReport;
use crate::error::Result;

/// About how many bars the chart holds (at 1200x750; more fit at the default size): the
/// placements shown per model are cut to share them.
const ROWS: usize = 20;

/// Renders `advise-totals`: per model (catalog-order colours), a bar for no caching and one for
/// the cheapest breakpoint placements or caching modes simulated (cheapest first; as many per
/// model as let every model fit, the subtitle says how many when some are left out), each with its
/// saving against no caching; the recommended one is marked.
///
/// Errors with [`crate::Error::Unsupported`] when the report has no model.
pub fn advise_charts(report: &AdviceReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let colours = ColourKey::new(report.advice.iter().map(|a| a.model.as_str()));
    // Every model gets its rows: the cheapest placements of each, so that about ROWS bars fit
    // (a model with 20 placements would otherwise push the other models off the chart).
    let per_model = (ROWS / report.advice.len().max(1)).saturating_sub(1).max(2);
    let mut cut = false;
    let mut bars = Vec::new();
    for a in &report.advice {
        bars.push(Bar {
            label: format!("{} none", a.model),
            value: a.none_usd,
            group: a.model.clone(),
            note: "baseline".into(),
        });
        let caching: Vec<_> = a
            .breakpoints
            .candidates
            .iter()
            .filter(|c| c.strategy != "none")
            .collect();
        cut |= caching.len() > per_model;
        for c in caching
            .iter()
            .enumerate()
            .filter(|(i, c)| *i < per_model || c.strategy == a.recommended.strategy)
            .map(|(_, c)| c)
        {
            let mark = if c.strategy == a.recommended.strategy {
                "  recommended"
            } else {
                ""
            };
            bars.push(Bar {
                label: format!("{} {}", a.model, c.strategy),
                value: c.total_usd,
                group: a.model.clone(),
                note: format!("saves {:.1}%{mark}", c.saving_percent),
            });
        }
        if a.recommended.strategy != "none"
            && !a
                .breakpoints
                .candidates
                .iter()
                .any(|c| c.strategy == a.recommended.strategy)
        {
            // A TTL tier can beat every placement at the default tier.
            bars.push(Bar {
                label: format!("{} {}", a.model, a.recommended.strategy),
                value: a.recommended.total_usd,
                group: a.model.clone(),
                note: format!("saves {:.1}%  recommended", a.recommended.saving_percent),
            });
        }
    }
    let sessions = if report.sessions > 1 {
        format!("{} sessions x ", group(report.sessions as f64, 0))
    } else {
        String::new()
    };
    Ok(vec![ChartFile {
        name: format!("advise-totals.{}", opts.extension()),
        bytes: grouped_bar_chart(
            &format!(
                "Caching placements simulated: {}\n{sessions}{} calls; total cost of {}, saving against no caching on the same model",
                report.scenario,
                group(report.calls_per_session as f64, 0),
                if cut {
                    format!("the {per_model} cheapest of each model")
                } else {
                    "each".to_string()
                }
            ),
            &Axis::new("total cost of the scenario (USD)", Unit::Usd),
            &bars,
            &colours,
            opts,
        )?,
    }])
}
