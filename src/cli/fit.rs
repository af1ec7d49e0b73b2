//! `pcsim fit LOGS... --out scenario.toml`: a scenario fitted to a usage history, with the fit
//! quality of every parameter.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

use super::replay::expand_logs;
use super::TextFormat;
use crate::analysis::fit::{check_fit, FitOptions, HistoryReader, SessionLengths};
use crate::analysis::replay::{load_log, match_model};
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::model::tools::load_tool_files;
use crate::report;

/// Arguments of `fit`.
#[derive(Debug, clap::Args)]
pub(crate) struct FitArgs {
    /// Usage logs, files or folders (every format `replay` reads).
    #[arg(required = true, num_args = 1.., value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Write the fitted scenario to this file (TOML, atomically; never over an input). (`--out` is
    /// the old spelling: `--out` names a folder in the other commands.)
    #[arg(long = "scenario-out", alias = "out", value_name = "FILE")]
    pub out: PathBuf,
    /// The tool list the history was made with (MCP tools/list JSON or an API tool array;
    /// repeatable): the stable prefix is split into its tool block and the system prompt, and tool
    /// what-ifs work on the scenario. Without it, the whole prefix is system prompt.
    #[arg(long = "tools", value_name = "FILE")]
    pub tools: Vec<PathBuf>,
    /// Model of the scenario; default: the logs' most frequent model. Given, every call is billed
    /// and every session fitted and checked on it; without, each call is billed at its own
    /// model's prices and the check simulates each session on its most frequent model.
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// Stable prefix tokens (tools + system prompt); default: inferred from the cache reads of
    /// conversation starts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(..=super::MAX_FLAG_TOKENS as u64))]
    pub prefix_tokens: Option<u64>,
    /// A pause longer than this many minutes between two calls of a session starts a new session.
    #[arg(long, value_name = "M", default_value_t = 0.0)]
    pub session_gap_minutes: f64,
    /// Confidence level of the printed intervals.
    #[arg(long, value_name = "C", default_value_t = 0.95)]
    pub confidence: f64,
    /// Name of the scenario [default: the output file's stem].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Output format of the fit report (table or json).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Session lengths of the scenario: `empirical` (each session draws its length from the
    /// history's) or `mean` (every session the mean length, rounded, as `fit` did before).
    #[arg(long, value_enum, default_value_t = LengthsArg::Empirical)]
    pub session_lengths: LengthsArg,
    /// Compactions (a prompt shorter than the one before): `split` (each ends a scenario session
    /// and starts the next, sharing only the stable prefix) or `keep` (inside their conversation,
    /// no growth value, as `fit` did before).
    #[arg(long, value_enum, default_value_t = CompactionsArg::Split)]
    pub compactions: CompactionsArg,
    /// Monte Carlo runs of the fitted scenario checked against the history's logged total (its
    /// p5–p95 must hold it, else a FAIL line); 0: no check.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub check_runs: u64,
}

/// `--session-lengths`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LengthsArg {
    /// Drawn from the history's session lengths.
    Empirical,
    /// The mean length for every session.
    Mean,
}

/// `--compactions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CompactionsArg {
    /// A compaction starts a new session.
    Split,
    /// A compaction stays inside its conversation.
    Keep,
}

