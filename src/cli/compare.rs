//! `pcsim compare`: one session under several caching strategies, side by side.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::docreport;
use super::outputs::Outputs;
use super::{load_scenario, ChartArgs, Format};
use crate::analysis::compare;
use crate::model::catalog::Catalog;
use crate::report;
use crate::report::chart::compare_charts;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("runs", |a| a.help("Monte Carlo: simulate N runs (default: the scenario's `runs`, else 1) and report each strategy's total and saving as a mean with the range of 90% of runs, and the share of runs in which it saves and is the cheapest")))]
pub(crate) struct CompareArgs {
    /// Scenario file (TOML); the built-in default scenario when omitted.
    pub scenario: Option<PathBuf>,
    /// Strategy to compare (repeatable); default: none, explicit:tools, explicit:tools+system,
    /// explicit:tools+system+last, explicit:tools@1h+system+last, explicit:tools@1h+system@1h+last@1h,
    /// automatic, implicit. `none` is always included as the baseline.
    #[arg(long = "strategy", value_name = "S")]
    pub strategies: Vec<String>,
    /// Model id (repeatable); default: the scenario's models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write compare.json, compare.csv and the charts cumulative-by-call.png and
    /// cumulative-by-time.png into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub charts: ChartArgs,
    #[command(flatten)]
    pub mc: super::flags::MonteCarloArgs,
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
}

/// Runs `pcsim compare`.
pub(crate) fn cmd_compare(catalog: &Catalog, a: CompareArgs, out: &mut dyn Write) -> Result<()> {
    let outputs = Outputs::check(a.out.as_deref(), Some(&a.charts), &a.doc)?;
    let scenario = load_scenario(&a.scenario)?;
    let request = compare::selection(&a.models, &a.strategies)
        .overrides(a.mc.runs, a.mc.seed)
        .resolve(catalog, scenario)?;
    let rep = super::progress::with_runs_bar(&request, |progress| {
        compare::compare_request_with_progress(&request, progress)
    })?;
    super::warn_context(rep.context_warnings.iter().map(|w| w.message()));
    let json = report::to_json(&rep)?;
    let csv = rep.csv();
    super::print_report(out, a.format, &rep.table(), &csv, &json, &rep.skipped)?;
    outputs.write(
        out,
        a.format,
        &[
            ("compare.json", json.as_bytes()),
            ("compare.csv", csv.as_bytes()),
        ],
        Some(&|o| compare_charts(&rep, o)),
        || {
            Ok(crate::report::compare_document(
                catalog,
                &request.scenario,
                &rep,
                &docreport::options(&a.charts)?,
                &rep.table(),
            )?)
        },
    )
}
