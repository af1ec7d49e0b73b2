//! Starting a configuration's servers: every server captured in parallel, each bounded by the
//! timeout, its tool names prefixed the way its client shows them to the model.

use crate::error::{Error, Result};
use crate::input::capture::{capture_command, CaptureOptions};
use crate::model::tools::{parse_tool_list, Tool};
use serde_json::Value;

use super::*;

/// The outcome of capturing one server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub(crate) struct ServerOutcome {
    /// The entry.
    pub entry: ServerEntry,
    /// Its tools as the model sees them (after the entry's include/exclude filters), or the error
    /// message that names the server.
    pub tools: std::result::Result<Vec<Tool>, String>,
    /// The raw `tools/list` result (filtered the same way), for saving, in the server's key order.
    pub raw: Option<String>,
    /// How many tools the server listed before the filters.
    pub listed: Option<usize>,
}

/// Captures every server of a configuration, in parallel (each bounded by `opts.timeout`), so the
/// whole configuration takes about as long as its slowest server.
pub(crate) fn capture_all(cfg: &McpConfig, opts: &CaptureOptions) -> Vec<ServerOutcome> {
    std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .servers
            .iter()
            .map(|e| {
                s.spawn(move || {
                    let mut o = opts.clone();
                    o.cwd = e.cwd.clone();
                    let got =
                        capture_command(&e.name, &e.command, &e.args, &e.env, &o).and_then(|c| {
                            let listed = c.tools.len();
                            let mut raw = c.result_json_text_filtered(|t| e.exposes(t));
                            // What the model sees is what the client sends: its names, prefixed.
                            if let Some(prefix) = cfg.client.tool_prefix(&e.name) {
                                raw = prefix_tool_names(&raw, &prefix, &e.name)?;
                            }
                            let tools = parse_tool_list(&raw, &e.name)?;
                            Ok((tools, raw, listed))
                        });
                    match got {
                        Ok((tools, raw, listed)) => ServerOutcome {
                            entry: e.clone(),
                            tools: Ok(tools),
                            raw: Some(raw),
                            listed: Some(listed),
                        },
                        Err(err) => ServerOutcome {
                            entry: e.clone(),
                            tools: Err(err.to_string()),
                            raw: None,
                            listed: None,
                        },
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(&cfg.servers)
            .map(|(h, e)| {
                h.join().unwrap_or_else(|_| ServerOutcome {
                    entry: e.clone(),
                    tools: Err(format!("MCP server `{}`: capture thread panicked", e.name)),
                    raw: None,
                    listed: None,
                })
            })
            .collect()
    })
}

/// `raw` (a `{"tools": [...]}` result) with `prefix` before every tool name, pretty-printed in the
/// server's key order.
pub(super) fn prefix_tool_names(raw: &str, prefix: &str, server: &str) -> Result<String> {
    let mut v: Value = serde_json::from_str(raw)
        .map_err(|e| Error::invalid(server, "tools", format!("not JSON: {e}")))?;
    if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for t in tools {
            if let Some(name) = t.get("name").and_then(Value::as_str) {
                let renamed = format!("{prefix}{name}");
                t["name"] = Value::String(renamed);
            }
        }
    }
    serde_json::to_string_pretty(&v)
        .map_err(|e| Error::Internal(format!("re-serialising a tool list: {e}")))
}
