//! Gemini CLI `settings.json`: `mcpServers` with `httpUrl` / `url`, `cwd`, `includeTools`,
//! `excludeTools`; the document-wide `mcp.allowed` / `mcp.excluded`; `$VAR` and `${VAR}`, left as
//! written when unset.

use std::collections::HashSet;

use serde_json::Value;

use super::super::vars::Ctx;
use super::{Format, PathParts};

/// Gemini CLI.
pub(super) struct GeminiCli;

impl Format for GeminiCli {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".gemini", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.parent == ".gemini" || p.full.contains("/gemini-cli/")
    }
    /// An `mcpServers` entry with a key only Gemini CLI reads.
    fn by_content(&self, v: &Value) -> bool {
        v.get("mcpServers")
            .and_then(Value::as_object)
            .is_some_and(|m| {
                ["httpUrl", "includeTools", "excludeTools", "trust"]
                    .iter()
                    .any(|k| m.values().any(|e| e.get(*k).is_some()))
            })
    }
    /// `mcp.allowed` (when given, only these servers) and `mcp.excluded`.
    fn server_lists(&self, v: &Value) -> (Option<HashSet<String>>, HashSet<String>) {
        let list = |p: &str| -> Option<Vec<String>> {
            v.pointer(p).and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
        };
        (
            list("/mcp/allowed").map(|a| a.into_iter().collect()),
            list("/mcp/excluded")
                .unwrap_or_default()
                .into_iter()
                .collect(),
        )
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        Ok(expand_gemini(s, ctx.lookup))
    }
}

/// `$VAR` and `${VAR}` from the environment; an unset one stays as written (Gemini CLI's rule).
fn expand_gemini(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let (name, len) = if b.get(i + 1) == Some(&b'{') {
                match s[i + 2..].find('}') {
                    Some(e) => (&s[i + 2..i + 2 + e], e + 3),
                    None => ("", 0),
                }
            } else {
                let n = s[i + 1..]
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                    .count();
                (&s[i + 1..i + 1 + n], n + 1)
            };
            let valid =
                !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
            if valid {
                match lookup(name) {
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&s[i..i + len]),
                }
                i += len;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or('$');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}
