//! Helicone request exports (the dashboard's JSON export and the request query API): one request
//! per record with `prompt_tokens`, `completion_tokens`, `prompt_cache_write_tokens`,
//! `prompt_cache_read_tokens`, `model`, `request_created_at` and the cost Helicone computed
//! (`cost_usd` / `costUSD` / `cost`).
//!
//! Helicone keeps the provider's meaning of `prompt_tokens`: Anthropic's uncached input (cache
//! counts beside it), OpenAI's whole prompt (cached tokens inside it). A record of an Anthropic
//! model (provider `anthropic`, or a `claude` model) is read the first way, any other the second
//! where its prompt holds its cache counts.

use super::{context, count_value, first_time, string, value, LoggedCall, Many, Obj, Result};

/// One request; `None` when the record is not Helicone's.
pub(super) fn read(o: &Obj, at: &str, origin: &str) -> Result<Option<Many>> {
    let cache_keys = ["prompt_cache_write_tokens", "prompt_cache_read_tokens"];
    let helicone = cache_keys.iter().any(|k| o.contains_key(k))
        || (o.contains_key("request_created_at") && o.contains_key("prompt_tokens"));
    if !helicone {
        return Ok(None);
    }
    let n = |k: &str| -> Result<u64> {
        match value(o, k) {
            None | Some(serde_json::Value::Null) => Ok(0),
            Some(v) => count_value(&v, origin, format!("{at}: {k}")),
        }
    };
    let prompt = n("prompt_tokens")?;
    let write = n("prompt_cache_write_tokens")?;
    let read = n("prompt_cache_read_tokens")?;
    let model = string(o, "model")
        .or_else(|| string(o, "response_model"))
        .or_else(|| string(o, "request_model"));
    let anthropic = string(o, "provider").is_some_and(|p| p.eq_ignore_ascii_case("anthropic"))
        || model.as_deref().is_some_and(|m| m.contains("claude"));
    let uncached = if !anthropic && prompt >= read + write {
        prompt - read - write
    } else {
        prompt
    };
    let mut call = LoggedCall::empty(at, "helicone");
    call.set(uncached, write, 0, read, n("completion_tokens")?);
    call.model = model;
    call.unix_time = first_time(o, &["request_created_at", "created_at"]);
    call.stated_usd = ["cost_usd", "costUSD", "cost"]
        .iter()
        .find_map(|k| value(o, k).and_then(|v| v.as_f64()));
    context(&mut call, &[o]);
    if call.session.is_none() {
        // Helicone's session header travels as a property.
        call.session = value(o, "properties").and_then(|p| {
            p.get("Helicone-Session-Id")
                .and_then(|v| v.as_str())
                .map(String::from)
        });
    }
    Ok(Some(vec![(call, string(o, "request_id"))]))
}
