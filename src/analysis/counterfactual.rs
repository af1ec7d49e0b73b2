//! Counterfactual replay and invoice reconciliation.
//!
//! A tool-list change (`replay --remove-tools`, `--keep-tools`, `--add-tools`, `--tool-tokens-delta`)
//! re-bills the logged calls as if they had been made with another tool list: every prompt, and the
//! stable prefix (tools + system prompt) it starts with, grows or shrinks by the change's tool-block
//! tokens on the replay model, and the calls are replayed on pcsim's caching rules exactly as the
//! logged ones are (same times, sessions, outputs). The saving is the replay of the logged prompts
//! minus the replay of the changed ones, so both sides share the same rules.
//!
//! `--invoice-usd X` compares the logged total with an invoice and lists what could explain the
//! difference, each with the figure it would give.

use serde::Serialize;

use super::replay::{logged_usd, replay, ReplayOptions, ReplayResult, UsageLog};
use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::model::catalog::ModelSpec;
use crate::model::strategy::Strategy;
use crate::model::tools::Tool;

/// A change of the tool list the logged calls were made with.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolListChange {
    /// The tool list of the logged calls (`--tools FILE`); needed to remove or keep tools.
    pub tools: Vec<Tool>,
    /// Tools added at the end of the list (`--add-tools FILE`).
    pub add: Vec<Tool>,
    /// Names removed (`--remove-tools`).
    pub remove: Vec<String>,
    /// Only these names kept (`--keep-tools`).
    pub keep: Option<Vec<String>>,
    /// Tool-block tokens added per call (negative: removed), instead of tool files
    /// (`--tool-tokens-delta`).
    pub tokens_delta: Option<i64>,
}

impl ToolListChange {
    /// Whether any change is asked for.
    pub(crate) fn is_some(&self) -> bool {
        !self.add.is_empty()
            || !self.remove.is_empty()
            || self.keep.is_some()
            || self.tokens_delta.is_some()
    }

    /// The list after the change; names to remove or keep must be in `tools`.
    pub(crate) fn apply(&self) -> Result<Vec<Tool>> {
        let names = self.remove.iter().chain(self.keep.iter().flatten());
        for (n, flag) in names.map(|n| {
            let flag = if self.remove.contains(n) {
                "--remove-tools"
            } else {
                "--keep-tools"
            };
            (n, flag)
        }) {
            if self.tools.is_empty() {
                return Err(Error::invalid(
                    "command line",
                    flag,
                    "needs the tool list the logged calls were made with: give --tools FILE",
                ));
            }
            if !self.tools.iter().any(|t| &t.name == n) {
                let hint = closest(n, self.tools.iter().map(|t| t.name.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(
                    "command line",
                    flag,
                    format!("tool `{n}` is not in the --tools list{hint}"),
                ));
            }
        }
        let mut out: Vec<Tool> = self
            .tools
            .iter()
            .filter(|t| !self.remove.contains(&t.name))
            .filter(|t| self.keep.as_ref().is_none_or(|k| k.contains(&t.name)))
            .cloned()
            .collect();
        for t in &self.add {
            if out.iter().any(|o| o.name == t.name) {
                return Err(Error::invalid(
                    "command line",
                    "--add-tools",
                    format!("tool `{}` is already in the list", t.name),
                ));
            }
            out.push(t.clone());
        }
        Ok(out)
    }

    /// Tool-block tokens the change adds to every prompt on `model` (negative: removes).
    pub(crate) fn delta_tokens(&self, model: &ModelSpec) -> Result<i64> {
        if let Some(d) = self.tokens_delta {
            return Ok(d);
        }
        let after = self.apply()?;
        let r = model.rendering();
        Ok(r.block_tokens(&after) as i64 - r.block_tokens(&self.tools) as i64)
    }
}

/// The logged calls with every prompt changed by `delta` tokens (the change sits in the uncached
/// bucket; only the prompt sizes matter to the replay's prediction).
pub(crate) fn shifted(log: &UsageLog, delta: i64) -> UsageLog {
    let mut out = log.clone();
    for c in &mut out.calls {
        c.prompt_tokens = c.prompt_tokens.saturating_add_signed(delta);
        c.uncached_tokens = c.uncached_tokens.saturating_add_signed(delta);
    }
    out
}

/// One (model, strategy): the logged prompts replayed against the changed ones.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Counterfactual {
    /// Model id.
    pub model: String,
    /// Strategy (resolved).
    pub strategy: String,
    /// Tool-block tokens added to every prompt (negative: removed).
    pub tool_tokens_delta: i64,
    /// Stable prefix of the logged calls, and with the change.
    pub prefix_tokens: u64,
    /// Stable prefix with the change.
    pub changed_prefix_tokens: u64,
    /// The logged prompts replayed: dollars.
    pub predicted_usd: f64,
    /// The changed prompts replayed: dollars.
    pub changed_usd: f64,
    /// `predicted_usd - changed_usd` (positive: the change saves).
    pub saving_usd: f64,
    /// The saving in percent of `predicted_usd`.
    pub saving_percent: f64,
    /// Token buckets of the changed replay.
    pub changed: super::replay::Buckets,
}

