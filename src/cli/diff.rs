//! `pcsim diff A B`: two scenarios (TOML) or two tool configurations (tool-list JSON) side by side.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::docreport;
use super::outputs::Outputs;
use super::Format;
use crate::analysis::diff::{diff_scenarios, diff_tools};
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::model::tools::load_tool_files;
use crate::report;

/// Arguments of `diff`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("runs", |a| a.help("Monte Carlo runs of each scenario (default: each scenario's `runs`)")))]
#[command(mut_arg("seed", |a| a.help("Seed of both scenarios' draws (default: each scenario's `seed`)")))]
pub(crate) struct DiffArgs {
    /// A: a scenario (.toml) or a tool list (MCP tools/list JSON or an API tool array).
    pub a: PathBuf,
    /// B: of the same kind as A.
    pub b: PathBuf,
    /// Model id (repeatable); default: A's models (scenarios) or the six measured (tool lists).
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Strategy (repeatable; scenarios only); default: A's strategies.
    #[arg(long = "strategy", value_name = "S")]
    pub strategies: Vec<String>,
    #[command(flatten)]
    pub mc: super::flags::MonteCarloArgs,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write diff.json and diff.csv into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
}

fn is_scenario(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Runs `pcsim diff`.
pub(crate) fn cmd_diff(catalog: &Catalog, a: DiffArgs, out: &mut dyn Write) -> Result<()> {
    let outputs = Outputs::check(a.out.as_deref(), None, &a.doc)?;
    let mut scenario_a = None;
    let rep = match (is_scenario(&a.a), is_scenario(&a.b)) {
        (true, true) => {
            let mut sa = Scenario::load(&a.a)?;
            let mut sb = Scenario::load(&a.b)?;
            for s in [&mut sa, &mut sb] {
                if let Some(n) = a.mc.runs {
                    s.set_runs(n, "command line", "--runs")?;
                }
                if let Some(seed) = a.mc.seed {
                    s.seed = seed;
                }
            }
            let rep = diff_scenarios(catalog, &sa, &sb, &a.models, &a.strategies)?;
            scenario_a = Some(sa);
            rep
        }
        (false, false) => {
            if !a.strategies.is_empty() || a.mc.runs.is_some() || a.mc.seed.is_some() {
                return Err(crate::Error::invalid(
                    "command line",
                    "--strategy/--runs/--seed",
                    "tool lists are priced per call, not simulated: these flags need two scenarios",
                )
                .into());
            }
            let ta = load_tool_files(std::slice::from_ref(&a.a))?;
            let tb = load_tool_files(std::slice::from_ref(&a.b))?;
            diff_tools(
                catalog,
                (&a.a.display().to_string(), &ta),
                (&a.b.display().to_string(), &tb),
                &a.models,
            )?
        }
        _ => {
            return Err(crate::Error::invalid(
                "command line",
                "B",
                format!(
                    "{} and {} are of different kinds: give two scenarios (.toml) or two tool lists (.json)",
                    a.a.display(),
                    a.b.display()
                ),
            )
            .into())
        }
    };
    super::warn_context(rep.warnings());
    let json = report::to_json(&rep)?;
    let csv = rep.csv();
    super::print_report(out, a.format, &rep.table(), &csv, &json, &[])?;
    outputs.write(
        out,
        a.format,
        &[("diff.json", json.as_bytes()), ("diff.csv", csv.as_bytes())],
        None,
        || {
            Ok(crate::report::diff_document(
                catalog,
                scenario_a.as_ref(),
                &rep,
                &rep.table(),
                &docreport::command_line(),
            ))
        },
    )
}
