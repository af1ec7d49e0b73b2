//! `pcsim run`: simulate a scenario.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::docreport;
use super::outputs::Outputs;
use super::{load_scenario, ChartArgs, Format};
use crate::model::catalog::Catalog;
use crate::report;
use crate::report::chart::run_charts;
use crate::sim::request::Selection;
use crate::sim::simulate::run_request;

/// Arguments of `run`.
#[derive(Debug, clap::Args, Default)]
#[command(mut_arg("runs", |a| a.help("Monte Carlo: repeat the stochastic scenario N times (default: the scenario's `runs`, else 1) and report mean, median, p5/p95 and a 95% interval of the mean per model and strategy")))]
pub(crate) struct RunArgs {
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
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
    #[command(flatten)]
    pub mc: super::flags::MonteCarloArgs,
    /// Also write the calls of the first run as a usage log (JSON Lines: `sent_at`, `session_id`,
    /// `model`, Anthropic-style `usage`) that `replay` and `fit` read; needs exactly one model and
    /// one strategy.
    #[arg(long, value_name = "FILE")]
    pub usage_log: Option<PathBuf>,
    /// Also write the calls of the first run as a trace (JSON Lines `{time, session, url, request,
    /// response}`: the request bodies built from the scenario, the bill as the response's usage)
    /// that `explain` reads; needs exactly one model and one strategy (docs/explain.md).
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,
    /// With --trace-out: a cause injected into the trace (repeatable): `timestamp` (the system
    /// prompt starts with the call's time), `edit@K` (the first user message edited before call
    /// K), `parts@K=N` (the turn before call K sent as N content parts), `tool-calls=N` (each
    /// answer also calls one of the first N tools of the list, in turn).
    #[arg(long, value_name = "CAUSE", requires = "trace_out")]
    pub trace_inject: Vec<String>,
}

/// Runs `pcsim run`.
pub(crate) fn cmd_run(catalog: &Catalog, a: RunArgs, out: &mut dyn Write) -> Result<()> {
    // Bad flags and an unwritable folder are reported before any simulation work.
    let outputs = Outputs::check(a.out.as_deref(), Some(&a.charts), &a.doc)?;
    if let Some(path) = &a.usage_log {
        report::check_output_path(path)?;
    }
    if let Some(path) = &a.trace_out {
        report::check_output_path(path)?;
    }
    let injections = a
        .trace_inject
        .iter()
        .map(|s| crate::analysis::explain::Injection::parse(s))
        .collect::<crate::Result<Vec<_>>>()?;
    let request = Selection::new(&a.models, &a.strategies)
        .cached_as_documented_default(a.trace_out.is_some())
        .overrides(a.mc.runs, a.mc.seed)
        .resolve(catalog, load_scenario(&a.scenario)?)?;
    // Counted in (run, pair) simulations, as the Monte Carlo reports them (not as runs).
    let rep = super::progress::with_runs_bar(&request, |progress| run_request(&request, progress))?;
    if let Some(path) = &a.usage_log {
        let [only] = rep.results.as_slice() else {
            anyhow::bail!(crate::Error::invalid(
                "command line",
                "--usage-log",
                format!(
                    "a usage log holds one model's calls under one strategy; this run simulates {} (model, strategy) pairs: give one --model and one --strategy",
                    rep.results.len()
                )
            ));
        };
        report::write_atomic(path, report::usagelog::usage_log_jsonl(only).as_bytes())?;
        if !super::quiet() {
            eprintln_safe!("wrote {}", path.display());
        }
    }
    if let Some(path) = &a.trace_out {
        let [only] = rep.results.as_slice() else {
            anyhow::bail!(crate::Error::invalid(
                "command line",
                "--trace-out",
                format!(
                    "a trace holds one model's calls under one strategy; this run simulates {} (model, strategy) pairs: give one --model and one --strategy",
                    rep.results.len()
                )
            ));
        };
        let model = catalog.model(&only.model)?;
        let lines =
            crate::analysis::explain::trace_records(&request.scenario, model, only, &injections)?;
        report::write_atomic(path, report::explain::trace_jsonl(&lines).as_bytes())?;
        if !super::quiet() {
            eprintln_safe!("wrote {}", path.display());
        }
    }
    super::warn_context(rep.context_warnings.iter().map(|w| w.message()));
    // Only what is printed or written is built: at the bills limit the JSON of every call is
    // about 900 MB as one string, so on standard output alone it is streamed instead, and the CSV
    // and the summary are made only for the format or the files that show them (issue 29).
    let files = a.out.is_some();
    let json = if files {
        Some(report::to_json(&rep)?)
    } else {
        None
    };
    let csv = (files || a.format == Format::Csv).then(|| report::run_csv(&rep));
    let summary = (files || a.format == Format::Table).then(|| report::run_table(&rep, a.calls));
    if request.scenario.runs > 1 && (a.format == Format::Csv || a.out.is_some()) {
        // The per-call CSV is one run's bills; the other runs are in the distributions only.
        eprintln_safe!(
            "note: the per-call CSV holds the first of {} runs (the one from the scenario's seed); every run's total is in the Monte Carlo figures of the summary and the JSON",
            request.scenario.runs
        );
    }
    match (a.format, &json) {
        (Format::Json, None) => report::write_json(out, &rep)?,
        _ => super::print_report(
            out,
            a.format,
            summary.as_deref().unwrap_or_default(),
            csv.as_deref().unwrap_or_default(),
            json.as_deref().unwrap_or_default(),
            &rep.skipped,
        )?,
    }
    // The set's files exist whenever `--out` is given (`files`); without it they are not written.
    outputs.write(
        out,
        a.format,
        &[
            ("results.json", built(&json)),
            ("calls.csv", built(&csv)),
            ("summary.txt", built(&summary)),
        ],
        Some(&|o| run_charts(&rep, o)),
        || {
            let summary = match &summary {
                Some(s) => s.clone(),
                None => report::run_table(&rep, a.calls),
            };
            Ok(crate::report::run_document(
                catalog,
                &request.scenario,
                &rep,
                &docreport::options(&a.charts)?,
                &summary,
            )?)
        },
    )
}

/// The bytes of an output that was built (empty when it was not: it is then neither printed nor
/// written).
fn built(text: &Option<String>) -> &[u8] {
    text.as_deref().unwrap_or_default().as_bytes()
}
