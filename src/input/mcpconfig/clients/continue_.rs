//! Continue `config.yaml` and `.continue/mcpServers/*.yaml`: an `mcpServers` list of entries with
//! their `name`; `${{ secrets.NAME }}` from the environment, `${{ inputs.NAME }}` from `--input`.

use serde_json::Value;

use super::super::vars::{substitute, Ctx};
use super::{Client, Format, PathParts, Syntax};

/// Continue.
pub(super) struct Continue;

impl Format for Continue {
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[(".continue", 1), ("mcpServers", 2)]
    }
    /// A YAML file (Goose's, also YAML, is recognised first).
    fn by_path(&self, p: &PathParts) -> bool {
        p.yaml()
    }
    /// A YAML file outside Goose's folder that holds Goose's `extensions` map is Goose's.
    fn instead(&self, v: &Value) -> Option<Client> {
        v.get("extensions").is_some().then_some(Client::Goose)
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
        expand_continue(s, ctx)
    }
}

/// `${{ secrets.NAME }}` from the environment and `${{ inputs.NAME }}` from `--input`.
fn expand_continue(s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
    substitute(s, "${{", "}}", |inner| {
        let inner = inner.trim();
        if let Some(name) = inner.strip_prefix("secrets.") {
            (ctx.lookup)(name).map(Some).ok_or_else(|| {
                format!(
                    "needs secret `{name}` (Continue takes it from its hub or a .env file); set {name} in the environment"
                )
            })
        } else if let Some(name) = inner.strip_prefix("inputs.") {
            ctx.inputs
                .get(name)
                .cloned()
                .map(Some)
                .ok_or_else(|| format!("needs input `{name}`; give it with --input {name}=VALUE"))
        } else {
            Ok(None)
        }
    })
}
