//! Why tokens were not read: a call set against the previous call of its conversation, every token
//! of the previous prompt that this call re-sent but did not read named by one cause of the
//! vocabulary (a contract, see [`CAUSES`]), with the detail that shows it (the tools that changed
//! and the JSON path, the system block and its first differing bytes, the edited message, the
//! gap and the TTL, ...).

use std::fmt::Write as _;

use serde_json::Value;

use super::prompt::{Item, ItemKind, ModelRules};
use crate::input::trace::{Content, Exchange, RegionKind};
use crate::model::strategy::Mode;
use crate::sim::engine::cache::PlacedBreakpoint;

/// Every cause `explain` names, in the spelling of its output (a contract: JSON, CSV, table).
pub const CAUSES: [&str; 12] = [
    "cold_start",
    "ttl_expired",
    "tools_changed",
    "system_changed",
    "messages_changed",
    "settings_changed",
    "model_changed",
    "below_minimum",
    "lookback_exceeded",
    "no_breakpoint",
    "provider_miss",
    "unexplained",
];

/// Bytes of each system block kept from one call to the next, for diff excerpts.
const SYSTEM_KEPT_BYTES: usize = 64 * 1024;

/// What a conversation's previous call leaves for the next one to be compared with: fingerprints
/// and positions, the tool definitions (for the JSON path of a change) and the first bytes of each
/// system block (for the excerpt of a change); never the messages' text.
#[derive(Debug, Clone)]
pub(crate) struct Previous {
    pub time: f64,
    pub model: String,
    pub items: Vec<Item>,
    pub total: u64,
    /// Tokens up to its last breakpoint that could be cached (automatic: its whole prompt in
    /// blocks); 0 when it set none.
    pub cached_end: u64,
    /// The boundary of that breakpoint.
    pub cached_boundary: Option<usize>,
    /// TTL of the entry written or refreshed there, ms.
    pub ttl_ms: u64,
    pub tools: Vec<(String, u64, Value)>,
    pub system: Vec<String>,
    /// Messages of its prompt.
    pub messages: usize,
    /// System blocks seen changing in this conversation (what `move_volatile_system` moves).
    pub volatile_system: Vec<usize>,
}

/// One cause of one call: tokens not read and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Share {
    pub cause: &'static str,
    pub tokens: u64,
    pub detail: String,
}

/// The call as the previous-call state keeps it.
pub(crate) fn remember(
    ex: &Exchange,
    m: &ModelRules,
    items: Vec<Item>,
    bps: &[PlacedBreakpoint],
    time: f64,
    volatile_system: Vec<usize>,
) -> Previous {
    let total = items.last().map_or(0, |i| i.end);
    let (cached_end, cached_boundary, ttl_ms) = match (m.mode(), &m.params) {
        (Mode::Explicit, Some(_)) => match bps.last() {
            Some(bp) => {
                let end = items
                    .iter()
                    .find(|i| i.boundary == Some(bp.boundary))
                    .map_or(0, |i| i.end);
                (end, Some(bp.boundary), bp.ttl_ms)
            }
            None => (0, None, 0),
        },
        (Mode::Automatic | Mode::Implicit, Some(p)) => {
            let ttl = m
                .resolved
                .default_tier
                .as_ref()
                .map_or(300_000, |t| t.ttl_ms);
            (
                total / p.granularity * p.granularity,
                items.last().and_then(|i| i.boundary),
                ttl,
            )
        }
        _ => (0, None, 0),
    };
    let mut tools = Vec::new();
    let mut system = Vec::new();
    for r in &ex.regions {
        match (&r.kind, &r.content) {
            (RegionKind::Tool, Content::Tool(t)) => {
                tools.push((t.name.clone(), r.hash, t.api_json()))
            }
            (RegionKind::System, Content::Text(s) | Content::Json(s)) => {
                system.push(prefix_bytes(s, SYSTEM_KEPT_BYTES).to_string())
            }
            (RegionKind::System, Content::Image) => system.push(String::new()),
            _ => {}
        }
    }
    Previous {
        time,
        model: m.model.id.clone(),
        items,
        total,
        cached_end,
        cached_boundary,
        ttl_ms,
        tools,
        system,
        messages: message_count(ex),
        volatile_system,
    }
}

fn message_count(ex: &Exchange) -> usize {
    ex.regions
        .iter()
        .filter(|r| r.kind == RegionKind::Message)
        .map(|r| r.index + 1)
        .max()
        .unwrap_or(0)
}

fn prefix_bytes(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The current call as attribution sees it.
pub(crate) struct Current<'a> {
    pub ex: &'a Exchange,
    pub m: &'a ModelRules<'a>,
    pub items: &'a [Item],
    pub breakpoints: &'a [PlacedBreakpoint],
    pub time: f64,
    pub billed_read: u64,
    pub billed_prompt: u64,
    pub redact: bool,
}

