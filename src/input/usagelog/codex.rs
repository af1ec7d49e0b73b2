//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `session_meta` and
//! `turn_context` lines name the session, folder and model; each `event_msg` of type `token_count`
//! gives a call's usage.

use serde_json::Value;

use super::{
    as_map, first_time, string, sub, token_count, value, Error, FileState, Found, LoggedCall, Obj,
    Result, UsageLog,
};

#[allow(clippy::too_many_arguments)]
pub(super) fn codex_line(
    kind: &str,
    payload: &Obj,
    o: &Obj,
    at: &str,
    origin: &str,
    log: &mut UsageLog,
    state: &mut FileState,
) -> Result<Found> {
    match kind {
        "session_meta" => {
            state.codex_session = string(payload, "id");
            state.codex_cwd = string(payload, "cwd");
            if let Some(m) = string(payload, "model") {
                state.codex_model = Some(m);
            }
            Ok(None)
        }
        "turn_context" => {
            if let Some(m) = string(payload, "model") {
                state.codex_model = Some(m);
            }
            if let Some(c) = string(payload, "cwd") {
                state.codex_cwd = Some(c);
            }
            Ok(None)
        }
        "event_msg" if string(payload, "type").as_deref() == Some("token_count") => {
            let Some(info) = sub(payload, "info") else {
                return Ok(None);
            };
            // Codex repeats a token_count event without a new call (the totals unchanged).
            let total = value(&info, "total_token_usage");
            if total.is_some() && total == state.codex_last_total {
                log.duplicates_merged += 1;
                return Ok(None);
            }
            state.codex_last_total = total;
            let Some(last) = info.get("last_token_usage").and_then(|r| as_map(r.get())) else {
                return Ok(None);
            };
            let n = |k: &str| -> Result<u64> {
                match last.get(k) {
                    None | Some(Value::Null) => Ok(0),
                    Some(v) => token_count(
                        v,
                        origin,
                        format!("{at}: payload.info.last_token_usage.{k}"),
                    ),
                }
            };
            let input = n("input_tokens")?;
            let cached = n("cached_input_tokens")?;
            if cached > input {
                return Err(Error::invalid(
                    origin,
                    format!("{at}: payload.info.last_token_usage"),
                    format!("{input} input tokens but {cached} cached"),
                ));
            }
            let mut call = LoggedCall::empty(at, "codex");
            call.set(input - cached, 0, 0, cached, n("output_tokens")?);
            call.model = state.codex_model.clone();
            call.session = state.codex_session.clone();
            call.project = state.codex_cwd.clone();
            call.unix_time = first_time(o, &["timestamp"]);
            Ok(Some((call, None)))
        }
        _ => Ok(None),
    }
}
