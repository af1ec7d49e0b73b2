//! Client configuration shapes that differ from the `mcpServers` entry, brought to it before an
//! entry is read ([`super::mcpconfig`]), and the `envFile` a Cursor or VS Code entry names:
//! - OpenCode `opencode.json` / `opencode.jsonc` (opencode.ai/docs/mcp-servers): an `mcp` map of
//!   `{type: "local", command: [program, args...], environment, enabled}` or
//!   `{type: "remote", url}`; `{env:NAME}` (empty when unset) and `{file:PATH}` in values;
//! - Goose `config.yaml` (block.github.io/goose, "Using extensions"): an `extensions` map of
//!   `{type: stdio, cmd, args, envs, env_keys, enabled}`, `sse` / `streamable_http` with a `uri`,
//!   and `builtin` extensions that Goose runs inside itself.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

/// An OpenCode `mcp` entry as an `mcpServers` entry.
pub(crate) fn opencode_entry(e: &Value) -> Value {
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

/// A Goose `extensions` entry as an `mcpServers` entry; `Err(reason)` for an extension that is not
/// an MCP process pcsim can start.
pub(crate) fn goose_entry(e: &Value) -> std::result::Result<Value, String> {
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

/// OpenCode's `{env:NAME}` (empty when unset) and `{file:PATH}` (the file's text, trimmed; a path
/// relative to the configuration's folder); `Err(reason)` for a file that cannot be read.
pub(crate) fn expand_opencode(
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

/// The variables of a dotenv file (`KEY=VALUE` lines; `#` comments, `export `, quotes), as the
/// `envFile` of a Cursor or VS Code entry loads them.
pub(crate) fn read_env_file(path: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        let v = match (v.chars().next(), v.chars().last()) {
            (Some(q @ ('"' | '\'')), Some(l)) if q == l && v.len() >= 2 => &v[1..v.len() - 1],
            // An unquoted value ends at a comment.
            _ => v.split(" #").next().unwrap_or(v).trim(),
        };
        out.insert(k.trim().to_string(), v.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_read_as_dotenv() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".env");
        std::fs::write(
            &p,
            "# keys\nexport A=1\nB = \"two words\"\nC='x#y'\nD=plain # note\nnot a pair\n",
        )
        .unwrap();
        let m = read_env_file(&p).unwrap();
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [("A", "1"), ("B", "two words"), ("C", "x#y"), ("D", "plain")]
        );
    }

    #[test]
    fn opencode_and_goose_entries_become_mcp_servers_entries() {
        let e = opencode_entry(&serde_json::json!({
            "type": "local", "command": ["npx", "-y", "pkg"], "environment": {"K": "v"}, "enabled": true
        }));
        assert_eq!(
            e,
            serde_json::json!({"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "enabled": true})
        );
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