/// Where the current prompt first differs from the previous one: the token position and the kind
/// of item there (`None`: the previous prompt is a prefix of this one).
fn divergence(prev: &Previous, cur: &[Item]) -> Option<(u64, ItemKind, ItemKind)> {
    let n = prev.items.len().min(cur.len());
    for i in 0..n {
        let (a, b) = (&prev.items[i], &cur[i]);
        if a.kind != b.kind || a.hash != b.hash {
            let at = if i == 0 { 0 } else { cur[i - 1].end };
            return Some((at, a.kind, b.kind));
        }
    }
    if cur.len() < prev.items.len() {
        let at = cur.last().map_or(0, |i| i.end);
        return Some((at, prev.items[cur.len()].kind, prev.items[cur.len()].kind));
    }
    None
}

/// The causes of one call's unread tokens.
pub(crate) fn attribute(prev: Option<&Previous>, cur: &Current) -> Vec<Share> {
    let read = cur.billed_read;
    let mut out: Vec<Share> = Vec::new();
    let mut add = |cause: &'static str, tokens: u64, detail: String| {
        if tokens > 0 {
            out.push(Share {
                cause,
                tokens,
                detail,
            });
        }
    };
    let explicit = cur.m.mode() == Mode::Explicit;
    let min = cur.m.params.map_or(0, |p| p.min_tokens);
    let Some(prev) = prev else {
        let lost = cur.billed_prompt.saturating_sub(read);
        let highest = cur
            .breakpoints
            .last()
            .and_then(|bp| cur.items.iter().find(|i| i.boundary == Some(bp.boundary)))
            .map_or(0, |i| i.end);
        if cur.m.mode() == Mode::None || cur.m.params.is_none() {
            return out;
        }
        if explicit && cur.breakpoints.is_empty() {
            add(
                "no_breakpoint",
                lost,
                "the request sets no cache breakpoint".into(),
            );
        } else if explicit && highest < min {
            add(
                "below_minimum",
                lost,
                format!("prefix up to the last breakpoint {highest} tokens < minimum {min}"),
            );
        } else {
            add("cold_start", lost, "first call of its conversation".into());
        }
        return out;
    };
    if cur.m.mode() == Mode::None || cur.m.params.is_none() {
        return out;
    }
    if prev.model != cur.m.model.id {
        let p = prev.total.min(cur.billed_prompt);
        add(
            "model_changed",
            p.saturating_sub(read),
            format!("{} -> {}", prev.model, cur.m.model.id),
        );
        return out;
    }
    let p = prev.total.min(cur.billed_prompt);
    // Automatic caching stores whole blocks: the rest of the last block was never cacheable.
    let b = prev.cached_end.min(p);
    let (d, change) = match divergence(prev, cur.items) {
        Some((at, a, k)) => (at.min(p), Some((a, k))),
        None => (p, None),
    };
    // Unmarked: never written, whatever else happened.
    if explicit {
        let from = read.max(b);
        let detail = if prev.cached_boundary.is_none() {
            "the previous request set no cache breakpoint".to_string()
        } else {
            format!("nothing after token {b} was marked for caching by the previous request")
        };
        add("no_breakpoint", p.saturating_sub(from), detail);
    }
    // Changed content between the divergence and the end of what was cached.
    if let Some((was, now)) = change {
        let from = read.max(d);
        let tokens = b.saturating_sub(from);
        if tokens > 0 {
            let (cause, detail) = change_cause(prev, cur, was, now);
            add(cause, tokens, detail);
        }
    }
    // A stable prefix that was not read.
    let stable_end = b.min(d);
    let tokens = stable_end.saturating_sub(read);
    if tokens > 0 {
        let gap = cur.time - prev.time;
        let ttl = prev.ttl_ms as f64 / 1000.0;
        let (cause, detail) = if gap >= ttl {
            (
                "ttl_expired",
                format!("gap {gap:.1} s >= TTL {}", seconds_text(ttl)),
            )
        } else if stable_end < min {
            (
                "below_minimum",
                format!("cached prefix {stable_end} tokens < minimum {min}"),
            )
        } else if let Some(blocks) = lookback_distance(prev, cur) {
            let lookback = cur.m.params.map_or(usize::MAX, |p| p.lookback);
            (
                "lookback_exceeded",
                format!(
                    "the previous entry is {blocks} blocks before the nearest breakpoint (lookback {lookback} blocks)"
                ),
            )
        } else {
            (
                "provider_miss",
                format!("stable prefix of {stable_end} tokens within the TTL (gap {gap:.1} s), billed no read"),
            )
        };
        add(cause, tokens, detail);
    }
    out
}

