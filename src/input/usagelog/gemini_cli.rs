//! Gemini CLI chat files (`~/.gemini/tmp/<project hash>/chats/session-*.json`): one document with a
//! `sessionId`, a `projectHash` and the `messages` of the session; each `gemini` message has the
//! response's `tokens` (`input` = the prompt, cached tokens included; `cached`, `output`,
//! `thoughts`, `tool`) and its `model`.

use serde_json::Value;

use super::{count_value, parse_time, string, LoggedCall, Many, Obj, Result, UsageLog};

/// The calls of a chat file; `None` when the record is not one.
pub(super) fn read(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    if !(o.contains_key("messages")
        && (o.contains_key("projectHash") || o.contains_key("sessionId")))
    {
        return Ok(None);
    }
    let Ok(messages) =
        serde_json::from_str::<Vec<Value>>(o.get("messages").map_or("", |r| r.get()))
    else {
        return Ok(None);
    };
    if !messages.iter().any(|m| m.get("tokens").is_some()) {
        return Ok(None);
    }
    let session = string(o, "sessionId");
    let project = string(o, "projectHash");
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(tokens) = m.get("tokens").and_then(Value::as_object) else {
            log.records_without_usage += 1;
            continue;
        };
        let here = format!("{at}: messages[{i}]");
        let n = |k: &str| -> Result<u64> {
            match tokens.get(k) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => count_value(v, origin, format!("{here}.tokens.{k}")),
            }
        };
        // As Gemini's usageMetadata: the prompt includes the cached tokens; tool-use prompt tokens
        // are input, thoughts are output.
        let prompt = n("input")? + n("tool")?;
        let cached = n("cached")?;
        if cached > prompt {
            return Err(super::Error::invalid(
                origin,
                format!("{here}.tokens.cached"),
                format!("{cached} cached tokens but only {prompt} input tokens"),
            ));
        }
        let mut call = LoggedCall::empty(&here, "gemini-cli");
        call.set(prompt - cached, 0, 0, cached, n("output")? + n("thoughts")?);
        call.model = m.get("model").and_then(Value::as_str).map(String::from);
        call.unix_time = m.get("timestamp").and_then(parse_time);
        call.session = session.clone();
        call.project = project.clone();
        let id = m.get("id").and_then(Value::as_str).map(String::from);
        out.push((call, id));
    }
    Ok(Some(out))
}
