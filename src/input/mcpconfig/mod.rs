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
//!   builtin extensions skipped): brought to the `mcpServers` shape in `mcpclients.rs`.
//!
//! JSON files may have comments and trailing commas (JSONC, as VS Code and Zed write them). Remote
//! entries and disabled ones are listed as skipped with the reason, never an error.
//!
//! Here: reading a configuration into its server entries (the clients' shapes and rules). Beside it,
//! one concern a file: `expand` (each client's variable expansion), `jsonc` (comments and trailing
//! commas), `run` (starting and capturing the servers) and `overhead` (pricing their tool blocks).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::base::files::read_text;
use crate::error::{Error, Result};

mod expand;
mod jsonc;
mod overhead;
mod run;

pub use expand::MAX_EXPANDED_BYTES;
use expand::*;
pub(crate) use jsonc::strip_jsonc;
pub(crate) use overhead::{overheads, Overhead};
pub(crate) use run::{capture_all, ServerOutcome};

/// The client whose configuration format (and variable syntax) a file is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// Claude Code (`.mcp.json`, `~/.claude.json`).
    ClaudeCode,
    /// Claude Desktop (`claude_desktop_config.json`).
    ClaudeDesktop,
    /// Cursor (`.cursor/mcp.json`).
    Cursor,
    /// Windsurf (`~/.codeium/windsurf/mcp_config.json`).
    Windsurf,
    /// VS Code (`.vscode/mcp.json`, user `settings.json`).
    #[serde(rename = "vscode")]
    VsCode,
    /// Gemini CLI (`.gemini/settings.json`).
    GeminiCli,
    /// Zed (`settings.json` with `context_servers`).
    Zed,
    /// Codex CLI (`~/.codex/config.toml`).
    Codex,
    /// Continue (`config.yaml`, `.continue/mcpServers/*.yaml`).
    Continue,
    /// OpenCode (`opencode.json`, `opencode.jsonc`: an `mcp` map).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Goose (`~/.config/goose/config.yaml`: an `extensions` map).
    Goose,
    /// An `mcpServers` file of no recognisable client: Claude Code's rules.
    Generic,
}

impl Client {
    /// Every client, for `--client` and messages.
    pub(crate) const ALL: [Client; 12] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::Windsurf,
        Client::VsCode,
        Client::GeminiCli,
        Client::Zed,
        Client::Codex,
        Client::Continue,
        Client::OpenCode,
        Client::Goose,
        Client::Generic,
    ];

    /// Its spelling on the command line and in JSON.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::Windsurf => "windsurf",
            Client::VsCode => "vscode",
            Client::GeminiCli => "gemini-cli",
            Client::Zed => "zed",
            Client::Codex => "codex",
            Client::Continue => "continue",
            Client::OpenCode => "opencode",
            Client::Goose => "goose",
            Client::Generic => "generic",
        }
    }

    /// Parses a `--client` value.
    /// The prefix this client puts before each tool name of `server` in the request it sends, where
    /// its documentation says it renames: Claude Code sends `mcp__<server>__<tool>` (characters other
    /// than letters, digits, `_` and `-` in the server name become `_`). The prefix is billed on every
    /// call like the rest of the tool block. The other clients send the server's names as listed
    /// (Gemini CLI prefixes `<server>__` only to resolve a clash, which `config` reports as a
    /// warning instead).
    pub(crate) fn tool_prefix(self, server: &str) -> Option<String> {
        // `~/.claude.json` project servers are listed as `NAME (project PATH)`: the key is NAME.
        let server = server.split(" (project ").next().unwrap_or(server);
        match self {
            Client::ClaudeCode => {
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
            _ => None,
        }
    }

    pub(crate) fn parse(s: &str) -> Result<Client> {
        Client::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "command line",
                    "--client",
                    format!(
                        "`{s}` is not a client; one of {}",
                        Client::ALL.map(Client::as_str).join(", ")
                    ),
                )
            })
    }
}

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

