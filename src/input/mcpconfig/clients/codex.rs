//! Codex CLI `config.toml`: `[mcp_servers.NAME]` tables, `enabled_tools` / `disabled_tools`, values
//! taken literally (its `env_vars` pass-through is read with every entry's environment).

use serde_json::Value;

use super::super::vars::Ctx;
use super::{Format, PathParts, Syntax};

/// Codex CLI.
pub(super) struct Codex;

impl Format for Codex {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".codex", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.ext == "toml"
    }
    fn by_content(&self, v: &Value) -> bool {
        v.get("mcp_servers").is_some()
    }
    fn syntax(&self) -> Syntax {
        Syntax::Toml
    }
    fn server_keys(&self) -> &'static [&'static str] {
        &["mcp_servers"]
    }
    fn tool_filter_keys(&self) -> (&'static str, &'static str) {
        ("enabled_tools", "disabled_tools")
    }
    fn expand(&self, s: &str, _ctx: &Ctx) -> std::result::Result<String, String> {
        Ok(s.to_string())
    }
}
