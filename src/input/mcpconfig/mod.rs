//! MCP client configuration files: the stdio servers they start, captured together, and the
//! per-call cost of the tool block they add, per server and for the whole configuration.
//!
//! Each client's documented format is read as that client reads it ([`Client`]):
//! - Claude Code: `.mcp.json` (`mcpServers`) and `~/.claude.json` (user `mcpServers` and per-project
//!   `projects.<path>.mcpServers`); `${VAR}` and `${VAR:-default}`, an unset variable without a
//!   default keeps the server from starting;
//! - Claude Desktop `claude_desktop_config.json` (`mcpServers`, values taken literally);
//! - Cursor `mcp.json`, Windsurf `mcp_config.json` (`serverUrl` for remote servers, an entry's
//!   `disabledTools`), VS Code `mcp.json` / `settings.json` (`servers`, `mcp.servers`, `inputs`):
//!   `${env:NAME}` (empty when unset), `${input:id}` (VS Code), `${workspaceFolder}`,
//!   `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`; Cursor's and VS Code's
//!   `envFile` (a dotenv file under the entry's own `env`; one that cannot be read keeps the server
//!   from starting, with the file named);
//! - Gemini CLI `settings.json` (`mcpServers` with `httpUrl`/`url`, `cwd`, `includeTools`,
//!   `excludeTools`, `enabled`; top-level `mcp.allowed` / `mcp.excluded`): `$VAR` and `${VAR}`, left
//!   as written when unset;
//! - Zed `settings.json` (`context_servers`, `command` as a string or `{path, args, env}`,
//!   `source: "extension"`, `enabled`);
//! - Codex CLI `config.toml` (`[mcp_servers.NAME]`: `command`, `args`, `env`, `env_vars`, `cwd`,
//!   `enabled`, `enabled_tools`, `disabled_tools`, `url`);
//! - Continue `config.yaml` and `.continue/mcpServers/*.yaml` (an `mcpServers` list with `name`):
//!   `${{ secrets.NAME }}` from the environment, `${{ inputs.NAME }}` from `--input`;
//! - OpenCode `opencode.json` (an `mcp` map; `command` an array, `environment`, `{env:NAME}`,
//!   `{file:PATH}`) and Goose `config.yaml` (an `extensions` map; `cmd`, `envs`, `env_keys`;
//!   builtin extensions skipped): brought to the `mcpServers` shape by their family modules.
//!
//! JSON files may have comments and trailing commas (JSONC, as VS Code and Zed write them). Remote
//! entries and disabled ones are listed as skipped with the reason, never an error.
//!
//! Here: what a configuration is read into (its server entries and the skipped ones) and the load.
//! Beside it, the steps every client's file goes through, one a file: `client` (which client a
//! file belongs to), `document` (the document parsed and its server entries found, its allow and
//! exclude lists applied), `entry` (one server entry read), `expand` (a value's expansion, bounded), `vars` (the
//! context of an expansion and the variable syntaxes families share),
//! `jsonc` (comments and trailing commas), `run` (starting and capturing the servers) and
//! `overhead` (pricing their tool blocks). What differs between clients lives in `clients/`, one
//! module per family (Claude, VS Code with Cursor and Windsurf, Gemini CLI, Zed, Codex, Continue,
//! OpenCode, Goose), each answering the same questions (`clients::Format`: recognised by path or
//! shape, syntax, where the servers are, an entry's spelling, expansion, tool-name prefix); the
//! steps ask it and never test which client they read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::base::files::read_text;
use crate::error::{Error, Result};

mod client;
mod clients;
mod document;
mod entry;
mod expand;
mod jsonc;
mod overhead;
mod run;
mod vars;

pub use client::Client;
use client::{client_by_content, client_by_path};
pub use document::{parse_document, MAX_SERVERS};
use entry::read_entry;
pub use expand::MAX_EXPANDED_BYTES;
use expand::*;
pub(crate) use jsonc::strip_jsonc;
pub(crate) use overhead::{overheads, Overhead};
pub(crate) use run::{capture_all, ServerOutcome};
use vars::*;

