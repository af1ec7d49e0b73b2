//! Langfuse observation exports (the public API's `GET /api/public/observations`, or the UI's
//! export): a `GENERATION` observation with `usageDetails` (Langfuse's usage buckets, each billed on
//! its own: `input` is the uncached input once the cache details are taken out of it) and
//! `costDetails` (dollars per bucket, `total`).

use serde_json::Value;

use super::{
    context, count_value, first_time, obj, string, value, LoggedCall, Many, Obj, Result, UsageLog,
};

/// Keys of `usageDetails` that are tokens read from cache.
const READ_KEYS: [&str; 4] = [
    "cache_read_input_tokens",
    "input_cached_tokens",
    "input_cache_read",
    "cached_tokens",
];
/// Keys of `usageDetails` that are tokens written to cache.
const WRITE_KEYS: [&str; 3] = [
    "cache_creation_input_tokens",
    "input_cache_creation",
    "input_cache_write",
];

/// One observation, or the API's page of them (`{data: [...], meta}`); `None` when the record is
/// neither.
pub(super) fn read(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    if let (Some(data), true) = (o.get("data"), o.contains_key("meta")) {
        let Ok(items) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(data.get())
        else {
            return Ok(None);
        };
        let mut out = Vec::new();
        let mut any = false;
        for (i, item) in items.iter().enumerate() {
            let Some(obs) = obj(item.get()) else { continue };
            if let Some(calls) = observation(&obs, &format!("{at}: data[{i}]"), origin, log)? {
                any = true;
                if calls.is_empty() {
                    log.records_without_usage += 1;
                }
                out.extend(calls);
            }
        }
        return Ok(any.then_some(out));
    }
    observation(o, at, origin, log)
}

fn observation(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    let Some(details) = value(o, "usageDetails") else {
        return Ok(None);
    };
    let Value::Object(d) = details else {
        return Ok(Some(Vec::new()));
    };
    if d.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let field = |k: &str| format!("{at}: usageDetails.{k}");
    let sum = |keys: &dyn Fn(&str) -> bool| -> Result<u64> {
        let mut n = 0;
        for (k, v) in &d {
            if keys(k) {
                n += count_value(v, origin, field(k))?;
            }
        }
        Ok(n)
    };
    let read = sum(&|k| READ_KEYS.contains(&k))?;
    let write = sum(&|k| WRITE_KEYS.contains(&k))?;
    // Other input buckets (`input`, `input_audio_tokens`, ...) are billed at the base rate; output
    // buckets (`output`, `output_reasoning_tokens`, ...) are output.
    let uncached =
        sum(&|k| k.starts_with("input") && !READ_KEYS.contains(&k) && !WRITE_KEYS.contains(&k))?;
    let output = sum(&|k| k.starts_with("output"))?;
    for k in d.keys() {
        let known = k == "total"
            || k.starts_with("input")
            || k.starts_with("output")
            || READ_KEYS.contains(&k.as_str())
            || WRITE_KEYS.contains(&k.as_str());
        if !known {
            *log.unknown_fields
                .entry(format!("usageDetails.{k}"))
                .or_default() += 1;
        }
    }
    let mut call = LoggedCall::empty(at, "langfuse");
    call.set(uncached, write, 0, read, output);
    call.model = string(o, "model");
    call.unix_time = first_time(o, &["startTime"]);
    call.session = string(o, "sessionId").or_else(|| string(o, "traceId"));
    call.stated_usd = stated(o);
    context(&mut call, &[o]);
    Ok(Some(vec![(call, string(o, "id"))]))
}

/// What Langfuse computed the observation cost: `costDetails.total`, else `calculatedTotalCost`.
fn stated(o: &Obj) -> Option<f64> {
    let total = value(o, "costDetails")
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
        .get("total")
        .and_then(Value::as_f64);
    total.or_else(|| {
        ["calculatedTotalCost", "totalCost"]
            .iter()
            .find_map(|k| value(o, k).and_then(|v| v.as_f64()))
    })
}
