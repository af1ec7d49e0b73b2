//! The charts of a `whatif` report: the session as it is against the session with the tool-list
//! change, with call K marked, and the running saving of the change (where it rises above zero, the
//! change has paid for itself).

use super::style::group;
use super::{
    line_chart_with, Axis, ChartFile, ChartOptions, ColourKey, LineExtras, LineSeries, Unit,
};
use crate::analysis::whatif::WhatifReport;
use crate::error::Result;

/// Style of the baseline lines.
const AS_IT_IS: &str = "as it is";

/// Renders `whatif-cumulative` (per (model, strategy): the baseline and the changed session,
/// cumulative cost by call, call K marked) and `whatif-difference` (baseline minus changed,
/// cumulative: the saving so far, positive as every saving pcsim reports; above zero the change has
/// paid for itself). Colours are the models' catalog-order
/// colours, as in every other chart of a report.
///
/// Errors with [`crate::Error::Unsupported`] when nothing was simulated.
// Over 120 lines: whatif's two charts share their series, labels and axes, built once for both.
pub fn whatif_charts(report: &WhatifReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let ext = opts.extension();
    let colours = ColourKey::new(report.outcomes.iter().map(|o| o.model.as_str()));
    let one_session = report.sessions <= 1;
    // With several sessions, calls are numbered across sessions in time order and call K of each
    // session falls at a different place, so no single marker is drawn.
    let markers = if one_session {
        vec![(report.at_call as f64, short_change(report))]
    } else {
        Vec::new()
    };
    let what = if one_session {
        format!(
            "{} calls; {}",
            group(report.calls_per_session as f64, 0),
            short_change(report)
        )
    } else {
        format!(
            "{} sessions x {} calls; {} of every session",
            group(report.sessions as f64, 0),
            group(report.calls_per_session as f64, 0),
            short_change(report)
        )
    };
    let x_label = if one_session {
        "call number"
    } else {
        "call number (all sessions, in time order)"
    };
    let cumulative = |calls: &[crate::sim::billing::CallBill]| -> Vec<(f64, f64)> {
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| (i as f64 + 1.0, c.cumulative_usd))
            .collect()
    };
    // Baseline against changed for the caching rows (the no-caching rows are in the difference
    // chart): per model one solid `as it is` line (rows that share a baseline, such as the append
    // row, draw it once) and one line per strategy with the change.
    let caching: Vec<_> = report
        .outcomes
        .iter()
        .filter(|o| o.strategy != "none")
        .collect();
    let shown: Vec<_> = if caching.is_empty() {
        report.outcomes.iter().collect()
    } else {
        caching
    };
    let mut both: Vec<LineSeries> = Vec::new();
    for o in &shown {
        let baseline = LineSeries {
            group: o.model.clone(),
            style: AS_IT_IS.to_string(),
            points: cumulative(&o.baseline_calls),
            band: None,
        };
        if !both.contains(&baseline) {
            both.push(baseline);
        }
        both.push(LineSeries {
            group: o.model.clone(),
            style: format!("with the change, {}", o.strategy_requested),
            points: cumulative(&o.changed_calls),
            band: None,
        });
    }
    let mut diff = Vec::new();
    for o in &report.outcomes {
        let n = o.baseline_calls.len().min(o.changed_calls.len());
        diff.push(LineSeries {
            group: o.model.clone(),
            style: o.strategy_requested.clone(),
            points: (0..n)
                .map(|i| {
                    (
                        i as f64 + 1.0,
                        o.baseline_calls[i].cumulative_usd - o.changed_calls[i].cumulative_usd,
                    )
                })
                .collect(),
            band: None,
        });
    }
    if both.is_empty() {
        return Err(super::nothing_to_draw(
            &report.scenario,
            "no (model, strategy) was simulated",
        ));
    }
    let change = &what;
    let cumulative_extras = LineExtras {
        colours: colours.clone(),
        markers: markers.clone(),
        log_y: opts.log_scale,
        zero_line: false,
        solid: vec![AS_IT_IS.to_string()],
    };
    // A difference changes sign, so it is never drawn on a log scale.
    let diff_extras = LineExtras {
        colours,
        markers,
        log_y: false,
        zero_line: true,
        solid: Vec::new(),
    };
    let y = Axis::new(
        if opts.log_scale {
            "cumulative cost (USD, log scale)"
        } else {
            "cumulative cost (USD)"
        },
        Unit::Usd,
    );
    Ok(vec![
        ChartFile {
            name: format!("whatif-cumulative.{ext}"),
            bytes: line_chart_with(
                &format!(
                    "What if the tool list changes: {}\n{change}; cumulative cost as it is and with the change under each caching strategy",
                    report.scenario
                ),
                &Axis::new(x_label, Unit::Count),
                &y,
                &both,
                &cumulative_extras,
                opts,
            )?,
        },
        ChartFile {
            name: format!("whatif-difference.{ext}"),
            bytes: line_chart_with(
                &format!(
                    "What the change has saved so far: {}\n{change}; as it is minus changed (above zero: the change has paid for itself)",
                    report.scenario
                ),
                &Axis::new(x_label, Unit::Count),
                &Axis::new("cumulative saving (USD)", Unit::Usd),
                &diff,
                &diff_extras,
                opts,
            )?,
        },
    ])
}

/// `before call 10: 26 tools removed (52 -> 26 tools)`: the change without the list of names (the
/// report's tables have them).
fn short_change(report: &WhatifReport) -> String {
    let c = &report.change;
    let count = |n: usize| {
        if n == 1 {
            "1 tool".to_string()
        } else {
            format!("{n} tools")
        }
    };
    let mut parts = Vec::new();
    if !c.removed.is_empty() {
        parts.push(format!("{} removed", count(c.removed.len())));
    }
    if !c.added.is_empty() {
        parts.push(format!("{} added or changed", count(c.added.len())));
    }
    if parts.is_empty() {
        parts.push("no tool changed".into());
    }
    format!(
        "before call {}: {} ({} -> {})",
        report.at_call,
        parts.join(", "),
        c.tools_before,
        count(c.tools_after)
    )
}
