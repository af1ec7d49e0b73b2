//! LiteLLM records: the `StandardLoggingPayload` its loggers write, and the proxy's `SpendLogs`
//! rows (the `LiteLLM_SpendLogs` table, and the same row as the GCS / PubSub loggers publish it, where
//! `metadata` is a JSON string).

use serde_json::Map;

use super::{
    as_map, context, first_time, obj, read_usage, string, value, Found, Hint, Obj, Result, UsageLog,
};

/// Keys a SpendLogs row or a logging payload may carry cache counts under beside `prompt_tokens`,
/// when its metadata has no `usage_object`.
const TOP_LEVEL_USAGE: [&str; 6] = [
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
];

pub(super) fn litellm_payload(
    o: &Obj,
    at: &str,
    origin: &str,
    log: &mut UsageLog,
) -> Result<Found> {
    // A SpendLogs row's `metadata` is a JSON object in the database and a JSON string in the GCS /
    // PubSub payload: both are read (a string was skipped, and with it the cache counts).
    let metadata_text: Option<String> = o.get("metadata").map(|r| {
        let raw = r.get();
        if raw.starts_with('"') {
            serde_json::from_str::<String>(raw).unwrap_or_default()
        } else {
            raw.to_string()
        }
    });
    let metadata = metadata_text.as_deref().and_then(obj);
    let status =
        string(o, "status").or_else(|| metadata.as_ref().and_then(|m| string(m, "status")));
    if status.as_deref() == Some("failure") {
        log.failed_calls += 1;
        return Ok(None);
    }
    // The full usage object (cache counts included) is kept in metadata.usage_object; the top-level
    // counts are a fallback.
    let usage = metadata
        .as_ref()
        .and_then(|m| m.get("usage_object"))
        .and_then(|r| as_map(r.get()));
    let mut call = match usage {
        Some(u) => read_usage(&u, at, origin, "metadata.usage_object", log, Hint::None)?,
        None => {
            let mut m = Map::new();
            for k in TOP_LEVEL_USAGE {
                if let Some(v) = value(o, k).filter(|v| !v.is_null()) {
                    m.insert(k.into(), v);
                }
            }
            if !m.contains_key("prompt_tokens") {
                return Ok(None);
            }
            let split_known = m.len() > 3 || m.keys().any(|k| k.starts_with("cache"));
            let call = read_usage(&m, at, origin, "", log, Hint::None)?;
            if !split_known && call.prompt_tokens > 0 {
                // Only the total prompt is known: its cache reads and writes (if any) are billed at
                // the base input rate, and said so.
                log.cache_split_unknown += 1;
            }
            call
        }
    };
    call.format = "litellm";
    call.unix_time = first_time(o, &["startTime"]);
    call.stated_usd = stated_usd(o);
    let mut layers: Vec<&Obj> = vec![o];
    if let Some(m) = &metadata {
        layers.push(m);
    }
    context(&mut call, &layers);
    if call.session.is_none() {
        call.session = string(o, "trace_id");
    }
    Ok(Some((
        call,
        string(o, "id").or_else(|| string(o, "request_id")),
    )))
}

/// What LiteLLM says the call cost: `spend` (SpendLogs) or `response_cost` (logging payload).
fn stated_usd(o: &Obj) -> Option<f64> {
    ["spend", "response_cost"]
        .iter()
        .find_map(|k| match value(o, k)? {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        })
}
