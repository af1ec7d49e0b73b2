//! What `pcsim replay` prints for a [`ReplayOutcome`]: its JSON, its tables (totals per model and
//! strategy, by day, session, project and model, the counterfactual, per call) and its warnings.

use std::collections::BTreeMap;

use crate::analysis::counterfactual::{Counterfactual, Reconciliation, ToolListChange};
use crate::analysis::replay::{Tally, GROUPINGS};
use crate::analysis::replay_logs::{unpriced_text, FileTotals, ReplayOutcome, StatedCost};
use crate::error::{Error, Result};
use crate::report::{table::TextTable, usd};

/// The per-file results of a single-log replay that kept its calls (their per-call tables and the
/// JSON `calls`), or `None`.
fn kept(o: &ReplayOutcome) -> Option<&[FileTotals]> {
    match o.files.as_slice() {
        [f] if f.results.iter().all(|r| r.calls.is_some()) => Some(&f.results),
        _ => None,
    }
}

/// `pcsim replay --format json`, written to `out`: `origin` names the logs (the `log` key).
/// Serialized straight to the output: the per-call rows are written from the kept results, never
/// copied into a JSON tree or a string (1M calls took 5.5 GB, issue 29).
pub(crate) fn write_json(
    out: &mut dyn std::io::Write,
    o: &ReplayOutcome,
    origin: &str,
    invoice: Option<&Reconciliation>,
) -> Result<()> {
    #[derive(serde::Serialize)]
    struct ResultJson<'a> {
        #[serde(flatten)]
        head: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        calls: Option<&'a [crate::analysis::replay::CallComparison]>,
    }
    #[derive(serde::Serialize)]
    struct ReplayJson<'a> {
        #[serde(flatten)]
        head: serde_json::Value,
        results: Vec<ResultJson<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        counterfactual: Option<serde_json::Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        invoice: Option<serde_json::Value>,
    }
    let read = &o.read;
    let kept = kept(o);
    let results: Vec<ResultJson> = o
        .totals
        .iter()
        .enumerate()
        .map(|(i, acc)| ResultJson {
            head: serde_json::json!({
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
            }),
            calls: kept
                .and_then(|rs| rs.get(i))
                .and_then(|r| r.calls.as_deref()),
        })
        .collect();
    let head = serde_json::json!({
        "log": origin,
        "files": read.files,
        "files_skipped": o.files_skipped,
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
        "stated_cost": stated_json(&read.stated),
        "calls_priced": read.priced_calls,
        "unpriced_models": read.unpriced,
        "calls_without_model_at_file_model": read.unnamed_at_file_model,
        "file_warnings": read.file_warnings,
    });
    let v = ReplayJson {
        head,
        results,
        counterfactual: o.change.as_ref().map(|ch| {
            serde_json::json!({
                "change": ch.describe(),
                "results": o.counterfactuals,
            })
        }),
        invoice: invoice
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| Error::Internal(format!("invoice as JSON: {e}")))?,
    };
    crate::report::write_json(out, &v)
}

/// `pcsim replay` as tables: `origin` names the logs; `all_calls` prints the per-call table of every
/// (model, strategy) of a single log, not only the first.
pub(crate) fn text(
    o: &ReplayOutcome,
    origin: &str,
    all_calls: bool,
    invoice: Option<&Reconciliation>,
) -> String {
    let read = &o.read;
    let conv = read.conversations;
    let mut s = format!(
        "{origin}: {} calls in {conv} conversation{} ({} with timestamps; {} sub-agent calls; {} records without usage, {} repeated transcript lines merged)\n\n",
        read.calls,
        if conv == 1 { "" } else { "s" },
        read.timestamps,
        read.sidechain_calls,
        read.records_without_usage,
        read.duplicates_merged
    );
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
    for acc in &o.totals {
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
                acc.total.predicted.cache_write_tokens, acc.total.predicted.cache_read_tokens
            ),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(&format!(
        "\nlogged, each call at its own model's prices: {}\n",
        usd(read.own_models_usd)
    ));
    if let Some(line) = stated_line(&read.stated) {
        s.push_str(&line);
        s.push('\n');
    }
    if !read.unpriced.is_empty() {
        s.push_str(&format!(
            "not in these totals: {}\n",
            unpriced_text(read.unpriced.values())
        ));
    }
    if let Some(acc) = o.totals.first() {
        s.push_str(&format!(
            "\nTotals by day, session, project and model, {} / {}:\n\n",
            acc.models.join("+"),
            acc.strategies.join(" / ")
        ));
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
        s.push_str(&t.render());
    }
    if let Some(ch) = &o.change {
        s.push_str(&counterfactual_table(ch, &o.counterfactuals));
    }
    if let Some(r) = invoice {
        s.push_str(&r.text());
    }
    if let Some(results) = kept(o) {
        let shown = if all_calls { results.len() } else { 1 };
        for r in results.iter().take(shown) {
            s.push_str(&per_call_table(r));
        }
    }
    s
}

fn stated_json(st: &StatedCost) -> serde_json::Value {
    let (gap, pct) = st.gap();
    serde_json::json!({
        "calls": st.calls,
        "stated_usd": st.stated_usd,
        "repriced_usd": st.repriced_usd,
        "gap_usd": gap,
        "gap_percent": pct,
    })
}

