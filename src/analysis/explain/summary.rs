//! Totals of a trace's explanation: dollars and calls per cause, ranked; the summary line
//! ("$X lost to a date in system block 1 on 38 of 40 calls"); the fixes' simulated savings.

use std::collections::BTreeMap;

use super::{CauseTotal, Explanation, FixSaving};

/// A cause's detail as the summary phrases it: the same phrase for calls that share the reason
/// (volatile spans, the block, the kind of tool change), whatever the byte offsets and gaps.
pub(crate) fn phrase(cause: &str, detail: &str) -> String {
    match cause {
        "system_changed" => {
            let block = detail
                .strip_prefix("system block ")
                .and_then(|r| r.split(' ').next())
                .unwrap_or("?");
            match detail
                .split_once(" (")
                .and_then(|(_, r)| r.split_once("-like span)"))
            {
                Some((kinds, _)) => {
                    format!("a {} in system block {block}", kinds.replace('/', " or "))
                }
                None => format!("edits of system block {block}"),
            }
        }
        "tools_changed" => {
            let kinds: Vec<&str> = detail
                .split("; ")
                .map(|p| p.split(' ').next().unwrap_or(""))
                .collect();
            format!("tool-list changes ({})", kinds.join(", "))
        }
        "ttl_expired" => match detail.split_once(">= TTL ") {
            Some((_, ttl)) => format!("pauses longer than the {ttl} cache lifetime"),
            None => "pauses longer than the cache lifetime".into(),
        },
        "messages_changed" => {
            if detail.starts_with("truncated") {
                "truncated or compacted history".into()
            } else {
                "edited messages".into()
            }
        }
        "settings_changed" => format!("{} (a request setting)", detail),
        "model_changed" => "model switches".into(),
        "below_minimum" => "prefixes below the cacheable minimum".into(),
        "lookback_exceeded" => "breakpoints beyond the lookback window".into(),
        "no_breakpoint" => "prompt parts no breakpoint marks for caching".into(),
        "provider_miss" => "provider misses on a stable prefix".into(),
        "cold_start" => "cold starts".into(),
        _ => "calls pcsim cannot explain".into(),
    }
}

const FIXES: [(&str, &str); 7] = [
    (
        "freeze_tool_order",
        "send the tools in one fixed order (sorted by name)",
    ),
    (
        "move_volatile_system",
        "move system blocks that change between calls after the last breakpoint",
    ),
    (
        "tools_breakpoint",
        "add a cache breakpoint after the tool block",
    ),
    ("ttl_1h", "write every breakpoint at the 1-hour TTL"),
    (
        "all",
        "the three fixes above together (not the 1-hour TTL, a trade-off of its own)",
    ),
    (
        "prompt_cache_key",
        "set a prompt_cache_key per conversation",
    ),
    (
        "drop_unused_tools",
        "drop the tools the conversation never calls",
    ),
];

/// Fills the totals, the ranking, the summary line and the fixes of `out`; `variants` are the
/// simulated fixes' predicted input dollars, `base_input_usd` the trace's own.
pub(crate) fn summarise(
    out: &mut Explanation,
    variants: &[(&'static str, f64)],
    base_input_usd: f64,
) {
    let mut by: BTreeMap<&'static str, (CauseTotal, BTreeMap<String, usize>)> = BTreeMap::new();
    for c in &out.calls {
        if !c.agrees {
            out.disagreeing_calls += 1;
        }
        if c.causes.iter().any(|k| k.cause == "unexplained") {
            out.unexplained_calls += 1;
        }
        let mut seen: Vec<&str> = Vec::new();
        for k in &c.causes {
            let (t, phrases) = by.entry(k.cause).or_insert_with(|| {
                (
                    CauseTotal {
                        cause: k.cause,
                        calls: 0,
                        tokens: 0,
                        usd: 0.0,
                        top_detail: String::new(),
                        top_detail_calls: 0,
                    },
                    BTreeMap::new(),
                )
            });
            if !seen.contains(&k.cause) {
                t.calls += 1;
                seen.push(k.cause);
                *phrases.entry(phrase(k.cause, &k.detail)).or_default() += 1;
            }
            t.tokens += k.tokens;
            t.usd += k.usd;
        }
    }
    let mut totals: Vec<CauseTotal> = by
        .into_values()
        .map(|(mut t, phrases)| {
            if let Some((p, n)) = phrases
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            {
                t.top_detail = p;
                t.top_detail_calls = n;
            }
            t
        })
        .collect();
    totals.sort_by(|a, b| b.usd.total_cmp(&a.usd).then(b.tokens.cmp(&a.tokens)));
    out.causes = totals;
    let n = out.calls.len();
    out.summary = match out.causes.first() {
        None => format!("no call of {n} missed the cache"),
        Some(t) => {
            let mut s = format!(
                "${:.6} lost to {} on {} of {n} calls",
                t.usd, t.top_detail, t.top_detail_calls
            );
            if out.unexplained_calls > 0 {
                s.push_str(&format!("; {} calls unexplained", out.unexplained_calls));
            }
            s
        }
    };
    out.fixes = FIXES
        .iter()
        .map(
            |&(fix, description)| match variants.iter().find(|(n, _)| *n == fix) {
                Some(&(_, usd)) => FixSaving {
                    fix,
                    description,
                    simulated: true,
                    predicted_usd: usd,
                    saving_usd: base_input_usd - usd,
                    note: String::new(),
                },
                None => FixSaving {
                    fix,
                    description,
                    simulated: false,
                    predicted_usd: base_input_usd,
                    saving_usd: 0.0,
                    note: match fix {
                        "drop_unused_tools" => "not simulated: the input was read once, as a stream; the tools each conversation calls are known only at its end (explain the trace as a file to simulate it)".into(),
                        _ => "not simulated".into(),
                    },
                },
            },
        )
        .collect();
}
