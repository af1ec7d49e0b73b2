//! Goose `config.yaml` (block.github.io/goose, "Using extensions"): an `extensions` map of
//! `{type: stdio, cmd, args, envs, env_keys, enabled}`, `sse` / `streamable_http` with a `uri`, and
//! `builtin` extensions that Goose runs inside itself; values taken literally.

use serde_json::{Map, Value};

use super::super::vars::Ctx;
use super::{Format, PathParts, Syntax};

/// Goose.
pub(super) struct Goose;

impl Format for Goose {
    /// A YAML file in Goose's folder.
    fn by_path(&self, p: &PathParts) -> bool {
        p.yaml() && (p.parent == "goose" || p.full.contains("/goose/"))
    }
    fn by_content(&self, v: &Value) -> bool {
        v.get("extensions").and_then(Value::as_object).is_some()
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn server_keys(&self) -> &'static [&'static str] {
        &["extensions"]
    }
    fn entry_shape(&self, e: Value) -> std::result::Result<Value, String> {
        goose_entry(&e)
    }
    fn expand(&self, s: &str, _ctx: &Ctx) -> std::result::Result<String, String> {
        Ok(s.to_string())
    }
}

/// A Goose `extensions` entry as an `mcpServers` entry; `Err(reason)` for an extension that is not
/// an MCP process pcsim can start.
fn goose_entry(e: &Value) -> std::result::Result<Value, String> {
    let Some(m) = e.as_object() else {
        return Ok(e.clone());
    };
    let kind = m.get("type").and_then(Value::as_str).unwrap_or("stdio");
    if kind == "builtin" || kind == "platform" || kind == "frontend" || kind == "inline_python" {
        return Err(format!(
            "a Goose `{kind}` extension, run inside Goose itself; its tools are Goose's, not an MCP process pcsim can start"
        ));
    }
    let mut out = Map::new();
    for (from, to) in [
        ("cmd", "command"),
        ("args", "args"),
        ("envs", "env"),
        ("env_keys", "env_vars"),
        ("enabled", "enabled"),
        ("uri", "url"),
        ("cwd", "cwd"),
    ] {
        if let Some(v) = m.get(from) {
            out.insert(to.into(), v.clone());
        }
    }
    if kind != "stdio" {
        out.insert("type".into(), Value::String(kind.to_string()));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goose_entries_become_mcp_servers_entries() {
        let g = goose_entry(&serde_json::json!({
            "type": "stdio", "cmd": "uvx", "args": ["mcp-server-git"], "envs": {"A": "1"}, "env_keys": ["TOKEN"]
        }))
        .unwrap();
        assert_eq!(
            g,
            serde_json::json!({"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}, "env_vars": ["TOKEN"]})
        );
        assert!(
            goose_entry(&serde_json::json!({"type": "builtin", "name": "developer"}))
                .unwrap_err()
                .contains("inside Goose")
        );
    }
}
