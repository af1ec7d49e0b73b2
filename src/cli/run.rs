//! `pcsim run`: simulate a scenario.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::{load_scenario, with_charts, write_report_set, ChartArgs, Format};
use pcsim::model::catalog::Catalog;
use pcsim::report;
use pcsim::report::chart::run_charts;
use pcsim::sim::montecarlo::MAX_RUNS;
use pcsim::sim::simulate::{run_scenario, run_scenario_with_progress};

/// Arguments of `run`.
#[derive(Debug, clap::Args, Default)]
pub struct RunArgs {
    /// Scenario file (TOML); the built-in default scenario when omitted.
    pub scenario: Option<PathBuf>,
    /// Model id to simulate (repeatable); default: the scenario's models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Caching strategy (repeatable): none, cached, automatic, implicit, explicit:tools+system+last, ...
    #[arg(long = "strategy", value_name = "S")]
    pub strategies: Vec<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print every call in the table format.
    #[arg(long)]
    pub calls: bool,
    /// Write results.json, calls.csv, summary.txt and the charts (cumulative-by-call.png,
    /// cumulative-by-time.png, per-call-<model>-<strategy>.png) into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub charts: ChartArgs,
    /// Monte Carlo: repeat the stochastic scenario N times (default: the scenario's `runs`, else 1)
    /// and report mean, median, p5/p95 and a 95% interval of the mean per model and strategy.
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// Seed of the random draws (default: the scenario's `seed`).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// Runs `pcsim run`.
pub fn cmd_run(catalog: &Catalog, a: RunArgs, out: &mut dyn Write) -> Result<()> {
    // Bad flags and an unwritable folder are reported before any simulation work.
    let png = a.charts.png_options()?;
    if let Some(dir) = &a.out {
        report::ensure_writable_dir(dir)?;
    }
    let mut scenario = load_scenario(&a.scenario)?;
    if let Some(n) = a.runs {
        if n == 0 || n > MAX_RUNS {
            return Err(pcsim::Error::invalid(
                "command line",
                "--runs",
                format!("value {n} must be between 1 and {MAX_RUNS}"),
            )
            .into());
        }
        scenario.runs = n as usize;
    }
    if let Some(s) = a.seed {
        scenario.seed = s;
    }
    // Pairs to simulate, for the progress bar's length (a guess when some turn out unsupported).
    let count = |flag: usize, file: usize, default: usize| match (flag, file) {
        (0, 0) => default,
        (0, n) | (n, _) => n,
    };
    let pairs = (count(
        a.models.len(),
        scenario.models.len(),
        pcsim::model::catalog::MEASURED_MODELS.len(),
    ) * count(a.strategies.len(), scenario.strategies.len(), 1)) as u64;
    let bar = super::progress::Progress::new(pairs * scenario.runs as u64, "runs");
    let rep = if scenario.runs > 1 {
        let r = run_scenario_with_progress(catalog, &scenario, &a.models, &a.strategies, &|n| {
            bar.inc(n)
        });
        bar.finish();
        r?
    } else {
        run_scenario(catalog, &scenario, &a.models, &a.strategies)?
    };
    let json = report::json::to_json(&rep)?;
    let csv = report::csv::run_calls(&rep);
    let mut summary = report::table::run_summary(&rep);
    summary.push_str(&report::table::per_session(&rep));
    if a.calls {
        summary.push_str(&report::table::run_calls(&rep));
    }
    match a.format {
        Format::Table => out.write_all(summary.as_bytes())?,
        Format::Csv => out.write_all(csv.as_bytes())?,
        Format::Json => out.write_all(json.as_bytes())?,
    }
    if let Some(dir) = &a.out {
        let charts = a.charts.render(png, |o| run_charts(catalog, &rep, o))?;
        let files = [
            ("results.json", json.as_bytes()),
            ("calls.csv", csv.as_bytes()),
            ("summary.txt", summary.as_bytes()),
        ];
        out.flush()?; // the report first, then the paths of the files written
        write_report_set(dir, &with_charts(&files, &charts), a.format)?;
    }
    Ok(())
}
