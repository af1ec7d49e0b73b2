//! Which client a configuration file belongs to ([`Client`]), from its name and then its content
//! (each family says whether a path or a shape is its own; here, the order they are asked in), and
//! what each client's name is on the command line.

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
        clients::format(self).tool_prefix(server)
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

/// The order clients are recognised in by path: the first whose family says the path is its own
/// (Goose's YAML before Continue's, which takes any YAML file).
pub(super) const BY_PATH: [Client; 11] = [
    Client::Codex,
    Client::OpenCode,
    Client::Goose,
    Client::Continue,
    Client::ClaudeCode,
    Client::ClaudeDesktop,
    Client::Windsurf,
    Client::Cursor,
    Client::VsCode,
    Client::GeminiCli,
    Client::Zed,
];

/// The order clients are recognised in by a document's shape, when its path said nothing: the
/// first whose family says the shape is its own; none is [`Client::Generic`].
pub(super) const BY_CONTENT: [Client; 8] = [
    Client::Zed,
    Client::Goose,
    Client::OpenCode,
    Client::VsCode,
    Client::Codex,
    Client::ClaudeCode,
    Client::GeminiCli,
    Client::Windsurf,
];

/// The client a file's path says it belongs to, if it says.
pub(super) fn client_by_path(p: &Path) -> Option<Client> {
    let parts = clients::PathParts::of(p);
    BY_PATH
        .into_iter()
        .find(|c| clients::format(*c).by_path(&parts))
}

/// The client a document's shape says it belongs to; [`Client::Generic`] when none recognises it.
pub(super) fn client_by_content(v: &Value) -> Client {
    BY_CONTENT
        .into_iter()
        .find(|c| clients::format(*c).by_content(v))
        .unwrap_or(Client::Generic)
}
