//! The JSON-RPC side of a capture, testable without processes: newline-delimited messages, the
//! handshake (`initialize`, `notifications/initialized`), `tools/list` with pagination, and minimal
//! answers to requests the server sends us (`roots/list`, `ping`), over any [`Transport`].

use std::time::Instant;

use serde_json::{json, Value};

use super::types::{Capture, CaptureOptions};
use crate::error::{Error, Result};

/// One line from the server, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A response to one of our requests: `Ok(result)` or `Err(error object)`.
    Response {
        /// The id it answers.
        id: Value,
        /// Result or error.
        outcome: std::result::Result<Value, Value>,
    },
    /// A request from the server, which needs an answer.
    Request {
        /// Its id.
        id: Value,
        /// Its method.
        method: String,
    },
    /// A notification from the server.
    Notification {
        /// Its method.
        method: String,
    },
    /// Anything else: not JSON, or JSON that is not a JSON-RPC message.
    Noise,
}

/// Classifies one line of server output.
pub fn classify(line: &str) -> Incoming {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line.trim()) else {
        return Incoming::Noise;
    };
    let method = m.get("method").and_then(Value::as_str).map(str::to_string);
    let id = m.get("id").filter(|v| !v.is_null()).cloned();
    match (id, method) {
        (Some(id), Some(method)) => Incoming::Request { id, method },
        (None, Some(method)) => Incoming::Notification { method },
        (Some(id), None) => {
            if let Some(e) = m.get("error") {
                Incoming::Response {
                    id,
                    outcome: Err(e.clone()),
                }
            } else if let Some(r) = m.get("result") {
                Incoming::Response {
                    id,
                    outcome: Ok(r.clone()),
                }
            } else {
                Incoming::Noise
            }
        }
        (None, None) => Incoming::Noise,
    }
}

/// The `initialize` request.
pub fn initialize_request(id: u64, opts: &CaptureOptions) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": opts.protocol_version,
            "capabilities": opts.capabilities.to_json(),
            "clientInfo": { "name": "pcsim", "version": env!("CARGO_PKG_VERSION") }
        }
    })
}

/// The `notifications/initialized` notification.
pub fn initialized_notification() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
}

/// A `tools/list` request, with the cursor of the previous page if any.
pub fn tools_list_request(id: u64, cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => {
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list", "params": { "cursor": c } })
        }
        None => json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }),
    }
}

/// Our answer to a request from the server: no roots, pong, or method-not-found for anything we do
/// not offer (sampling, elicitation: a capture has no model or user to ask).
pub fn reply_to_server_request(id: &Value, method: &str) -> Value {
    match method {
        "roots/list" => json!({ "jsonrpc": "2.0", "id": id, "result": { "roots": [] } }),
        "ping" => json!({ "jsonrpc": "2.0", "id": id, "result": {} }),
        _ => json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": -32601, "message": format!("pcsim capture does not support `{method}`") }
        }),
    }
}

/// What the protocol layer gets from the transport when it waits for a line.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// One line (without its newline).
    Line(String),
    /// The server closed its output.
    Closed,
}

/// A line-based channel to a server, with deadlines: the seam between protocol and process.
pub trait Transport {
    /// Sends one message (a newline is appended).
    fn send(&mut self, message: &Value) -> Result<()>;
    /// Waits for the next line until `deadline`; a timeout or a size limit is an error.
    fn recv(&mut self, deadline: Instant) -> Result<Received>;
    /// Describes the server for error messages (command line, exit status, stderr tail).
    fn describe_failure(&mut self) -> String;
}

pub(super) fn server_error(server: &str, problem: impl Into<String>) -> Error {
    Error::Server {
        server: server.to_string(),
        problem: problem.into(),
    }
}

