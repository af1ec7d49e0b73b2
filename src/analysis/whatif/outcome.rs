//! One pair's outcome from its two simulations: extra dollars and writes, pay-back, verdict.

use super::types::*;
use super::EPS_USD;
use crate::analysis::percent;
use crate::base::text::{calls_word, usd};
use crate::sim::billing::CallBill;
use crate::sim::simulate::SimResult;

/// Calls from K until the cumulative extra cost of `delta` (per call number, 1..=n) is back to zero
/// or below: within the session, and extrapolated beyond it at the mean per-call effect after K;
/// with that mean.
pub(super) fn payback(delta: &[f64], k: usize, n: usize) -> (Option<u64>, Option<u64>, f64) {
    let mut cum = vec![0.0; n + 1];
    for c in 1..=n {
        cum[c] = cum[c - 1] + delta[c];
    }
    let breakeven = (k..=n)
        .find(|&c| cum[c] <= EPS_USD)
        .map(|c| (c - k + 1) as u64);
    let last = if n > k {
        delta[k + 1..=n].iter().sum::<f64>() / (n - k) as f64
    } else {
        0.0
    };
    let no_effect = delta.iter().all(|d| d.abs() <= EPS_USD);
    let extrapolated = if breakeven.is_some() || no_effect {
        breakeven
    } else if k < n && last < -EPS_USD {
        Some((n - k + 1) as u64 + (cum[n] / -last).ceil() as u64)
    } else {
        None
    };
    (breakeven, extrapolated, last)
}

/// Sums of `cost_usd`, `cache_write_tokens` and the first session's tool block, per call number.
fn per_call(calls: &[CallBill], n: usize) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
    let mut usd = vec![0.0; n + 1];
    let mut written = vec![0u64; n + 1];
    let mut block = vec![0u64; n + 1];
    for c in calls {
        let k = c.call as usize;
        if k <= n {
            usd[k] += c.cost_usd;
            written[k] += c.cache_write_tokens;
            if c.session == 1 {
                block[k] = c.tool_block_tokens;
            }
        }
    }
    (usd, written, block)
}

pub(super) fn outcome(
    model_name: &str,
    rule: &str,
    k: usize,
    n: usize,
    base: SimResult,
    chg: SimResult,
) -> WhatifOutcome {
    let (bu, bw, bb) = per_call(&base.calls, n);
    let (cu, cw, cb) = per_call(&chg.calls, n);
    let delta: Vec<f64> = (0..=n).map(|c| cu[c] - bu[c]).collect();
    // Cumulative extra cost over call numbers (all sessions; calls before K only differ when
    // sessions share a cache); `last` is the steady effect, the mean over the calls after K (K
    // itself carries the one-off re-write).
    let (breakeven, extrapolated_calls, last) = payback(&delta, k, n);
    // Messages quote the same session total as `extra_usd` (the per-call sums differ in the last bits).
    let total = chg.total_usd - base.total_usd;
    let no_effect = delta.iter().all(|d| d.abs() <= EPS_USD);
    let (extrapolated, verdict) = if no_effect {
        (breakeven, "no effect on cost".to_string())
    } else if let Some(b) = breakeven {
        let v = if b == 1 {
            format!(
                "cheaper from call {k} on: saves {} over the session",
                usd(-total)
            )
        } else {
            format!(
                "pays for itself after {} (by call {}); net {} over the session",
                calls_word(b),
                k + b as usize - 1,
                signed(total)
            )
        };
        (Some(b), v)
    } else if k == n {
        (
            None,
            format!(
                "costs {} and comes at the last call: no later call to recover it",
                usd(total)
            ),
        )
    } else if let Some(needed) = extrapolated_calls {
        (
            Some(needed),
            format!(
                "not paid back within the session ({} left); at the mean saving of {} per call after the change, after about {needed} calls from call {k}",
                usd(total),
                usd(-last)
            ),
        )
    } else if last > EPS_USD {
        (
            None,
            format!(
                "never pays back: costs {} more over the session and {} more per call after it",
                usd(total),
                usd(last)
            ),
        )
    } else {
        (
            None,
            format!(
                "never pays back: a one-off {} with no per-call saving afterwards",
                usd(total)
            ),
        )
    };
    WhatifOutcome {
        model: base.model.clone(),
        model_name: model_name.to_string(),
        strategy: base.strategy.clone(),
        strategy_requested: base.strategy_requested.clone(),
        tool_change_rule: if base.strategy == "none" {
            "none".into()
        } else {
            rule.to_string()
        },
        baseline_usd: base.total_usd,
        changed_usd: chg.total_usd,
        extra_usd: chg.total_usd - base.total_usd,
        extra_percent: percent(chg.total_usd - base.total_usd, base.total_usd),
        baseline_cache_write_tokens: base.totals.cache_write_tokens,
        changed_cache_write_tokens: chg.totals.cache_write_tokens,
        extra_cache_write_tokens: chg.totals.cache_write_tokens as i64
            - base.totals.cache_write_tokens as i64,
        baseline_write_at_change_tokens: bw[k],
        write_at_change_tokens: cw[k],
        tool_block_tokens_before: bb[k],
        tool_block_tokens_after: cb[k],
        extra_usd_at_change: delta[k],
        extra_usd_per_call_after: last,
        breakeven_calls: breakeven,
        breakeven_calls_extrapolated: extrapolated,
        append_saving_usd: None,
        verdict,
        saving_usd: base.total_usd - chg.total_usd,
        saving_percent: percent(base.total_usd - chg.total_usd, base.total_usd),
        runs: None,
        baseline_calls: base.calls,
        changed_calls: chg.calls,
    }
}

fn signed(x: f64) -> String {
    if x <= 0.0 {
        format!("saves {}", usd(-x))
    } else {
        format!("costs {}", usd(x))
    }
}
