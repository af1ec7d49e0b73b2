//! The chart of an `advise` report: per model, the total of every placement simulated, against no
//! caching, with the recommendation marked.

use super::hbar::{grouped_bar_chart, Bar};
use super::style::group;
use super::{Axis, ChartFile, ChartOptions, ColourKey, Unit};
use crate::analysis::advise::AdviceReport;
use crate::error::Result;

/// Renders `advise-totals`: per model (catalog-order colours), a bar for no caching and one for
/// every breakpoint placement or caching mode simulated (cheapest first), each with its saving
/// against no caching; the recommended one is marked.
///
/// Errors with [`crate::Error::Unsupported`] when the report has no model.
pub fn advise_charts(report: &AdviceReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let colours = ColourKey::new(report.advice.iter().map(|a| a.model.as_str()));
    let mut bars = Vec::new();
    for a in &report.advice {
        bars.push(Bar {
            label: format!("{} none", a.model),
            value: a.none_usd,
            group: a.model.clone(),
            note: "baseline".into(),
        });
        for c in a
            .breakpoints
            .candidates
            .iter()
            .filter(|c| c.strategy != "none")
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
                "Caching placements simulated: {}\n{sessions}{} calls; total cost of each, saving against no caching on the same model",
                report.scenario,
                group(report.calls_per_session as f64, 0)
            ),
            &Axis::new("total cost of the scenario (USD)", Unit::Usd),
            &bars,
            &colours,
            opts,
        )?,
    }])
}
