//! The charts of `sweep` (tool-block tokens and dollars against tool count, one line per model) and
//! `tools` (each tool's tokens on each model, largest first).

use super::{horizontal_bar_chart, line_chart, sanitize_file_stem, Axis, ChartFile, ChartOptions};
use super::{LineSeries, Unit};
use crate::analysis::toolreport::{SweepReport, ToolReport};
use crate::error::Result;
use crate::report::usd;

/// Renders `sweep-tokens` (tool-block tokens per call) and `sweep-usd` (its dollars per call at the
/// base input price), one line per model, against the number of synthetic tools.
///
/// Errors with [`crate::Error::Unsupported`] when the sweep has no points.
pub(crate) fn sweep_charts(rep: &SweepReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let ext = opts.extension();
    let mut models: Vec<&str> = Vec::new();
    for p in &rep.points {
        if !models.contains(&p.model.as_str()) {
            models.push(&p.model);
        }
    }
    let lines =
        |value: &dyn Fn(&crate::analysis::toolreport::SweepPoint) -> f64| -> Vec<LineSeries> {
            models
                .iter()
                .map(|m| LineSeries {
                    group: m.to_string(),
                    style: String::new(),
                    points: rep
                        .points
                        .iter()
                        .filter(|p| p.model == *m)
                        .map(|p| (p.tools as f64, value(p)))
                        .collect(),
                    band: None,
                })
                .collect()
        };
    let subtitle = format!(
        "0 to {} synthetic tools with {} parameters each, billed on every call without caching",
        rep.max_tools, rep.params
    );
    let x = Axis::new("tools in the request", Unit::Count);
    Ok(vec![
        ChartFile {
            name: format!("sweep-tokens.{ext}"),
            bytes: line_chart(
                &format!("Tool-block tokens per call by number of tools\n{subtitle}"),
                &x,
                &Axis::new("tool-block tokens per call (tokens)", Unit::Tokens),
                &lines(&|p| p.tool_block_tokens as f64),
                opts,
            )?,
        },
        ChartFile {
            name: format!("sweep-usd.{ext}"),
            bytes: line_chart(
                &format!("Tool-block cost per call by number of tools\n{subtitle}"),
                &x,
                &Axis::new("tool-block cost per call (USD)", Unit::Usd),
                &lines(&|p| p.usd_per_call),
                opts,
            )?,
        },
    ])
}

/// Renders `tools-<model>` for every model of `rep`: each tool's tokens as a horizontal bar, largest
/// first, with the provider's preamble as a bar of its own.
///
/// Errors with [`crate::Error::Unsupported`] when the report has no tools.
pub(crate) fn tools_charts(rep: &ToolReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let ext = opts.extension();
    let mut files: Vec<ChartFile> = Vec::new();
    for m in &rep.models {
        let mut bars: Vec<(String, f64)> = m
            .tools
            .iter()
            .map(|t| (t.name.clone(), t.tokens as f64))
            .collect();
        if !bars.is_empty() && m.preamble_tokens > 0 {
            bars.push(("(preamble)".into(), m.preamble_tokens as f64));
        }
        let title = format!(
            "Tokens of each tool per call on {}\n{} tools, {} tokens per call in all: {} per call without caching",
            m.model_name,
            rep.tool_count,
            crate::report::chart::style::group(m.tool_block_tokens as f64, 0),
            usd(m.usd_per_call)
        );
        let mut name = format!(
            "{}.{ext}",
            sanitize_file_stem(&format!("tools-{}", m.model))
        );
        let mut k = 2;
        while files.iter().any(|f| f.name == name) {
            name = format!(
                "{}-{k}.{ext}",
                sanitize_file_stem(&format!("tools-{}", m.model))
            );
            k += 1;
        }
        files.push(ChartFile {
            name,
            bytes: horizontal_bar_chart(
                &title,
                &Axis::new("tokens per call (tokens)", Unit::Tokens),
                &bars,
                opts,
            )?,
        });
    }
    Ok(files)
}
