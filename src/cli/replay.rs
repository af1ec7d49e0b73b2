//! `pcsim replay LOG...`: logged usage against pcsim's prediction, per call and in total, over files
//! and folders of logs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::{Format, TextFormat};
use crate::analysis::replay::{
    conversations, infer_prefix_tokens, load_log, logged_usd, merge_parts, replay, split_by_model,
    sub_log, tally_groups, uncached_usd, uses_prefix_anchors, FirstSeen, ModelMatcher, ModelSplit,
    ReplayOptions, ReplayResult, Tally, UnpricedCalls, UsageLog, GROUPINGS,
};
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::strategy::Strategy;
use crate::report::{self, table::TextTable, usd};

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

/// One (model, strategy) summed over files; with each call at its own model, one strategy summed
/// over every model the files name.
struct Acc {
    /// The models replayed (one, or each call's own over the files).
    models: Vec<String>,
    /// The resolved strategy names (one per model kind).
    strategies: Vec<String>,
    conversations: usize,
    total: Tally,
    uncached_usd: f64,
    by_tier: BTreeMap<String, u64>,
    groups: BTreeMap<(&'static str, String), Tally>,
}

/// Counters of the logs read, summed over files.
#[derive(Default)]
struct Read {
    files: usize,
    files_skipped: Vec<String>,
    bytes: u64,
    calls: usize,
    timestamps: usize,
    records_without_usage: usize,
    duplicates_merged: usize,
    sidechain_calls: usize,
    failed_calls: usize,
    unreadable: usize,
    unreadable_examples: Vec<String>,
    unknown_fields: BTreeMap<String, usize>,
    truncated: Vec<String>,
    prefix_inferred: Vec<u64>,
    prefix_unknown: usize,
    /// Logged buckets, each call at its own logged model's prices (calls of models the catalog does
    /// not know are left out and named in `unpriced`): what the log says was billed.
    own_models_usd: f64,
    /// Claude Code messages found again in a later file, counted once.
    duplicates_across_files: usize,
    /// Calls whose record gives only the total prompt (cache reads and writes unknown).
    cache_split_unknown: usize,
    /// Conversations of every file, every call counted (priced or not).
    conversations: usize,
    /// Calls a catalog model prices.
    priced_calls: usize,
    /// What the logs themselves say their priced calls cost, beside pcsim's repricing of them.
    stated: StatedCost,
    /// Calls of models the catalog does not know, by logged name, summed over files.
    unpriced: FirstSeen<String, UnpricedCalls>,
    /// Calls naming no model that took their file's only model.
    unnamed_at_file_model: usize,
    /// Warnings about one file each (mixed models, unreadable records), every file kept.
    file_warnings: Vec<String>,
}

impl Read {
    fn add(&mut self, log: &UsageLog) {
        self.files += 1;
        self.bytes += log.bytes;
        self.calls += log.calls.len();
        self.timestamps += log.calls.iter().filter(|c| c.unix_time.is_some()).count();
        self.records_without_usage += log.records_without_usage;
        self.duplicates_merged += log.duplicates_merged;
        self.sidechain_calls += log.sidechain_calls;
        self.failed_calls += log.failed_calls;
        self.cache_split_unknown += log.cache_split_unknown;
        self.unreadable += log.unreadable;
        for e in &log.unreadable_examples {
            if self.unreadable_examples.len() < crate::input::usagelog::UNREADABLE_EXAMPLES {
                self.unreadable_examples.push(e.clone());
            }
        }
        for (k, n) in &log.unknown_fields {
            *self.unknown_fields.entry(k.clone()).or_default() += n;
        }
        if log.truncated_last_line {
            self.truncated.push(log.origin.clone());
        }
        if log.unreadable > 0 {
            self.file_warnings.push(format!(
                "{}: {} record{} could not be read and {} left out{}",
                log.origin,
                log.unreadable,
                if log.unreadable == 1 { "" } else { "s" },
                if log.unreadable == 1 { "is" } else { "are" },
                log.unreadable_examples
                    .first()
                    .map_or(String::new(), |e| format!(" (first: {e})"))
            ));
        }
    }

