//! Which client a configuration file belongs to ([`Client`]), from its name and then its content,
//! and what each client's name is on the command line.

use super::*;

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