fn seconds_text(s: f64) -> String {
    if s >= 3600.0 && s % 3600.0 == 0.0 {
        format!("{} h", s / 3600.0)
    } else if s >= 60.0 && s % 60.0 == 0.0 {
        format!("{} min", s / 60.0)
    } else {
        format!("{s} s")
    }
}

/// Explicit mode: how far the previous call's entry lies behind the nearest breakpoint of this
/// call at or after it, when every such breakpoint is beyond the lookback (`None`: one reaches it).
fn lookback_distance(prev: &Previous, cur: &Current) -> Option<usize> {
    if cur.m.mode() != Mode::Explicit {
        return None;
    }
    let lookback = cur.m.params?.lookback;
    let e = prev.cached_boundary?;
    let nearest = cur
        .breakpoints
        .iter()
        .filter(|b| b.boundary >= e)
        .map(|b| b.boundary - e)
        .min()?;
    (nearest >= lookback).then_some(nearest)
}

/// The cause and detail of a change at the divergence (`was`: the previous call's item there,
/// `now`: this call's).
fn change_cause(
    prev: &Previous,
    cur: &Current,
    was: ItemKind,
    now: ItemKind,
) -> (&'static str, String) {
    let either = |f: &dyn Fn(ItemKind) -> bool| f(was) || f(now);
    if either(&|k| k == ItemKind::Model) {
        return (
            "model_changed",
            format!("{} -> {}", prev.model, cur.m.model.id),
        );
    }
    if let ItemKind::Setting(name) = now {
        return ("settings_changed", format!("{name} changed"));
    }
    if let ItemKind::Setting(name) = was {
        return ("settings_changed", format!("{name} changed"));
    }
    if either(&|k| matches!(k, ItemKind::Preamble | ItemKind::Tool(_))) {
        return ("tools_changed", tools_detail(prev, cur.ex));
    }
    if let ItemKind::System(i) = now {
        return ("system_changed", system_detail(prev, cur.ex, i, cur.redact));
    }
    if let ItemKind::System(i) = was {
        return ("system_changed", system_detail(prev, cur.ex, i, cur.redact));
    }
    let messages = message_count(cur.ex);
    let detail = match (was, now) {
        _ if messages < prev.messages => {
            format!(
                "truncated or compacted: {} -> {messages} messages",
                prev.messages
            )
        }
        (ItemKind::Message(m, _), _) | (_, ItemKind::Message(m, _)) => {
            let role = cur
                .ex
                .regions
                .iter()
                .find(|r| r.kind == RegionKind::Message && r.index == m)
                .map_or("", |r| r.name.as_str());
            format!("message {} ({role}) edited", m + 1)
        }
        _ => "messages changed".into(),
    };
    ("messages_changed", detail)
}

/// Which tools were added, removed, re-ordered or changed (with the first JSON path that differs).
pub(crate) fn tools_detail(prev: &Previous, ex: &Exchange) -> String {
    let cur: Vec<(&str, u64, Value)> = ex
        .regions
        .iter()
        .filter_map(|r| match &r.content {
            Content::Tool(t) => Some((t.name.as_str(), r.hash, t.api_json())),
            _ => None,
        })
        .collect();
    let names_prev: Vec<&str> = prev.tools.iter().map(|t| t.0.as_str()).collect();
    let names_cur: Vec<&str> = cur.iter().map(|t| t.0).collect();
    let added: Vec<&str> = names_cur
        .iter()
        .copied()
        .filter(|n| !names_prev.contains(n))
        .collect();
    let removed: Vec<&str> = names_prev
        .iter()
        .copied()
        .filter(|n| !names_cur.contains(n))
        .collect();
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!("added {}", list(&added)));
    }
    if !removed.is_empty() {
        parts.push(format!("removed {}", list(&removed)));
    }
    let common_prev: Vec<&str> = names_prev
        .iter()
        .copied()
        .filter(|n| names_cur.contains(n))
        .collect();
    let common_cur: Vec<&str> = names_cur
        .iter()
        .copied()
        .filter(|n| names_prev.contains(n))
        .collect();
    if common_prev != common_cur {
        let moved: Vec<&str> = common_cur
            .iter()
            .zip(&common_prev)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| *a)
            .collect();
        parts.push(format!("re-ordered ({} moved)", list(&moved)));
    }
    for (name, h, json) in &cur {
        if let Some((_, ph, pjson)) = prev.tools.iter().find(|t| t.0 == *name) {
            if ph != h {
                let path = first_difference(pjson, json, "$".into());
                parts.push(format!("changed {name} at {path}"));
            }
        }
    }
    if parts.is_empty() {
        "tool definitions changed".into()
    } else {
        parts.join("; ")
    }
}

fn list(names: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut s = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(s, " and {} more", names.len() - SHOWN);
    }
    s
}