/// One stdio server of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerEntry {
    /// Its key in the server map (for `~/.claude.json` project servers: `NAME (project PATH)`).
    pub name: String,
    /// Program to run.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Working directory to start it in, if the entry names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Only these tools are exposed to the model (Gemini `includeTools`, Codex `enabled_tools`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// These tools are hidden from the model (Gemini `excludeTools`, Codex `disabled_tools`); they
    /// win over `include_tools`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
}

impl ServerEntry {
    /// A plain entry (no working directory, no tool filter).
    #[cfg(test)]
    pub(crate) fn new(name: &str, command: &str, args: Vec<String>) -> Self {
        ServerEntry {
            name: name.into(),
            command: command.into(),
            args,
            env: BTreeMap::new(),
            cwd: None,
            include_tools: None,
            exclude_tools: Vec::new(),
        }
    }

    /// True when the client shows the model this tool.
    pub(crate) fn exposes(&self, tool: &str) -> bool {
        !self.exclude_tools.iter().any(|t| t == tool)
            && self
                .include_tools
                .as_ref()
                .is_none_or(|inc| inc.iter().any(|t| t == tool))
    }
}

/// A configuration entry pcsim does not start, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedServer {
    /// Its key in the map.
    pub name: String,
    /// Why it is not captured.
    pub reason: String,
}

/// A parsed configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpConfig {
    /// The file it came from.
    pub origin: String,
    /// The client format it was read in.
    pub client: Client,
    /// Stdio servers, in the file's order.
    pub servers: Vec<ServerEntry>,
    /// Entries not captured (remote transports, disabled entries, unresolved variables).
    pub skipped: Vec<SkippedServer>,
}

/// How a configuration is read beyond its text.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The client format; `None`: detected from the path and the content.
    pub client: Option<Client>,
    /// Values for `${input:id}` (VS Code) and `${{ inputs.NAME }}` (Continue).
    pub inputs: BTreeMap<String, String>,
    /// The workspace folder for `${workspaceFolder}` and relative `cwd`; `None`: the folder holding
    /// the file (its parent when the file sits in `.vscode`, `.cursor`, `.gemini`, ...).
    pub workspace: Option<PathBuf>,
    /// For `~/.claude.json`: only this project's servers (besides the user's); `None`: all projects.
    pub project: Option<String>,
}

/// Loads a configuration file with options.
pub fn load_config_with(path: &Path, opts: &LoadOptions) -> Result<McpConfig> {
    let text = read_text(path)?;
    let env = |k: &str| std::env::var(k).ok();
    parse_document(&text, &path.display().to_string(), Some(path), opts, &env)
}

/// Parses configuration JSON; `origin` names it in errors. The client is detected from the content
/// (see [`Client`]); `${VAR}` and `${VAR:-default}` are expanded from the environment, as Claude Code
/// does.
#[cfg(test)]
pub(crate) fn parse_config(text: &str, origin: &str) -> Result<McpConfig> {
    parse_config_with(text, origin, &|k| std::env::var(k).ok())
}

