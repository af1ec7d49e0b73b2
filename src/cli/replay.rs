//! `pcsim replay LOG`: logged usage against pcsim's prediction, per call and in total.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::{Format, TextFormat};
use pcsim::analysis::replay::{load_log, match_model, replay, uncached_usd, ReplayOptions};
use pcsim::model::catalog::{Catalog, ModelSpec};
use pcsim::model::strategy::Strategy;
use pcsim::report::{self, table::TextTable, usd};

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Usage log: Anthropic or OpenAI responses / usage objects (JSON or JSON Lines), or a Claude Code
    /// session transcript (.jsonl).
    pub log: PathBuf,
    /// Model id to bill and simulate (repeatable); default: the log's model, if the catalog has it.
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
    /// `tools` and `system` breakpoints go; 0 when unknown.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub prefix_tokens: u64,
    /// Print the per-call table of every model and strategy (default: only the first).
    #[arg(long)]
    pub all_calls: bool,
    /// Seed of the draws for best-effort cache hits (default: derived from the log's calls).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// Runs `pcsim replay`.
pub fn cmd_replay(catalog: &Catalog, a: ReplayArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    let log = load_log(&a.log)?;
    let mut named_models: Vec<(String, usize)> = Vec::new();
    for m in log.calls.iter().filter_map(|c| c.model.as_ref()) {
        match named_models.iter_mut().find(|(n, _)| n == m) {
            Some((_, k)) => *k += 1,
            None => named_models.push((m.clone(), 1)),
        }
    }
    if named_models.len() > 1 {
        // One conversation on several models shares no cache across them; the replay treats it as one.
        eprintln!(
            "warning: the log mixes models: {}; all calls are replayed as one conversation",
            named_models
                .iter()
                .map(|(n, k)| format!("{n} ({k} calls)"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let models: Vec<&ModelSpec> = if a.models.is_empty() {
        // The log's most frequent model (the first of equals).
        let named = named_models
            .iter()
            .fold(None::<&(String, usize)>, |best, x| match best {
                Some(b) if b.1 >= x.1 => Some(b),
                _ => Some(x),
            })
            .map(|(n, _)| n.clone());
        match named.as_deref().and_then(|n| match_model(catalog, n)) {
            Some(m) => vec![m],
            None => anyhow::bail!(pcsim::Error::invalid(
                log.origin.clone(),
                "model",
                match named {
                    Some(n) => format!("the log's model `{n}` is not in the catalog; choose one with --model (see `pcsim models`)"),
                    None => "the log names no model; choose one with --model (see `pcsim models`)".into(),
                }
            )),
        }
    } else {
        catalog.select(&a.models)?
    };
    let strategies: Vec<Strategy> = if a.strategies.is_empty() {
        vec![Strategy::parse("cached")?]
    } else {
        a.strategies
            .iter()
            .map(|s| Strategy::parse(s))
            .collect::<pcsim::Result<_>>()?
    };
    let opts = ReplayOptions {
        gap_seconds: a.gap_seconds,
        prefix_tokens: a.prefix_tokens,
        seed: a.seed,
        ..ReplayOptions::default()
    };
    let mut results = Vec::new();
    for m in &models {
        for s in &strategies {
            results.push(replay(&log, m, s, &opts)?);
        }
    }
    // Warnings go to stderr so JSON on stdout stays clean.
    if !log.unknown_fields.is_empty() {
        eprintln!(
            "warning: {} unknown usage field{} ignored: {}",
            log.unknown_field_count(),
            if log.unknown_field_count() == 1 {
                ""
            } else {
                "s"
            },
            log.unknown_fields
                .iter()
                .map(|(k, n)| format!("{k} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if log.sidechain_skipped > 0 {
        eprintln!(
            "warning: {} sub-agent (sidechain) calls left out: they have their own conversation and cache",
            log.sidechain_skipped
        );
    }
    if log.truncated_last_line {
        eprintln!(
            "warning: the last line of {} is cut off and was ignored",
            log.origin
        );
    }
    let timed = log.calls.iter().filter(|c| c.unix_time.is_some()).count();
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "log": log.origin,
                "calls_logged": log.calls.len(),
                "timestamps": timed,
                "records_without_usage": log.records_without_usage,
                "duplicates_merged": log.duplicates_merged,
                "sidechain_skipped": log.sidechain_skipped,
                "unknown_fields": log.unknown_fields,
                "results": results,
            });
            out.write_all(report::json::to_json(&v)?.as_bytes())?;
        }
        Format::Table | Format::Csv => {
            writeln!(
                out,
                "{}: {} calls ({} with timestamps; {} records without usage, {} repeated transcript lines merged)\n",
                log.origin,
                log.calls.len(),
                timed,
                log.records_without_usage,
                log.duplicates_merged
            )?;
            let mut t = TextTable::new(
                &[
                    "model",
                    "strategy",
                    "logged $",
                    "predicted $",
                    "diff",
                    "uncached $",
                    "logged w/r tok",
                    "predicted w/r tok",
                ],
                &[false, false, true, true, true, true, true, true],
            );
            for (r, m) in results.iter().zip(
                models
                    .iter()
                    .flat_map(|m| std::iter::repeat(m).take(strategies.len())),
            ) {
                let diff = if r.logged.cost_usd > 0.0 {
                    format!(
                        "{:+.1}%",
                        (r.predicted.cost_usd / r.logged.cost_usd - 1.0) * 100.0
                    )
                } else {
                    "-".into()
                };
                t.row(vec![
                    r.model.clone(),
                    r.strategy.clone(),
                    usd(r.logged.cost_usd),
                    usd(r.predicted.cost_usd),
                    diff,
                    usd(uncached_usd(m, &log)),
                    format!(
                        "{}/{}",
                        r.logged.cache_write_tokens, r.logged.cache_read_tokens
                    ),
                    format!(
                        "{}/{}",
                        r.predicted.cache_write_tokens, r.predicted.cache_read_tokens
                    ),
                ]);
            }
            out.write_all(t.render().as_bytes())?;
            let shown = if a.all_calls { results.len() } else { 1 };
            for r in results.iter().take(shown) {
                writeln!(
                    out,
                    "\nPer call, {} / {} (logged -> predicted):\n",
                    r.model, r.strategy
                )?;
                let mut t = TextTable::new(
                    &[
                        "call",
                        "time s",
                        "prompt",
                        "uncached",
                        "written",
                        "read",
                        "logged $",
                        "predicted $",
                    ],
                    &[true; 8],
                );
                for c in &r.calls {
                    let pair = |x: u64, y: u64| {
                        if x == y {
                            x.to_string()
                        } else {
                            format!("{x} -> {y}")
                        }
                    };
                    t.row(vec![
                        c.call.to_string(),
                        format!("{:.0}", c.time_s),
                        c.prompt_tokens.to_string(),
                        pair(c.logged.uncached_tokens, c.predicted.uncached_tokens),
                        pair(c.logged.cache_write_tokens, c.predicted.cache_write_tokens),
                        pair(c.logged.cache_read_tokens, c.predicted.cache_read_tokens),
                        usd(c.logged.cost_usd),
                        usd(c.predicted.cost_usd),
                    ]);
                }
                out.write_all(t.render().as_bytes())?;
            }
        }
    }
    Ok(())
}
