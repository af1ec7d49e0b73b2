//! Zed `settings.json`: `context_servers` (its older nested `command: {path, args, env}` is read
//! with every entry), servers an extension starts itself, values taken literally.

use serde_json::{Map, Value};

use super::super::vars::Ctx;
use super::{Format, PathParts};

/// Zed.
pub(super) struct Zed;

impl Format for Zed {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".zed", 1)]
    }
    fn by_path(&self, p: &PathParts) -> bool {
        p.parent == ".zed" || p.full.contains("/zed/settings.json")
    }
    fn by_content(&self, v: &Value) -> bool {
        v.get("context_servers").is_some()
    }
    fn server_keys(&self) -> &'static [&'static str] {
        &["context_servers"]
    }
    fn starts_itself(&self, e: &Map<String, Value>) -> Option<String> {
        (e.get("source").and_then(Value::as_str) == Some("extension"))
            .then(|| "provided by a Zed extension, which starts it itself; pcsim cannot".into())
    }
    fn expand(&self, s: &str, _ctx: &Ctx) -> std::result::Result<String, String> {
        Ok(s.to_string())
    }
}
