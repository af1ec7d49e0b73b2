//! `fit`: a scenario fitted to a usage history. The logs are split into conversations as `replay`
//! splits them (session id, agent, sidechain, optional time gap); each main-agent conversation is one
//! scenario session. From each conversation's calls (prompt, output and time of each):
//! - calls per session: the number of calls;
//! - first message: the first prompt minus the stable prefix (tools + system prompt);
//! - new input per later call: the prompt's growth beyond the previous call's prompt and output
//!   (a tool result and a user turn together: a log cannot tell them apart, so both go to
//!   `tool_result_tokens` and `user_tokens` stays 0);
//! - output tokens of every call;
//! - gaps between the starts of consecutive calls (where both are timestamped);
//! - arrivals: the gaps between the starts of consecutive conversations of a file (Poisson when
//!   they vary, `every_seconds` when they do not).
//!
//! The stable prefix is inferred as `replay` infers it (the fewest tokens a conversation start reads
//! from cache), unless given. With tool files, the prefix is split into their tool block (on the
//! fitted model's rendering) and the system prompt; without, it is all system prompt.
//! Each distribution is fitted by [`super::fitdist::fit_quantity`].
//!
//! One concept: a scenario fitted to a usage history, one quantity of the scenario at a time.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fitdist::{fit_quantity, FittedQuantity, ParamEstimate};
use super::replay::{conversations, infer_prefix_tokens, FirstSeen, ReplayOptions};
use crate::base::quantity::Quantity;
use crate::error::{Error, Result};
use crate::input::scenario::{
    MAX_CALLS_PER_RUN, MAX_CALLS_PER_SESSION, MAX_SECONDS, MAX_SESSIONS, MAX_SESSION_LENGTHS,
    MIN_POISSON_PER_HOUR,
};
use crate::input::usagelog::UsageLog;
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::tools::Tool;

/// How a history is read and fitted.
#[derive(Debug, Clone)]
pub(crate) struct FitOptions {
    /// Stable prefix tokens (tools + system prompt); `None`: inferred from the logs' cache reads.
    pub prefix_tokens: Option<u64>,
    /// A pause longer than this between two calls of a session starts a new conversation; 0: never.
    pub session_gap_seconds: f64,
    /// Confidence level of the intervals (e.g. 0.95).
    pub confidence: f64,
    /// How session lengths are fitted.
    pub lengths: SessionLengths,
    /// A compaction (a prompt shorter than the one before) ends a scenario session and starts the
    /// next, which shares only the stable prefix, as the cache sees it; `false`: kept inside its
    /// conversation (no growth value), as `fit` did before.
    pub split_compactions: bool,
    /// `--model`: every session is fitted and checked on the scenario's model (`fit` before
    /// per-session models); `false`: each session is checked on its own model. Either way the
    /// history's logged total bills each call at its own model's prices, as `replay` does.
    pub one_model: bool,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            prefix_tokens: None,
            session_gap_seconds: 0.0,
            confidence: 0.95,
            lengths: SessionLengths::Empirical,
            split_compactions: true,
            one_model: false,
        }
    }
}

/// How the fitted scenario's session lengths are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SessionLengths {
    /// Each session's length drawn from the history's lengths (`calls = { dist = "empirical" }`).
    Empirical,
    /// Every session the history's mean length, rounded (`fit` before heavy-tailed histories).
    Mean,
}

/// Where the stable prefix came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PrefixSource {
    /// `--prefix-tokens`.
    Given,
    /// The fewest tokens read from cache by a call that starts a conversation.
    InferredFromCacheReads,
    /// No conversation start reads the cache: the prefix is taken as the tool block alone.
    Unknown,
}

/// One scenario parameter fitted to the history.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FittedField {
    /// Scenario field (`session.output_tokens`).
    pub field: String,
    /// What was measured.
    pub what: String,
    /// The fit; `null` when the history has no value for it (the scenario keeps its default).
    pub fit: Option<FittedQuantity>,
}

/// The calls per session.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FittedCalls {
    /// Sessions (conversations) fitted.
    pub sessions: usize,
    /// Fewest calls of a session.
    pub min: usize,
    /// Most calls of a session.
    pub max: usize,
    /// Mean calls per session, with its interval; the estimate is written rounded (a scenario has
    /// one call count per session).
    pub mean: ParamEstimate,
    /// What the scenario gets: the most calls of a session (with `lengths`), else every
    /// session's.
    pub calls: usize,
    /// The session lengths the scenario draws from (`null`: every session makes `calls`).
    pub lengths: Option<Vec<usize>>,
}

/// How sessions arrive.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FittedArrivals {
    /// `single` (one session), `every` (fixed spacing) or `poisson`.
    pub kind: &'static str,
    /// The fit of the gaps between session starts (`null` with one session, or without timestamps).
    pub gaps: Option<FittedQuantity>,
    /// Sessions per hour with its interval (Poisson only).
    pub per_hour: Option<ParamEstimate>,
    /// Seconds between session starts (`every` only).
    pub every_seconds: Option<f64>,
}

/// The scenario sessions (conversation segments) of one model: those whose calls name it most.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SessionModel {
    /// The model: its catalog id, or the name the logs give when the catalog has no such model.
    pub model: String,
    /// Sessions whose calls are mostly on it.
    pub sessions: usize,
    /// The calls of those sessions.
    pub calls: usize,
}

