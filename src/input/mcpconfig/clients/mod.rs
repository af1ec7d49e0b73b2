//! What each client family knows about its own files, one module per family, each answering the
//! same questions ([`Format`]): is a file this client's (by its path, by its shape), in which syntax
//! is it written, where does it keep its servers, how is an entry spelled (its tool filters, what
//! it leaves to itself, its `envFile`), how does it expand a value and what prefix does it put
//! before a tool's name. The shared steps (`client`, `document`, `entry`, `expand`, `run`) ask
//! [`format`] and never test which client they read.
//!
//! - `claude`: Claude Code, Claude Desktop and a generic `mcpServers` file;
//! - `vscode`: VS Code and the editors that read its format (Cursor, Windsurf);
//! - `gemini`: Gemini CLI; `zed`: Zed; `codex`: Codex CLI (TOML); `continue_`: Continue (YAML);
//! - `opencode`: OpenCode; `goose`: Goose (YAML).

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::vars::Ctx;
use super::{Client, LoadOptions};

mod claude;
mod codex;
mod continue_;
mod gemini;
mod goose;
mod opencode;
mod vscode;
mod zed;

pub(super) use vscode::read_env_file;

/// A server entry as found in a document: (display name, field path, entry).
pub(super) type RawEntry = (String, String, Value);

/// The syntax a client writes its configuration in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// JSON with comments and trailing commas.
    Jsonc,
    /// TOML (Codex).
    Toml,
    /// YAML, or JSON when the text starts with `{` (Continue, Goose).
    Yaml,
}

/// The parts of a file's path that clients are recognised by.
pub(super) struct PathParts<'a> {
    /// File name.
    pub(super) name: &'a str,
    /// Extension.
    pub(super) ext: &'a str,
    /// Name of the folder holding it.
    pub(super) parent: &'a str,
    /// The whole path with `/` separators.
    pub(super) full: String,
}

impl<'a> PathParts<'a> {
    /// The parts of `p`.
    pub(super) fn of(p: &'a Path) -> Self {
        PathParts {
            name: p.file_name().and_then(|n| n.to_str()).unwrap_or(""),
            ext: p.extension().and_then(|e| e.to_str()).unwrap_or(""),
            parent: p
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or(""),
            full: p.to_string_lossy().replace('\\', "/"),
        }
    }

    /// A YAML file.
    pub(super) fn yaml(&self) -> bool {
        self.ext == "yaml" || self.ext == "yml"
    }
}

/// The questions every client family answers; the defaults are the `mcpServers` format's.
pub(super) trait Format: Sync {
    /// Whether a file at this path is this client's (asked in [`super::client::BY_PATH`]'s order).
    fn by_path(&self, _p: &PathParts) -> bool {
        false
    }
    /// Whether a document whose path said nothing is this client's, by its shape (asked in
    /// [`super::client::BY_CONTENT`]'s order).
    fn by_content(&self, _v: &Value) -> bool {
        false
    }
    /// The client a document detected as this one's by path is read as instead, by its content.
    fn instead(&self, _v: &Value) -> Option<Client> {
        None
    }
    /// The folders of its own a configuration file sits in, each with how many levels above the
    /// file's folder the workspace is (`${workspaceFolder}` and relative paths point there).
    fn own_folders(&self) -> &'static [(&'static str, usize)] {
        &[]
    }
    /// The syntax of its files.
    fn syntax(&self) -> Syntax {
        Syntax::Jsonc
    }
    /// Where it keeps its server map, in the order it looks (a `.` is a nested key).
    fn server_keys(&self) -> &'static [&'static str] {
        &["mcpServers", "servers"]
    }
    /// Server entries it keeps in a second place (Claude Code's projects); `None` when the document
    /// has no such place.
    fn more_entries(&self, _v: &Value, _opts: &LoadOptions) -> Option<Vec<RawEntry>> {
        None
    }
    /// Its document-wide lists: (only these servers, when given; never these servers).
    fn server_lists(&self, _v: &Value) -> (Option<HashSet<String>>, HashSet<String>) {
        (None, HashSet::new())
    }
    /// An entry of its own shape brought to the `mcpServers` shape; `Err(reason)` for an entry it
    /// does not start as a stdio server.
    fn entry_shape(&self, e: Value) -> std::result::Result<Value, String> {
        Ok(e)
    }
    /// The keys of an entry's tool filters: (only these tools, never these tools).
    fn tool_filter_keys(&self) -> (&'static str, &'static str) {
        ("includeTools", "excludeTools")
    }
    /// Why an entry without a `command`, local by its transport, is not captured, when the client
    /// starts such entries itself.
    fn starts_itself(&self, _e: &Map<String, Value>) -> Option<String> {
        None
    }
    /// Whether an entry's `envFile` names a dotenv file loaded under its `env`.
    fn reads_env_file(&self) -> bool {
        false
    }
    /// One value expanded as this client expands it (the lookups already bounded); `Err(reason)`
    /// when the server cannot be started as configured.
    fn expand(&self, s: &str, ctx: &Ctx) -> std::result::Result<String, String>;
    /// The prefix it puts before each tool name of `server` (the key, without a project) in the
    /// request it sends, where it renames.
    fn tool_prefix(&self, _server: &str) -> Option<String> {
        None
    }
}

/// The family module that answers for `client`.
pub(super) fn format(client: Client) -> &'static dyn Format {
    match client {
        Client::ClaudeCode => &claude::ClaudeCode,
        Client::ClaudeDesktop => &claude::ClaudeDesktop,
        Client::Generic => &claude::Generic,
        Client::Cursor => &vscode::Cursor,
        Client::Windsurf => &vscode::Windsurf,
        Client::VsCode => &vscode::VsCode,
        Client::GeminiCli => &gemini::GeminiCli,
        Client::Zed => &zed::Zed,
        Client::Codex => &codex::Codex,
        Client::Continue => &continue_::Continue,
        Client::OpenCode => &opencode::OpenCode,
        Client::Goose => &goose::Goose,
    }
}