/// Replays `log` on `model` with `strategy` twice, as logged and with `change`; `opts.prefix_tokens`
/// must be the logged stable prefix (given or inferred): the change is made inside it.
pub(crate) fn counterfactual(
    log: &UsageLog,
    model: &ModelSpec,
    strategy: &Strategy,
    opts: &ReplayOptions,
    change: &ToolListChange,
) -> Result<(ReplayResult, Counterfactual)> {
    let delta = change.delta_tokens(model)?;
    if opts.prefix_tokens == 0 {
        return Err(Error::invalid(
            log.origin.clone(),
            "prefix",
            "a tool-list change is made in the stable prefix (tools + system prompt), which this log does not show (no conversation start reads a cached prefix): give --prefix-tokens N",
        ));
    }
    let changed_prefix = opts.prefix_tokens as i64 + delta;
    let block = model.rendering().block_tokens(&change.tools) as i64;
    if changed_prefix < 0 || (!change.tools.is_empty() && block > opts.prefix_tokens as i64) {
        return Err(Error::invalid(
            log.origin.clone(),
            "prefix",
            format!(
                "the change removes more than the {}-token stable prefix holds (tool list {} tokens, change {delta:+} on {}): the --tools list is not the one these calls were made with, or give --prefix-tokens",
                opts.prefix_tokens, block, model.id
            ),
        ));
    }
    let base = replay(log, model, strategy, opts)?;
    let moved = shifted(log, delta);
    let changed_opts = ReplayOptions {
        prefix_tokens: changed_prefix as u64,
        ..opts.clone()
    };
    let changed = replay(&moved, model, strategy, &changed_opts)?;
    let saving = base.predicted.cost_usd - changed.predicted.cost_usd;
    let cf = Counterfactual {
        model: model.id.clone(),
        strategy: base.strategy.clone(),
        tool_tokens_delta: delta,
        prefix_tokens: opts.prefix_tokens,
        changed_prefix_tokens: changed_prefix as u64,
        predicted_usd: base.predicted.cost_usd,
        changed_usd: changed.predicted.cost_usd,
        saving_usd: saving,
        saving_percent: if base.predicted.cost_usd > 0.0 {
            saving / base.predicted.cost_usd * 100.0
        } else {
            0.0
        },
        changed: changed.predicted,
    };
    Ok((base, cf))
}

/// One possible explanation of an invoice difference, with the total it would give.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Explanation {
    /// What it is.
    pub cause: String,
    /// The logged total under this explanation.
    pub total_usd: f64,
    /// `invoice - total_usd`: what it leaves unexplained.
    pub remaining_usd: f64,
}

/// The logged total reconciled with an invoice.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Reconciliation {
    /// The invoice.
    pub invoice_usd: f64,
    /// The logged calls, each at its own model's prices.
    pub logged_usd: f64,
    /// `invoice_usd - logged_usd` (positive: billed more than the logs show).
    pub difference_usd: f64,
    /// The difference in percent of the invoice.
    pub difference_percent_of_invoice: f64,
    /// Calls in the logs.
    pub calls: usize,
    /// The difference in calls of the logs' mean cost (positive: calls missing from the logs).
    pub difference_in_mean_calls: f64,
    /// Candidate explanations, closest first.
    pub explanations: Vec<Explanation>,
}