/// A scenario fitted to a usage history, with the fit quality of every parameter.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryFit {
    /// The logs fitted.
    pub origin: String,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// The model of the scenario.
    pub model: String,
    /// Calls read from the logs.
    pub calls_logged: usize,
    /// The sessions by model (each session's most frequent model), most sessions first.
    pub session_models: Vec<SessionModel>,
    /// The models the check simulates, with their numbers of sessions: the mix of
    /// `session_models` (sessions on models outside the catalog go to the scenario's model), or
    /// the scenario's model alone with `--model` or a one-model history.
    #[serde(skip)]
    pub check_models: Vec<(String, usize)>,
    /// `--model` forced one model for everything.
    #[serde(skip)]
    pub one_model: bool,
    /// Sub-agent (sidechain) calls left out: the scenario format has no sub-agents.
    pub sidechain_calls_left_out: usize,
    /// Calls whose prompt is shorter than the previous one (compaction, `/clear`) kept inside
    /// their conversation: no growth value.
    pub restarts: usize,
    /// Compactions that ended a scenario session and started the next.
    pub compactions: usize,
    /// The main-agent calls' logged buckets, each call at its own model's prices (as `replay` bills
    /// them): what the scenario should reproduce.
    pub logged_usd: f64,
    /// Calls whose prompt grew by less than the previous call's output (e.g. thinking tokens not
    /// sent back): no growth value.
    pub growth_below_output: usize,
    /// Stable prefix tokens (tools + system prompt).
    pub prefix_tokens: u64,
    /// Where the prefix came from.
    pub prefix_source: PrefixSource,
    /// Tokens of the given tools' block on the model (0 without tool files).
    pub tool_block_tokens: u64,
    /// System prompt tokens: the prefix minus the tool block.
    pub system_tokens: u64,
    /// Whether the sessions share one cache (a conversation start reads what another wrote).
    pub shared_cache: bool,
    /// Calls per session.
    pub calls: FittedCalls,
    /// Sessions and their arrivals.
    pub arrivals: FittedArrivals,
    /// The fitted distributions: first message, new input per call, output, gaps.
    pub fields: Vec<FittedField>,
    /// Notes on what could not be fitted or was left out.
    pub notes: Vec<String>,
}

/// What one conversation shows.
#[derive(Debug)]
struct Conv {
    /// Calls in time order: (prompt, output, time from the file's first call, timestamped).
    calls: Vec<(u64, u64, f64, bool)>,
    /// The logged buckets of each call: uncached, 5-minute and 1-hour writes, reads, output.
    buckets: Vec<[u64; 5]>,
    /// The first call reads from cache.
    start_reads: bool,
    /// The model each call names (an index into [`HistoryReader::names`]).
    models: Vec<Option<u32>>,
}

/// What a history shows, gathered one log at a time (the logs themselves need not stay in memory:
/// a few numbers per call are kept).
#[derive(Debug)]
pub(crate) struct HistoryReader {
    origins: Vec<String>,
    ropts: ReplayOptions,
    convs: Vec<Conv>,
    session_starts: Vec<Vec<f64>>,
    sidechain: usize,
    inferred: Option<u64>,
    calls_logged: usize,
    any_read: bool,
    models: FirstSeen<String, usize>,
    split_compactions: bool,
    compactions: usize,
    /// Every model name the calls give, once (what [`Conv::models`] index).
    names: Vec<String>,
    /// The index of each name in `names`.
    name_index: std::collections::HashMap<String, u32>,
}

impl HistoryReader {
    /// A reader splitting conversations as `opts` says.
    pub(crate) fn new(opts: &FitOptions) -> Result<Self> {
        if !(opts.session_gap_seconds.is_finite() && opts.session_gap_seconds >= 0.0) {
            return Err(Error::invalid(
                "command line",
                "--session-gap-minutes",
                "must be a non-negative number",
            ));
        }
        Ok(HistoryReader {
            origins: Vec::new(),
            ropts: ReplayOptions {
                session_gap_seconds: opts.session_gap_seconds,
                ..ReplayOptions::default()
            },
            convs: Vec::new(),
            session_starts: Vec::new(),
            sidechain: 0,
            inferred: None,
            calls_logged: 0,
            any_read: false,
            models: FirstSeen::default(),
            split_compactions: opts.split_compactions,
            compactions: 0,
            names: Vec::new(),
            name_index: std::collections::HashMap::new(),
        })
    }

