//! A tool-list change checked against the scenario and added to it as an event at call K.

use std::collections::HashSet;

use super::types::*;
use crate::analysis::COMMAND_LINE;
use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::input::scenario::{Scenario, ToolEvent};
use crate::model::tools::Tool;

/// The tool list as it stands just before call `at_call` (after the scenario's own events up to it).
pub fn tools_at(scenario: &Scenario, at_call: usize) -> Vec<Tool> {
    let mut tools = scenario.tools.clone();
    for e in scenario.events.iter().filter(|e| e.at_call <= at_call) {
        tools = e.apply(&tools);
    }
    tools
}

fn list_names(tools: &[Tool]) -> String {
    const SHOWN: usize = 12;
    let mut s: Vec<&str> = tools.iter().take(SHOWN).map(|t| t.name.as_str()).collect();
    if tools.len() > SHOWN {
        s.push("...");
    }
    s.join(", ")
}

/// Checks `change` against the scenario and returns the scenario with the change added as a tool
/// event at `at_call` (after the scenario's own events at that call), plus a summary.
// Over 120 lines: checks every kind of change a `whatif` takes (add, remove, servers, replace,
// trim) against the list at the call, then builds the summary; one error per flag, in the flags'
// order.
pub fn apply_change(
    scenario: &Scenario,
    at_call: usize,
    change: &ToolChange,
) -> Result<(Scenario, ChangeSummary)> {
    if at_call < 1 || at_call > scenario.calls {
        return Err(Error::invalid(
            COMMAND_LINE,
            "--at-call",
            format!(
                "value {at_call}: a tool-list change must come before a call from 1 (the list from the start) to {} (the calls per session of {})",
                scenario.calls, scenario.origin
            ),
        ));
    }
    let flag = if change.replace.is_some() {
        "--replace-tools"
    } else if change.keep.is_some() {
        "--keep-tools"
    } else if !change.remove.is_empty() {
        "--remove-tools"
    } else if !change.remove_servers.is_empty() {
        "--remove-servers"
    } else if change.trim.is_some() {
        "--trim"
    } else {
        "--add-tools"
    };
    if change.add.is_empty()
        && change.remove.is_empty()
        && change.keep.is_none()
        && change.replace.is_none()
        && change.remove_servers.is_empty()
        && change.trim.is_none()
    {
        return Err(Error::invalid(
            COMMAND_LINE,
            "--add-tools",
            "no change given: use --add-tools, --remove-tools, --remove-servers, --keep-tools, --replace-tools or --trim",
        ));
    }
    let before = tools_at(scenario, at_call);
    let mut remove = change.remove.clone();
    for name in &change.remove_servers {
        let server = scenario
            .servers
            .iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = scenario.servers.iter().map(|s| s.name.as_str()).collect();
                let hint = closest(name, known.iter().copied())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                Error::invalid(
                    COMMAND_LINE,
                    "--remove-servers",
                    format!(
                        "no server `{name}` in {}{hint} (its servers: {}; servers are named by [[tools.server]] entries)",
                        scenario.origin,
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                )
            })?;
        let present: Vec<String> = server
            .tools
            .iter()
            .filter(|t| before.iter().any(|b| &b.name == *t) && !remove.contains(t))
            .cloned()
            .collect();
        if present.is_empty() {
            return Err(Error::invalid(
                COMMAND_LINE,
                "--remove-servers",
                format!("none of server `{name}`'s tools is in the tool list at call {at_call}"),
            ));
        }
        remove.extend(present);
    }
    for (name, f) in change
        .remove
        .iter()
        .map(|n| (n, "--remove-tools"))
        .chain(change.keep.iter().flatten().map(|n| (n, "--keep-tools")))
    {
        if !before.iter().any(|t| &t.name == name) {
            // A server's name where a tool's is expected: the flag for servers is another one.
            let is_server = scenario.servers.iter().any(|s| &s.name == name);
            let hint = if is_server {
                format!("; `{name}` is a server: use --remove-servers {name} to remove its tools")
            } else {
                closest(name, before.iter().map(|t| t.name.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default()
            };
            return Err(Error::invalid(
                COMMAND_LINE,
                f,
                format!(
                    "tool `{name}` is not in the tool list at call {at_call}{hint} ({} tools: {})",
                    before.len(),
                    list_names(&before)
                ),
            ));
        }
    }
    let mut event = ToolEvent {
        at_call,
        add: change.add.clone(),
        remove,
        keep: change.keep.clone(),
        replace: change.replace.clone(),
    };
    if let Some(t) = change.trim {
        // A trim rewrites every definition: the change becomes the whole trimmed list.
        event = ToolEvent {
            at_call,
            add: Vec::new(),
            remove: Vec::new(),
            keep: None,
            replace: Some(t.apply(&event.apply(&before))),
        };
    }
    let after = event.apply(&before);
    let mut names = HashSet::new();
    if let Some(t) = after.iter().find(|t| !names.insert(t.name.as_str())) {
        return Err(Error::invalid(
            COMMAND_LINE,
            flag,
            format!(
                "tool `{}` would appear twice in the list at call {at_call}; model APIs reject duplicate names",
                t.name
            ),
        ));
    }
    if after == before {
        return Err(Error::invalid(
            COMMAND_LINE,
            flag,
            format!(
                "the change leaves the tool list at call {at_call} as it is: nothing to compare"
            ),
        ));
    }
    let added: Vec<String> = after
        .iter()
        .filter(|t| !before.contains(t))
        .map(|t| t.name.clone())
        .collect();
    let removed: Vec<String> = before
        .iter()
        .filter(|t| !after.iter().any(|a| a.name == t.name))
        .map(|t| t.name.clone())
        .collect();
    // The one-line description names a few tools; `added` and `removed` list them all.
    let few = |names: &[String]| {
        const SHOWN: usize = 5;
        let mut s = names
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > SHOWN {
            s.push_str(", ...");
        }
        s
    };
    let mut parts = Vec::new();
    if let Some(t) = change.trim {
        parts.push(format!("trim ({})", t.explain()));
    }
    let (redefined, new_names): (Vec<String>, Vec<String>) = added
        .iter()
        .cloned()
        .partition(|n| before.iter().any(|b| &b.name == n));
    if !new_names.is_empty() {
        parts.push(format!(
            "add {} tool(s) ({})",
            new_names.len(),
            few(&new_names)
        ));
    }
    if !redefined.is_empty() {
        parts.push(format!(
            "redefine {} tool(s) ({})",
            redefined.len(),
            few(&redefined)
        ));
    }
    if !removed.is_empty() {
        parts.push(format!(
            "remove {} tool(s) ({})",
            removed.len(),
            few(&removed)
        ));
    }
    if parts.is_empty() {
        parts.push("reorder the tool list".into());
    }
    let summary = ChangeSummary {
        description: format!(
            "before call {at_call}: {} ({} -> {} tools)",
            parts.join(", "),
            before.len(),
            after.len()
        ),
        added,
        removed,
        tools_before: before.len(),
        tools_after: after.len(),
    };
    let mut changed = scenario.clone();
    // Before call 1 the change is the list the session starts with (no event, nothing to
    // invalidate); later, an event after the scenario's own events at that call.
    let pos = if at_call == 1 {
        changed.tools = after.clone();
        0
    } else {
        let pos = changed
            .events
            .iter()
            .position(|e| e.at_call > at_call)
            .unwrap_or(changed.events.len());
        changed.events.insert(pos, event);
        pos + 1
    };
    // The scenario's later events must still make sense: one that adds a tool this change already
    // added would send a duplicate name, which model APIs reject.
    let mut list = after;
    for e in &changed.events[pos..] {
        list = e.apply(&list);
        let mut names = HashSet::new();
        if let Some(t) = list.iter().find(|t| !names.insert(t.name.as_str())) {
            return Err(Error::invalid(
                COMMAND_LINE,
                flag,
                format!(
                    "with this change, the scenario's event at call {} would list tool `{}` twice ({})",
                    e.at_call, t.name, scenario.origin
                ),
            ));
        }
    }
    Ok((changed, summary))
}
