//! Replay of many log files at once, as `pcsim replay LOG...` does it: each file read, its calls
//! matched to catalog models, replayed on every (model, strategy) and summed over the files, with
//! the counters, warnings and totals by day, session, project and model that the report shows.
//!
//! Files are read and replayed in parallel, each file whole by one thread (read, then replayed on
//! the calls it read), at most a window of files ahead of the sums, and the sums are made in file
//! order, one file at a time (`base::ordered::in_order`): the outcome, floating-point sums
//! included, is the same on any number of threads. Claude Code messages an earlier file already had
//! are taken out in that order too, when the file is summed; a file that had any is replayed again
//! without them (a sub-agent's transcript beside its parent's progress lines; rare), so what is
//! summed is what reading, de-duplicating and replaying one file after another gives.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::replay::{
    conversations, infer_prefix_tokens, load_log, logged_usd, merge_parts, replay, split_by_model,
    sub_log, tally_groups, uncached_usd, uses_prefix_anchors, CallComparison, FirstSeen,
    ModelMatcher, ModelSplit, ReplayOptions, ReplayResult, Tally, UnpricedCalls, UsageLog,
};
use crate::analysis::counterfactual::{Counterfactual, LoggedTotals, ToolListChange};
use crate::base::hash::FastSet;
use crate::base::ordered::in_order;
use crate::error::{Error, Result};
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::strategy::Strategy;
use crate::sim::simulate::ContextWarning;

/// Files read and replayed ahead of the sums: this many per thread (enough that a long file does not
/// hold the others up, few enough to bound memory: each waits with its calls and replays).
const FILES_AHEAD_PER_THREAD: usize = 8;

/// What [`replay_logs`] replays, and how.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayRequest {
    /// The log files, in the order their results are summed and listed (a folder is expanded by the
    /// caller, e.g. with `input::walk`, into sorted files).
    pub files: Vec<PathBuf>,
    /// Model ids to bill and replay every call on; empty: each call on its own logged model (calls of
    /// models the catalog does not know are named in the outcome and left out).
    pub models: Vec<String>,
    /// Strategies to replay; empty: `cached`.
    pub strategies: Vec<Strategy>,
    /// How each log's sessions are rebuilt (a `prefix_tokens` of 0 is inferred per file when a
    /// strategy needs the stable prefix).
    pub options: ReplayOptions,
    /// Keep each file's per-call comparisons in the outcome ([`FileTotals::calls`]).
    pub keep_calls: bool,
    /// A file that cannot be read is listed in [`ReplayOutcome::files_skipped`] instead of being the
    /// error (`pcsim replay` does so with several files).
    pub skip_bad: bool,
    /// A tool-list change: each replay also re-billed with the changed tool list (counterfactual).
    pub(crate) change: Option<ToolListChange>,
}

impl ReplayRequest {
    /// A replay of `files` as `pcsim replay` runs it with no options: each call on its own model,
    /// strategy `cached`, calls not kept, a bad file skipped when there are several.
    pub fn new(files: Vec<PathBuf>) -> Self {
        let skip_bad = files.len() > 1;
        ReplayRequest {
            files,
            models: Vec::new(),
            strategies: Vec::new(),
            options: ReplayOptions::default(),
            keep_calls: false,
            skip_bad,
            change: None,
        }
    }

    /// With a tool-list change (`replay --remove-tools` and the like).
    pub(crate) fn with_change(mut self, change: Option<ToolListChange>) -> Self {
        self.change = change;
        self
    }
}

/// One file's figures in a [`ReplayOutcome`].
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FileReplay {
    /// The file (as the log names its origin).
    pub log: String,
    /// Bytes read.
    pub bytes: u64,
    /// Calls read (after calls already read from an earlier file are dropped).
    pub calls_logged: usize,
    /// Calls with a timestamp.
    pub timestamps: usize,
    /// Sub-agent (sidechain) calls.
    pub sidechain_calls: usize,
    /// Calls logged as failed, left out.
    pub failed_calls: usize,
    /// Records that could not be read.
    pub unreadable_records: usize,
    /// The stable prefix inferred from the file, when a strategy needed one and none was given.
    pub prefix_tokens_inferred: Option<u64>,
    /// One entry per (model, strategy) replayed on this file (none when no call is priced).
    pub results: Vec<FileTotals>,
}