    /// Adds one log: its conversations, session starts, prefix and models.
    pub(crate) fn add_log(&mut self, log: &UsageLog) {
        self.origins.push(log.origin.clone());
        self.calls_logged += log.calls.len();
        for m in log.calls.iter().filter_map(|c| c.model.as_deref()) {
            *self.models.get_or_insert_with(m, || 0) += 1;
        }
        let (conv, times) = conversations(&log.calls, &self.ropts);
        let mut by_conv: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, &k) in conv.iter().enumerate() {
            by_conv.entry(k).or_default().push(i);
        }
        let mut starts = Vec::new();
        for idx in by_conv.values_mut() {
            if log.calls[idx[0]].sidechain {
                self.sidechain += idx.len();
                continue;
            }
            idx.sort_by(|&a, &b| times[a].total_cmp(&times[b]).then(a.cmp(&b)));
            self.any_read |= idx.iter().any(|&i| log.calls[i].cache_read_tokens > 0);
            // A compaction (the prompt shrinks) starts the next scenario session.
            let mut segments: Vec<&[usize]> = Vec::new();
            let mut from = 0;
            for k in 1..idx.len() {
                let shrinks = log.calls[idx[k]].prompt_tokens < log.calls[idx[k - 1]].prompt_tokens;
                if shrinks && self.split_compactions {
                    segments.push(&idx[from..k]);
                    from = k;
                }
            }
            segments.push(&idx[from..]);
            self.compactions += segments.len() - 1;
            for seg in segments {
                let models = seg
                    .iter()
                    .map(|&i| log.calls[i].model.as_deref().map(|m| self.name_id(m)))
                    .collect();
                let first = &log.calls[seg[0]];
                if first.unix_time.is_some() {
                    starts.push(times[seg[0]]);
                }
                self.convs.push(Conv {
                    calls: seg
                        .iter()
                        .map(|&i| {
                            let c = &log.calls[i];
                            (
                                c.prompt_tokens,
                                c.output_tokens,
                                times[i],
                                c.unix_time.is_some(),
                            )
                        })
                        .collect(),
                    buckets: seg
                        .iter()
                        .map(|&i| {
                            let c = &log.calls[i];
                            [
                                c.uncached_tokens,
                                c.cache_write_5m_tokens,
                                c.cache_write_1h_tokens,
                                c.cache_read_tokens,
                                c.output_tokens,
                            ]
                        })
                        .collect(),
                    start_reads: first.cache_read_tokens > 0,
                    models,
                });
            }
        }
        starts.sort_by(f64::total_cmp);
        self.session_starts.push(starts);
        if let Some(p) = infer_prefix_tokens(&log.calls, &self.ropts) {
            self.inferred = Some(self.inferred.map_or(p, |q| q.min(p)));
        }
    }

    /// The index of model name `m` in `names`, added when new.
    fn name_id(&mut self, m: &str) -> u32 {
        if let Some(&k) = self.name_index.get(m) {
            return k;
        }
        let k = self.names.len() as u32;
        self.names.push(m.to_string());
        self.name_index.insert(m.to_string(), k);
        k
    }

    /// The most frequent model the logs name (the first of equals).
    pub(crate) fn model(&self) -> Option<String> {
        let mut best: Option<(&String, &usize)> = None;
        for x in self.models.iter() {
            if best.is_none_or(|b| x.1 > b.1) {
                best = Some(x);
            }
        }
        best.map(|(n, _)| n.clone())
    }

    /// Fits the scenario on `model`; `tools` (may be empty) is the tool list the history was made
    /// with; `catalog` prices each call at its own model. Errors name the logs and what is missing.
    pub(crate) fn fit(
        self,
        catalog: &Catalog,
        model: &ModelSpec,
        tools: &[Tool],
        opts: &FitOptions,
    ) -> Result<HistoryFit> {
        fit_read(self, catalog, model, tools, opts)
    }
}

fn field(field: &str, what: &str, values: &[f64], confidence: f64) -> FittedField {
    FittedField {
        field: field.into(),
        what: what.into(),
        fit: fit_quantity(values, confidence, &[]),
    }
}

