//! `pcsim whatif`: the scenario against the same scenario with a tool-list change at call K.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::docreport;
use super::outputs::Outputs;
use super::{load_scenario, ChartArgs, Format};
use crate::analysis::whatif::{self, ToolChange};
use crate::input::trim::Trim;
use crate::model::catalog::Catalog;
use crate::model::tools::load_tool_files;
use crate::report;
use crate::report::chart::whatif_charts;

/// Arguments of `whatif`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("change").required(true).multiple(true))]
#[command(mut_arg("runs", |a| a.help("Monte Carlo: simulate N runs (default: the scenario's `runs`, else 1), each with the baseline and the changed session on one timeline, and report the saving as a mean with the range of 90% of runs, the share of runs in which the change saves and pays back, and the pay-back calls over the runs")))]
pub(crate) struct WhatifArgs {
    /// Scenario file (TOML); the built-in default scenario when omitted.
    pub scenario: Option<PathBuf>,
    /// Call (1 to the session's calls) before which the tool list changes, in every session; 1
    /// compares the session with a different list from the start.
    #[arg(long, visible_alias = "at", value_name = "K")]
    pub at_call: usize,
    /// Tool file (MCP tools/list JSON or an API tool array) whose tools are added (repeatable).
    #[arg(long, value_name = "FILE", group = "change")]
    pub add_tools: Vec<PathBuf>,
    /// Tool names to remove (comma-separated or repeated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', group = "change")]
    pub remove_tools: Vec<String>,
    /// Keep only these tool names (comma-separated or repeated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', group = "change")]
    pub keep_tools: Option<Vec<String>>,
    /// Remove every tool of these servers (named by the scenario's [[tools.server]] entries;
    /// comma-separated or repeated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', group = "change")]
    pub remove_servers: Vec<String>,
    /// Trim the list (after the other changes): first-sentence, no-param-descriptions,
    /// required-only or all.
    #[arg(long, value_name = "TRIM", group = "change", value_parser = parse_trim)]
    pub trim: Option<Trim>,
    /// Replace the whole tool list with the tools of these files (repeatable).
    #[arg(long, value_name = "FILE", group = "change", conflicts_with_all = ["add_tools", "remove_tools", "keep_tools", "remove_servers"])]
    pub replace_tools: Vec<PathBuf>,
    /// Model id (repeatable); default: the scenario's models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Strategy (repeatable); default: none and cached (each model's default). Each caching strategy
    /// also gets a `/tool-changes=append` row where the model offers that rule.
    #[arg(long = "strategy", value_name = "S")]
    pub strategies: Vec<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub mc: super::flags::MonteCarloArgs,
    /// Also write whatif.json and whatif.csv and the charts into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub charts: ChartArgs,
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
}

/// A trim name for `--trim`.
pub(crate) fn parse_trim(text: &str) -> std::result::Result<Trim, String> {
    Trim::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Trim::ALL.iter().map(|t| t.as_str()).collect();
        format!("unknown trim `{text}` (one of {})", names.join(", "))
    })
}

/// Runs `pcsim whatif`.
pub(crate) fn cmd_whatif(catalog: &Catalog, a: WhatifArgs, out: &mut dyn Write) -> Result<()> {
    let outputs = Outputs::check(a.out.as_deref(), Some(&a.charts), &a.doc)?;
    let scenario = load_scenario(&a.scenario)?;
    let change = ToolChange {
        add: load_tool_files(&a.add_tools)?,
        remove: a
            .remove_tools
            .iter()
            .map(|s| s.trim().to_string())
            .collect(),
        keep: a
            .keep_tools
            .map(|k| k.iter().map(|s| s.trim().to_string()).collect()),
        replace: if a.replace_tools.is_empty() {
            None
        } else {
            Some(load_tool_files(&a.replace_tools)?)
        },
        remove_servers: a
            .remove_servers
            .iter()
            .map(|s| s.trim().to_string())
            .collect(),
        trim: a.trim,
    };
    let (changed, summary) = whatif::apply_change(&scenario, a.at_call, &change)?;
    let request = whatif::selection_at(&a.models, &a.strategies, a.at_call)
        .overrides(a.mc.runs, a.mc.seed)
        .resolve(catalog, scenario)?;
    let rep = super::progress::with_bar(
        request.scenario.runs as u64,
        2 * request.pairs.len() as u64,
        |progress| {
            whatif::whatif_request_with_progress(&request, &changed, a.at_call, summary, progress)
        },
    )?;
    super::warn_context(rep.context_warnings.iter().map(|w| w.message()));
    let json = report::to_json(&rep)?;
    let csv = rep.csv();
    super::print_report(out, a.format, &rep.table(), &csv, &json, &rep.skipped)?;
    outputs.write(
        out,
        a.format,
        &[
            ("whatif.json", json.as_bytes()),
            ("whatif.csv", csv.as_bytes()),
        ],
        Some(&|o| whatif_charts(&rep, o)),
        || {
            Ok(crate::report::whatif_document(
                catalog,
                &request.scenario,
                &rep,
                &docreport::options(&a.charts)?,
                &rep.table(),
            )?)
        },
    )
}