/// One file replayed on one (model, strategy), or on each call's own model.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FileTotals {
    /// Model id (ids joined by `+` when each call is replayed on its own model).
    pub model: String,
    /// Strategy name, resolved (names joined by ` / ` over models).
    pub strategy: String,
    /// Conversations replayed.
    pub conversations: usize,
    /// Calls replayed.
    pub calls_total: u64,
    /// Logged buckets at pcsim's prices.
    pub logged: super::replay::Buckets,
    /// Predicted buckets and dollars.
    pub predicted: super::replay::Buckets,
    /// Predicted cache writes per TTL tier.
    pub predicted_write_tokens_by_tier: BTreeMap<String, u64>,
    /// Every call, logged against predicted ([`ReplayRequest::keep_calls`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<CallComparison>>,
}

/// What [`replay_logs`] found: the sums over every file per (model, strategy), the counters of the
/// logs read, and each file's own figures. The report layer renders it (`report::replay`).
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `report::replay` (feature `cli`)
#[derive(Debug)]
#[non_exhaustive]
pub struct ReplayOutcome {
    /// Each file replayed, in file order.
    pub files: Vec<FileReplay>,
    /// Files skipped, each with its error ([`ReplayRequest::skip_bad`]).
    pub files_skipped: Vec<String>,
    pub(crate) read: LogCounts,
    pub(crate) totals: Vec<Totals>,
    pub(crate) context: Vec<ContextWarning>,
    pub(crate) counterfactuals: Vec<Counterfactual>,
    pub(crate) change: Option<ToolListChange>,
    pub(crate) logged_totals: LoggedTotals,
    pub(crate) needs_prefix: bool,
    pub(crate) prefix_given: u64,
}