// Over 120 lines: the fit reads the conversations once and draws every fitted field, note and limit
// from that pass; the per-field fits are already functions (fit_quantity, session_mix), what
// remains is the pass and the notes it gathers.
fn fit_read(
    r: HistoryReader,
    catalog: &Catalog,
    model: &ModelSpec,
    tools: &[Tool],
    opts: &FitOptions,
) -> Result<HistoryFit> {
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(Error::invalid(
            "command line",
            "--confidence",
            format!(
                "value {} must be between 0 and 1 (e.g. 0.95)",
                opts.confidence
            ),
        ));
    }
    let origin = r.origins.join(", ");
    let HistoryReader {
        convs,
        session_starts,
        sidechain,
        inferred,
        calls_logged,
        any_read,
        compactions,
        models,
        names,
        ..
    } = r;
    if convs.is_empty() {
        return Err(Error::invalid(
            origin,
            "calls",
            "the logs hold no main-agent call to fit (only sub-agent calls, or none)",
        ));
    }
    let mut notes = Vec::new();
    if models.len() > 1 {
        let list = models
            .iter()
            .map(|(m, n)| format!("{m} ({n} call{})", if *n == 1 { "" } else { "s" }))
            .collect::<Vec<_>>()
            .join(", ");
        notes.push(if opts.one_model {
            // `--model`: sessions on others are fitted (and checked) as if on it.
            format!(
                "the logs name {} models: {list}; the scenario has one, {}, and every session is fitted and checked on it",
                models.len(),
                model.id
            )
        } else {
            format!(
                "the logs name {} models: {list}; each call is billed at its own model's prices and the check simulates each session on its most frequent model, with the same fitted distributions; the scenario file has one model per run, {} (`run` on it simulates every session on that one)",
                models.len(),
                model.id
            )
        });
    }
    let mix = session_mix(&convs, &names, catalog, model, opts.one_model, &mut notes);
    let tool_block_tokens = model.rendering().block_tokens(tools);
    let (prefix_tokens, prefix_source) = match (opts.prefix_tokens, inferred) {
        (Some(p), _) => (p, PrefixSource::Given),
        (None, Some(p)) => (p, PrefixSource::InferredFromCacheReads),
        (None, None) => {
            notes.push(format!(
                "no conversation start reads a cached prefix, so the stable prefix cannot be inferred: taken as the tool block alone ({tool_block_tokens} tokens), the rest of each first prompt as its first message; give --prefix-tokens N if you know it"
            ));
            (tool_block_tokens, PrefixSource::Unknown)
        }
    };
    if tool_block_tokens > prefix_tokens {
        return Err(Error::invalid(
            origin,
            "prefix",
            format!(
                "the tool files make a {tool_block_tokens}-token tool block on {}, more than the {prefix_tokens}-token stable prefix of the logs ({}): these are not the tools the history was made with, or give --prefix-tokens",
                model.id,
                match prefix_source {
                    PrefixSource::Given => "--prefix-tokens",
                    _ => "inferred from cache reads at conversation starts",
                }
            ),
        ));
    }
    let system_tokens = prefix_tokens - tool_block_tokens;

    let (mut first, mut growth, mut output, mut gaps, mut counts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut restarts, mut below_output, mut short_first) = (0, 0, 0);
    for c in &convs {
        counts.push(c.calls.len() as f64);
        let (p1, ..) = c.calls[0];
        match p1.checked_sub(prefix_tokens) {
            Some(x) => first.push(x as f64),
            None => short_first += 1,
        }
        for (i, &(p, o, t, stamped)) in c.calls.iter().enumerate() {
            output.push(o as f64);
            if i == 0 {
                continue;
            }
            let (pp, po, pt, pstamped) = c.calls[i - 1];
            if stamped && pstamped {
                gaps.push(micros(t - pt));
            }
            if p < pp {
                restarts += 1;
            } else if p < pp.saturating_add(po) {
                below_output += 1;
            } else {
                growth.push((p - pp - po) as f64);
            }
        }
    }
    if short_first == convs.len() {
        let (field, why) = match prefix_source {
            PrefixSource::Given => ("--prefix-tokens", "the value given"),
            _ => ("prefix", "the tool block of the --tools files"),
        };
        return Err(Error::invalid(
            if prefix_source == PrefixSource::Given { "command line".to_string() } else { origin },
            field,
            format!(
                "every conversation starts with fewer tokens than the {prefix_tokens}-token stable prefix ({why}): the prefix cannot be that large"
            ),
        ));
    }
    if short_first > 0 {
        notes.push(format!(
            "{short_first} conversation{} start{} with fewer tokens than the stable prefix: no first-message value",
            if short_first == 1 { "" } else { "s" },
            if short_first == 1 { "s" } else { "" }
        ));
    }
    if restarts > 0 {
        notes.push(format!(
            "{restarts} call{} with a shorter prompt than the call before (compaction, /clear) give no growth value",
            if restarts == 1 { "" } else { "s" }
        ));
    }
    if below_output > 0 {
        notes.push(format!(
            "{below_output} call{} grew by less than the previous output (thinking not sent back?): no growth value",
            if below_output == 1 { "" } else { "s" }
        ));
    }
    if sidechain > 0 {
        notes.push(format!(
            "{sidechain} sub-agent (sidechain) call{} left out: the scenario format has no sub-agents",
            if sidechain == 1 { "" } else { "s" }
        ));
    }
    let c = opts.confidence;
    let fields = vec![
        field(
            "session.first_user_tokens",
            "first message (first prompt minus the stable prefix)",
            &first,
            c,
        ),
        field(
            "session.tool_result_tokens",
            "new input per later call (prompt growth beyond the previous output)",
            &growth,
            c,
        ),
        field(
            "session.output_tokens",
            "output tokens per call",
            &output,
            c,
        ),
        field(
            "session.gap_seconds",
            "seconds between the starts of consecutive calls",
            &gaps,
            c,
        ),
    ];
    let mut fields = fields;
    if let Some(q) = fields
        .iter_mut()
        .find(|f| f.field == "session.gap_seconds")
        .and_then(|f| f.fit.as_mut())
    {
        if let Some(capped) = cap_duration(&q.quantity) {
            notes.push(format!(
                "the gaps between calls fit {} with a mean of {:.0} s, beyond a scenario's limit of {MAX_SECONDS} s (30 days) on any duration: the scenario's gap distribution is scaled down to a mean of {:.0} s",
                q.family,
                q.quantity.mean(),
                capped.mean()
            ));
            q.quantity = capped;
        }
    }
    if gaps.is_empty() && counts.iter().any(|&n| n > 1.0) {
        notes.push(
            "the logs carry no timestamps: gap_seconds and the arrivals keep the scenario defaults"
                .into(),
        );
    }

    let n_sessions = convs.len();
    check_history_limits(&origin, &counts)?;
    let lengths = if opts.lengths == SessionLengths::Empirical
        && n_sessions > MAX_SESSION_LENGTHS
        && counts.iter().any(|&x| x != counts[0])
    {
        notes.push(format!(
            "{n_sessions} sessions are more than the {MAX_SESSION_LENGTHS} lengths an empirical session-length list holds: every scenario session makes the mean length (as --session-lengths mean)"
        ));
        SessionLengths::Mean
    } else {
        opts.lengths
    };
    let fitted_calls = fit_calls(&counts, c, lengths, &mut notes)?;
    if compactions > 0 {
        notes.push(format!(
            "{compactions} compaction{} (a prompt shorter than the one before) each end a session and start the next, which shares only the stable prefix: the scenario has {n_sessions} sessions",
            if compactions == 1 { "" } else { "s" }
        ));
    }

    let between: Vec<f64> = session_starts
        .iter()
        .flat_map(|s| s.windows(2).map(|w| micros(w[1] - w[0])))
        .collect();
    let arrivals = if n_sessions == 1 || between.is_empty() {
        FittedArrivals {
            kind: "single",
            gaps: None,
            per_hour: None,
            every_seconds: None,
        }
    } else {
        let g = fit_quantity(&between, c, &["exponential"])
            .ok_or_else(|| Error::Internal("no gap between session starts".into()))?;
        match &g.quantity {
            Quantity::Fixed { value } => FittedArrivals {
                kind: "every",
                every_seconds: Some(if *value > MAX_SECONDS {
                    notes.push(format!(
                        "sessions start every {value:.0} s, beyond a scenario's limit of {MAX_SECONDS} s (30 days) on any duration: the scenario's sessions start every {MAX_SECONDS} s"
                    ));
                    MAX_SECONDS
                } else {
                    *value
                }),
                gaps: Some(g.clone()),
                per_hour: None,
            },
            _ => {
                let m = &g.params[0];
                let mut estimate = 3600.0 / m.estimate;
                if estimate.is_nan() || estimate < MIN_POISSON_PER_HOUR {
                    notes.push(format!(
                        "sessions arrive at {estimate:.6} per hour, below a scenario's smallest Poisson rate of {MIN_POISSON_PER_HOUR} per hour: the scenario uses {MIN_POISSON_PER_HOUR}"
                    ));
                    estimate = MIN_POISSON_PER_HOUR;
                }
                let per_hour = ParamEstimate {
                    name: "per_hour".into(),
                    estimate,
                    low: 3600.0 / m.high,
                    high: 3600.0 / m.low,
                };
                FittedArrivals {
                    kind: "poisson",
                    gaps: Some(g.clone()),
                    per_hour: Some(per_hour),
                    every_seconds: None,
                }
            }
        }
    };
    Ok(HistoryFit {
        origin,
        confidence: c,
        model: model.id.clone(),
        calls_logged,
        session_models: mix.session_models,
        check_models: mix.check_models,
        one_model: opts.one_model,
        sidechain_calls_left_out: sidechain,
        restarts,
        compactions,
        logged_usd: mix.logged_usd,
        growth_below_output: below_output,
        prefix_tokens,
        prefix_source,
        tool_block_tokens,
        system_tokens,
        // Separate caches are shown by calls that read but never at a conversation start.
        shared_cache: !any_read || convs.iter().any(|c| c.start_reads),
        calls: fitted_calls,
        arrivals,
        fields,
        notes,
    })
}

