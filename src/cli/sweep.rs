//! `pcsim sweep`: tool-block tokens and dollars for 0..N synthetic tools of identical shape.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::{with_charts, write_report_set, ChartArgs, Format};
use crate::analysis::toolreport::sweep;
use crate::model::catalog::Catalog;
use crate::report;
use crate::report::chart::sweep_charts;

use crate::input::scenario::MAX_PARAMS_PER_TOOL;

/// Upper bound on `sweep --max-tools`. A sweep counts every point's tool block on every model
/// (each tool's text about three times per model, see `prefix_blocks`), so its time grows with
/// tools x parameters x models; at these limits a sweep of the six measured models takes a few
/// seconds on two shared cores (scripts/limits_at_max.sh; README "Bounded work").
pub(crate) const SWEEP_MAX_TOOLS: usize = 1_000;
/// Upper bound on `sweep --max-tools` x `--params`.
pub(crate) const SWEEP_MAX_PARAMS: usize = 5_000;

/// Arguments of `sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// Largest number of tools.
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub max_tools: usize,
    /// String parameters per synthetic tool.
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub params: usize,
    /// Model id (repeatable); default: the six measured models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write sweep.csv, sweep.json and the charts sweep-tokens.png and sweep-usd.png into this
    /// folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub charts: ChartArgs,
}

/// Runs `pcsim sweep`.
pub(crate) fn cmd_sweep(catalog: &Catalog, a: SweepArgs, out: &mut dyn Write) -> Result<()> {
    // The limits of a scenario's synthetic tools, checked before a tool is generated: the work and
    // the memory grow with tools x parameters (x models).
    if a.max_tools > SWEEP_MAX_TOOLS {
        bail!(crate::Error::invalid(
            "command line",
            "--max-tools",
            format!(
                "value {} exceeds the limit of {SWEEP_MAX_TOOLS} tools of a sweep",
                a.max_tools
            ),
        ));
    }
    if a.params > MAX_PARAMS_PER_TOOL {
        bail!(crate::Error::invalid(
            "command line",
            "--params",
            format!(
                "value {} exceeds the limit of {MAX_PARAMS_PER_TOOL} parameters per tool",
                a.params
            ),
        ));
    }
    if a.max_tools.saturating_mul(a.params) > SWEEP_MAX_PARAMS {
        bail!(crate::Error::invalid(
            "command line",
            "--max-tools",
            format!(
                "{} tools x {} parameters exceed the limit of {SWEEP_MAX_PARAMS} parameters of a sweep",
                a.max_tools, a.params
            ),
        ));
    }
    let png = a.charts.png_options()?;
    if let Some(dir) = &a.out {
        report::ensure_writable_dir(dir)?;
    }
    let models = catalog.select(&a.models)?;
    let rep = sweep(&models, a.max_tools, a.params);
    // Per model, the smallest tool count whose block alone exceeds its context window.
    super::warn_context(super::tool_block_warnings(models.iter().copied(), |m| {
        let window = m.context_window.as_ref()?.value;
        let p = rep
            .points
            .iter()
            .find(|p| p.model == m.id && p.tool_block_tokens > window)?;
        Some((
            p.tool_block_tokens,
            format!("from {} tools on, the tool block alone", p.tools),
        ))
    }));
    let json = report::to_json(&rep)?;
    let csv = rep.csv();
    super::print_report(out, a.format, &rep.table(), &csv, &json, &[])?;
    if let Some(dir) = &a.out {
        let charts = a.charts.render(png, |o| sweep_charts(&rep, o))?;
        out.flush()?; // the report first, then the paths of the files written
        let files = [
            ("sweep.csv", csv.as_bytes()),
            ("sweep.json", json.as_bytes()),
        ];
        write_report_set(dir, &with_charts(&files, &charts), a.format)?;
    }
    Ok(())
}