/// One (model, strategy) summed over files; with each call at its own model, one strategy summed
/// over every model the files name.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `report::replay` (feature `cli`)
#[derive(Debug, Default)]
pub(crate) struct Totals {
    /// The models replayed (one, or each call's own over the files).
    pub models: Vec<String>,
    /// The resolved strategy names (one per model kind).
    pub strategies: Vec<String>,
    pub conversations: usize,
    pub total: Tally,
    pub uncached_usd: f64,
    pub by_tier: BTreeMap<String, u64>,
    pub groups: BTreeMap<(&'static str, String), Tally>,
}

/// Counters of the logs read, summed over files.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `report::replay` (feature `cli`)
#[derive(Debug, Default)]
pub(crate) struct LogCounts {
    pub files: usize,
    pub bytes: u64,
    pub calls: usize,
    pub timestamps: usize,
    pub records_without_usage: usize,
    pub duplicates_merged: usize,
    pub sidechain_calls: usize,
    pub failed_calls: usize,
    pub unreadable: usize,
    pub unreadable_examples: Vec<String>,
    pub unknown_fields: BTreeMap<String, usize>,
    pub truncated: Vec<String>,
    pub prefix_inferred: Vec<u64>,
    pub prefix_unknown: usize,
    /// Logged buckets, each call at its own logged model's prices (calls of models the catalog does
    /// not know are left out and named in `unpriced`): what the log says was billed.
    pub own_models_usd: f64,
    /// Claude Code messages found again in a later file, counted once.
    pub duplicates_across_files: usize,
    /// Calls whose record gives only the total prompt (cache reads and writes unknown).
    pub cache_split_unknown: usize,
    /// Conversations of every file, every call counted (priced or not).
    pub conversations: usize,
    /// Calls a catalog model prices.
    pub priced_calls: usize,
    /// What the logs themselves say their priced calls cost, beside pcsim's repricing of them.
    pub stated: StatedCost,
    /// Calls of models the catalog does not know, by logged name, summed over files.
    pub unpriced: FirstSeen<String, UnpricedCalls>,
    /// Calls naming no model that took their file's only model.
    pub unnamed_at_file_model: usize,
    /// Warnings about one file each (mixed models, unreadable records), every file kept.
    pub file_warnings: Vec<String>,
}

impl LogCounts {
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
        if log.reordered_calls > 0 {
            self.file_warnings.push(format!(
                "{}: {} call{} logged after a call with a later timestamp; the calls are replayed in time order",
                log.origin,
                log.reordered_calls,
                if log.reordered_calls == 1 { " was" } else { "s were" },
            ));
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
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `report::replay` (feature `cli`)
#[derive(Debug, Default, Serialize)]
pub(crate) struct StatedCost {
    /// Calls whose record states a cost (and whose model the catalog prices).
    pub calls: usize,
    /// The costs the records state, summed.
    pub stated_usd: f64,
    /// The same calls' logged buckets at pcsim's prices of each call's own model.
    pub repriced_usd: f64,
}

impl StatedCost {
    /// `repriced - stated`, and that in percent of the stated cost.
    #[cfg(feature = "cli")]
    pub(crate) fn gap(&self) -> (f64, Option<f64>) {
        let gap = self.repriced_usd - self.stated_usd;
        (
            gap,
            (self.stated_usd > 0.0).then(|| gap / self.stated_usd * 100.0),
        )
    }
}

/// Calls left out of the totals, by model: `name (N calls, P prompt tokens, O output tokens)`, and
/// how to price them.
pub(crate) fn unpriced_text(unpriced: &[UnpricedCalls]) -> String {
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

impl ReplayOutcome {
    /// The logged total (each call at its own model's prices) against an invoice of `invoice_usd`.
    #[cfg(feature = "cli")]
    pub(crate) fn reconcile(
        &self,
        invoice_usd: f64,
    ) -> Result<crate::analysis::counterfactual::Reconciliation> {
        crate::analysis::counterfactual::reconcile(&self.logged_totals, invoice_usd)
    }
}

/// Adds one file's counterfactual to the sums per (model, strategy).
fn add_counterfactual(sums: &mut Vec<Counterfactual>, cf: Counterfactual) {
    match sums
        .iter_mut()
        .find(|s| s.model == cf.model && s.strategy == cf.strategy)
    {
        Some(s) => {
            s.predicted_usd += cf.predicted_usd;
            s.changed_usd += cf.changed_usd;
            s.saving_usd += cf.saving_usd;
            s.saving_percent = if s.predicted_usd > 0.0 {
                s.saving_usd / s.predicted_usd * 100.0
            } else {
                0.0
            };
            s.changed.add(&cf.changed);
        }
        None => sums.push(cf),
    }
}

/// What every file of a replay is run with.
struct Setup<'a> {
    catalog: &'a Catalog,
    chosen: &'a [&'a ModelSpec],
    strategies: &'a [Strategy],
    change: Option<&'a ToolListChange>,
    needs_prefix: bool,
    base_opts: &'a ReplayOptions,
}

/// One (model, strategy) replay of one file, before it is summed.
struct Run<'c> {
    /// Index of the totals it is added to.
    index: usize,
    /// The models of its parts.
    models: Vec<&'c str>,
    /// The parts' replays merged in log order.
    result: ReplayResult,
    /// Each part's context-window warning, in part order.
    context: Vec<Option<ContextWarning>>,
    /// Each part's counterfactual, in part order.
    counterfactuals: Vec<Counterfactual>,
    uncached_usd: f64,
    groups: BTreeMap<(&'static str, String), Tally>,
}

/// One file replayed on every (model, strategy), before it is summed (with its log).
struct FileWork<'c> {
    split: ModelSplit<'c>,
    conversations: usize,
    /// `Some(Some(n))`: inferred; `Some(None)`: needed and not inferable; `None`: not needed.
    prefix: Option<Option<u64>>,
    runs: Vec<Run<'c>>,
}

impl<'a> Setup<'a> {
    /// Replays one log on every (model, strategy): on the chosen models (every call), else each call
    /// on its own model (the parts merged back in log order). Touches no sum, so files run in
    /// parallel.
    fn file(&self, log: &UsageLog) -> Result<FileWork<'a>> {
        let mut matcher = ModelMatcher::new(self.catalog);
        let split = split_by_model(log, &mut matcher);
        let conversations = conversations(&log.calls, self.base_opts)
            .0
            .iter()
            .max()
            .map_or(0, |m| m + 1);
        let whole: Vec<usize> = (0..log.calls.len()).collect();
        // Each run: the parts of the log and the model each is replayed on.
        let runs: Vec<Vec<(&'a ModelSpec, &[usize])>> = if self.chosen.is_empty() {
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
        let mut prefix = None;
        if self.needs_prefix && opts.prefix_tokens == 0 {
            let inferred = infer_prefix_tokens(&log.calls, &opts);
            if let Some(n) = inferred {
                opts.prefix_tokens = n;
            }
            prefix = Some(inferred);
        }
        let mut out = Vec::new();
        for (ri, parts) in runs.iter().enumerate() {
            if parts.is_empty() {
                // No call of this file is priced: its calls are named as left out.
                continue;
            }
            for (si, s) in self.strategies.iter().enumerate() {
                let mut pieces = Vec::new();
                let mut uncached = 0.0;
                let mut context = Vec::new();
                let mut counterfactuals = Vec::new();
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
                            counterfactuals.push(cf);
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
                    context.push(crate::sim::simulate::context_warning(
                        m,
                        prompts,
                        Some(&log.origin),
                    ));
                    uncached += uncached_usd(m, part);
                    pieces.push((idx, r));
                }
                let result = merge_parts(log, pieces, &opts);
                let groups = tally_groups(log, &result);
                out.push(Run {
                    index: if self.chosen.is_empty() {
                        si
                    } else {
                        ri * self.strategies.len() + si
                    },
                    models: parts.iter().map(|(m, _)| m.id.as_str()).collect(),
                    result,
                    context,
                    counterfactuals,
                    uncached_usd: uncached,
                    groups,
                });
            }
        }
        Ok(FileWork {
            split,
            conversations,
            prefix,
            runs: out,
        })
    }
}