/// The history's sessions by model, the models the check simulates, and the logged total.
struct Mix {
    session_models: Vec<SessionModel>,
    check_models: Vec<(String, usize)>,
    logged_usd: f64,
}

/// Each session's model (its calls' most frequent, the first of equals), the mix the check
/// simulates (every session on `model` with `one_model`) and the history's logged total: each
/// call at its own model's prices (a call on a model outside the catalog, or naming none, at the
/// model its session is checked on).
// Over 120 lines: one pass over the sessions that gathers five tallies at once (labels, session
// models, check models, models off the catalog, the logged total), then the notes on them.
fn session_mix(
    convs: &[Conv],
    names: &[String],
    catalog: &Catalog,
    model: &ModelSpec,
    one_model: bool,
    notes: &mut Vec<String>,
) -> Mix {
    let resolved: Vec<Option<&ModelSpec>> = names
        .iter()
        .map(|n| super::replay::match_model(catalog, n))
        .collect();
    // One label per model: its catalog id, or the name the logs give (names of one model share it).
    let mut labels: Vec<(String, Option<&ModelSpec>)> = Vec::new();
    let label_of: Vec<usize> = names
        .iter()
        .zip(&resolved)
        .map(|(n, r)| {
            let l = r.map_or_else(|| n.clone(), |m| m.id.clone());
            labels.iter().position(|x| x.0 == l).unwrap_or_else(|| {
                labels.push((l, *r));
                labels.len() - 1
            })
        })
        .collect();
    let mut session_models: Vec<SessionModel> = Vec::new();
    let mut check_models: Vec<(String, usize)> = Vec::new();
    let mut off_catalog: BTreeMap<String, usize> = BTreeMap::new();
    let mut off_catalog_sessions = 0usize;
    let mut logged_usd = 0.0;
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for c in convs {
        // The session's model: the label its calls name most, the first of equals.
        counts.clear();
        for &k in c.models.iter().flatten() {
            let l = label_of[k as usize];
            match counts.iter_mut().find(|x| x.0 == l) {
                Some(x) => x.1 += 1,
                None => counts.push((l, 1)),
            }
        }
        let mut best: Option<(usize, usize)> = None;
        for &x in &counts {
            if best.is_none_or(|b| x.1 > b.1) {
                best = Some(x);
            }
        }
        // A session naming no model is the scenario's model's.
        let (name, spec) = best.map_or((model.id.clone(), Some(model)), |(l, _)| {
            (labels[l].0.clone(), labels[l].1)
        });
        match session_models.iter_mut().find(|s| s.model == name) {
            Some(s) => {
                s.sessions += 1;
                s.calls += c.calls.len();
            }
            None => session_models.push(SessionModel {
                model: name,
                sessions: 1,
                calls: c.calls.len(),
            }),
        }
        off_catalog_sessions += usize::from(spec.is_none());
        let simulated = match spec {
            Some(m) if !one_model => m,
            _ => model,
        };
        match check_models.iter_mut().find(|(m, _)| *m == simulated.id) {
            Some((_, k)) => *k += 1,
            None => check_models.push((simulated.id.clone(), 1)),
        }
        for (b, m) in c.buckets.iter().zip(&c.models) {
            let own = match m {
                Some(k) => match resolved[*k as usize] {
                    Some(spec) => spec,
                    None => {
                        *off_catalog.entry(names[*k as usize].clone()).or_default() += 1;
                        simulated
                    }
                },
                None => simulated,
            };
            logged_usd += logged_bucket_usd(own, b);
        }
    }
    if !off_catalog.is_empty() {
        let calls: usize = off_catalog.values().sum();
        notes.push(format!(
            "{calls} call{} on model{} outside the catalog ({}) {} billed at the prices of the model {} session is checked on, and {off_catalog_sessions} session{} mostly on such models {} checked on {}",
            if calls == 1 { "" } else { "s" },
            if off_catalog.len() == 1 { "" } else { "s" },
            off_catalog
                .iter()
                .map(|(m, n)| format!("{m}: {n} call{}", if *n == 1 { "" } else { "s" }))
                .collect::<Vec<_>>()
                .join(", "),
            if calls == 1 { "is" } else { "are" },
            if calls == 1 { "its" } else { "their" },
            if off_catalog_sessions == 1 { "" } else { "s" },
            if off_catalog_sessions == 1 { "is" } else { "are" },
            model.id
        ));
    }
    if one_model {
        if let [only] = session_models.as_slice() {
            if only.model != model.id {
                notes.push(format!(
                    "--model {}: the sessions ran on {}; the check simulates them on {} against the history's bill at {}'s prices, so a FAIL says the history would cost otherwise on {}, not that the fit is wrong",
                    model.id, only.model, model.id, only.model, model.id
                ));
            }
        }
    }
    // Most sessions first (then most calls; the first seen of equals).
    session_models.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(b.calls.cmp(&a.calls)));
    check_models.sort_by_key(|x| std::cmp::Reverse(x.1));
    Mix {
        session_models,
        check_models,
        logged_usd,
    }
}