/// The client a file belongs to, from its path and then its content.
pub(crate) fn detect_client(path: Option<&Path>, v: Option<&Value>) -> Client {
    if let Some(p) = path {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        let parent = p
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("");
        let full = p.to_string_lossy().replace('\\', "/");
        match () {
            _ if ext == "toml" => return Client::Codex,
            _ if name.starts_with("opencode.json") => return Client::OpenCode,
            _ if (ext == "yaml" || ext == "yml")
                && (parent == "goose" || full.contains("/goose/")) =>
            {
                return Client::Goose
            }
            _ if ext == "yaml" || ext == "yml" => return Client::Continue,
            _ if name == ".claude.json" || name == ".mcp.json" => return Client::ClaudeCode,
            _ if name == "claude_desktop_config.json" => return Client::ClaudeDesktop,
            _ if name == "mcp_config.json" || full.contains("/windsurf/") => {
                return Client::Windsurf
            }
            _ if parent == ".cursor" => return Client::Cursor,
            _ if parent == ".vscode" || full.contains("/Code/User/") => return Client::VsCode,
            _ if parent == ".gemini" || full.contains("/gemini-cli/") => return Client::GeminiCli,
            _ if parent == ".zed" || full.contains("/zed/settings.json") => return Client::Zed,
            _ => {}
        }
    }
    let Some(v) = v else {
        return Client::Generic;
    };
    if v.get("context_servers").is_some() {
        return Client::Zed;
    }
    if v.get("extensions").and_then(Value::as_object).is_some() {
        return Client::Goose;
    }
    let opencode_schema = v
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("opencode.ai"));
    let opencode_entries = v.get("mcp").and_then(Value::as_object).is_some_and(|m| {
        m.values().any(|e| {
            matches!(
                e.get("type").and_then(Value::as_str),
                Some("local") | Some("remote")
            )
        })
    });
    if opencode_schema || opencode_entries {
        return Client::OpenCode;
    }
    if v.get("servers").is_some() || v.pointer("/mcp/servers").is_some() {
        return Client::VsCode;
    }
    if v.get("mcp_servers").is_some() {
        return Client::Codex;
    }
    if v.get("projects").and_then(Value::as_object).is_some() {
        return Client::ClaudeCode;
    }
    if let Some(m) = v.get("mcpServers").and_then(Value::as_object) {
        let has = |k: &str| m.values().any(|e| e.get(k).is_some());
        if ["httpUrl", "includeTools", "excludeTools", "trust"]
            .iter()
            .any(|k| has(k))
        {
            return Client::GeminiCli;
        }
        if has("serverUrl") {
            return Client::Windsurf;
        }
    }
    Client::Generic
}

/// Where `${workspaceFolder}` and relative paths point: the given workspace, else the file's folder
/// (its parent when that folder is a client's own, e.g. `.vscode`).
fn workspace_of(path: Option<&Path>, opts: &LoadOptions) -> PathBuf {
    if let Some(w) = &opts.workspace {
        return w.clone();
    }
    let dir = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let own = [
        ".vscode",
        ".cursor",
        ".gemini",
        ".zed",
        ".codex",
        ".continue",
        ".windsurf",
    ];
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(n) if own.contains(&n) => dir.parent().map(Path::to_path_buf).unwrap_or(dir),
        Some("mcpServers") => dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or(dir),
        _ => dir,
    }
}

/// Upper bound on the server entries of one configuration (its projects' included): `config`
/// starts every server at once, so a larger file is refused before any server is started.
pub const MAX_SERVERS: usize = 256;