/// The logged calls' dollars, summed over logs as they are read (constant memory), for
/// [`reconcile`].
#[derive(Debug, Clone, Default)]
pub(crate) struct LoggedTotals {
    /// Dollars, each call at its own model's prices.
    pub total_usd: f64,
    /// Of which input (uncached, writes, reads).
    pub input_usd: f64,
    /// Of which output.
    pub output_usd: f64,
    /// Calls billed.
    pub calls: usize,
    /// Records that could not be read.
    pub unreadable: usize,
    /// Calls logged as failed.
    pub failed: usize,
    /// Regional multiplier of the first model that has one.
    pub regional: Option<f64>,
    /// Service tiers of the logged models: (input, output) multipliers.
    pub tiers: std::collections::BTreeMap<String, (f64, f64)>,
}

impl LoggedTotals {
    /// Adds a log: each call at its own logged model's prices (`models`: the model of each call, as
    /// [`super::replay::split_by_model`] gives it); a call whose model the catalog does not price is
    /// left out (the replay names it), never priced at another model's rates.
    pub(crate) fn add_log(&mut self, models: &[Option<&ModelSpec>], log: &UsageLog) {
        self.unreadable += log.unreadable;
        self.failed += log.failed_calls;
        for (c, m) in log.calls.iter().zip(models) {
            let Some(m) = *m else { continue };
            let usd = logged_usd(m, c);
            let out = m.output_usd(c.output_tokens as f64);
            self.total_usd += usd;
            self.output_usd += out;
            self.input_usd += usd - out;
            self.calls += 1;
            if self.regional.is_none() {
                self.regional = m.regional_multiplier.as_ref().map(|r| r.value);
            }
            for (name, t) in &m.service_tier {
                self.tiers
                    .entry(name.clone())
                    .or_insert((t.input_multiplier.value, t.output_multiplier.value));
            }
        }
    }
}

/// Reconciles the logged totals with an invoice of `invoice_usd`.
pub(crate) fn reconcile(logged: &LoggedTotals, invoice_usd: f64) -> Result<Reconciliation> {
    if !(invoice_usd.is_finite() && invoice_usd >= 0.0) {
        return Err(Error::invalid(
            "command line",
            "--invoice-usd",
            format!("value {invoice_usd} must be a non-negative amount in dollars"),
        ));
    }
    let total = logged.total_usd;
    let calls = logged.calls;
    let (unreadable, failed) = (logged.unreadable, logged.failed);
    let difference = invoice_usd - total;
    let mean = if calls > 0 { total / calls as f64 } else { 0.0 };
    let mut ex = Vec::new();
    let mut push = |cause: String, t: f64| {
        ex.push(Explanation {
            cause,
            total_usd: t,
            remaining_usd: invoice_usd - t,
        })
    };
    if unreadable + failed > 0 {
        push(
            format!(
                "the {} record{} the logs hold but pcsim could not bill ({unreadable} unreadable, {failed} logged as failed), at the mean call cost",
                unreadable + failed,
                if unreadable + failed == 1 { "" } else { "s" }
            ),
            total + (unreadable + failed) as f64 * mean,
        );
    }
    if let Some(r) = logged.regional {
        push(
            format!("regional / data-residency endpoints (x{r} on every price)"),
            total * r,
        );
    }
    for (name, (i, o)) in &logged.tiers {
        push(
            format!("the `{name}` service tier (input x{i}, output x{o})"),
            logged.input_usd * i + logged.output_usd * o,
        );
    }
    ex.sort_by(|a, b| a.remaining_usd.abs().total_cmp(&b.remaining_usd.abs()));
    Ok(Reconciliation {
        invoice_usd,
        logged_usd: total,
        difference_usd: difference,
        difference_percent_of_invoice: if invoice_usd > 0.0 {
            difference / invoice_usd * 100.0
        } else {
            0.0
        },
        calls,
        difference_in_mean_calls: if mean > 0.0 { difference / mean } else { 0.0 },
        explanations: ex,
    })
}