/// `to` relative to the folder `from` (both made absolute first), for tool paths in the scenario;
/// an absolute `to` stays as given.
fn relative(from: &Path, to: &Path) -> PathBuf {
    if to.is_absolute() {
        return to.to_path_buf();
    }
    let (Ok(from), Ok(to)) = (from.canonicalize(), to.canonicalize()) else {
        return to.to_path_buf();
    };
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// Logs read ahead of the history, per thread: each waits whole (its calls) until it is added, and
/// only a few numbers per call are kept after that, so fewer than replay's eight.
const LOGS_AHEAD_PER_THREAD: usize = 4;

/// Runs `pcsim fit`.
// Over 120 lines: the fit command's steps in order (flags, logs, fit, the scenario written and
// loaded back, the check runs, the outputs); orchestration that issue 28 moves into the library, as
// for replay and config.
pub(crate) fn cmd_fit(catalog: &Catalog, a: FitArgs, out: &mut dyn Write) -> Result<()> {
    report::check_output_path(&a.out)?;
    let opts = FitOptions {
        prefix_tokens: a.prefix_tokens,
        session_gap_seconds: a.session_gap_minutes * 60.0,
        confidence: a.confidence,
        lengths: match a.session_lengths {
            LengthsArg::Empirical => SessionLengths::Empirical,
            LengthsArg::Mean => SessionLengths::Mean,
        },
        split_compactions: a.compactions == CompactionsArg::Split,
        one_model: a.model.is_some(),
    };
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        anyhow::bail!(crate::Error::invalid(
            "command line",
            "--confidence",
            format!("value {} must be between 0 and 1 (e.g. 0.95)", a.confidence)
        ));
    }
    let files = expand_logs(&a.logs)?;
    // Logs read in parallel, a few per thread ahead, and added in file order: only a few numbers
    // per call stay in memory (`HistoryReader`), and what is added is what one thread would add.
    let mut reader = HistoryReader::new(&opts)?;
    let mut read = 0usize;
    let threads = rayon::current_num_threads();
    crate::base::ordered::in_order(
        files.len(),
        threads,
        threads * LOGS_AHEAD_PER_THREAD,
        |i| load_log(&files[i]),
        |loaded| -> anyhow::Result<()> {
            // One unreadable file of many is skipped with a warning (a single log's problem is the
            // error), as `replay` does.
            match loaded {
                Ok(log) => {
                    reader.add_log(&log);
                    read += 1;
                }
                Err(e) if files.len() > 1 => eprintln_safe!("warning: skipped {e}"),
                Err(e) => return Err(e.into()),
            }
            Ok(())
        },
    )?;
    if read == 0 {
        anyhow::bail!(crate::Error::invalid(
            "LOG",
            "usage",
            "no log could be read (each is named above)"
        ));
    }
    let tools = load_tool_files(&a.tools)?;
    // Again now that the inputs are known: never over a log or a tool file.
    report::check_output_path(&a.out)?;
    let model = match &a.model {
        Some(id) => catalog.model(id)?,
        None => {
            let named = reader.model();
            match named.as_deref().and_then(|n| match_model(catalog, n)) {
                Some(m) => m,
                None => anyhow::bail!(crate::Error::invalid(
                    files[0].display().to_string(),
                    "model",
                    match named {
                        Some(n) => format!("the logs' model `{n}` is not in the catalog; choose one with --model (see `pcsim models`)"),
                        None => "the logs name no model; choose one with --model (see `pcsim models`)".into(),
                    }
                )),
            }
        }
    };
    let fit = reader.fit(catalog, model, &tools, &opts)?;
    let dir = match a.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tool_files: Vec<String> = a
        .tools
        .iter()
        .map(|t| relative(&dir, t).to_string_lossy().replace('\\', "/"))
        .collect();
    let name = a.name.clone().unwrap_or_else(|| {
        a.out
            .file_stem()
            .map_or("fitted".into(), |s| s.to_string_lossy().into_owned())
    });
    let toml = crate::report::fitted_scenario::scenario_toml(&fit, &name, &tool_files);
    // The scenario must load as written. `fit` keeps within the scenario limits it can (durations,
    // rates, session lengths, calls: capped or refused with the limit named, in the analysis); a
    // limit left (e.g. a conversation's expected growth past 1,000,000,000 tokens) is the history's,
    // refused as input beyond a limit, with the loader's message naming it.
    let scenario =
        Scenario::from_toml_str(&toml, &a.out.display().to_string(), &dir).map_err(|e| {
            crate::Error::invalid(
                files[0].display().to_string(),
                "history",
                format!("the fitted scenario would exceed a scenario limit: {e}"),
            )
        })?;
    // At most as many check runs as the simulation limits allow for this scenario's size.
    let per_run = (scenario.sessions as u64)
        .saturating_mul(scenario.calls as u64)
        .max(1);
    let runs_allowed = (crate::sim::request::MAX_SIMULATED_CALLS / per_run).max(1);
    let check_runs = if a.check_runs > runs_allowed {
        eprintln_safe!(
            "note: {runs_allowed} check runs instead of {}: {} sessions x {} calls per run, at most {} simulated calls",
            a.check_runs,
            scenario.sessions,
            scenario.calls,
            crate::sim::request::MAX_SIMULATED_CALLS
        );
        runs_allowed
    } else {
        a.check_runs
    };
    // Does the scenario reproduce the history? Its runs' p5–p95 against the logged total.
    let check = match check_runs {
        0 => None,
        runs => Some(check_fit(catalog, scenario, &fit, runs)?),
    };
    match a.format {
        TextFormat::Table => {
            out.write_all(fit.table().as_bytes())?;
            if let Some(line) = report::fit::models_line(&fit) {
                writeln!(out, "\n{line}")?;
            }
            if let Some(c) = &check {
                writeln!(out, "\n{}", report::fit::check_line(c))?;
            }
        }
        TextFormat::Json => {
            let mut v = serde_json::to_value(&fit)?;
            v["check"] = serde_json::to_value(&check)?;
            out.write_all(report::to_json(&v)?.as_bytes())?;
        }
    }
    if let Some(c) = check.as_ref().filter(|c| !c.reproduces) {
        if a.format == TextFormat::Json {
            eprintln_safe!("{}", report::fit::check_line(c));
        }
    }
    out.flush()?;
    report::write_atomic(&a.out, toml.as_bytes())
        .with_context(|| format!("writing {}", a.out.display()))?;
    if !super::quiet() {
        let shown = report::terminal::escape(&a.out.display().to_string()).into_owned();
        if a.format == TextFormat::Table {
            writeln!(out, "wrote {shown}")?;
        } else {
            eprintln!("wrote {shown}");
        }
    }
    Ok(())
}
