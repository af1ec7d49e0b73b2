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

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::fitdist::{fit_quantity, FittedQuantity, ParamEstimate};
use super::replay::{conversations, infer_prefix_tokens, FirstSeen, ReplayOptions};
use crate::base::quantity::Quantity;
use crate::base::text::TextTable;
use crate::error::{Error, Result};
use crate::input::usagelog::UsageLog;
use crate::model::catalog::ModelSpec;
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
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            prefix_tokens: None,
            session_gap_seconds: 0.0,
            confidence: 0.95,
            lengths: SessionLengths::Empirical,
            split_compactions: true,
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
    /// Sub-agent (sidechain) calls left out: the scenario format has no sub-agents.
    pub sidechain_calls_left_out: usize,
    /// Calls whose prompt is shorter than the previous one (compaction, `/clear`) kept inside
    /// their conversation: no growth value.
    pub restarts: usize,
    /// Compactions that ended a scenario session and started the next.
    pub compactions: usize,
    /// The main-agent calls' logged buckets at the scenario model's prices: what the scenario
    /// should reproduce.
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
                });
            }
        }
        starts.sort_by(f64::total_cmp);
        self.session_starts.push(starts);
        if let Some(p) = infer_prefix_tokens(&log.calls, &self.ropts) {
            self.inferred = Some(self.inferred.map_or(p, |q| q.min(p)));
        }
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
    /// with. Errors name the logs and what is missing.
    pub(crate) fn fit(
        self,
        model: &ModelSpec,
        tools: &[Tool],
        opts: &FitOptions,
    ) -> Result<HistoryFit> {
        fit_read(self, model, tools, opts)
    }
}

fn field(field: &str, what: &str, values: &[f64], confidence: f64) -> FittedField {
    FittedField {
        field: field.into(),
        what: what.into(),
        fit: fit_quantity(values, confidence, &[]),
    }
}

fn fit_read(
    r: HistoryReader,
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
        // A scenario has one model: sessions on others are fitted (and checked) as if on it.
        notes.push(format!(
            "the logs name {} models: {}; the scenario has one, {}, and every session is fitted and checked on it",
            models.len(),
            models
                .iter()
                .map(|(m, n)| format!("{m} ({n} call{})", if *n == 1 { "" } else { "s" }))
                .collect::<Vec<_>>()
                .join(", "),
            model.id
        ));
    }
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
                gaps.push(t - pt);
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
    if gaps.is_empty() && counts.iter().any(|&n| n > 1.0) {
        notes.push(
            "the logs carry no timestamps: gap_seconds and the arrivals keep the scenario defaults"
                .into(),
        );
    }

    let n_sessions = convs.len();
    let fitted_calls = fit_calls(&counts, c, opts.lengths, &mut notes)?;
    if compactions > 0 {
        notes.push(format!(
            "{compactions} compaction{} (a prompt shorter than the one before) each end a session and start the next, which shares only the stable prefix: the scenario has {n_sessions} sessions",
            if compactions == 1 { "" } else { "s" }
        ));
    }
    // The history's own bill on the scenario's model, for the check of the fit.
    let logged_usd: f64 = convs
        .iter()
        .flat_map(|c| c.buckets.iter())
        .map(|b| logged_bucket_usd(model, b))
        .sum();

    let between: Vec<f64> = session_starts
        .iter()
        .flat_map(|s| s.windows(2).map(|w| w[1] - w[0]))
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
                every_seconds: Some(*value),
                gaps: Some(g.clone()),
                per_hour: None,
            },
            _ => {
                let m = &g.params[0];
                let per_hour = ParamEstimate {
                    name: "per_hour".into(),
                    estimate: 3600.0 / m.estimate,
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
        sidechain_calls_left_out: sidechain,
        restarts,
        compactions,
        logged_usd,
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

/// The fitted scenario run on its model under its `cached` strategy: the history's logged total
/// against the runs' 5th to 95th percentiles.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FitCheck {
    /// Monte Carlo runs of the fitted scenario.
    pub runs: u64,
    /// The strategy simulated (`cached`, resolved).
    pub strategy: String,
    /// The history's main-agent calls at the model's prices.
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

/// Runs `scenario` (as fitted, on `model`) `runs` times under `cached` and checks the history's
/// logged total against the runs' p5–p95.
pub(crate) fn check_fit(
    catalog: &crate::model::catalog::Catalog,
    scenario: crate::input::scenario::Scenario,
    model: &str,
    logged_usd: f64,
    runs: u64,
) -> Result<FitCheck> {
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

/// A number for TOML: a float with a decimal point (6 decimals at most), so it parses as written.
fn toml_num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    if s.ends_with('.') {
        format!("{s}0")
    } else {
        s.to_string()
    }
}

/// A quantity as a TOML value.
pub(crate) fn quantity_toml(q: &Quantity) -> String {
    match *q {
        Quantity::Fixed { value } if value.fract() == 0.0 => format!("{}", value as u64),
        Quantity::Fixed { value } => toml_num(value),
        Quantity::Exponential { mean } => {
            format!("{{ dist = \"exponential\", mean = {} }}", toml_num(mean))
        }
        Quantity::LogNormal { mu, sigma } => format!(
            "{{ dist = \"log_normal\", mu = {}, sigma = {} }}",
            toml_num(mu),
            toml_num(sigma)
        ),
        Quantity::Uniform { min, max } => format!(
            "{{ dist = \"uniform\", min = {}, max = {} }}",
            toml_num(min),
            toml_num(max)
        ),
        Quantity::Gamma { shape, scale } => format!(
            "{{ dist = \"gamma\", shape = {}, scale = {} }}",
            toml_num(shape),
            toml_num(scale)
        ),
    }
}

fn interval_text(p: &ParamEstimate) -> String {
    let f = |x: f64| {
        if x.abs() >= 100.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.4}")
        }
    };
    format!(
        "{} = {} [{}, {}]",
        p.name,
        f(p.estimate),
        f(p.low),
        f(p.high)
    )
}

