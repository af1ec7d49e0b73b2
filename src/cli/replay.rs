//! `pcsim replay LOG...`: logged usage against pcsim's prediction, per call and in total, over files
//! and folders of logs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::{Format, TextFormat};
use crate::analysis::replay::ReplayOptions;
use crate::analysis::replay_logs::{replay_logs, ReplayRequest};
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::strategy::Strategy;
use crate::report;

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// Usage logs, files or folders (searched for `.jsonl` and `.json` files): Anthropic, OpenAI,
    /// LiteLLM, Gemini, Bedrock or Cohere responses / usage objects (JSON or JSON Lines), Claude Code
    /// session transcripts, Codex CLI rollouts.
    #[arg(required = true, num_args = 1.., value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Model id to bill and simulate (repeatable); default: each log's own model, if the catalog has
    /// it.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Caching strategy to simulate (repeatable); default: `cached` (the model's own default).
    #[arg(long = "strategy", value_name = "S")]
    pub strategies: Vec<String>,
    /// Output format (table or json).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Seconds between calls when the log has no timestamps.
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub gap_seconds: f64,
    /// Tokens at the start of every prompt that never change (tools + system prompt), where the
    /// `tools` and `system` breakpoints go; 0: inferred from the log's cache reads where it can be.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u64).range(..=super::MAX_FLAG_TOKENS as u64))]
    pub prefix_tokens: u64,
    /// A pause longer than this many minutes between two calls of a session starts a new
    /// conversation; 0: never (sessions split by their id and agent only).
    #[arg(long, value_name = "M", default_value_t = 0.0)]
    pub session_gap_minutes: f64,
    /// Print the per-call table of every model and strategy (default: only the first; per-call
    /// tables are printed for a single log only).
    #[arg(long)]
    pub all_calls: bool,
    /// Seed of the draws for best-effort cache hits (default: derived from the log's calls).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Calibrate the model's tool tokens from logged billed input tokens: a log and the tool file
    /// its sessions used (repeatable; two or more different tool lists fit factor and preamble, one
    /// the factor alone). The fit is printed to standard error, as `pcsim calibrate` prints it.
    #[arg(long = "log-tools", value_name = "LOG=TOOLS")]
    pub log_tools: Vec<String>,
    /// With --log-tools: write the fitted calibration as a catalog overlay (for --catalog) here.
    #[arg(long, value_name = "FILE")]
    pub calibrate_out: Option<PathBuf>,
    #[command(flatten)]
    pub change: super::replay_change::ChangeArgs,
}

/// The log files named by the arguments: files as given, folders searched recursively for `.jsonl`
/// and `.json` files (sorted, so runs are repeatable).
pub(crate) fn expand_logs(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let walked = crate::input::walk::input_files(paths, &["jsonl", "json"])?;
    for (path, why) in &walked.left_out {
        eprintln_safe!("warning: {}: {why}", path.display());
    }
    Ok(walked.files)
}

/// Runs `pcsim replay`: the flags become a [`ReplayRequest`], the library replays the logs, and the
/// report layer renders the outcome.
pub(crate) fn cmd_replay(catalog: &Catalog, a: ReplayArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    if !(a.session_gap_minutes.is_finite() && a.session_gap_minutes >= 0.0) {
        anyhow::bail!(crate::Error::invalid(
            "command line",
            "--session-gap-minutes",
            format!(
                "value {} must be a non-negative number",
                a.session_gap_minutes
            )
        ));
    }
    let files = expand_logs(&a.logs)?;
    let single = files.len() == 1;
    let strategies: Vec<Strategy> = if a.strategies.is_empty() {
        vec![Strategy::parse("cached")?]
    } else {
        a.strategies
            .iter()
            .map(|s| Strategy::parse(s))
            .collect::<crate::Result<_>>()?
    };
    let chosen: Vec<&ModelSpec> = if a.models.is_empty() {
        Vec::new()
    } else {
        catalog.select(&a.models)?
    };
    let options = ReplayOptions {
        gap_seconds: a.gap_seconds,
        prefix_tokens: a.prefix_tokens,
        session_gap_seconds: a.session_gap_minutes * 60.0,
        seed: a.seed,
        ..ReplayOptions::default()
    };
    let change = a.change.change()?;
    if !a.log_tools.is_empty() || a.calibrate_out.is_some() {
        super::calibrate::calibrate_from_logs(
            catalog,
            &a.log_tools,
            &chosen,
            &options,
            a.calibrate_out.as_deref(),
        )?;
    }
    let origin = if single {
        files[0].display().to_string()
    } else {
        a.logs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut request = ReplayRequest::new(files).with_change(change);
    request.models = a.models;
    request.strategies = strategies;
    request.options = options;
    // Per-call tables and calls in the JSON are printed for a single log only.
    request.keep_calls = single;
    let outcome = replay_logs(catalog, &request)?;
    for line in report::replay::warnings(&outcome) {
        eprintln_safe!("{line}");
    }
    let invoice = a
        .change
        .invoice_usd
        .map(|x| outcome.reconcile(x))
        .transpose()?;
    let origin = if single {
        origin
    } else {
        format!("{origin} ({} files)", outcome.files.len())
    };
    match format {
        Format::Json => report::replay::write_json(&mut *out, &outcome, &origin, invoice.as_ref())?,
        Format::Table | Format::Csv => {
            let text = report::replay::text(&outcome, &origin, a.all_calls, invoice.as_ref());
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}