/// The fitted scenario run on its model under its `cached` strategy (or, for a history of several
/// session models, each model's sessions on it, summed run by run): the history's logged total
/// against the runs' 5th to 95th percentiles.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FitCheck {
    /// Monte Carlo runs of the fitted scenario.
    pub runs: u64,
    /// The strategy simulated (`cached`, resolved; each model's when they differ).
    pub strategy: String,
    /// The history's main-agent calls, each at its own model's prices.
    pub logged_usd: f64,
    /// 5th percentile of the runs' totals.
    pub p5_usd: f64,
    /// 95th percentile of the runs' totals.
    pub p95_usd: f64,
    /// Mean of the runs' totals.
    pub mean_usd: f64,
    /// Whether the logged total lies within p5–p95: the scenario reproduces the history.
    pub reproduces: bool,
}

/// Runs `scenario` (as fitted from `fit`) `runs` times under `cached` and checks the history's
/// logged total against the runs' p5–p95. A history of several session models is simulated as
/// its mix: for each model, the scenario with that model's number of sessions on it; run i of
/// every model (run i's seed) summed.
pub(crate) fn check_fit(
    catalog: &Catalog,
    scenario: crate::input::scenario::Scenario,
    fit: &HistoryFit,
    runs: u64,
) -> Result<FitCheck> {
    if fit.simulates_mix() {
        return check_mix(catalog, scenario, fit, runs);
    }
    let (model, logged_usd) = (&fit.model, fit.logged_usd);
    let request = crate::sim::request::Selection::new(&[model.to_string()], &["cached".into()])
        .overrides(Some(runs), None)
        .resolve(catalog, scenario)?;
    let report = crate::sim::simulate::run_request(&request, &|_| {})?;
    let r = report
        .results
        .first()
        .ok_or_else(|| Error::Internal("the fitted scenario simulated nothing".into()))?;
    let (p5, p95, mean) = match &r.montecarlo {
        Some(mc) => (mc.p5_usd, mc.p95_usd, mc.mean_usd),
        None => (r.total_usd, r.total_usd, r.total_usd),
    };
    Ok(FitCheck {
        runs,
        strategy: r.strategy.clone(),
        logged_usd,
        p5_usd: p5,
        p95_usd: p95,
        mean_usd: mean,
        reproduces: p5 <= logged_usd && logged_usd <= p95,
    })
}