    /// Adds what the split of one log by model shows: the logged dollars at each call's own model,
    /// the calls left out, and a warning when the file mixes models.
    fn add_split(&mut self, log: &UsageLog, split: &ModelSplit, chosen: &[&ModelSpec]) {
        self.own_models_usd += log
            .calls
            .iter()
            .zip(&split.per_call)
            .filter_map(|(c, m)| m.map(|m| logged_usd(m, c)))
            .sum::<f64>();
        self.priced_calls += split.priced_calls();
        for (c, m) in log.calls.iter().zip(&split.per_call) {
            if let (Some(stated), Some(m)) = (c.stated_usd, m) {
                self.stated.calls += 1;
                self.stated.stated_usd += stated;
                self.stated.repriced_usd += logged_usd(m, c);
            }
        }
        self.unnamed_at_file_model += split.unnamed_at_file_model;
        for u in &split.unpriced {
            self.unpriced
                .get_or_insert_with(u.model.as_str(), || UnpricedCalls {
                    model: u.model.clone(),
                    ..Default::default()
                })
                .add(u);
        }
        if split.named.len() > 1 {
            let how = if chosen.is_empty() {
                "each call is billed and replayed on its own model (no cache is shared across models)"
                    .to_string()
            } else {
                format!(
                    "every call is replayed on {} as --model asks",
                    chosen
                        .iter()
                        .map(|m| m.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            self.file_warnings.push(format!(
                "{} mixes models: {}; {how}",
                log.origin,
                split
                    .named
                    .iter()
                    .map(|(n, k)| format!("{n} ({k} call{})", if *k == 1 { "" } else { "s" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
}

/// The cost a log states for its calls (`costUSD`, `spend`, `cost_usd`, ...) against pcsim's
/// prices for the same calls.
#[derive(Debug, Default, serde::Serialize)]
struct StatedCost {
    /// Calls whose record states a cost (and whose model the catalog prices).
    calls: usize,
    /// The costs the records state, summed.
    stated_usd: f64,
    /// The same calls' logged buckets at pcsim's prices of each call's own model.
    repriced_usd: f64,
}

impl StatedCost {
    /// `repriced - stated`, and that in percent of the stated cost.
    fn gap(&self) -> (f64, Option<f64>) {
        let gap = self.repriced_usd - self.stated_usd;
        (
            gap,
            (self.stated_usd > 0.0).then(|| gap / self.stated_usd * 100.0),
        )
    }

    fn json(&self) -> serde_json::Value {
        let (gap, pct) = self.gap();
        serde_json::json!({
            "calls": self.calls,
            "stated_usd": self.stated_usd,
            "repriced_usd": self.repriced_usd,
            "gap_usd": gap,
            "gap_percent": pct,
        })
    }

    fn line(&self) -> Option<String> {
        if self.calls == 0 {
            return None;
        }
        let (gap, pct) = self.gap();
        Some(format!(
            "the logs state {} for {} of these calls; pcsim's prices give {} for them (gap {}{})",
            usd(self.stated_usd),
            self.calls,
            usd(self.repriced_usd),
            if gap < 0.0 { "-" } else { "+" },
            match pct {
                Some(p) => format!("{}, {p:+.1}%", usd(gap.abs())),
                None => usd(gap.abs()),
            }
        ))
    }
}

/// Runs `pcsim replay`.
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
    let base_opts = ReplayOptions {
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
            &base_opts,
            a.calibrate_out.as_deref(),
        )?;
    }
    // A tool-list change is made inside the stable prefix, so it needs one like the anchors do.
    let needs_prefix = strategies.iter().any(uses_prefix_anchors) || change.is_some();
    let mut counterfactuals = Vec::new();
    let mut logged_totals = crate::analysis::counterfactual::LoggedTotals::default();
    let mut read = Read::default();
    let mut accs: Vec<Acc> = Vec::new();
    let mut context: Vec<crate::sim::simulate::ContextWarning> = Vec::new();
    let mut kept: Option<(UsageLog, Vec<ReplayResult>)> = None;
    let run = RunSetup {
        chosen: &chosen,
        strategies: &strategies,
        change: change.as_ref(),
        needs_prefix,
        base_opts: &base_opts,
        single,
    };
    // Claude Code messages already read from another file (a sub-agent's own transcript and its
    // progress lines in the parent's): each is one call, counted once.
    let mut seen_messages: std::collections::HashSet<String> = std::collections::HashSet::new();
    for f in &files {
        // One unreadable file of many is reported and skipped; a single log's problem is the error.
        let mut log = match load_log(f) {
            Ok(l) => l,
            Err(e) if !single => {
                read.files_skipped.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if !single {
            let before = log.calls.len();
            log.calls.retain(|c| match (&c.response_id, c.format) {
                (Some(id), "claude-code") => seen_messages.insert(id.clone()),
                _ => true,
            });
            read.duplicates_across_files += before - log.calls.len();
        }
        let mut matcher = ModelMatcher::new(catalog);
        let split = split_by_model(&log, &mut matcher);
        read.add(&log);
        read.add_split(&log, &split, &chosen);
        read.conversations += conversations(&log.calls, &base_opts)
            .0
            .iter()
            .max()
            .map_or(0, |m| m + 1);
        logged_totals.add_log(&split.per_call, &log);
        let results = run.file(
            &log,
            &split,
            &mut read,
            &mut accs,
            &mut context,
            &mut counterfactuals,
        )?;
        if single {
            kept = Some((log, results));
        }
    }
    if read.priced_calls == 0 && chosen.is_empty() {
        let mut problem = if read.unpriced.is_empty() {
            "no log could be replayed".to_string()
        } else {
            format!(
                "no call can be priced: {}",
                unpriced_text(read.unpriced.values())
            )
        };
        if !read.files_skipped.is_empty() {
            problem.push_str(&format!("; {}", read.files_skipped.join("; ")));
        }
        let origin = match files.as_slice() {
            [one] => one.display().to_string(),
            _ => "LOG".to_string(),
        };
        anyhow::bail!(crate::Error::invalid(origin, "model", problem));
    }
    if accs.iter().all(|a| a.total.calls == 0) {
        anyhow::bail!(crate::Error::Unsupported(format!(
            "no log could be replayed: {}",
            read.files_skipped.join("; ")
        )));
    }
    warn(&read, needs_prefix, a.prefix_tokens);
    super::warn_context(context.iter().map(|w| w.message()));
    let invoice = a
        .change
        .invoice_usd
        .map(|x| crate::analysis::counterfactual::reconcile(&logged_totals, x))
        .transpose()?;
    let origin = if single {
        files[0].display().to_string()
    } else {
        format!(
            "{} ({} files)",
            a.logs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            read.files
        )
    };
    match format {
        Format::Json => {
            let results: Vec<serde_json::Value> = accs
                .iter()
                .enumerate()
                .map(|(i, acc)| {
                    let mut v = serde_json::json!({
                        "model": acc.models.join("+"),
                        "models": acc.models,
                        "strategy": acc.strategies.join(" / "),
                        "conversations": acc.conversations,
                        "logged": acc.total.logged,
                        "predicted": acc.total.predicted,
                        "predicted_write_tokens_by_tier": acc.by_tier,
                        "uncached_usd": acc.uncached_usd,
                        "calls_total": acc.total.calls,
                        "totals_by": groups_json(&acc.groups),
                    });
                    if let Some((_, rs)) = &kept {
                        v["calls"] = serde_json::to_value(&rs[i].calls).unwrap_or_default();
                    }
                    v
                })
                .collect();
            let v = serde_json::json!({
                "log": origin,
                "files": read.files,
                "files_skipped": read.files_skipped,
                "bytes": read.bytes,
                "calls_logged": read.calls,
                "timestamps": read.timestamps,
                "records_without_usage": read.records_without_usage,
                "duplicates_merged": read.duplicates_merged,
                "sidechain_calls": read.sidechain_calls,
                "sidechain_skipped": 0,
                "failed_calls": read.failed_calls,
                "unreadable_records": read.unreadable,
                "unreadable_examples": read.unreadable_examples,
                "unknown_fields": read.unknown_fields,
                "prefix_tokens_inferred": read.prefix_inferred,
                "logged_own_models_usd": read.own_models_usd,
                "conversations": read.conversations,
                "cache_split_unknown_calls": read.cache_split_unknown,
                "duplicates_across_files": read.duplicates_across_files,
                "stated_cost": read.stated.json(),
                "calls_priced": read.priced_calls,
                "unpriced_models": read.unpriced,
                "calls_without_model_at_file_model": read.unnamed_at_file_model,
                "file_warnings": read.file_warnings,
                "results": results,
            });
            let mut v = v;
            if let Some(ch) = &change {
                v["counterfactual"] = serde_json::json!({
                    "change": ch.describe(),
                    "results": counterfactuals,
                });
            }
            if let Some(r) = &invoice {
                v["invoice"] = serde_json::to_value(r)?;
            }
            out.write_all(report::to_json(&v)?.as_bytes())?;
        }
        Format::Table | Format::Csv => {
            let conv = read.conversations;
            writeln!(
                out,
                "{origin}: {} calls in {conv} conversation{} ({} with timestamps; {} sub-agent calls; {} records without usage, {} repeated transcript lines merged)\n",
                read.calls,
                if conv == 1 { "" } else { "s" },
                read.timestamps,
                read.sidechain_calls,
                read.records_without_usage,
                read.duplicates_merged
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
            for acc in &accs {
                t.row(vec![
                    acc.models.join("+"),
                    acc.strategies.join(" / "),
                    usd(acc.total.logged.cost_usd),
                    usd(acc.total.predicted.cost_usd),
                    diff(&acc.total),
                    usd(acc.uncached_usd),
                    format!(
                        "{}/{}",
                        acc.total.logged.cache_write_tokens, acc.total.logged.cache_read_tokens
                    ),
                    format!(
                        "{}/{}",
                        acc.total.predicted.cache_write_tokens,
                        acc.total.predicted.cache_read_tokens
                    ),
                ]);
            }
            out.write_all(t.render().as_bytes())?;
            writeln!(
                out,
                "\nlogged, each call at its own model's prices: {}",
                usd(read.own_models_usd)
            )?;
            if let Some(line) = read.stated.line() {
                writeln!(out, "{line}")?;
            }
            if !read.unpriced.is_empty() {
                writeln!(
                    out,
                    "not in these totals: {}",
                    unpriced_text(read.unpriced.values())
                )?;
            }
            if let Some(acc) = accs.first() {
                writeln!(
                    out,
                    "\nTotals by day, session, project and model, {} / {}:\n",
                    acc.models.join("+"),
                    acc.strategies.join(" / ")
                )?;
                let mut t = TextTable::new(
                    &["by", "key", "calls", "logged $", "predicted $", "diff"],
                    &[false, false, true, true, true, true],
                );
                for by in GROUPINGS {
                    for ((b, key), tally) in acc.groups.iter().filter(|((b, _), _)| *b == by) {
                        t.row(vec![
                            b.to_string(),
                            key.clone(),
                            tally.calls.to_string(),
                            usd(tally.logged.cost_usd),
                            usd(tally.predicted.cost_usd),
                            diff(tally),
                        ]);
                    }
                }
                out.write_all(t.render().as_bytes())?;
            }
            if let Some(ch) = &change {
                out.write_all(super::replay_change::table(ch, &counterfactuals).as_bytes())?;
            }
            if let Some(r) = &invoice {
                out.write_all(r.text().as_bytes())?;
            }
            if let Some((_, results)) = &kept {
                let shown = if a.all_calls { results.len() } else { 1 };
                for r in results.iter().take(shown) {
                    per_call_table(r, out)?;
                }
            }
        }
    }
    Ok(())
}

/// What every file of a replay is run with.
struct RunSetup<'a> {
    chosen: &'a [&'a ModelSpec],
    strategies: &'a [Strategy],
    change: Option<&'a crate::analysis::counterfactual::ToolListChange>,
    needs_prefix: bool,
    base_opts: &'a ReplayOptions,
    single: bool,
}

impl RunSetup<'_> {
    /// Replays one log on every (model, strategy) and adds it to the sums: on the chosen models
    /// (every call), else each call on its own model (the parts merged back in log order). The
    /// results of a single log are returned for its per-call tables.
    fn file(
        &self,
        log: &UsageLog,
        split: &ModelSplit,
        read: &mut Read,
        accs: &mut Vec<Acc>,
        context: &mut Vec<crate::sim::simulate::ContextWarning>,
        counterfactuals: &mut Vec<crate::analysis::counterfactual::Counterfactual>,
    ) -> Result<Vec<ReplayResult>> {
        let whole: Vec<usize> = (0..log.calls.len()).collect();
        // Each run: the parts of the log and the model each is replayed on.
        let runs: Vec<Vec<(&ModelSpec, &[usize])>> = if self.chosen.is_empty() {
            vec![split
                .priced
                .iter()
                .map(|(m, idx)| (*m, idx.as_slice()))
                .collect()]
        } else {
            self.chosen
                .iter()
                .map(|m| vec![(*m, whole.as_slice())])
                .collect()
        };
        let mut opts = self.base_opts.clone();
        if self.needs_prefix && opts.prefix_tokens == 0 {
            match infer_prefix_tokens(&log.calls, &opts) {
                Some(n) => {
                    opts.prefix_tokens = n;
                    read.prefix_inferred.push(n);
                }
                None => read.prefix_unknown += 1,
            }
        }
        let mut results = Vec::new();
        for (ri, parts) in runs.iter().enumerate() {
            if parts.is_empty() {
                // No call of this file is priced: its calls are named as left out.
                continue;
            }
            for (si, s) in self.strategies.iter().enumerate() {
                let mut pieces = Vec::new();
                let mut uncached = 0.0;
                for &(m, idx) in parts {
                    let sub;
                    let part = if idx.len() == log.calls.len() {
                        log
                    } else {
                        sub = sub_log(log, idx);
                        &sub
                    };
                    let r = match self.change {
                        Some(ch) => {
                            let (r, cf) = crate::analysis::counterfactual::counterfactual(
                                part, m, s, &opts, ch,
                            )?;
                            super::replay_change::add(counterfactuals, cf);
                            r
                        }
                        None => replay(part, m, s, &opts)?,
                    };
                    // The logged prompts (every strategy sends the same ones) against the window.
                    let mut nth: BTreeMap<usize, u32> = BTreeMap::new();
                    let prompts = r.calls.iter().map(|c| {
                        let k = nth.entry(c.conversation).or_default();
                        *k += 1;
                        (c.conversation as u32, *k, c.prompt_tokens)
                    });
                    crate::sim::simulate::merge_context_warnings(
                        context,
                        crate::sim::simulate::context_warning(m, prompts, Some(&log.origin))
                            .into_iter()
                            .collect(),
                    );
                    uncached += uncached_usd(m, part);
                    pieces.push((idx, r));
                }
                let r = merge_parts(log, pieces, &opts);
                let i = if self.chosen.is_empty() {
                    si
                } else {
                    ri * self.strategies.len() + si
                };
                while accs.len() <= i {
                    accs.push(Acc {
                        models: Vec::new(),
                        strategies: Vec::new(),
                        conversations: 0,
                        total: Tally::default(),
                        uncached_usd: 0.0,
                        by_tier: BTreeMap::new(),
                        groups: BTreeMap::new(),
                    });
                }
                let acc = &mut accs[i];
                for (m, _) in parts {
                    if !acc.models.contains(&m.id) {
                        acc.models.push(m.id.clone());
                    }
                }
                for name in r.strategy.split(" / ") {
                    if !acc.strategies.iter().any(|x| x == name) {
                        acc.strategies.push(name.to_string());
                    }
                }
                acc.conversations += r.conversations;
                for c in &r.calls {
                    acc.total.add_call(c);
                }
                acc.uncached_usd += uncached;
                for (k, n) in &r.predicted_write_tokens_by_tier {
                    *acc.by_tier.entry(k.clone()).or_default() += n;
                }
                for (k, t) in tally_groups(log, &r) {
                    acc.groups.entry(k).or_default().add(&t);
                }
                if self.single {
                    results.push(r);
                }
            }
        }
        Ok(results)
    }
}

/// Calls left out of the totals, by model: `name (N calls, P prompt tokens, O output tokens)`.
fn unpriced_text(unpriced: &[UnpricedCalls]) -> String {
    let models = unpriced
        .iter()
        .map(|u| {
            format!(
                "`{}` ({} call{}, {} prompt tokens, {} output tokens)",
                u.model,
                u.calls,
                if u.calls == 1 { "" } else { "s" },
                u.prompt_tokens,
                u.output_tokens
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("{models} on models not in the catalog, left out of the totals; price them with a [[model]] entry in --catalog FILE (then --price ID=IN,OUT sets its prices), or replay every call on a catalog model with --model")
}

fn diff(t: &Tally) -> String {
    if t.logged.cost_usd > 0.0 {
        format!(
            "{:+.1}%",
            (t.predicted.cost_usd / t.logged.cost_usd - 1.0) * 100.0
        )
    } else {
        "-".into()
    }
}

fn groups_json(groups: &BTreeMap<(&'static str, String), Tally>) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for by in GROUPINGS {
        let rows: Vec<serde_json::Value> = groups
            .iter()
            .filter(|((b, _), _)| *b == by)
            .map(|((_, key), t)| {
                serde_json::json!({
                    "key": key,
                    "calls": t.calls,
                    "prompt_tokens": t.prompt_tokens,
                    "output_tokens": t.output_tokens,
                    "logged": t.logged,
                    "predicted": t.predicted,
                })
            })
            .collect();
        m.insert(by.to_string(), serde_json::Value::Array(rows));
    }
    serde_json::Value::Object(m)
}

/// Warnings go to stderr so JSON on stdout stays clean.
fn warn(read: &Read, needs_prefix: bool, prefix_given: u64) {
    if !read.unknown_fields.is_empty() {
        let n: usize = read.unknown_fields.values().sum();
        eprintln_safe!(
            "warning: {n} unknown usage field{} ignored: {}",
            if n == 1 { "" } else { "s" },
            read.unknown_fields
                .iter()
                .map(|(k, n)| format!("{k} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if read.unreadable > 0 {
        eprintln_safe!(
            "warning: {} record{} could not be read and {} left out: {}{}",
            read.unreadable,
            if read.unreadable == 1 { "" } else { "s" },
            if read.unreadable == 1 { "is" } else { "are" },
            read.unreadable_examples.join("; "),
            if read.unreadable > read.unreadable_examples.len() {
                "; ..."
            } else {
                ""
            }
        );
    }
    if read.failed_calls > 0 {
        eprintln_safe!(
            "note: {} call{} logged as failed (not billed) left out",
            read.failed_calls,
            if read.failed_calls == 1 { "" } else { "s" }
        );
    }
    if read.duplicates_across_files > 0 {
        eprintln_safe!(
            "note: {} Claude Code message{} found again in a later file (a sub-agent's transcript and its progress lines): counted once",
            read.duplicates_across_files,
            if read.duplicates_across_files == 1 { "" } else { "s" }
        );
    }
    if read.cache_split_unknown > 0 {
        eprintln_safe!(
            "warning: {} call{} only the total prompt tokens (LiteLLM rows without metadata.usage_object): any cache reads and writes in them are billed at the base input rate",
            read.cache_split_unknown,
            if read.cache_split_unknown == 1 { " gives" } else { "s give" }
        );
    }
    if read.sidechain_calls > 0 {
        eprintln_safe!(
            "note: {} sub-agent (sidechain) call{} replayed as {} own conversation{} (own cache prefix), included in the totals",
            read.sidechain_calls,
            if read.sidechain_calls == 1 { "" } else { "s" },
            if read.sidechain_calls == 1 { "its" } else { "their" },
            if read.sidechain_calls == 1 { "" } else { "s" },
        );
    }
    for f in &read.truncated {
        eprintln_safe!("warning: the last line of {f} is cut off and was ignored");
    }
    for f in &read.files_skipped {
        eprintln_safe!("warning: skipped {f}");
    }
    for w in &read.file_warnings {
        eprintln_safe!("warning: {w}");
    }
    if !read.unpriced.is_empty() {
        eprintln_safe!("warning: {}", unpriced_text(read.unpriced.values()));
    }
    if read.unnamed_at_file_model > 0 {
        eprintln_safe!(
            "note: {} call{} name no model: billed at the only model {} file names",
            read.unnamed_at_file_model,
            if read.unnamed_at_file_model == 1 {
                ""
            } else {
                "s"
            },
            if read.unnamed_at_file_model == 1 {
                "its"
            } else {
                "their"
            }
        );
    }
    if needs_prefix && prefix_given == 0 {
        if !read.prefix_inferred.is_empty() {
            let (lo, hi) = (
                read.prefix_inferred.iter().min().copied().unwrap_or(0),
                read.prefix_inferred.iter().max().copied().unwrap_or(0),
            );
            eprintln_safe!(
                "note: --prefix-tokens not given: the stable prefix (tools + system) inferred from the log's cache reads at conversation starts: {}",
                if lo == hi {
                    format!("{lo} tokens")
                } else {
                    format!("{lo} to {hi} tokens (per file)")
                }
            );
        }
        if read.prefix_unknown > 0 {
            eprintln_safe!(
                "warning: the `tools` / `system` breakpoints (and any TTL tier on them, e.g. @1h) have no effect in {} log{}: the stable prefix is unknown and no conversation start reads a cached prefix; give --prefix-tokens N",
                read.prefix_unknown,
                if read.prefix_unknown == 1 { "" } else { "s" }
            );
        }
    }
}

fn per_call_table(r: &ReplayResult, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "\nPer call, {} / {} (logged -> predicted):\n",
        r.model, r.strategy
    )?;
    let mut t = TextTable::new(
        &[
            "call",
            "conv",
            "time s",
            "prompt",
            "uncached",
            "written",
            "read",
            "logged $",
            "predicted $",
        ],
        &[true; 9],
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
            c.conversation.to_string(),
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
    Ok(())
}