/// Replays the logs of `request` on its models and strategies and sums them over the files, as
/// `pcsim replay LOG...` does: the command's figures, whatever the number of threads.
///
/// Errors: an unknown model or a strategy a model cannot run; a file that cannot be read (unless
/// [`ReplayRequest::skip_bad`]); no call any catalog model prices (each model left out named), or no
/// log replayable at all.
// Over 120 lines: the chunk pipeline carries its state (logs read, replays made, the next chunk's
// failure) from step to step, and each step's two halves borrow the same locals.
pub fn replay_logs(catalog: &Catalog, request: &ReplayRequest) -> Result<ReplayOutcome> {
    let base_opts = &request.options;
    let gap = base_opts.session_gap_seconds;
    if !(gap.is_finite() && gap >= 0.0) {
        let problem = format!("value {gap} must be a non-negative number");
        return Err(Error::invalid("argument", "session_gap_seconds", problem));
    }
    let files = &request.files;
    let strategies: Vec<Strategy> = if request.strategies.is_empty() {
        vec![Strategy::parse("cached")?]
    } else {
        request.strategies.clone()
    };
    let chosen: Vec<&ModelSpec> = if request.models.is_empty() {
        Vec::new()
    } else {
        catalog.select(&request.models)?
    };
    let change = request.change.as_ref();
    // A tool-list change is made inside the stable prefix, so it needs one like the anchors do.
    let needs_prefix = strategies.iter().any(uses_prefix_anchors) || change.is_some();
    let setup = Setup {
        catalog,
        chosen: &chosen,
        strategies: &strategies,
        change,
        needs_prefix,
        base_opts,
    };
    let mut out = ReplayOutcome {
        files: Vec::new(),
        files_skipped: Vec::new(),
        read: LogCounts::default(),
        totals: Vec::new(),
        context: Vec::new(),
        counterfactuals: Vec::new(),
        change: request.change.clone(),
        logged_totals: LoggedTotals::default(),
        needs_prefix,
        prefix_given: base_opts.prefix_tokens,
    };
    // Claude Code messages already read from another file (a sub-agent's own transcript and its
    // progress lines in the parent's): each is one call, counted once.
    let mut seen_messages: FastSet<String> = FastSet::default();
    let threads = rayon::current_num_threads();
    // Each file read and replayed on the calls it read, on one thread; taken in file order.
    let work = |i: usize| {
        load_log(&files[i]).map(|log| {
            let replayed = setup.file(&log);
            (log, replayed)
        })
    };
    let take = |read: Result<(UsageLog, Result<FileWork<'_>>)>| -> Result<()> {
        // One unreadable file of many is reported and skipped; a single log's problem is the error.
        let (mut log, mut replayed) = match read {
            Ok(r) => r,
            Err(e) if request.skip_bad => {
                out.files_skipped.push(e.to_string());
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if files.len() > 1 && first_seen_messages(&mut log, &mut seen_messages, &mut out) {
            // Calls taken out: the file's replay was of calls counted in an earlier file.
            replayed = setup.file(&log);
        }
        out.add(log, replayed?, &chosen, request.keep_calls);
        Ok(())
    };
    in_order(
        files.len(),
        threads,
        threads * FILES_AHEAD_PER_THREAD,
        work,
        take,
    )?;
    replayable(&out, &chosen, files)?;
    Ok(out)
}

/// Refuses an outcome with nothing to show: no call any catalog model prices (each model left out
/// named) when no model was chosen, or no call replayed at all.
fn replayable(out: &ReplayOutcome, chosen: &[&ModelSpec], files: &[PathBuf]) -> Result<()> {
    if out.read.priced_calls == 0 && chosen.is_empty() {
        let mut problem = if out.read.unpriced.is_empty() {
            "no log could be replayed".to_string()
        } else {
            format!(
                "no call can be priced: {}",
                unpriced_text(out.read.unpriced.values())
            )
        };
        if !out.files_skipped.is_empty() {
            problem.push_str(&format!("; {}", out.files_skipped.join("; ")));
        }
        let origin = match files {
            [one] => one.display().to_string(),
            _ => "LOG".to_string(),
        };
        return Err(Error::invalid(origin, "model", problem));
    }
    if out.totals.iter().all(|a| a.total.calls == 0) {
        return Err(Error::Unsupported(format!(
            "no log could be replayed: {}",
            out.files_skipped.join("; ")
        )));
    }
    Ok(())
}

/// Takes out of `log` the calls of Claude Code messages that an earlier file already had (each
/// message is one call, counted once) and remembers its own; `true` when it took any out.
fn first_seen_messages(
    log: &mut UsageLog,
    seen: &mut FastSet<String>,
    out: &mut ReplayOutcome,
) -> bool {
    let before = log.calls.len();
    log.calls.retain(|c| match (&c.response_id, c.format) {
        (Some(id), "claude-code") => seen.insert(id.clone()),
        _ => true,
    });
    let dropped = before - log.calls.len();
    out.read.duplicates_across_files += dropped;
    dropped > 0
}

impl ReplayOutcome {
    /// Adds one file's replays to the sums, in the order one thread would.
    fn add(&mut self, log: UsageLog, w: FileWork, chosen: &[&ModelSpec], keep_calls: bool) {
        let FileWork {
            split,
            conversations,
            prefix,
            runs,
        } = w;
        let read = &mut self.read;
        read.add(&log);
        read.add_split(&log, &split, chosen);
        read.conversations += conversations;
        self.logged_totals.add_log(&split.per_call, &log);
        match prefix {
            Some(Some(n)) => read.prefix_inferred.push(n),
            Some(None) => read.prefix_unknown += 1,
            None => {}
        }
        let mut file = FileReplay {
            log: log.origin.clone(),
            bytes: log.bytes,
            calls_logged: log.calls.len(),
            timestamps: log.calls.iter().filter(|c| c.unix_time.is_some()).count(),
            sidechain_calls: log.sidechain_calls,
            failed_calls: log.failed_calls,
            unreadable_records: log.unreadable,
            prefix_tokens_inferred: prefix.flatten(),
            results: Vec::new(),
        };
        for run in runs {
            for cf in run.counterfactuals {
                add_counterfactual(&mut self.counterfactuals, cf);
            }
            for w in run.context {
                crate::sim::simulate::merge_context_warnings(
                    &mut self.context,
                    w.into_iter().collect(),
                );
            }
            while self.totals.len() <= run.index {
                self.totals.push(Totals::default());
            }
            let acc = &mut self.totals[run.index];
            for m in run.models {
                if !acc.models.iter().any(|x| x == m) {
                    acc.models.push(m.to_string());
                }
            }
            let r = run.result;
            for name in r.strategy.split(" / ") {
                if !acc.strategies.iter().any(|x| x == name) {
                    acc.strategies.push(name.to_string());
                }
            }
            acc.conversations += r.conversations;
            let mut own = Tally::default();
            for c in &r.calls {
                acc.total.add_call(c);
                own.add_call(c);
            }
            acc.uncached_usd += run.uncached_usd;
            for (k, n) in &r.predicted_write_tokens_by_tier {
                *acc.by_tier.entry(k.clone()).or_default() += n;
            }
            for (k, t) in run.groups {
                acc.groups.entry(k).or_default().add(&t);
            }
            file.results.push(FileTotals {
                model: r.model,
                strategy: r.strategy,
                conversations: r.conversations,
                calls_total: own.calls,
                logged: own.logged,
                predicted: own.predicted,
                predicted_write_tokens_by_tier: r.predicted_write_tokens_by_tier,
                calls: keep_calls.then_some(r.calls),
            });
        }
        self.files.push(file);
    }
}