/// [`check_fit`] of a mix of models.
fn check_mix(
    catalog: &Catalog,
    scenario: crate::input::scenario::Scenario,
    fit: &HistoryFit,
    runs: u64,
) -> Result<FitCheck> {
    let mut sums = vec![0.0; runs as usize];
    let mut strategies: Vec<(String, String)> = Vec::new();
    for (m, sessions) in &fit.check_models {
        let mut s = scenario.clone();
        s.models = vec![m.clone()];
        s.sessions = *sessions;
        let request =
            crate::sim::request::Selection::new(std::slice::from_ref(m), &["cached".into()])
                .overrides(Some(runs), None)
                .resolve(catalog, s)?;
        let pair = request.pairs.first().ok_or_else(|| {
            Error::Unsupported(format!(
                "the check of the fit cannot simulate `cached` on {m}: {}",
                request
                    .skipped
                    .iter()
                    .map(|k| k.reason.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        })?;
        strategies.push((m.clone(), pair.resolved.name.clone()));
        let setups = request.setups(&request.scenario);
        let set = crate::sim::engine::PreparedSet::new(&request.scenario, &setups);
        let totals = super::uncertainty::run_totals(&set, runs, &|_| {})?;
        for (sum, run) in sums.iter_mut().zip(&totals) {
            *sum += run[0];
        }
    }
    let s = crate::sim::stats::Summary::of(&mut sums)
        .ok_or_else(|| Error::Internal("the fitted scenario simulated no run".into()))?;
    // One strategy name when every model resolves `cached` alike, else each model's.
    let strategy = if strategies.iter().all(|(_, x)| *x == strategies[0].1) {
        strategies[0].1.clone()
    } else {
        strategies
            .iter()
            .map(|(m, x)| format!("{x} on {m}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(FitCheck {
        runs,
        strategy,
        logged_usd: fit.logged_usd,
        p5_usd: s.p5,
        p95_usd: s.p95,
        mean_usd: s.mean,
        reproduces: s.p5 <= fit.logged_usd && fit.logged_usd <= s.p95,
    })
}

/// Dollars of one call's logged buckets (uncached, 5-minute and 1-hour writes, reads, output) at
/// `model`'s prices, as `replay` bills them.
fn logged_bucket_usd(model: &ModelSpec, b: &[u64; 5]) -> f64 {
    let call = crate::input::usagelog::LoggedCall {
        at: String::new(),
        format: "fit",
        model: None,
        unix_time: None,
        session: None,
        agent: None,
        sidechain: false,
        project: None,
        prompt_tokens: b[0] + b[1] + b[2] + b[3],
        uncached_tokens: b[0],
        cache_write_5m_tokens: b[1],
        cache_write_1h_tokens: b[2],
        cache_read_tokens: b[3],
        output_tokens: b[4],
        stated_usd: None,
        response_id: None,
    };
    super::replay::logged_usd(model, &call)
}

/// The calls per session: the history's lengths to draw from (`Empirical`, when they differ), or
/// their mean rounded (`Mean`), with the mean's interval.
fn fit_calls(
    counts: &[f64],
    c: f64,
    lengths: SessionLengths,
    notes: &mut Vec<String>,
) -> Result<FittedCalls> {
    let n_sessions = counts.len();
    let count_fit = fit_quantity(counts, c, &[])
        .ok_or_else(|| Error::Internal("no conversation to count calls of".into()))?;
    let mean_calls = count_fit.sample_mean;
    let all_equal = counts.iter().all(|&x| x == counts[0]);
    let (min, max) = (
        counts.iter().copied().fold(f64::INFINITY, f64::min),
        counts.iter().copied().fold(0.0, f64::max),
    );
    let calls_mean = if all_equal {
        count_fit.params[0].clone()
    } else {
        let sd = (counts.iter().map(|x| (x - mean_calls).powi(2)).sum::<f64>()
            / (n_sessions as f64 - 1.0))
            .sqrt();
        let t = statrs::distribution::StudentsT::new(0.0, 1.0, n_sessions as f64 - 1.0).map_or(
            1.96,
            |d| {
                use statrs::distribution::ContinuousCDF;
                d.inverse_cdf(1.0 - (1.0 - c) / 2.0)
            },
        );
        let half = t * sd / (n_sessions as f64).sqrt();
        ParamEstimate {
            name: "calls".into(),
            estimate: mean_calls,
            // A session has at least one call.
            low: (mean_calls - half).max(1.0),
            high: mean_calls + half,
        }
    };
    let (calls, lengths) = match lengths {
        _ if all_equal => (mean_calls.round().max(1.0) as usize, None),
        SessionLengths::Empirical => {
            notes.push(format!(
                "sessions have {min} to {max} calls (mean {mean_calls:.1}): each scenario session draws its length from these {n_sessions}"
            ));
            let values: Vec<usize> = counts.iter().map(|&x| x as usize).collect();
            (max as usize, Some(values))
        }
        SessionLengths::Mean => {
            let calls = mean_calls.round().max(1.0) as usize;
            notes.push(format!(
                "sessions have {min} to {max} calls; --session-lengths mean gives every scenario session {calls} (the mean, rounded)"
            ));
            (calls, None)
        }
    };
    Ok(FittedCalls {
        sessions: n_sessions,
        min: min as usize,
        max: max as usize,
        mean: ParamEstimate {
            name: "calls".into(),
            ..calls_mean
        },
        calls,
        lengths,
    })
}

/// A duration in seconds rounded to the microsecond: times are seconds since 1970 in an `f64`, so
/// their differences carry noise (1 ms gaps came out as 0.000999... and 0.001000...), which made a
/// constant gap fit as a uniform of zero width.
fn micros(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

/// `q` scaled down so that a scenario accepts it as a duration (its mean, or its fixed value or
/// uniform maximum, at most [`MAX_SECONDS`], with a margin for the six decimals it is written
/// with); `None` when it already is.
fn cap_duration(q: &Quantity) -> Option<Quantity> {
    let top = match *q {
        Quantity::Fixed { value } => value,
        Quantity::Uniform { max, .. } => max,
        _ => q.mean(),
    };
    if top <= MAX_SECONDS || !top.is_finite() {
        return None;
    }
    let f = 0.999 * MAX_SECONDS / top;
    Some(match *q {
        Quantity::Fixed { value } => Quantity::Fixed { value: value * f },
        Quantity::Exponential { mean } => Quantity::Exponential { mean: mean * f },
        Quantity::LogNormal { mu, sigma } => Quantity::LogNormal {
            mu: mu + f.ln(),
            sigma,
        },
        Quantity::Uniform { min, max } => Quantity::Uniform {
            min: min * f,
            max: max * f,
        },
        Quantity::Gamma { shape, scale } => Quantity::Gamma {
            shape,
            scale: scale * f,
        },
    })
}

/// Refuses a history a scenario cannot hold, naming the limit: a conversation of more calls than a
/// scenario session makes, more conversations than a scenario's sessions, or more calls in all than
/// one run simulates (with the longest conversation's length for every session, as the scenario
/// draws them).
fn check_history_limits(origin: &str, counts: &[f64]) -> Result<()> {
    let longest = counts.iter().copied().fold(0.0, f64::max) as u64;
    let hint = "give --session-gap-minutes M to split conversations at pauses, or fit a part of the history";
    if longest > MAX_CALLS_PER_SESSION as u64 {
        return Err(Error::invalid(
            origin,
            "calls",
            format!(
                "a conversation of {longest} calls is more than a scenario session's limit of {MAX_CALLS_PER_SESSION} calls; {hint}"
            ),
        ));
    }
    if counts.len() > MAX_SESSIONS {
        return Err(Error::invalid(
            origin,
            "sessions",
            format!(
                "{} conversations are more than a scenario's limit of {MAX_SESSIONS} sessions; fit a part of the history",
                counts.len()
            ),
        ));
    }
    if (counts.len() as u64).saturating_mul(longest) > MAX_CALLS_PER_RUN {
        return Err(Error::invalid(
            origin,
            "calls",
            format!(
                "{} conversations x {longest} calls (the longest) is more than a scenario's limit of {MAX_CALLS_PER_RUN} calls per run; {hint}",
                counts.len()
            ),
        ));
    }
    Ok(())
}

impl HistoryFit {
    /// What the sessions ran on: the scenario's model, or `N models` for a mix.
    pub(crate) fn sessions_on(&self) -> String {
        match self.session_models.len() {
            0 | 1 => self.model.clone(),
            n => format!("{n} models"),
        }
    }

    /// Whether the check simulates a mix of models (else the scenario's model alone).
    pub(crate) fn simulates_mix(&self) -> bool {
        match self.check_models.as_slice() {
            [(m, _)] => *m != self.model,
            _ => true,
        }
    }
}

/// Sessions on several models (issue 27).
#[cfg(test)]
mod session_model_tests {
    use super::*;

    /// A conversation of calls on `models` (`None`: naming none), each with `bucket`.
    fn conv(models: &[Option<u32>], bucket: [u64; 5]) -> Conv {
        Conv {
            calls: models.iter().map(|_| (0, 0, 0.0, false)).collect(),
            buckets: models.iter().map(|_| bucket).collect(),
            start_reads: false,
            models: models.to_vec(),
        }
    }

    /// Each session is on its calls' most frequent model (names of one catalog model counted
    /// together), each call billed at its own model's prices; a model outside the catalog is
    /// checked and billed on the scenario's model, with a note; `--model` checks all on one.
    #[test]
    fn sessions_are_on_their_most_frequent_model_and_calls_billed_at_their_own() {
        let catalog = Catalog::embedded().unwrap();
        let opus = catalog.model("claude-opus-4.8").unwrap();
        let haiku = catalog.model("claude-haiku-4.5").unwrap();
        // 0 and 1 name Haiku 4.5 two ways; 2 is Opus; 3 is not in the catalog.
        let names: Vec<String> = [
            "claude-haiku-4.5",
            "claude-haiku-4-5-20251001",
            "claude-opus-4.8",
            "not-a-model-9",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            super::super::replay::match_model(&catalog, &names[1]).map(|m| m.id.as_str()),
            Some("claude-haiku-4.5")
        );
        let b = [100, 2000, 0, 30_000, 400];
        let convs = vec![
            // Two Opus calls and a Haiku one: an Opus session.
            conv(&[Some(2), Some(0), Some(2)], b),
            // Haiku under two names outnumbers Opus.
            conv(&[Some(2), Some(0), Some(1)], b),
            // Mostly a model outside the catalog, and a call naming none.
            conv(&[Some(3), Some(3), None], b),
        ];
        let mut notes = Vec::new();
        let mix = session_mix(&convs, &names, &catalog, opus, false, &mut notes);
        let sm = |m: &str, sessions, calls| SessionModel {
            model: m.into(),
            sessions,
            calls,
        };
        assert_eq!(
            mix.session_models,
            vec![
                sm("claude-opus-4.8", 1, 3),
                sm("claude-haiku-4.5", 1, 3),
                sm("not-a-model-9", 1, 3)
            ]
        );
        assert_eq!(
            mix.check_models,
            vec![
                ("claude-opus-4.8".to_string(), 2),
                ("claude-haiku-4.5".to_string(), 1)
            ]
        );
        let (o, h) = (logged_bucket_usd(opus, &b), logged_bucket_usd(haiku, &b));
        assert!(o > h);
        // Opus: 2 + 1 calls of the first two sessions, and the third session's 3 (checked on Opus).
        let want = 6.0 * o + 3.0 * h;
        assert!(
            (mix.logged_usd - want).abs() < 1e-12 * want,
            "{}",
            mix.logged_usd
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("not-a-model-9: 2 calls")
                && notes[0].contains("checked on claude-opus-4.8"),
            "{notes:?}"
        );
        // `--model`: every session checked on it; the calls still at their own prices.
        let mut notes = Vec::new();
        let one = session_mix(&convs, &names, &catalog, opus, true, &mut notes);
        assert_eq!(one.check_models, vec![("claude-opus-4.8".to_string(), 3)]);
        assert_eq!(one.session_models, mix.session_models);
        assert!((one.logged_usd - want).abs() < 1e-12 * want);
        assert!(
            notes[0].contains("1 session mostly on such models is checked"),
            "{notes:?}"
        );
    }
}