/// Runs the handshake and `tools/list` (all pages) over a transport; `server` names it in errors.
pub fn capture_over(
    t: &mut dyn Transport,
    server: &str,
    opts: &CaptureOptions,
    deadline: Instant,
) -> Result<Capture> {
    let mut cap = Capture {
        tools: Vec::new(),
        tools_text: Vec::new(),
        server_info: None,
        protocol_version: None,
        pages: 0,
        skipped_lines: 0,
        notifications: 0,
        server_requests: 0,
    };
    t.send(&initialize_request(1, opts))?;
    let (init, _) = await_response(t, server, 1, "initialize", deadline, &mut cap)?;
    let init = init.as_object().ok_or_else(|| {
        server_error(
            server,
            format!(
                "the initialize result is not a JSON object: {}",
                short(&init)
            ),
        )
    })?;
    cap.server_info = init.get("serverInfo").cloned();
    cap.protocol_version = init
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    t.send(&initialized_notification())?;
    let mut cursor: Option<String> = None;
    let mut seen_cursors = std::collections::HashSet::new();
    let mut id = 2u64;
    loop {
        if cap.pages >= opts.max_pages {
            return Err(server_error(
                server,
                format!("tools/list still had more pages after {} pages", cap.pages),
            ));
        }
        t.send(&tools_list_request(id, cursor.as_deref()))?;
        let (page, line) = await_response(t, server, id, "tools/list", deadline, &mut cap)?;
        cap.pages += 1;
        let tools = page.get("tools").and_then(Value::as_array).ok_or_else(|| {
            server_error(
                server,
                format!(
                    "tools/list page {} has no `tools` array: {}",
                    cap.pages,
                    short(&page)
                ),
            )
        })?;
        cap.tools.extend(tools.iter().cloned());
        cap.tools_text.extend(tool_texts(&line, tools));
        match page.get("nextCursor") {
            None | Some(Value::Null) => break,
            Some(Value::String(c)) => {
                if !seen_cursors.insert(c.clone()) {
                    return Err(server_error(
                        server,
                        format!("tools/list returned the cursor `{c}` twice (a pagination loop)"),
                    ));
                }
                cursor = Some(c.clone());
            }
            Some(other) => {
                return Err(server_error(
                    server,
                    format!("tools/list nextCursor is not a string: {}", short(other)),
                ))
            }
        }
        id += 1;
    }
    Ok(cap)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s
    }
}

/// Each tool of a `tools/list` response line as the server's own text; where the line cannot be
/// read that way (it always can, having parsed), the tools re-serialised.
fn tool_texts(line: &str, tools: &[Value]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Page<'a> {
        #[serde(borrow)]
        tools: Vec<&'a serde_json::value::RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Response<'a> {
        #[serde(borrow)]
        result: Page<'a>,
    }
    match serde_json::from_str::<Response>(line.trim()) {
        Ok(r) if r.result.tools.len() == tools.len() => {
            r.result.tools.iter().map(|t| t.get().to_string()).collect()
        }
        _ => tools.iter().map(Value::to_string).collect(),
    }
}

fn await_response(
    t: &mut dyn Transport,
    server: &str,
    id: u64,
    what: &str,
    deadline: Instant,
    cap: &mut Capture,
) -> Result<(Value, String)> {
    loop {
        let line = match t.recv(deadline)? {
            Received::Line(l) => l,
            Received::Closed => {
                let why = t.describe_failure();
                return Err(server_error(
                    server,
                    format!("closed its output before answering {what}{why}"),
                ));
            }
        };
        match classify(&line) {
            Incoming::Response { id: got, outcome } if got == json!(id) => {
                return outcome
                    .map(|v| (v, line))
                    .map_err(|e| server_error(server, format!("{what} failed: {}", short(&e))));
            }
            // A response to an id we did not send: noise from a confused server; keep waiting.
            Incoming::Response { .. } | Incoming::Noise => cap.skipped_lines += 1,
            Incoming::Notification { .. } => cap.notifications += 1,
            Incoming::Request { id, method } => {
                cap.server_requests += 1;
                t.send(&reply_to_server_request(&id, &method))?;
            }
        }
    }
}
