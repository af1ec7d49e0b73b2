//! What a capture is asked to do and what it returns: the protocol version, the client capabilities
//! advertised, the limits of one capture ([`CaptureOptions`]) and its result ([`Capture`]).

use std::time::Duration;

use serde_json::{json, Value};

use super::json_text::pretty_json_text;

/// The MCP protocol version pcsim asks for by default.
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-06-18";

/// What the client tells the server it can do. Some servers register more tools for richer clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientCapabilities {
    /// No optional capability (what a plain tool-listing client offers).
    #[default]
    Minimal,
    /// Roots, sampling, elicitation and tasks, like a full-featured desktop client.
    Full,
}

impl ClientCapabilities {
    /// The `capabilities` object of the `initialize` request.
    pub(crate) fn to_json(self) -> Value {
        match self {
            ClientCapabilities::Minimal => json!({}),
            ClientCapabilities::Full => json!({
                "roots": { "listChanged": true },
                "sampling": {},
                // Both elicitation modes of the 2025-11-25 spec (an empty object means form only).
                "elicitation": { "form": {}, "url": {} },
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {
                        "sampling": { "createMessage": {} },
                        "elicitation": { "create": {} }
                    }
                }
            }),
        }
    }
}

/// Limits and choices of one capture.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Deadline for the whole capture, from spawning to the last page.
    pub timeout: Duration,
    /// Largest single message (line) accepted from the server, in bytes.
    pub max_message_bytes: usize,
    /// Largest total output accepted from the server, in bytes (noise lines included).
    pub max_total_bytes: usize,
    /// Most `tools/list` pages followed before giving up (a server looping on cursors).
    pub max_pages: usize,
    /// Capabilities advertised in `initialize`.
    pub capabilities: ClientCapabilities,
    /// `protocolVersion` asked for in `initialize`.
    pub protocol_version: String,
    /// Working directory to start the server in (a client configuration's `cwd`); `None`: ours.
    pub cwd: Option<std::path::PathBuf>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            timeout: Duration::from_secs(30),
            max_message_bytes: 8 << 20,
            max_total_bytes: 32 << 20,
            max_pages: 1000,
            capabilities: ClientCapabilities::Minimal,
            protocol_version: DEFAULT_PROTOCOL_VERSION.into(),
            cwd: None,
        }
    }
}

/// The result of a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// Tool objects exactly as the server returned them, across all pages, in order.
    pub tools: Vec<Value>,
    /// The same tools as the server's own JSON text (its key order and spelling), one per tool.
    pub tools_text: Vec<String>,
    /// `serverInfo` of the initialize result, if any.
    pub server_info: Option<Value>,
    /// `protocolVersion` the server answered with.
    pub protocol_version: Option<String>,
    /// Number of `tools/list` pages read.
    pub pages: usize,
    /// Lines that were not JSON-RPC messages (banners, logs printed to stdout) and were skipped.
    pub skipped_lines: usize,
    /// Notifications from the server, ignored.
    pub notifications: usize,
    /// Requests from the server that were answered (`roots/list`, `ping`, or a method-not-found error).
    pub server_requests: usize,
}

impl Capture {
    /// The `tools/list` result object `{ "tools": [...] }`, the same shape as a stored capture.
    pub(crate) fn result_json(&self) -> Value {
        json!({ "tools": self.tools })
    }

    /// The `{ "tools": [...] }` result as pretty JSON text with every tool exactly as the server
    /// sent it (key order, number and string spelling), indented like `serde_json`'s pretty output.
    pub fn result_json_text(&self) -> String {
        self.result_json_text_filtered(|_| true)
    }

    /// [`Capture::result_json_text`] keeping only the tools whose `name` passes `keep`.
    pub(crate) fn result_json_text_filtered(&self, keep: impl Fn(&str) -> bool) -> String {
        let kept: Vec<&str> = self
            .tools
            .iter()
            .zip(&self.tools_text)
            .filter(|(v, _)| keep(v.get("name").and_then(Value::as_str).unwrap_or("")))
            .map(|(_, t)| t.as_str())
            .collect();
        let raw = format!("{{\"tools\":[{}]}}", kept.join(","));
        pretty_json_text(&raw)
    }
}
