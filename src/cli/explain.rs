//! `pcsim explain TRACE...`: why each call of a trace missed the cache, what it cost, and what the
//! mechanical fixes would save (docs/explain.md).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::docreport::{provenance, ReportArgs};
use super::{ChartArgs, Format};
use crate::analysis::calibrate::{fit, Sample};
use crate::analysis::explain::{explain_paths, ExplainOptions, Explanation};
use crate::model::catalog::Catalog;
use crate::report::{self, explain as render};

/// Arguments of `explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// Traces, files or folders (searched for .jsonl, .json and .har files): pcsim's JSON Lines
    /// `{time, session, url, request, response}` (what `run --trace-out` writes; docs/explain.md).
    #[arg(required = true, num_args = 1.., value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Explain every call as this catalog model (default: the model each request names).
    #[arg(long = "model", value_name = "ID")]
    pub model: Option<String>,
    /// Output format: the per-call table and the summary, one CSV row per call, or JSON.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// A pause longer than this many minutes between two calls of a session starts a new
    /// conversation; 0: never (sessions split by their id only).
    #[arg(long, value_name = "M", default_value_t = 0.0)]
    pub session_gap_minutes: f64,
    /// Show no prompt text at all (no diff excerpts) in any output.
    #[arg(long)]
    pub redact: bool,
    /// Write the tool-block sizes the trace's bills show as a calibration overlay (for
    /// --catalog), fitted as `pcsim calibrate` fits.
    #[arg(long, value_name = "FILE")]
    pub calibrate_out: Option<PathBuf>,
    #[command(flatten)]
    pub doc: ReportArgs,
}

/// Runs `pcsim explain`.
pub(crate) fn cmd_explain(catalog: &Catalog, a: ExplainArgs, out: &mut dyn Write) -> Result<()> {
    let kind = a.doc.check()?;
    if let Some(p) = &a.calibrate_out {
        report::check_output_path(p)?;
    }
    let e = explain_paths(
        catalog,
        &a.traces,
        ExplainOptions {
            session_gap_seconds: a.session_gap_minutes * 60.0,
            redact: a.redact,
            model: a.model.clone(),
        },
    )?;
    if e.calls.is_empty() {
        anyhow::bail!(crate::Error::invalid(
            a.traces[0].display().to_string(),
            "trace",
            format!(
                "no call could be explained ({} records skipped{})",
                e.skipped_count,
                e.skipped.first().map_or(String::new(), |s| format!(
                    "; first: {}: {}",
                    s.at, s.reason
                ))
            )
        ));
    }
    if let Some(p) = &a.calibrate_out {
        write_calibration(catalog, &e, p)?;
    }
    let printed = report::explain_table(&e);
    match a.format {
        Format::Table => out.write_all(printed.as_bytes())?,
        Format::Csv => out.write_all(render::explain_csv(&e).as_bytes())?,
        Format::Json => {
            out.write_all(render::explain_json(&e)?.as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    if let (Some(kind), Some(path)) = (kind, &a.doc.report) {
        let charts = report::report_charts(
            &ChartArgs::default().png_options()?,
            |_| "Tokens of each call: read from cache, not read (by cause), and new.".into(),
            |o| render::explain_chart(&e, o),
        )?;
        let ids: Vec<&str> = e.calls.iter().map(|c| c.model.as_str()).collect();
        let prices = report::document::price_sources(&report::document::models_of(catalog, &ids));
        let doc = render::explain_document(&e, charts, &printed, prices, provenance(catalog, None));
        super::docreport::write(path, kind, &doc, a.format == Format::Table)?;
    }
    Ok(())
}

/// `--calibrate-out`: the tool-block sizes of the model with the most distinct tool lists, fitted.
fn write_calibration(catalog: &Catalog, e: &Explanation, path: &std::path::Path) -> Result<()> {
    let mut best: Option<(&str, usize)> = None;
    for s in &e.tool_blocks {
        let n = e.tool_blocks.iter().filter(|o| o.model == s.model).count();
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((s.model.as_str(), n));
        }
    }
    let Some((model_id, _)) = best else {
        anyhow::bail!(crate::Error::invalid(
            "command line",
            "--calibrate-out",
            "the trace sends no tools, so its bills show no tool block to calibrate"
        ));
    };
    let model = catalog.model(model_id)?;
    let samples: Vec<Sample> = e
        .tool_blocks
        .iter()
        .filter(|s| s.model == model_id)
        .map(|s| Sample {
            label: format!("{} tools at {}", s.tools, s.at),
            tools: s.list.clone(),
            measured: s.measured_tokens,
        })
        .collect();
    let r = model.rendering();
    let f = fit(&model.family, r, &samples)?;
    eprintln_safe!(
        "calibration of family {} ({}) from the trace's billed input tokens ({} distinct tool lists):",
        model.family,
        model.id,
        samples.len()
    );
    eprint!("{}", f.table());
    report::write_atomic(path, f.overlay(r, "pcsim explain").as_bytes())?;
    if !super::quiet() {
        eprintln_safe!("wrote {} (use it with --catalog)", path.display());
    }
    Ok(())
}