/// [`parse_config`] with an explicit environment, for tests.
#[cfg(test)]
pub(crate) fn parse_config_with(
    text: &str,
    origin: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpConfig> {
    parse_document(text, origin, None, &LoadOptions::default(), lookup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_desktop_and_vscode_shapes() {
        let desktop = r#"{"mcpServers":{
            "memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]},
            "github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"x","PORT":8080}},
            "remote":{"type":"http","url":"https://example.com/mcp"},
            "off":{"command":"x","disabled":true}}}"#;
        let c = parse_config(desktop, "c.json").unwrap();
        let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
        // In the file's order (serde_json keeps it: the tool renderers need schemas as sent).
        assert_eq!(names, ["memory", "github"]);
        assert_eq!(c.servers[1].env["PORT"], "8080");
        assert_eq!(
            c.servers[0].args,
            ["-y", "@modelcontextprotocol/server-memory"]
        );
        let skipped: Vec<_> = c
            .skipped
            .iter()
            .map(|s| (s.name.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(skipped[1].0, "off");
        assert!(skipped[0].1.contains("http"), "{skipped:?}");
        let vscode =
            r#"{"servers":{"time":{"type":"stdio","command":"uvx","args":["mcp-server-time"]}}}"#;
        assert_eq!(
            parse_config(vscode, "v.json").unwrap().servers[0].command,
            "uvx"
        );
    }

    #[test]
    fn expands_variables_like_claude_code() {
        let env = |k: &str| (k == "TOKEN").then(|| "abc".to_string());
        assert_eq!(expand_vars("Bearer ${TOKEN}", &env).unwrap(), "Bearer abc");
        assert_eq!(
            expand_vars("${PORT:-8080}/${TOKEN}", &env).unwrap(),
            "8080/abc"
        );
        assert_eq!(expand_vars("${NOPE}", &env).unwrap_err(), "NOPE");
        let text = r#"{"mcpServers":{
            "gh":{"command":"npx","args":["server-github"],"env":{"GITHUB_TOKEN":"${TOKEN}"}},
            "db":{"command":"npx","args":["server-postgres","${DATABASE_URL}"]}}}"#;
        let c = parse_config_with(text, "c.json", &env).unwrap();
        assert_eq!(c.servers.len(), 1);
        assert_eq!(c.servers[0].env["GITHUB_TOKEN"], "abc");
        assert!(
            c.skipped[0]
                .reason
                .contains("`DATABASE_URL` (in mcpServers.db.args[1])"),
            "{:?}",
            c.skipped
        );
    }

    #[test]
    fn bad_entries_name_file_and_field() {
        for (text, want) in [
            (r#"{"other":{}}"#, "mcpServers"),
            (
                r#"{"mcpServers":{"a":{"args":[]}}}"#,
                "mcpServers.a.command",
            ),
            (
                r#"{"mcpServers":{"a":{"command":"x","args":[1]}}}"#,
                "mcpServers.a.args[0]",
            ),
            (
                r#"{"mcpServers":{"a":{"command":"x","env":{"K":[1]}}}}"#,
                "mcpServers.a.env.K",
            ),
        ] {
            let e = parse_config(text, "cfg.json").unwrap_err().to_string();
            assert!(e.contains("cfg.json") && e.contains(want), "{e}");
        }
    }

    #[test]
    fn total_counts_the_preamble_once() {
        let catalog = crate::model::catalog::Catalog::embedded().unwrap();
        let m = catalog.model("claude-opus-4.8").unwrap();
        let entry = |n: &str| ServerEntry::new(n, "x", vec![]);
        let outcomes = vec![
            ServerOutcome {
                entry: entry("a"),
                tools: Ok(crate::model::tools::synthetic_tools(1, 2, 3)),
                raw: None,
                listed: None,
            },
            ServerOutcome {
                entry: entry("b"),
                tools: Ok(crate::model::tools::synthetic_tools(3, 3, 3)),
                raw: None,
                listed: None,
            },
            ServerOutcome {
                entry: entry("broken"),
                tools: Err("no".into()),
                raw: None,
                listed: None,
            },
        ];
        let (rows, dups) = overheads(&[m], &outcomes);
        assert!(dups.is_empty());
        assert_eq!(rows.len(), 3);
        // Two lists rendered together are one block: its count is the whole text's, not the sum.
        let r = m.rendering();
        let all = crate::model::tools::synthetic_tools(1, 5, 3);
        assert_eq!(rows[2].block_tokens, r.block_tokens(&all));
        assert_eq!(rows[2].tools, 5);
        assert_eq!(rows[0].block_tokens, r.block_tokens(&all[..2]));
        assert!(rows[0].block_tokens + rows[1].block_tokens > rows[2].block_tokens);
        let cached = rows[0].usd_per_call_cached.unwrap();
        assert!((cached - rows[0].usd_per_call * 0.1).abs() < 1e-12);
    }

    /// A client fixture, parsed with `PCSIM_TEST_KEY=k123` as the only variable set.
    fn client_fixture(rel: &str, opts: &LoadOptions) -> McpConfig {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/clients")
            .join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let env = |k: &str| match k {
            "PCSIM_TEST_KEY" => Some("k123".to_string()),
            "HOME" => Some("/home/dev".to_string()),
            _ => None,
        };
        parse_document(&text, rel, Some(&path), opts, &env).unwrap()
    }

    fn names(c: &McpConfig) -> Vec<&str> {
        c.servers.iter().map(|s| s.name.as_str()).collect()
    }

    fn skipped(c: &McpConfig) -> Vec<(&str, &str)> {
        c.skipped
            .iter()
            .map(|s| (s.name.as_str(), s.reason.as_str()))
            .collect()
    }

    /// The reason the server `name` was skipped; fails naming every skipped one when it was not.
    fn skip_reason<'c>(c: &'c McpConfig, name: &str) -> &'c str {
        match c.skipped.iter().find(|s| s.name == name) {
            Some(s) => &s.reason,
            None => panic!("`{name}` was not skipped: {:?}", c.skipped),
        }
    }

    #[test]
    fn claude_json_lists_user_and_project_servers() {
        let c = client_fixture("claude-code/.claude.json", &LoadOptions::default());
        assert_eq!(c.client, Client::ClaudeCode);
        assert_eq!(
            names(&c),
            ["fake-user", "fake-project (project /home/dev/widget)"]
        );
        assert_eq!(c.servers[1].env["TOKEN"], "none");
        assert!(
            skipped(&c)[0].1.contains("remote server (http"),
            "{:?}",
            c.skipped
        );
        let only = LoadOptions {
            project: Some("/home/dev/empty".into()),
            ..Default::default()
        };
        assert_eq!(
            names(&client_fixture("claude-code/.claude.json", &only)),
            ["fake-user"]
        );
    }

    #[test]
    fn windsurf_server_url_is_a_skipped_remote_and_env_syntax_resolves() {
        let c = client_fixture("windsurf/mcp_config.json", &LoadOptions::default());
        assert_eq!(c.client, Client::Windsurf);
        assert_eq!(names(&c), ["fake"]);
        assert_eq!(c.servers[0].env["FAKE_API_KEY"], "k123");
        let sk = skipped(&c);
        assert!(sk[0].1.contains("https://mcp.example.com/mcp"), "{sk:?}");
        assert_eq!(sk[1].0, "off");
    }

    #[test]
    fn gemini_cli_filters_cwd_and_remote_entries() {
        let c = client_fixture("gemini/.gemini/settings.json", &LoadOptions::default());
        assert_eq!(c.client, Client::GeminiCli);
        assert_eq!(names(&c), ["only-two", "no-time"]);
        let two = &c.servers[0];
        assert_eq!(
            two.include_tools.as_deref(),
            Some(&["echo".to_string(), "add".to_string()][..])
        );
        assert!(two.exposes("echo") && !two.exposes("get_time"));
        assert!(!c.servers[1].exposes("get_time") && c.servers[1].exposes("echo"));
        // `$VAR` resolves; an unset one stays as written, as Gemini CLI leaves it.
        assert_eq!(two.env["FAKE_API_KEY"], "k123");
        assert_eq!(two.env["UNSET"], "${PCSIM_TEST_UNSET}");
        let cwd = two.cwd.as_ref().unwrap();
        assert!(cwd.ends_with("clients/gemini/../.."), "{cwd:?}");
        assert!(skip_reason(&c, "github").contains("streamable HTTP"));
        assert!(skip_reason(&c, "experimental").contains("mcp.excluded"));
    }

    #[test]
    fn vscode_jsonc_inputs_env_and_workspace_folder() {
        let c = client_fixture("vscode/.vscode/mcp.json", &LoadOptions::default());
        assert_eq!(c.client, Client::VsCode);
        assert!(names(&c).is_empty());
        assert!(skip_reason(&c, "fake").contains("--input api-key=VALUE"));
        let mut opts = LoadOptions::default();
        opts.inputs.insert("api-key".into(), "secret".into());
        let c = client_fixture("vscode/.vscode/mcp.json", &opts);
        let f = &c.servers[0];
        assert_eq!(f.env["FAKE_API_KEY"], "secret");
        assert_eq!(f.env["FROM_ENV"], "k123");
        assert_eq!(f.env["UNSET"], "");
        // ${workspaceFolder}: the folder holding .vscode.
        assert!(
            f.args[0].ends_with("clients/vscode/../../fake_mcp_server.py"),
            "{:?}",
            f.args
        );
        assert!(!f.args[0].contains("${"));
    }

    #[test]
    fn zed_context_servers_both_forms() {
        let c = client_fixture("zed/settings.json", &LoadOptions::default());
        assert_eq!(c.client, Client::Zed);
        assert_eq!(names(&c), ["fake", "fake-old"]);
        assert_eq!(c.servers[1].command, "python3");
        assert_eq!(c.servers[1].args[1], "paginated");
        assert!(skip_reason(&c, "mcp-server-github").contains("Zed extension"));
        assert_eq!(skip_reason(&c, "off"), "disabled");
    }

    #[test]
    fn codex_toml_servers_filters_and_env_vars() {
        let c = client_fixture("codex/config.toml", &LoadOptions::default());
        assert_eq!(c.client, Client::Codex);
        assert_eq!(names(&c), ["fake", "paged"]);
        let f = &c.servers[0];
        assert_eq!(f.env["FAKE_MODE"], "codex");
        assert_eq!(f.env["PCSIM_TEST_KEY"], "k123");
        assert!(f.exposes("echo") && !f.exposes("add"));
        assert!(!c.servers[1].exposes("fetch"));
        assert!(skip_reason(&c, "figma").contains("https://mcp.figma.com/mcp"));
        assert_eq!(skip_reason(&c, "off"), "disabled");
    }

    #[test]
    fn continue_yaml_list_and_secrets() {
        let c = client_fixture("continue/config.yaml", &LoadOptions::default());
        assert_eq!(c.client, Client::Continue);
        assert_eq!(names(&c), ["fake"]);
        assert_eq!(c.servers[0].env["FAKE_API_KEY"], "k123");
        assert!(skip_reason(&c, "needs-secret").contains("PCSIM_TEST_UNSET"));
        assert!(skip_reason(&c, "remote").contains("streamable-http"));
    }

    #[test]
    fn cursor_env_and_user_home() {
        let c = client_fixture("cursor/.cursor/mcp.json", &LoadOptions::default());
        assert_eq!(c.client, Client::Cursor);
        assert_eq!(c.servers[0].env["FAKE_API_KEY"], "k123");
        assert_eq!(c.servers[0].env["HOME_DIR"], "/home/dev");
        assert!(
            skipped(&c)[0].1.contains("remote server"),
            "{:?}",
            c.skipped
        );
    }

    #[test]
    fn jsonc_comments_and_trailing_commas_outside_strings() {
        let t =
            "{\n // c\n \"a\": \"x // not a comment, /* nor this */\", /* b */ \"l\": [1, 2,],\n}";
        let v: Value = serde_json::from_str(&strip_jsonc(t)).unwrap();
        assert_eq!(v["a"], "x // not a comment, /* nor this */");
        assert_eq!(v["l"], serde_json::json!([1, 2]));
        assert_eq!(strip_jsonc("\"a,\\\",]\""), "\"a,\\\",]\"");
    }
}