fn stated_line(st: &StatedCost) -> Option<String> {
    if st.calls == 0 {
        return None;
    }
    let (gap, pct) = st.gap();
    Some(format!(
        "the logs state {} for {} of these calls; pcsim's prices give {} for them (gap {}{})",
        usd(st.stated_usd),
        st.calls,
        usd(st.repriced_usd),
        if gap < 0.0 { "-" } else { "+" },
        match pct {
            Some(p) => format!("{}, {p:+.1}%", usd(gap.abs())),
            None => usd(gap.abs()),
        }
    ))
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

/// The warnings and notes of a replay (for standard error, so JSON on standard output stays clean),
/// one line each with its `warning:` or `note:` prefix.
pub(crate) fn warnings(o: &ReplayOutcome) -> Vec<String> {
    let read = &o.read;
    let mut w = Vec::new();
    if !read.unknown_fields.is_empty() {
        let n: usize = read.unknown_fields.values().sum();
        w.push(format!(
            "warning: {n} unknown usage field{} ignored: {}",
            if n == 1 { "" } else { "s" },
            read.unknown_fields
                .iter()
                .map(|(k, n)| format!("{k} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if read.unreadable > 0 {
        w.push(format!(
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
        ));
    }
    if read.failed_calls > 0 {
        w.push(format!(
            "note: {} call{} logged as failed (not billed) left out",
            read.failed_calls,
            if read.failed_calls == 1 { "" } else { "s" }
        ));
    }
    if read.duplicates_across_files > 0 {
        w.push(format!(
            "note: {} Claude Code message{} found again in a later file (a sub-agent's transcript and its progress lines): counted once",
            read.duplicates_across_files,
            if read.duplicates_across_files == 1 { "" } else { "s" }
        ));
    }
    if read.cache_split_unknown > 0 {
        w.push(format!(
            "warning: {} call{} only the total prompt tokens (LiteLLM rows without metadata.usage_object): any cache reads and writes in them are billed at the base input rate",
            read.cache_split_unknown,
            if read.cache_split_unknown == 1 { " gives" } else { "s give" }
        ));
    }
    if read.sidechain_calls > 0 {
        w.push(format!(
            "note: {} sub-agent (sidechain) call{} replayed as {} own conversation{} (own cache prefix), included in the totals",
            read.sidechain_calls,
            if read.sidechain_calls == 1 { "" } else { "s" },
            if read.sidechain_calls == 1 { "its" } else { "their" },
            if read.sidechain_calls == 1 { "" } else { "s" },
        ));
    }
    for f in &read.truncated {
        w.push(format!(
            "warning: the last line of {f} is cut off and was ignored"
        ));
    }
    for f in &o.files_skipped {
        w.push(format!("warning: skipped {f}"));
    }
    for x in &read.file_warnings {
        w.push(format!("warning: {x}"));
    }
    if !read.unpriced.is_empty() {
        w.push(format!(
            "warning: {}",
            unpriced_text(read.unpriced.values())
        ));
    }
    if read.unnamed_at_file_model > 0 {
        w.push(format!(
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
        ));
    }
    if o.needs_prefix && o.prefix_given == 0 {
        if !read.prefix_inferred.is_empty() {
            let (lo, hi) = (
                read.prefix_inferred.iter().min().copied().unwrap_or(0),
                read.prefix_inferred.iter().max().copied().unwrap_or(0),
            );
            w.push(format!(
                "note: --prefix-tokens not given: the stable prefix (tools + system) inferred from the log's cache reads at conversation starts: {}",
                if lo == hi {
                    format!("{lo} tokens")
                } else {
                    format!("{lo} to {hi} tokens (per file)")
                }
            ));
        }
        if read.prefix_unknown > 0 {
            w.push(format!(
                "warning: the `tools` / `system` breakpoints (and any TTL tier on them, e.g. @1h) have no effect in {} log{}: the stable prefix is unknown and no conversation start reads a cached prefix; give --prefix-tokens N",
                read.prefix_unknown,
                if read.prefix_unknown == 1 { "" } else { "s" }
            ));
        }
    }
    for c in &o.context {
        w.push(format!("warning: {}", c.message()));
    }
    w
}

fn per_call_table(r: &FileTotals) -> String {
    let mut s = format!(
        "\nPer call, {} / {} (logged -> predicted):\n\n",
        r.model, r.strategy
    );
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
    for c in r.calls.iter().flatten() {
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
    s.push_str(&t.render());
    s
}

/// The counterfactual (the logged calls with the tool list changed) as a table.
pub(crate) fn counterfactual_table(change: &ToolListChange, sums: &[Counterfactual]) -> String {
    let mut s = format!(
        "\nCounterfactual: the logged calls with the tool list changed ({}):\n\n",
        change.describe()
    );
    let mut t = TextTable::new(
        &[
            "model",
            "strategy",
            "tool tok/call",
            "prefix tok",
            "as logged $",
            "changed $",
            "saving $",
            "saving %",
        ],
        &[false, false, true, true, true, true, true, true],
    );
    for c in sums {
        t.row(vec![
            c.model.clone(),
            c.strategy.clone(),
            format!("{:+}", c.tool_tokens_delta),
            format!("{} -> {}", c.prefix_tokens, c.changed_prefix_tokens),
            usd(c.predicted_usd),
            usd(c.changed_usd),
            usd(c.saving_usd),
            format!("{:.1}%", c.saving_percent),
        ]);
    }
    s.push_str(&t.render());
    s.push_str("as logged: the logged prompts replayed on pcsim's rules; changed: the same calls (times, sessions, outputs) with every prompt and the stable prefix changed by the tool tokens\n");
    s
}
