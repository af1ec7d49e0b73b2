//! Claude Code `progress` lines: a sub-agent's (Task tool's) assistant messages, relayed into the
//! parent transcript as `data.message.message`, each with its own `usage`. Where a sub-agent has no
//! transcript of its own, these lines are the only record of what it cost.

use super::{
    as_map, context, first_string, first_time, read_usage, string, sub, Found, Hint, Obj, Result,
    UsageLog, TIME_KEYS,
};

/// One `progress` line: the relayed message's usage as a sub-agent (sidechain) call, its agent the
/// `data.agentId` (else the tool use that started it), so it is its own conversation with its own
/// cache, and merged by message id like the transcript's own lines.
pub(super) fn progress_line(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Found> {
    let Some(data) = sub(o, "data") else {
        return Ok(None);
    };
    let Some(outer) = sub(&data, "message") else {
        return Ok(None);
    };
    let Some(msg) = sub(&outer, "message") else {
        return Ok(None);
    };
    let Some(usage) = msg.get("usage").and_then(|r| as_map(r.get())) else {
        return Ok(None);
    };
    let mut call = read_usage(
        &usage,
        at,
        origin,
        "data.message.message.usage",
        log,
        Hint::Anthropic,
    )?;
    call.format = "claude-code";
    call.model = string(&msg, "model");
    call.sidechain = true;
    call.agent = first_string(&data, &["agentId", "agent_id"])
        .or_else(|| first_string(o, &["parentToolUseID", "toolUseID"]));
    call.unix_time = first_time(&outer, &TIME_KEYS);
    context(&mut call, &[o]);
    let id = string(&msg, "id").or_else(|| string(&outer, "requestId"));
    Ok(Some((call, id)))
}
