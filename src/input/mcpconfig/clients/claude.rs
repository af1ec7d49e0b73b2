//! Claude Code (`.mcp.json`, `~/.claude.json` with its projects' servers), Claude Desktop
//! (`claude_desktop_config.json`, values taken literally) and an `mcpServers` file of no
//! recognisable client (read by Claude Code's rules).

use serde_json::Value;

use super::super::vars::{expand_vars, Ctx, IN};
use super::super::LoadOptions;
use super::RawEntry;
use super::{Format, PathParts};

/// Claude Code.
pub(super) struct ClaudeCode;
/// Claude Desktop.
pub(super) struct ClaudeDesktop;
/// An `mcpServers` file of no recognisable client.
pub(super) struct Generic;

/// `${VAR}` and `${VAR:-default}`; an unset variable without a default keeps the server from
/// starting.
fn expand_claude(s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
    expand_vars(s, ctx.lookup)
        .map_err(|v| format!("needs environment variable `{v}` {IN}, which is not set"))
}

impl Format for ClaudeCode {
    fn by_path(&self, p: &PathParts) -> bool {
        p.name == ".claude.json" || p.name == ".mcp.json"
    }
    fn by_content(&self, v: &Value) -> bool {
        v.get("projects").and_then(Value::as_object).is_some()
    }
    /// `~/.claude.json`: per-project servers (local scope) beside the user's.
    fn more_entries(&self, v: &Value, opts: &LoadOptions) -> Option<Vec<RawEntry>> {
        let projects = v.get("projects").and_then(Value::as_object)?;
        let mut entries = Vec::new();
        for (dir, p) in projects {
            if opts.project.as_deref().is_some_and(|want| want != dir) {
                continue;
            }
            if let Some(m) = p.get("mcpServers").and_then(Value::as_object) {
                for (name, e) in m {
                    entries.push((
                        format!("{name} (project {dir})"),
                        format!("projects.{dir}.mcpServers.{name}"),
                        e.clone(),
                    ));
                }
            }
        }
        Some(entries)
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_claude(s, ctx)
    }
    /// Claude Code sends `mcp__<server>__<tool>` (characters other than letters, digits, `_` and
    /// `-` in the server name become `_`).
    fn tool_prefix(&self, server: &str) -> Option<String> {
        let name: String = server
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(format!("mcp__{name}__"))
    }
}

impl Format for ClaudeDesktop {
    fn by_path(&self, p: &PathParts) -> bool {
        p.name == "claude_desktop_config.json"
    }
    fn expand(&self, s: &str, _ctx: &Ctx) -> std::result::Result<String, String> {
        Ok(s.to_string())
    }
}

impl Format for Generic {
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_claude(s, ctx)
    }
}
