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
            let read = |key: &str| -> Result<Option<[u64; 3]>> {
                let Some(m) = info.get(key).and_then(|r| as_map(r.get())) else {
                    return Ok(None);
                };
                let n = |k: &str| -> Result<u64> {
                    match m.get(k) {
                        None | Some(Value::Null) => Ok(0),
                        Some(v) => token_count(v, origin, format!("{at}: payload.info.{key}.{k}")),
                    }
                };
                let counts = [
                    n("input_tokens")?,
                    n("cached_input_tokens")?,
                    n("output_tokens")?,
                ];
                if counts[1] > counts[0] {
                    return Err(Error::invalid(
                        origin,
                        format!("{at}: payload.info.{key}"),
                        format!("{} input tokens but {} cached", counts[0], counts[1]),
                    ));
                }
                Ok(Some(counts))
            };
            let cumulative = read("total_token_usage")?;
            let previous = std::mem::replace(&mut state.codex_prev_total, cumulative);
            let [input, cached, output] = match (read("last_token_usage")?, cumulative) {
                (Some(last), _) => last,
                // Only the running total (older rollouts): the call is its growth since the last
                // event. A total below the previous one starts a new count.
                (None, Some(now)) => match previous {
                    Some(p) if (0..3).all(|i| now[i] >= p[i]) => {
                        let d = [now[0] - p[0], now[1] - p[1], now[2] - p[2]];
                        if d[1] > d[0] {
                            return Err(Error::invalid(
                                origin,
                                format!("{at}: payload.info.total_token_usage"),
                                format!(
                                    "the running total grew by {} input tokens but by {} cached",
                                    d[0], d[1]
                                ),
                            ));
                        }
                        d
                    }
                    _ => now,
                },
                (None, None) => return Ok(None),
            };
            let mut call = LoggedCall::empty(at, "codex");
            call.set(input - cached, 0, 0, cached, output);
            call.model = state.codex_model.clone();
            call.session = state.codex_session.clone();
            call.project = state.codex_cwd.clone();
            call.unix_time = first_time(o, &["timestamp"]);
            Ok(Some((call, None)))
        }
        _ => Ok(None),
    }
}