/// Parses a configuration document of any client.
// Over 120 lines: every client's document shape (keys, projects, allow and exclude lists) in one
// place, so the clients' differences can be read side by side; the per-family split (issue 28) is
// to come.
pub fn parse_document(
    text: &str,
    origin: &str,
    path: Option<&Path>,
    opts: &LoadOptions,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpConfig> {
    let by_path = path.map(|p| detect_client(Some(p), None));
    let kind = opts.client.or(by_path.filter(|c| *c != Client::Generic));
    let v: Value = match kind {
        Some(Client::Codex) => {
            crate::base::files::check_toml_size(text.len(), origin)?;
            let t: toml::Value = toml::from_str(text)
                .map_err(|e| Error::parse(origin, format!("not valid TOML: {e}")))?;
            serde_json::to_value(t).map_err(|e| Error::parse(origin, e))?
        }
        Some(Client::Continue | Client::Goose) if !text.trim_start().starts_with('{') => {
            // The YAML parser holds a document's events too: 48 MB of list items took 2 GB.
            if text.len() as u64 > crate::base::files::MAX_TOML_BYTES {
                return Err(Error::invalid(
                    origin,
                    "size",
                    format!(
                        "{} bytes is more than the {}-byte limit of a YAML file",
                        text.len(),
                        crate::base::files::MAX_TOML_BYTES
                    ),
                ));
            }
            serde_yaml_ng::from_str(text)
                .map_err(|e| Error::parse(origin, format!("not valid YAML: {e}")))?
        }
        _ => {
            let text = strip_jsonc(text);
            crate::base::files::check_json_values(&text, origin)?;
            let v = serde_json::from_str(&text)
                .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
            // Two equal keys in one object: the JSON parse keeps the last (a server lost).
            if let Some(key) = crate::input::json_keys::first_duplicate_key(&text) {
                return Err(Error::invalid(
                    origin,
                    key,
                    "this key appears twice in one object; only the last would count (remove or rename one)",
                ));
            }
            v
        }
    };
    let client = match kind {
        // A YAML file outside Goose's folder that holds Goose's `extensions` map.
        Some(Client::Continue) if opts.client.is_none() && v.get("extensions").is_some() => {
            Client::Goose
        }
        Some(k) => k,
        None => detect_client(None, Some(&v)),
    };
    let workspace = workspace_of(path, opts);
    let input_defaults: BTreeMap<String, String> = v
        .get("inputs")
        .or_else(|| v.pointer("/mcp/inputs"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|i| {
                    Some((
                        i.get("id")?.as_str()?.to_string(),
                        i.get("default")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let config_dir = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let ctx = Ctx {
        client,
        lookup,
        inputs: &opts.inputs,
        input_defaults: &input_defaults,
        workspace: &workspace,
        config_dir: &config_dir,
    };
    let mut cfg = McpConfig {
        origin: origin.to_string(),
        client,
        servers: Vec::new(),
        skipped: Vec::new(),
    };
    // (display name, field path, entry)
    let mut entries: Vec<(String, String, Value)> = Vec::new();
    let map_entries =
        |key: &str, m: &Value, out: &mut Vec<(String, String, Value)>| -> Result<()> {
            let m = m.as_object().ok_or_else(|| {
                Error::invalid(
                    origin,
                    key,
                    "must be an object mapping server names to entries",
                )
            })?;
            for (name, e) in m {
                out.push((name.clone(), format!("{key}.{name}"), e.clone()));
            }
            Ok(())
        };
    // Where each client keeps its server map, in the order it looks (a `.` is a nested key).
    let keys: &[&'static str] = match client {
        Client::Codex => &["mcp_servers"],
        Client::OpenCode => &["mcp"],
        Client::Goose => &["extensions"],
        Client::Zed => &["context_servers"],
        Client::VsCode => &["servers", "mcp.servers", "mcpServers"],
        _ => &["mcpServers", "servers"],
    };
    let found = keys.iter().find_map(|&key| {
        let pointer = format!("/{}", key.replace('.', "/"));
        v.pointer(&pointer).map(|m| (key, m))
    });
    let projects = v.get("projects").and_then(Value::as_object);
    match found {
        Some((key, Value::Array(list))) => {
            // Continue: a list of entries, each with its `name`.
            for (i, e) in list.iter().enumerate() {
                let name = e
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("server {}", i + 1));
                entries.push((name, format!("{key}[{i}]"), e.clone()));
            }
        }
        Some((key, m)) => map_entries(key, m, &mut entries)?,
        None if client == Client::ClaudeCode && projects.is_some() => {}
        None => {
            return Err(Error::invalid(
                origin,
                "mcpServers",
                "no server map (`mcpServers`, `servers`, `context_servers`, `mcp_servers`, OpenCode's `mcp` or Goose's `extensions`): not an MCP client configuration",
            ))
        }
    }
    // ~/.claude.json: per-project servers (local scope) beside the user's.
    if client == Client::ClaudeCode {
        if let Some(projects) = projects {
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
        }
    }
    // Gemini CLI's global lists.
    let list = |p: &str| -> Option<Vec<String>> {
        v.pointer(p).and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
    };
    let (allowed, excluded) = if client == Client::GeminiCli {
        (
            list("/mcp/allowed"),
            list("/mcp/excluded").unwrap_or_default(),
        )
    } else {
        (None, Vec::new())
    };
    // Every server is started at once (one thread and one process each): refused before any is.
    if entries.len() > MAX_SERVERS {
        return Err(Error::invalid(
            origin,
            found.map_or("projects", |(key, _)| key),
            format!(
                "{} server entries exceed the limit of {MAX_SERVERS} servers in one configuration",
                entries.len()
            ),
        ));
    }
    let excluded: std::collections::HashSet<String> = excluded.into_iter().collect();
    let allowed: Option<std::collections::HashSet<String>> =
        allowed.map(|a| a.into_iter().collect());
    for (name, at, e) in entries {
        if excluded.contains(&name) {
            cfg.skipped.push(SkippedServer {
                name,
                reason: "excluded by mcp.excluded".into(),
            });
            continue;
        }
        if allowed.as_ref().is_some_and(|a| !a.contains(&name)) {
            cfg.skipped.push(SkippedServer {
                name,
                reason: "not in mcp.allowed".into(),
            });
            continue;
        }
        // OpenCode and Goose entries are brought to the `mcpServers` shape first.
        let e = match client {
            Client::OpenCode => crate::input::mcpclients::opencode_entry(&e),
            Client::Goose => match crate::input::mcpclients::goose_entry(&e) {
                Ok(e) => e,
                Err(reason) => {
                    cfg.skipped.push(SkippedServer { name, reason });
                    continue;
                }
            },
            _ => e,
        };
        match read_entry(&name, &at, &e, origin, &ctx)? {
            Ok(entry) => cfg.servers.push(entry),
            Err(reason) => cfg.skipped.push(SkippedServer { name, reason }),
        }
    }
    Ok(cfg)
}

fn strings(v: Option<&Value>, origin: &str, at: &str) -> Result<Option<Vec<String>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str().map(str::to_string).ok_or_else(|| {
                    Error::invalid(
                        origin,
                        format!("{at}[{i}]"),
                        format!("must be a string, found {x}"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(other) => Err(Error::invalid(
            origin,
            at,
            format!("must be an array of strings, found {other}"),
        )),
    }
}

/// One entry: `Ok(Ok(server))`, `Ok(Err(reason))` for an entry not captured, `Err` for a malformed
/// one.
// Over 120 lines: one server entry field by field (command, args, env, transport, tool filters,
// cwd, expansion), with every client's spelling of each field next to it.
fn read_entry(
    name: &str,
    at: &str,
    entry: &Value,
    origin: &str,
    ctx: &Ctx,
) -> Result<std::result::Result<ServerEntry, String>> {
    let e = entry
        .as_object()
        .ok_or_else(|| Error::invalid(origin, at, "a server entry must be an object"))?;
    if e.get("disabled").and_then(Value::as_bool) == Some(true)
        || e.get("enabled").and_then(Value::as_bool) == Some(false)
    {
        return Ok(Err("disabled".into()));
    }
    // Zed's older form: "command": { "path", "args", "env" }.
    let nested = e.get("command").and_then(Value::as_object);
    let field = |k: &str| -> Option<&Value> {
        match (k, nested) {
            ("command", Some(n)) => n.get("path"),
            ("args" | "env", Some(n)) if n.contains_key(k) => n.get(k),
            _ => e.get(k),
        }
    };
    let transport = e
        .get("type")
        .or_else(|| e.get("transport"))
        .and_then(Value::as_str)
        .unwrap_or("stdio");
    let url = ["url", "serverUrl", "httpUrl"]
        .iter()
        .find_map(|k| e.get(*k).and_then(Value::as_str).map(|u| (*k, u)));
    if field("command").is_none() {
        if let Some((key, u)) = url {
            let kind = match (key, transport) {
                ("httpUrl", _) => "streamable HTTP",
                (_, "stdio") => "url",
                (_, t) => t,
            };
            return Ok(Err(format!(
                "remote server ({kind}, {u}); only stdio servers can be captured"
            )));
        }
        if transport != "stdio" {
            return Ok(Err(format!(
                "remote server ({transport}); only stdio servers can be captured"
            )));
        }
        if ctx.client == Client::Zed && e.get("source").and_then(Value::as_str) == Some("extension")
        {
            return Ok(Err(
                "provided by a Zed extension, which starts it itself; pcsim cannot".into(),
            ));
        }
    }
    let cmd_at = if nested.is_some() {
        format!("{at}.command.path")
    } else {
        format!("{at}.command")
    };
    let command = field("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| {
            Error::invalid(
                origin,
                &cmd_at,
                "a stdio server needs a non-empty string `command`",
            )
        })?
        .to_string();
    let args = strings(field("args"), origin, &format!("{at}.args"))?.unwrap_or_default();
    let mut env: BTreeMap<String, String> = match field("env") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, x)| match x {
                Value::String(s) => Ok((k.clone(), s.clone())),
                // Numbers and booleans are written unquoted in some hand-made configs.
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), x.to_string())),
                _ => Err(Error::invalid(
                    origin,
                    format!("{at}.env.{k}"),
                    format!("environment values must be strings, found {x}"),
                )),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("{at}.env"),
                format!("must be an object of strings, found {other}"),
            ))
        }
    };
    // Codex: `env_vars` names variables passed through from the environment.
    if let Some(names) = strings(e.get("env_vars"), origin, &format!("{at}.env_vars"))? {
        for n in names {
            if let Some(v) = (ctx.lookup)(&n) {
                env.entry(n).or_insert(v);
            }
        }
    }
    let (inc_key, exc_key) = match ctx.client {
        Client::Codex => ("enabled_tools", "disabled_tools"),
        // Windsurf hides the tools an entry lists in `disabledTools`.
        Client::Windsurf => ("includeTools", "disabledTools"),
        _ => ("includeTools", "excludeTools"),
    };
    let include_tools = strings(e.get(inc_key), origin, &format!("{at}.{inc_key}"))?;
    let exclude_tools =
        strings(e.get(exc_key), origin, &format!("{at}.{exc_key}"))?.unwrap_or_default();
    let cwd_text = match e.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("{at}.cwd"),
                format!("must be a string, found {other}"),
            ))
        }
    };
    let mut entry = ServerEntry {
        name: name.to_string(),
        command,
        args,
        env,
        cwd: None,
        include_tools,
        exclude_tools,
    };
    // The field goes where the reason has `{IN}`, else at the end.
    let fail = |field: String, reason: String| {
        let within = format!("(in {field})");
        if reason.contains(IN) {
            reason.replace(IN, &within)
        } else {
            format!("{reason} {within}")
        }
    };
    entry.command = match expand(&entry.command, ctx) {
        Ok(v) => v,
        Err(r) => return Ok(Err(fail(cmd_at, r))),
    };
    for (i, a) in entry.args.iter_mut().enumerate() {
        match expand(a, ctx) {
            Ok(v) => *a = v,
            Err(r) => return Ok(Err(fail(format!("{at}.args[{i}]"), r))),
        }
    }
    for (k, val) in entry.env.iter_mut() {
        match expand(val, ctx) {
            Ok(v) => *val = v,
            Err(r) => return Ok(Err(fail(format!("{at}.env.{k}"), r))),
        }
    }
    // Cursor and VS Code: `envFile` loads a dotenv file; the entry's own `env` wins over it. A file
    // that cannot be read keeps the server from starting as configured (it would start without its
    // keys and die with no pointer to why).
    if matches!(ctx.client, Client::Cursor | Client::VsCode) {
        match e.get("envFile") {
            None | Some(Value::Null) => {}
            Some(Value::String(raw)) => {
                let f = match expand(raw, ctx) {
                    Ok(v) => v,
                    Err(r) => return Ok(Err(fail(format!("{at}.envFile"), r))),
                };
                let p = PathBuf::from(&f);
                // A path that starts with a variable (`${workspaceFolder}/.env`) is where the
                // variable put it; a plain relative one is in the workspace.
                let p = if p.is_absolute() || raw.starts_with("${") {
                    p
                } else {
                    ctx.workspace.join(p)
                };
                match crate::input::mcpclients::read_env_file(&p) {
                    Ok(vars) => {
                        for (k, v) in vars {
                            entry.env.entry(k).or_insert(v);
                        }
                    }
                    Err(err) => {
                        return Ok(Err(fail(
                            format!("{at}.envFile"),
                            format!(
                                "names the env file {} {IN}, which cannot be read ({err}); the server would start without its variables",
                                p.display()
                            ),
                        )))
                    }
                }
            }
            Some(other) => {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.envFile"),
                    format!("must be a string, found {other}"),
                ))
            }
        }
    }
    if let Some(c) = cwd_text {
        let c = match expand(&c, ctx) {
            Ok(v) => v,
            Err(r) => return Ok(Err(fail(format!("{at}.cwd"), r))),
        };
        let p = PathBuf::from(&c);
        entry.cwd = Some(if p.is_absolute() {
            p
        } else {
            ctx.workspace.join(p)
        });
    }
    Ok(Ok(entry))
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