/// The JSON path where two values first differ.
pub(crate) fn first_difference(a: &Value, b: &Value, path: String) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let ky: Vec<&String> = y.keys().collect();
            for k in &kx {
                match y.get(*k) {
                    None => return format!("{path}.{k} (removed)"),
                    Some(v) if v != &x[*k] => {
                        return first_difference(&x[*k], v, format!("{path}.{k}"))
                    }
                    _ => {}
                }
            }
            if let Some(k) = ky.iter().find(|k| !x.contains_key(**k)) {
                return format!("{path}.{k} (added)");
            }
            if kx != ky {
                return format!("{path} (keys re-ordered)");
            }
            path
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                if p != q {
                    return first_difference(p, q, format!("{path}[{i}]"));
                }
            }
            format!("{path} (length {} -> {})", x.len(), y.len())
        }
        _ => path,
    }
}

/// System block `i`: the first differing byte, an escaped excerpt (unless redacted) and the kind of
/// volatile span there (time, date, uuid, counter).
fn system_detail(prev: &Previous, ex: &Exchange, i: usize, redact: bool) -> String {
    let now = ex
        .regions
        .iter()
        .find(|r| r.kind == RegionKind::System && r.index == i)
        .map(|r| match &r.content {
            Content::Text(s) | Content::Json(s) => prefix_bytes(s, SYSTEM_KEPT_BYTES),
            _ => "",
        });
    let (Some(before), Some(now)) = (prev.system.get(i), now) else {
        return format!("system block {} added or removed", i + 1);
    };
    let at = before
        .bytes()
        .zip(now.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(now.len()));
    let mut s = format!("system block {} differs at byte {at}", i + 1);
    let kinds = volatile_kinds(before, at)
        .into_iter()
        .chain(volatile_kinds(now, at));
    let mut seen: Vec<&str> = Vec::new();
    for k in kinds {
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    if !seen.is_empty() {
        let _ = write!(s, " ({}-like span)", seen.join("/"));
    }
    if !redact {
        let _ = write!(
            s,
            ": \"{}\" -> \"{}\"",
            excerpt(before, at),
            excerpt(now, at)
        );
    }
    s
}

/// Up to 60 characters of `s` around byte `at`, control characters escaped.
pub(crate) fn excerpt(s: &str, at: usize) -> String {
    let mut start = at.saturating_sub(20).min(s.len());
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let text: String = s[start..].chars().take(60).collect();
    text.chars().flat_map(char::escape_default).collect()
}

/// Kinds of volatile text (`date`, `time`, `uuid`, `counter`) in a window of `s` around `at`.
pub(crate) fn volatile_kinds(s: &str, at: usize) -> Vec<&'static str> {
    use std::sync::OnceLock;
    static PATTERNS: OnceLock<Vec<(&'static str, regex::Regex)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            (
                "uuid",
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            ),
            (
                "date",
                r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? ",
            ),
            ("time", r"\d{1,2}:\d{2}(:\d{2})?"),
            ("counter", r"\d+"),
        ]
        .into_iter()
        .filter_map(|(k, p)| regex::Regex::new(p).ok().map(|r| (k, r)))
        .collect()
    });
    let lo = at.saturating_sub(40);
    let hi = (at + 40).min(s.len());
    let (mut lo, mut hi) = (lo.min(s.len()), hi);
    while !s.is_char_boundary(lo) {
        lo -= 1;
    }
    while !s.is_char_boundary(hi) {
        hi += 1;
    }
    let window = &s[lo..hi];
    let rel = at - lo.min(at);
    let mut out = Vec::new();
    for (kind, re) in patterns {
        // A span that covers (or touches) the first differing byte.
        let hit = re
            .find_iter(window)
            .any(|m| m.start() <= rel && rel <= m.end());
        // A counter only where no more specific kind matched.
        if hit && (*kind != "counter" || out.is_empty()) {
            out.push(*kind);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_spans_are_named() {
        let s =
            "Today is 2026-01-01, time 12:34:56, id 0f8fad5b-d9cb-469f-a165-70867728950e, turn 17.";
        assert_eq!(volatile_kinds(s, s.find("01,").unwrap()), ["date"]);
        assert_eq!(volatile_kinds(s, s.find("34:").unwrap()), ["time"]);
        assert_eq!(volatile_kinds(s, s.find("469f").unwrap()), ["uuid"]);
        assert_eq!(volatile_kinds(s, s.find("17").unwrap()), ["counter"]);
        assert!(volatile_kinds(s, 1).is_empty());
    }

    #[test]
    fn the_first_json_difference_is_a_path() {
        let a = serde_json::json!({"name": "x", "input_schema": {"properties": {"q": {"type": "string"}}}});
        let b = serde_json::json!({"name": "x", "input_schema": {"properties": {"q": {"type": "number"}}}});
        assert_eq!(
            first_difference(&a, &b, "$".into()),
            "$.input_schema.properties.q.type"
        );
    }
}
