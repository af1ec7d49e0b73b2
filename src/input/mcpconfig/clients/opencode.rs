//! OpenCode `opencode.json` / `opencode.jsonc` (opencode.ai/docs/mcp-servers): an `mcp` map of
//! `{type: "local", command: [program, args...], environment, enabled}` or `{type: "remote", url}`,
//! brought to the `mcpServers` shape; `{env:NAME}` (empty when unset) and `{file:PATH}` in values.

use std::path::Path;

use serde_json::{Map, Value};

use super::super::vars::Ctx;
use super::{Format, PathParts};

/// OpenCode.
pub(super) struct OpenCode;

impl Format for OpenCode {
    fn by_path(&self, p: &PathParts) -> bool {
        p.name.starts_with("opencode.json")
    }
    /// OpenCode's `$schema`, or an `mcp` map with an entry of its `local` / `remote` types.
    fn by_content(&self, v: &Value) -> bool {
        let schema = v
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("opencode.ai"));
        let entries = v.get("mcp").and_then(Value::as_object).is_some_and(|m| {
            m.values().any(|e| {
                matches!(
                    e.get("type").and_then(Value::as_str),
                    Some("local") | Some("remote")
                )
            })
        });
        schema || entries
    }
    fn server_keys(&self) -> &'static [&'static str] {
        &["mcp"]
    }
    fn entry_shape(&self, e: Value) -> std::result::Result<Value, String> {
        Ok(opencode_entry(&e))
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_opencode(s, ctx.lookup, ctx.config_dir)
    }
}

/// An OpenCode `mcp` entry as an `mcpServers` entry.
fn opencode_entry(e: &Value) -> Value {
    let Some(m) = e.as_object() else {
        return e.clone();
    };
    let mut out = Map::new();
    if m.get("type").and_then(Value::as_str) == Some("remote") {
        out.insert("type".into(), "http".into());
    }
    match m.get("command") {
        Some(Value::Array(parts)) => {
            if let Some(first) = parts.first() {
                out.insert("command".into(), first.clone());
            }
            out.insert(
                "args".into(),
                Value::Array(parts[1.min(parts.len())..].to_vec()),
            );
        }
        Some(other) => {
            out.insert("command".into(), other.clone());
        }
        None => {}
    }
    for (from, to) in [
        ("environment", "env"),
        ("url", "url"),
        ("enabled", "enabled"),
        ("cwd", "cwd"),
    ] {
        if let Some(v) = m.get(from) {
            out.insert(to.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// OpenCode's `{env:NAME}` (empty when unset) and `{file:PATH}` (the file's text, trimmed; a path
/// relative to the configuration's folder); `Err(reason)` for a file that cannot be read.
fn expand_opencode(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    dir: &Path,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let inner = &after[..end];
        if let Some(name) = inner.strip_prefix("env:") {
            out.push_str(&lookup(name).unwrap_or_default());
        } else if let Some(file) = inner.strip_prefix("file:") {
            let home = lookup("HOME").unwrap_or_default();
            let p = match file.strip_prefix("~/") {
                Some(r) => Path::new(&home).join(r),
                None => dir.join(file),
            };
            match std::fs::read_to_string(&p) {
                Ok(t) => out.push_str(t.trim()),
                Err(e) => {
                    // The caller names the field after the reason.
                    return Err(format!(
                        "reads `{{file:{file}}}`, which cannot be read ({}: {e})",
                        p.display()
                    ));
                }
            }
        } else {
            out.push_str(&rest[i..i + end + 2]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_entries_become_mcp_servers_entries() {
        let e = opencode_entry(&serde_json::json!({
            "type": "local", "command": ["npx", "-y", "pkg"], "environment": {"K": "v"}, "enabled": true
        }));
        assert_eq!(
            e,
            serde_json::json!({"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "enabled": true})
        );
        let lookup = |n: &str| (n == "SET").then(|| "s".to_string());
        assert_eq!(
            expand_opencode("a{env:SET}b{env:UNSET}c{other}", &lookup, Path::new(".")).unwrap(),
            "asbc{other}"
        );
        assert!(
            expand_opencode("{file:missing.txt}", &lookup, Path::new("/nonexistent"))
                .unwrap_err()
                .contains("missing.txt")
        );
    }
}