fn string_toml(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

impl HistoryFit {
    /// The fitted scenario as TOML; `tool_files` are written as given (relative to the scenario's
    /// folder, or absolute), `name` is the scenario's name.
    pub(crate) fn scenario_toml(&self, name: &str, tool_files: &[String]) -> String {
        let pct = self.confidence * 100.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Fitted by `pcsim fit` to {}.\n# Each fitted value is followed by its {pct}% interval; `pcsim fit` prints the goodness of fit.",
            self.origin.replace('\n', " ")
        );
        let _ = writeln!(s, "name = {}", string_toml(name));
        let _ = writeln!(
            s,
            "description = {}",
            string_toml(&format!(
                "fitted to {} calls in {} sessions on {}",
                self.calls_logged - self.sidechain_calls_left_out,
                self.calls.sessions,
                self.model
            ))
        );
        let _ = writeln!(s, "models = [{}]", string_toml(&self.model));
        let _ = writeln!(s, "strategies = [\"none\", \"cached\"]");
        let _ = writeln!(s, "seed = 1\n");
        let _ = writeln!(s, "[tools]");
        if !tool_files.is_empty() {
            let files: Vec<String> = tool_files.iter().map(|f| string_toml(f)).collect();
            let _ = writeln!(
                s,
                "files = [{}]   # {} tokens on {}",
                files.join(", "),
                self.tool_block_tokens,
                self.model
            );
        }
        let _ = writeln!(s, "\n[session]");
        match &self.calls.lengths {
            Some(values) => {
                let list: Vec<String> = values.iter().map(usize::to_string).collect();
                let _ = writeln!(
                    s,
                    "calls = {{ dist = \"empirical\", values = [{}] }}   # {} sessions of {} to {} calls; mean {}",
                    list.join(", "),
                    values.len(),
                    self.calls.min,
                    self.calls.max,
                    interval_text(&self.calls.mean)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "calls = {}   # {}",
                    self.calls.calls,
                    interval_text(&self.calls.mean)
                );
            }
        }
        let _ = writeln!(
            s,
            "system_tokens = {}   # stable prefix {} tokens ({}) minus the tool block",
            self.system_tokens,
            self.prefix_tokens,
            match self.prefix_source {
                PrefixSource::Given => "given",
                PrefixSource::InferredFromCacheReads => "inferred from cache reads",
                PrefixSource::Unknown => "unknown: taken as the tool block",
            }
        );
        for f in &self.fields {
            let key = f.field.trim_start_matches("session.");
            match &f.fit {
                Some(q) => {
                    let params: Vec<String> = q.params.iter().map(interval_text).collect();
                    let _ = writeln!(
                        s,
                        "{key} = {}   # n = {}; {}",
                        quantity_toml(&q.quantity),
                        q.n,
                        params.join("; ")
                    );
                }
                None => {
                    let _ = writeln!(s, "# {key}: no value in the logs (the default is used)");
                }
            }
        }
        let _ = writeln!(s, "user_tokens = 0   # a log cannot tell user turns from tool results: both are in tool_result_tokens");
        if self.calls.sessions > 1 {
            let _ = writeln!(s, "\n[sessions]");
            let _ = writeln!(s, "count = {}", self.calls.sessions);
            match (&self.arrivals.per_hour, self.arrivals.every_seconds) {
                (Some(p), _) => {
                    let _ = writeln!(
                        s,
                        "poisson_per_hour = {}   # {}",
                        toml_num(p.estimate),
                        interval_text(p)
                    );
                }
                (None, Some(e)) => {
                    let _ = writeln!(s, "every_seconds = {}", toml_num(e));
                }
                (None, None) => {}
            }
            let _ = writeln!(s, "shared_cache = {}", self.shared_cache);
        }
        s
    }

    /// The fit as a text report: what was read, then one row per parameter with its interval and
    /// the goodness of fit of its distribution.
    pub(crate) fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} calls, {} sessions on {} ({} to {} calls each)",
            self.origin,
            self.calls_logged,
            self.calls.sessions,
            self.model,
            self.calls.min,
            self.calls.max
        );
        let _ = writeln!(
            s,
            "stable prefix: {} tokens ({}) = tool block {} + system prompt {}\n",
            self.prefix_tokens,
            match self.prefix_source {
                PrefixSource::Given => "given",
                PrefixSource::InferredFromCacheReads => "inferred from cache reads",
                PrefixSource::Unknown => "not inferable: the tool block",
            },
            self.tool_block_tokens,
            self.system_tokens
        );
        let pct = format!("{}% interval", self.confidence * 100.0);
        let mut t = TextTable::new(
            &[
                "parameter",
                "distribution",
                "n",
                "param",
                "estimate",
                &pct,
                "KS D",
                "KS p",
            ],
            &[false, false, true, false, true, true, true, true],
        );
        let num = |x: f64| {
            if x.abs() >= 100.0 {
                format!("{x:.1}")
            } else {
                format!("{x:.4}")
            }
        };
        let row = |t: &mut TextTable,
                   name: &str,
                   dist: &str,
                   n: String,
                   p: &ParamEstimate,
                   ks: (String, String)| {
            t.row(vec![
                name.to_string(),
                dist.to_string(),
                n,
                p.name.clone(),
                num(p.estimate),
                format!("[{}, {}]", num(p.low), num(p.high)),
                ks.0,
                ks.1,
            ]);
        };
        let ks = |q: &FittedQuantity| match (q.ks_statistic, q.ks_p_value) {
            (Some(d), Some(p)) => (format!("{d:.3}"), format!("{p:.3}")),
            _ => ("-".into(), "-".into()),
        };
        row(
            &mut t,
            "calls",
            if self.calls.min == self.calls.max {
                "fixed"
            } else {
                "mean"
            },
            self.calls.sessions.to_string(),
            &self.calls.mean,
            ("-".into(), "-".into()),
        );
        for f in &self.fields {
            let name = f.field.trim_start_matches("session.");
            match &f.fit {
                Some(q) => {
                    for (i, p) in q.params.iter().enumerate() {
                        let (nm, d, k) = if i == 0 {
                            (name, q.family, ks(q))
                        } else {
                            ("", "", (String::new(), String::new()))
                        };
                        let n = if i == 0 {
                            q.n.to_string()
                        } else {
                            String::new()
                        };
                        row(&mut t, nm, d, n, p, k);
                    }
                }
                None => t.row(vec![
                    name.to_string(),
                    "no data".into(),
                    "0".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]),
            }
        }
        if let (Some(p), Some(g)) = (&self.arrivals.per_hour, &self.arrivals.gaps) {
            row(&mut t, "arrivals", "poisson", g.n.to_string(), p, ks(g));
        }
        s.push_str(&t.render());
        let _ = writeln!(
            s,
            "\nKS: Kolmogorov-Smirnov distance of the sample to the chosen distribution, with its p-value (optimistic: the parameters come from the same sample). Families by BIC among {}.",
            super::fitdist::FAMILIES.join(", ")
        );
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}
