//! VS Code `mcp.json` / `settings.json` (`servers`, `mcp.servers`, `inputs`) and the editors that
//! read its format: Cursor `mcp.json` and Windsurf `mcp_config.json` (`serverUrl` for remote
//! servers, an entry's `disabledTools`). `${env:NAME}`, `${input:id}` (VS Code), `${workspaceFolder}`
//! and the rest; Cursor's and VS Code's `envFile`, a dotenv file under the entry's own `env`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::super::vars::{substitute, Ctx};
use super::{Format, PathParts};

/// Cursor.
pub(super) struct Cursor;
/// Windsurf.
pub(super) struct Windsurf;
/// VS Code.
pub(super) struct VsCode;

impl Format for Cursor {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".cursor", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.parent == ".cursor"
    }
    fn reads_env_file(&self) -> bool {
        true
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_vscode(s, ctx, false)
    }
}

impl Format for Windsurf {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".windsurf", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.name == "mcp_config.json" || p.full.contains("/windsurf/")
    }
    /// An `mcpServers` entry with Windsurf's `serverUrl`.
    fn by_content(&self, v: &Value) -> bool {
        v.get("mcpServers")
            .and_then(Value::as_object)
            .is_some_and(|m| m.values().any(|e| e.get("serverUrl").is_some()))
    }
    /// Windsurf hides the tools an entry lists in `disabledTools`.
    fn tool_filter_keys(&self) -> (&'static str, &'static str) {
        ("includeTools", "disabledTools")
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_vscode(s, ctx, false)
    }
}

impl Format for VsCode {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".vscode", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.parent == ".vscode" || p.full.contains("/Code/User/")
    }
    fn by_content(&self, v: &Value) -> bool {
        v.get("servers").is_some() || v.pointer("/mcp/servers").is_some()
    }
    fn server_keys(&self) -> &'static [&'static str] {
        &["servers", "mcp.servers", "mcpServers"]
    }
    fn reads_env_file(&self) -> bool {
        true
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_vscode(s, ctx, true)
    }
}

/// VS Code's variables: `${env:NAME}` (empty when unset), `${input:id}` when the client prompts for
/// inputs (`prompts`, VS Code only; else left as written), `${workspaceFolder}`,
/// `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`.
fn expand_vscode(s: &str, ctx: &Ctx, prompts: bool) -> std::result::Result<String, String> {
    substitute(s, "${", "}", |inner| {
        let home = || (ctx.lookup)("HOME").or_else(|| (ctx.lookup)("USERPROFILE"));
        Ok(if let Some(name) = inner.strip_prefix("env:") {
            // VS Code resolves an unset variable to the empty string.
            Some((ctx.lookup)(name).unwrap_or_default())
        } else if let Some(id) = inner.strip_prefix("input:") {
            if !prompts {
                None
            } else {
                match ctx
                    .inputs
                    .get(id)
                    .or_else(|| ctx.input_defaults.get(id))
                {
                    Some(v) => Some(v.clone()),
                    None => {
                        return Err(format!(
                            "asks for input `{id}` (VS Code prompts for it); give it with --input {id}=VALUE"
                        ))
                    }
                }
            }
        } else {
            match inner {
                "workspaceFolder" | "workspaceRoot" => Some(ctx.workspace.display().to_string()),
                "workspaceFolderBasename" => Some(
                    ctx.workspace
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                ),
                "userHome" => home(),
                "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
                _ => None,
            }
        })
    })
}

/// The variables of a dotenv file (`KEY=VALUE` lines; `#` comments, `export `, quotes), as the
/// `envFile` of a Cursor or VS Code entry loads them.
pub(in crate::input::mcpconfig) fn read_env_file(
    path: &Path,
) -> std::io::Result<BTreeMap<String, String>> {
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
}
