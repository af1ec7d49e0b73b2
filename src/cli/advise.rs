//! `pcsim advise`: per model, breakpoints, TTL and tools to drop, each with its simulated saving.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::docreport;
use super::outputs::Outputs;
use super::{load_scenario, ChartArgs, Format, TextFormat};
use crate::analysis::advise;
use crate::model::catalog::Catalog;
use crate::report;
use crate::report::chart::advise_charts;

/// Arguments of `advise`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("runs", |a| a.help("Monte Carlo: simulate N runs (default: the scenario's `runs`, else 1) of every candidate on one timeline per run; candidates are ranked by their mean, with the share of runs in which each is the cheapest")))]
pub(crate) struct AdviseArgs {
    /// Scenario file (TOML); the built-in default scenario when omitted.
    pub scenario: Option<PathBuf>,
    /// Model id (repeatable); default: the scenario's models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Output format on standard output (table or json; the advice is nested, so no CSV).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    #[command(flatten)]
    pub mc: super::flags::MonteCarloArgs,
    /// Also write advice.json and advice.txt and the charts into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub charts: ChartArgs,
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
}

/// Runs `pcsim advise`.
pub(crate) fn cmd_advise(catalog: &Catalog, a: AdviseArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    let outputs = Outputs::check(a.out.as_deref(), Some(&a.charts), &a.doc)?;
    let scenario = load_scenario(&a.scenario)?;
    let request = advise::selection(&a.models)
        .overrides(a.mc.runs, a.mc.seed)
        .resolve(catalog, scenario)?;
    let per_run = advise::work_per_run(&request)?;
    let rep = super::progress::with_bar(request.scenario.runs as u64, per_run, |progress| {
        advise::advise_request_with_progress(&request, progress)
    })?;
    super::warn_context(rep.context_warnings.iter().map(|w| w.message()));
    let json = report::to_json(&rep)?;
    let text = rep.table();
    match format {
        Format::Json => out.write_all(json.as_bytes())?,
        _ => out.write_all(text.as_bytes())?,
    }
    outputs.write(
        out,
        format,
        &[
            ("advice.json", json.as_bytes()),
            ("advice.txt", text.as_bytes()),
        ],
        Some(&|o| advise_charts(&rep, o)),
        || {
            Ok(crate::report::advise_document(
                catalog,
                &request.scenario,
                &rep,
                &docreport::options(&a.charts)?,
                &text,
            )?)
        },
    )
}
