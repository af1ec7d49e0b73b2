//! OpenTelemetry GenAI spans (semantic conventions `gen_ai.*`): OTLP JSON as the collector's file
//! exporter writes it (`resourceSpans[].scopeSpans[].spans[]`, attributes as `{key, value}` with
//! `intValue` / `stringValue`), or one span per record with its attributes as a list or a flat map.
//!
//! Counts: `gen_ai.usage.input_tokens` (all input tokens, cached ones included, as the conventions
//! ask), `gen_ai.usage.cache_read.input_tokens` and `gen_ai.usage.cache_creation.input_tokens` (also
//! the `cache_read_input_tokens` / `cache_creation_input_tokens` spellings of instrumentations that
//! predate them), `gen_ai.usage.output_tokens`; the older `prompt_tokens` / `completion_tokens`.
//! An instrumentation that reports Anthropic's uncached `input_tokens` (cache counts larger than the
//! input) is read that way. Agent and tool spans (`invoke_agent`, `execute_tool`, ...) repeat their
//! model calls' usage and are not calls.

use serde_json::{Map, Value};

use super::{count_value, parse_time, Error, LoggedCall, Many, Obj, Result, UsageLog};

/// The spans of an OTLP export, or one span; `None` when the record is neither.
pub(super) fn read(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    if let Some(r) = o.get("resourceSpans") {
        let resource_spans: Vec<Value> = serde_json::from_str(r.get()).map_err(|_| {
            Error::invalid(origin, format!("{at}: resourceSpans"), "must be a list")
        })?;
        let mut out = Vec::new();
        for (i, rs) in resource_spans.iter().enumerate() {
            let resource = attributes(rs.get("resource").and_then(|r| r.get("attributes")));
            let scopes = rs.get("scopeSpans").and_then(Value::as_array);
            for (j, ss) in scopes.into_iter().flatten().enumerate() {
                let spans = ss.get("spans").and_then(Value::as_array);
                for (k, span) in spans.into_iter().flatten().enumerate() {
                    let here = format!("{at}: resourceSpans[{i}].scopeSpans[{j}].spans[{k}]");
                    match span_call(span, &resource, &here, origin)? {
                        Some(c) => out.push(c),
                        None => log.records_without_usage += 1,
                    }
                }
            }
        }
        return Ok(Some(out));
    }
    // One span per record: a `spanId` (or `span_id`) beside GenAI attributes.
    if (o.contains_key("spanId") || o.contains_key("span_id")) && o.contains_key("attributes") {
        let span: Value = serde_json::from_str(&serde_json::to_string(o).unwrap_or_default())
            .unwrap_or(Value::Null);
        let attrs = attributes(span.get("attributes"));
        if attrs.keys().any(|k| k.starts_with("gen_ai.")) {
            return Ok(Some(
                span_call(&span, &Map::new(), at, origin)?
                    .into_iter()
                    .collect(),
            ));
        }
    }
    Ok(None)
}

/// Attributes as a flat map: OTLP's `[{key, value: {intValue | stringValue | ...}}]` or a map.
fn attributes(v: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    match v {
        Some(Value::Array(list)) => {
            for a in list {
                let (Some(k), Some(val)) = (a.get("key").and_then(Value::as_str), a.get("value"))
                else {
                    continue;
                };
                let plain = match val {
                    Value::Object(m) => m
                        .iter()
                        .find(|(t, _)| t.ends_with("Value"))
                        .map(|(_, x)| x.clone())
                        .unwrap_or(Value::Null),
                    other => other.clone(),
                };
                out.insert(k.to_string(), plain);
            }
        }
        Some(Value::Object(m)) => out.extend(m.clone()),
        _ => {}
    }
    out
}

fn text(a: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match a.get(*k)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// Operations whose spans are not model calls (they sum or wrap their children's).
const NOT_CALLS: [&str; 4] = ["invoke_agent", "create_agent", "execute_tool", "embeddings"];

fn span_call(
    span: &Value,
    resource: &Map<String, Value>,
    at: &str,
    origin: &str,
) -> Result<Option<(LoggedCall, Option<String>)>> {
    let a = attributes(span.get("attributes"));
    let has = |k: &str| a.contains_key(k);
    let usage_keys = [
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
    ];
    if !usage_keys.iter().any(|k| has(k)) {
        return Ok(None);
    }
    if text(&a, &["gen_ai.operation.name"]).is_some_and(|op| NOT_CALLS.contains(&op.as_str())) {
        return Ok(None);
    }
    let n = |keys: &[&str]| -> Result<u64> {
        for k in keys {
            if let Some(v) = a.get(*k) {
                return count_value(v, origin, format!("{at}: attributes.{k}"));
            }
        }
        Ok(0)
    };
    let input = n(&["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"])?;
    let read = n(&[
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
    ])?;
    let write = n(&[
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_creation_input_tokens",
    ])?;
    let output = n(&[
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
    ])?;
    // The conventions count cached tokens in input_tokens; an instrumentation passing Anthropic's
    // uncached count through shows more cached tokens than input.
    let uncached = if input >= read + write {
        input - read - write
    } else {
        input
    };
    let mut call = LoggedCall::empty(at, "otel");
    call.set(uncached, write, 0, read, output);
    call.model = text(&a, &["gen_ai.response.model", "gen_ai.request.model"]);
    call.session = text(
        &a,
        &["gen_ai.conversation.id", "session.id", "gen_ai.session.id"],
    )
    .or_else(|| {
        span.get("traceId")
            .and_then(Value::as_str)
            .map(String::from)
    });
    call.agent = text(&a, &["gen_ai.agent.id", "gen_ai.agent.name"]);
    call.project = text(resource, &["service.name"]);
    call.unix_time = span
        .get("startTimeUnixNano")
        .and_then(|v| match v {
            Value::String(s) => s.parse::<f64>().ok(),
            Value::Number(x) => x.as_f64(),
            _ => None,
        })
        .map(|ns| ns / 1e9)
        .or_else(|| span.get("startTime").and_then(parse_time));
    let id = span
        .get("spanId")
        .or_else(|| span.get("span_id"))
        .and_then(Value::as_str)
        .map(String::from);
    Ok(Some((call, id)))
}
