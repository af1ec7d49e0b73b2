//! LiteLLM records: the `StandardLoggingPayload` its loggers write, and the proxy's `SpendLogs`
//! rows (the `LiteLLM_SpendLogs` table, and the same row as the GCS / PubSub loggers publish it, where
//! `metadata` is a JSON string).

use serde_json::Map;

use super::{
    as_map, context, first_time, read_usage, string, sub, value, Found, Hint, Obj, Result, UsageLog,
};

pub(super) fn litellm_payload(
    o: &Obj,
    at: &str,
    origin: &str,
    log: &mut UsageLog,
) -> Result<Found> {
    if string(o, "status").as_deref() == Some("failure") {
        log.failed_calls += 1;
        return Ok(None);
    }
    let metadata = sub(o, "metadata");
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
            for k in ["prompt_tokens", "completion_tokens", "total_tokens"] {
                if let Some(v) = value(o, k) {
                    m.insert(k.into(), v);
                }
            }
            if m.is_empty() {
                return Ok(None);
            }
            read_usage(&m, at, origin, "", log, Hint::None)?
        }
    };
    call.format = "litellm";
    call.unix_time = first_time(o, &["startTime"]);
    let mut layers: Vec<&Obj> = vec![o];
    if let Some(m) = &metadata {
        layers.push(m);
    }
    context(&mut call, &layers);
    if call.session.is_none() {
        call.session = string(o, "trace_id");
    }
    Ok(Some((call, string(o, "id"))))
}
