//! OpenCode sessions: a message file of its storage
//! (`~/.local/share/opencode/storage/message/<session>/msg_*.json`) or `opencode export`'s
//! document (`{info, messages: [{info, parts}]}`). An assistant message has `modelID`,
//! `providerID`, `sessionID`, `time.created` (ms), `path.cwd`, the `cost` OpenCode computed and
//! `tokens` in separate buckets (`input` uncached, `cache.read`, `cache.write`, `output`,
//! `reasoning`), as OpenCode prices them.

use serde_json::Value;

use super::{count_value, parse_time, LoggedCall, Many, Obj, Result, UsageLog};

/// The calls of a message file or an export; `None` when the record is neither.
pub(super) fn read(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    if o.contains_key("tokens") && (o.contains_key("modelID") || o.contains_key("providerID")) {
        let m: Value = serde_json::from_str(&serde_json::to_string(o).unwrap_or_default())
            .unwrap_or(Value::Null);
        return Ok(Some(message(&m, at, origin)?.into_iter().collect()));
    }
    if let (true, Some(msgs)) = (o.contains_key("info"), o.get("messages")) {
        let Ok(messages) = serde_json::from_str::<Vec<Value>>(msgs.get()) else {
            return Ok(None);
        };
        let is_opencode = messages.iter().any(|m| m.pointer("/info/tokens").is_some());
        if !is_opencode {
            return Ok(None);
        }
        let mut out = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let here = format!("{at}: messages[{i}].info");
            match m
                .get("info")
                .map(|x| message(x, &here, origin))
                .transpose()?
            {
                Some(Some(c)) => out.push(c),
                _ => log.records_without_usage += 1,
            }
        }
        return Ok(Some(out));
    }
    Ok(None)
}

fn message(m: &Value, at: &str, origin: &str) -> Result<Option<(LoggedCall, Option<String>)>> {
    let Some(tokens) = m.get("tokens").filter(|t| t.is_object()) else {
        return Ok(None);
    };
    let n = |path: &str| -> Result<u64> {
        match tokens.pointer(path) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => count_value(v, origin, format!("{at}: tokens{}", path.replace('/', "."))),
        }
    };
    let mut call = LoggedCall::empty(at, "opencode");
    call.set(
        n("/input")?,
        n("/cache/write")?,
        0,
        n("/cache/read")?,
        n("/output")? + n("/reasoning")?,
    );
    let s = |p: &str| m.pointer(p).and_then(Value::as_str).map(String::from);
    call.model = s("/modelID");
    call.session = s("/sessionID");
    call.project = s("/path/cwd").or_else(|| s("/path/root"));
    call.unix_time = m.pointer("/time/created").and_then(parse_time);
    call.stated_usd = m.get("cost").and_then(Value::as_f64);
    Ok(Some((call, s("/id"))))
}
