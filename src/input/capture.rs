//! Live capture of an MCP server's tool list over stdio.
//!
//! Two layers, so the protocol can be tested without processes:
//! - the JSON-RPC side ([`capture_over`], [`classify`], the request builders): newline-delimited JSON
//!   messages, the handshake (`initialize`, `notifications/initialized`), `tools/list` with
//!   pagination, and minimal answers to requests the server sends us (`roots/list`, `ping`);
//! - the process side ([`capture_command`]): spawns the server, feeds it through a writer thread and
//!   reads its stdout on another (so no send and no wait outlives the deadline, whatever the server
//!   sends or fails to read), drains its stderr, bounds message and total sizes, and always kills and
//!   reaps its whole process tree ([`ChildGuard`]: the group, every descendant by parent links, and by
//!   an environment marker the orphans that left the group and session), on every path.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};

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
    pub fn to_json(self) -> Value {
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
    pub fn result_json(&self) -> Value {
        json!({ "tools": self.tools })
    }

    /// The `{ "tools": [...] }` result as pretty JSON text with every tool exactly as the server
    /// sent it (key order, number and string spelling), indented like `serde_json`'s pretty output.
    pub fn result_json_text(&self) -> String {
        self.result_json_text_filtered(|_| true)
    }

    /// [`Capture::result_json_text`] keeping only the tools whose `name` passes `keep`.
    pub fn result_json_text_filtered(&self, keep: impl Fn(&str) -> bool) -> String {
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

/// Re-indents valid JSON text the way `serde_json::to_string_pretty` does (two spaces, `": "`,
/// `[]` and `{}` for empty containers) without parsing it into a map, so keys keep their order and
/// strings and numbers their spelling.
pub fn pretty_json_text(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len() * 2);
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.push_str(&raw[start..i]);
                continue;
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&close) {
                    out.push(c as char);
                    out.push(close as char);
                    i = j + 1;
                    continue;
                }
                out.push(c as char);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            _ => {
                let start = i;
                while i < b.len() && !b"{}[],:\" \t\r\n".contains(&b[i]) {
                    i += 1;
                }
                out.push_str(&raw[start..i]);
                continue;
            }
        }
        i += 1;
    }
    out
}

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

fn server_error(server: &str, problem: impl Into<String>) -> Error {
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

/// What the stdout reader thread hands over.
enum Chunk {
    Line(String),
    Eof,
    TooLong,
    TooMuch,
    Failed(String),
}

/// Owns the child process: dropping it ends the child's whole process group and reaps the child,
/// whatever path the capture took.
pub struct ChildGuard {
    child: Child,
    /// Value of [`CAPTURE_MARKER`] in the server's environment: its descendants inherit it, so
    /// those that left its process group and session (`setsid()`) and were orphaned are found too.
    marker: String,
}

/// Environment variable set on every captured server, so its whole process tree can be found.
pub const CAPTURE_MARKER: &str = "PCSIM_CAPTURE_ID";

impl ChildGuard {
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        // The whole tree, found while the server still links it: helpers in other groups or
        // sessions, and (by the environment marker) orphans of it that the kernel moved to us.
        // Its pid is followed only while it is not reaped (a reaped pid may be reused).
        let running = matches!(self.child.try_wait(), Ok(None));
        let root = running.then(|| self.child.id());
        let tree = descendants(root, &self.marker);
        self.end_group();
        kill_all(&tree);
        // Late ones (started while the group was ending), then reap those that became our children.
        let late = descendants(None, &self.marker);
        kill_all(&late);
        reap(tree.iter().chain(&late));
    }
}

impl ChildGuard {
    fn end_group(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            // Already exited and reaped; helpers it left in its group are still ended below.
            kill_group(&self.child, true);
            return;
        }
        // A polite SIGTERM first, so well-behaved servers clean up; then SIGKILL after a short grace.
        kill_group(&self.child, false);
        let grace = Instant::now() + Duration::from_millis(200);
        while Instant::now() < grace {
            if let Ok(Some(_)) = self.child.try_wait() {
                kill_group(&self.child, true);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_group(&self.child, true);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(unix)]
fn kill_group(child: &Child, hard: bool) {
    // The child was spawned as the leader of its own process group, so `npx`-style launchers and the
    // real server they start are ended together.
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    let sig = if hard { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-pid, sig);
    }
}

#[cfg(not(unix))]
fn kill_group(_child: &Child, _hard: bool) {}

/// Makes this process the reaper of its orphaned descendants (Linux): a helper that a server
/// double-forks away is then reparented to pcsim, not to init, so it stays findable and is reaped
/// here. Set once, before the first server starts.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) sets a flag of this process; no memory is passed.
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
        });
    }
}

/// The processes of a server's tree (Linux, from /proc): every descendant of `root` by parent
/// links (whatever group or session it moved to) and every process whose environment carries
/// `marker` (orphans that lost the link). Never this process.
fn descendants(root: Option<u32>, marker: &str) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        let needle = format!("{CAPTURE_MARKER}={marker}\0");
        let mut parent: Vec<(u32, u32)> = Vec::new();
        let mut found: Vec<u32> = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so after the last `)`.
            if let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) {
                if let Some(ppid) = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<u32>().ok())
                {
                    parent.push((pid, ppid));
                }
            }
            if let Ok(env) = std::fs::read(entry.path().join("environ")) {
                if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    found.push(pid);
                }
            }
        }
        if let Some(root) = root {
            let mut frontier = vec![root];
            while let Some(p) = frontier.pop() {
                for &(c, pp) in &parent {
                    if pp == p && c != me && !found.contains(&c) {
                        found.push(c);
                        frontier.push(c);
                    }
                }
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (root, marker);
        Vec::new()
    }
}

/// SIGKILL to each process (and its group, if it leads one).
fn kill_all(pids: &[u32]) {
    #[cfg(unix)]
    for &pid in pids {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            continue;
        };
        // SAFETY: kill(2) only sends a signal; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pids;
}

/// Waits (briefly) for the killed processes that are our children (orphans we became the reaper
/// of), so none is left as a zombie.
fn reap<'p>(pids: impl Iterator<Item = &'p u32>) {
    #[cfg(unix)]
    {
        let pids: Vec<libc::pid_t> = pids
            .filter_map(|&p| libc::pid_t::try_from(p).ok())
            .collect();
        let until = Instant::now() + Duration::from_millis(500);
        let mut left = pids;
        while !left.is_empty() && Instant::now() < until {
            left.retain(|&pid| {
                let mut status = 0;
                // SAFETY: waitpid on one pid with WNOHANG; `status` is a valid out pointer.
                let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                // 0: our child, still dying; -1 (ECHILD): not ours or already reaped.
                r == 0
            });
            if !left.is_empty() {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pids;
}

/// The process side of a capture: a spawned server behind a [`Transport`].
struct ProcessTransport {
    guard: ChildGuard,
    /// Lines for the writer thread, which owns the server's stdin: `send` never blocks, so a server
    /// that does not read its input cannot stall the capture past its deadline.
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    /// Bytes handed to the writer thread and not yet written (a server that never reads).
    unwritten: Arc<AtomicUsize>,
    /// Why the writer thread stopped, if it did.
    write_error: Arc<Mutex<Option<String>>>,
    lines: Receiver<Chunk>,
    max_total: usize,
    max_message: usize,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    server: String,
}

const STDERR_TAIL: usize = 2048;

impl Transport for ProcessTransport {
    fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        let server = self.server.clone();
        let failed = self.write_error.lock().ok().and_then(|e| e.clone());
        if let Some(e) = failed {
            let why = self.describe_failure();
            return Err(server_error(
                &server,
                format!("cannot send to the server ({e}){why}"),
            ));
        }
        let waiting = self.unwritten.load(Ordering::SeqCst);
        if waiting.saturating_add(line.len()) > self.max_total {
            return Err(server_error(
                &server,
                format!(
                    "does not read its input: {waiting} bytes of answers are waiting to be written"
                ),
            ));
        }
        let stdin = self
            .stdin
            .as_ref()
            .ok_or_else(|| server_error(&server, "its input is closed"))?;
        self.unwritten.fetch_add(line.len(), Ordering::SeqCst);
        if stdin.send(line.into_bytes()).is_err() {
            let why = self.describe_failure();
            return Err(server_error(
                &server,
                format!("cannot send to the server (its input is closed){why}"),
            ));
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Result<Received> {
        // A server that keeps talking (requests, notifications, noise) never lets the channel wait:
        // the deadline is checked on every line, not only when the server is quiet.
        if Instant::now() >= deadline {
            let why = self.describe_failure();
            return Err(server_error(
                &self.server,
                format!("no answer within the timeout{why}"),
            ));
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Chunk::Line(l)) => Ok(Received::Line(l)),
            Ok(Chunk::TooMuch) => Err(server_error(
                &self.server,
                format!(
                    "sent more than {} bytes in total (raise --max-bytes if this is a real tool list)",
                    self.max_total
                ),
            )),
            Ok(Chunk::Eof) | Err(RecvTimeoutError::Disconnected) => Ok(Received::Closed),
            Ok(Chunk::TooLong) => Err(server_error(
                &self.server,
                format!(
                    "sent a message longer than {} bytes (raise --max-bytes if this is a real tool list)",
                    self.max_message
                ),
            )),
            Ok(Chunk::Failed(e)) => Err(server_error(
                &self.server,
                format!("reading its output failed: {e}"),
            )),
            Err(RecvTimeoutError::Timeout) => {
                let why = self.describe_failure();
                Err(server_error(
                    &self.server,
                    format!("no answer within the timeout{why}"),
                ))
            }
        }
    }

    fn describe_failure(&mut self) -> String {
        // Give a dying server a moment so its exit status and last words are available.
        for _ in 0..20 {
            if self.guard.exit_status().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut s = String::new();
        if let Some(st) = self.guard.exit_status() {
            s.push_str(&format!(" (exited: {st})"));
        }
        let tail = self
            .stderr_tail
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default();
        let tail = String::from_utf8_lossy(&tail);
        let tail = tail.trim();
        if !tail.is_empty() {
            s.push_str(&format!("; its stderr ends with: {tail}"));
        }
        s
    }
}

/// Reads newline-delimited messages with a per-message and a total bound, so a server that writes
/// one endless line, or endless lines, cannot exhaust memory. The channel is bounded too, so the reader
/// never runs far ahead of the protocol.
fn read_lines(out: impl Read, max_message: usize, max_total: usize, tx: mpsc::SyncSender<Chunk>) {
    let mut r = BufReader::with_capacity(64 * 1024, out);
    let mut line: Vec<u8> = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Chunk::Failed(e.to_string()));
                return;
            }
        };
        if buf.is_empty() {
            if !line.is_empty() {
                let _ = tx.send(Chunk::Line(String::from_utf8_lossy(&line).into_owned()));
            }
            let _ = tx.send(Chunk::Eof);
            return;
        }
        let (used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                line.extend_from_slice(&buf[..i]);
                (i + 1, true)
            }
            None => {
                line.extend_from_slice(buf);
                (buf.len(), false)
            }
        };
        r.consume(used);
        total += used;
        // The more specific complaint first: one endless line rather than too much output.
        if line.len() > max_message {
            let _ = tx.send(Chunk::TooLong);
            return;
        }
        if total > max_total {
            let _ = tx.send(Chunk::TooMuch);
            return;
        }
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let text = String::from_utf8_lossy(&line).into_owned();
            line.clear();
            if tx.send(Chunk::Line(text)).is_err() {
                return;
            }
        }
    }
}

/// A marker unique to one capture of this process: `<pid>-<n>`.
fn next_marker() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// Spawns `program args...` with extra environment variables and captures its tool list.
/// `server` names it in errors (a config entry name, or the command line).
pub fn capture_command(
    server: &str,
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    opts: &CaptureOptions,
) -> Result<Capture> {
    let deadline = Instant::now() + opts.timeout;
    let mut cmd = Command::new(program);
    if let Some(dir) = &opts.cwd {
        cmd.current_dir(dir);
    }
    become_subreaper();
    let marker = next_marker();
    cmd.args(args)
        .envs(env)
        .env(CAPTURE_MARKER, &marker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| server_error(server, format!("cannot start `{program}`: {e}")))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let guard = ChildGuard { child, marker };
    let (tx, rx) = mpsc::sync_channel(64);
    let max_message = opts.max_message_bytes.min(opts.max_total_bytes);
    let max_total = opts.max_total_bytes;
    if let Some(out) = stdout {
        // Detached: it ends when the pipe closes, which the guard's kill guarantees.
        std::thread::spawn(move || read_lines(out, max_message, max_total, tx));
    }
    let stderr_tail = Arc::new(Mutex::new(Vec::new()));
    if let Some(mut err) = stderr {
        let tail = Arc::clone(&stderr_tail);
        // Drained continuously so a chatty server never blocks on a full stderr pipe; only the last
        // few kilobytes are kept for error messages.
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        });
    }
    let unwritten = Arc::new(AtomicUsize::new(0));
    let write_error = Arc::new(Mutex::new(None));
    let writer = stdin.map(|mut stdin| {
        let (wtx, wrx) = mpsc::channel::<Vec<u8>>();
        let (left, failed) = (Arc::clone(&unwritten), Arc::clone(&write_error));
        // Detached: it ends when the sender is dropped (then stdin closes) or the pipe breaks,
        // which the guard's kill guarantees.
        std::thread::spawn(move || {
            for line in wrx {
                if let Err(e) = stdin.write_all(&line).and_then(|_| stdin.flush()) {
                    if let Ok(mut f) = failed.lock() {
                        *f = Some(e.to_string());
                    }
                    return;
                }
                left.fetch_sub(line.len(), Ordering::SeqCst);
            }
        });
        wtx
    });
    let mut t = ProcessTransport {
        guard,
        stdin: writer,
        unwritten,
        write_error,
        lines: rx,
        max_total: opts.max_total_bytes,
        max_message,
        stderr_tail,
        server: server.to_string(),
    };
    let result = capture_over(&mut t, server, opts, deadline);
    // Closing stdin is the MCP way to ask a stdio server to exit; the guard then makes sure it did.
    t.stdin = None;
    drop(t);
    let cap = result?;
    // Validate now so a capture that pcsim cannot read is reported here, not at `run` time.
    crate::model::tools::parse_tool_list(&cap.result_json().to_string(), server)?;
    Ok(cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A scripted server: answers each of our messages by method with canned lines.
    struct Script {
        replies: BTreeMap<String, VecDeque<Vec<String>>>,
        pending: VecDeque<String>,
        sent: Vec<Value>,
    }

    impl Script {
        fn new(replies: &[(&str, Vec<String>)]) -> Self {
            let mut m: BTreeMap<String, VecDeque<Vec<String>>> = BTreeMap::new();
            for (k, v) in replies {
                m.entry(k.to_string()).or_default().push_back(v.clone());
            }
            Script {
                replies: m,
                pending: VecDeque::new(),
                sent: Vec::new(),
            }
        }
    }

    impl Transport for Script {
        fn send(&mut self, message: &Value) -> Result<()> {
            self.sent.push(message.clone());
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                if let Some(q) = self.replies.get_mut(method) {
                    if let Some(lines) = q.pop_front() {
                        self.pending.extend(lines);
                    }
                }
            }
            Ok(())
        }
        fn recv(&mut self, _deadline: Instant) -> Result<Received> {
            Ok(self
                .pending
                .pop_front()
                .map_or(Received::Closed, Received::Line))
        }
        fn describe_failure(&mut self) -> String {
            " (scripted)".into()
        }
    }

    fn tool(name: &str) -> Value {
        json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
    }

    fn run(script: &mut Script) -> Result<Capture> {
        capture_over(
            script,
            "test",
            &CaptureOptions::default(),
            Instant::now() + Duration::from_secs(1),
        )
    }

    #[test]
    fn classifies_lines() {
        assert_eq!(classify("hello"), Incoming::Noise);
        assert_eq!(classify("[1,2]"), Incoming::Noise);
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#),
            Incoming::Response {
                id: json!(3),
                outcome: Ok(json!({"a":1}))
            }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":"x","method":"roots/list"}"#),
            Incoming::Request {
                id: json!("x"),
                method: "roots/list".into()
            }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#),
            Incoming::Notification {
                method: "notifications/message".into()
            }
        );
        assert!(matches!(
            classify(r#"{"id":1,"error":{"code":-1,"message":"no"}}"#),
            Incoming::Response {
                outcome: Err(_),
                ..
            }
        ));
    }

    #[test]
    fn initialize_advertises_the_chosen_capabilities() {
        let mut o = CaptureOptions::default();
        let min = initialize_request(1, &o);
        assert_eq!(min["params"]["protocolVersion"], "2025-06-18");
        assert_eq!(min["params"]["clientInfo"]["name"], "pcsim");
        assert_eq!(min["params"]["capabilities"], json!({}));
        o.capabilities = ClientCapabilities::Full;
        let full = initialize_request(1, &o);
        let caps = full["params"]["capabilities"].as_object().unwrap();
        for k in ["roots", "sampling", "elicitation", "tasks"] {
            assert!(caps.contains_key(k), "{k} missing");
        }
    }

    #[test]
    fn follows_pages_skips_noise_and_answers_server_requests() {
        let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
        let p1 = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[tool("a"), tool("b")],"nextCursor":"c1"}});
        let p2 = json!({"jsonrpc":"2.0","id":3,"result":{"tools":[tool("c")]}});
        let mut s = Script::new(&[
            ("initialize", vec!["Server starting...".into(), init.into()]),
            (
                "tools/list",
                vec![
                    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#.into(),
                    r#"{"jsonrpc":"2.0","id":"r1","method":"roots/list"}"#.into(),
                    r#"{"jsonrpc":"2.0","id":99,"result":{}}"#.into(),
                    p1.to_string(),
                ],
            ),
            ("tools/list", vec![p2.to_string()]),
        ]);
        let cap = run(&mut s).unwrap();
        let names: Vec<_> = cap.tools.iter().map(|t| t["name"].clone()).collect();
        assert_eq!(names, vec![json!("a"), json!("b"), json!("c")]);
        assert_eq!(cap.pages, 2);
        assert_eq!(cap.skipped_lines, 2);
        assert_eq!(cap.notifications, 1);
        assert_eq!(cap.server_requests, 1);
        assert_eq!(cap.protocol_version.as_deref(), Some("2025-06-18"));
        // Sent: initialize, initialized, tools/list, roots reply, tools/list with the cursor.
        let methods: Vec<_> = s
            .sent
            .iter()
            .map(|m| m.get("method").and_then(Value::as_str).unwrap_or("reply"))
            .collect();
        assert_eq!(
            methods,
            [
                "initialize",
                "notifications/initialized",
                "tools/list",
                "reply",
                "tools/list"
            ]
        );
        assert_eq!(
            s.sent[3],
            json!({"jsonrpc":"2.0","id":"r1","result":{"roots":[]}})
        );
        assert_eq!(s.sent[4]["params"]["cursor"], "c1");
    }

    #[test]
    fn errors_name_the_server_and_the_step() {
        let init = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let mut s = Script::new(&[
            ("initialize", vec![init.into()]),
            (
                "tools/list",
                vec![r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#.into()],
            ),
        ]);
        let e = run(&mut s).unwrap_err().to_string();
        assert!(
            e.contains("test") && e.contains("tools/list failed") && e.contains("Method not found"),
            "{e}"
        );

        let mut s = Script::new(&[("initialize", vec!["garbage".into()])]);
        let e = run(&mut s).unwrap_err().to_string();
        assert!(
            e.contains("closed its output before answering initialize (scripted)"),
            "{e}"
        );

        let mut s = Script::new(&[("initialize", vec![r#"{"id":1,"result":"ok"}"#.into()])]);
        let e = run(&mut s).unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
    }

    #[test]
    fn a_cursor_loop_is_an_error() {
        let init = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let page = |id: u64| {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[],"nextCursor":"same"}}).to_string()
        };
        let mut s = Script::new(&[
            ("initialize", vec![init.into()]),
            ("tools/list", vec![page(2)]),
            ("tools/list", vec![page(3)]),
        ]);
        let e = run(&mut s).unwrap_err().to_string();
        assert!(e.contains("cursor `same` twice"), "{e}");
    }

    #[test]
    fn reader_bounds_message_size() {
        let (tx, rx) = mpsc::sync_channel(8);
        read_lines(&b"short\r\nxxxxxxxxxxxxxxxxxxxxxxxx"[..], 10, 1000, tx);
        assert!(matches!(rx.recv().unwrap(), Chunk::Line(l) if l == "short"));
        assert!(matches!(rx.recv().unwrap(), Chunk::TooLong));
        let (tx, rx) = mpsc::sync_channel(8);
        read_lines(&b"a\nlast"[..], 10, 1000, tx);
        let got: Vec<String> = rx
            .iter()
            .map(|c| match c {
                Chunk::Line(l) => l,
                Chunk::Eof => "<eof>".into(),
                _ => "<other>".into(),
            })
            .collect();
        assert_eq!(got, ["a", "last", "<eof>"]);
        // Many short lines: 30 bytes (five 6-byte lines) are allowed, the sixth line is too much.
        let (tx, rx) = mpsc::sync_channel(8);
        let noise = b"noise\n".repeat(10);
        std::thread::spawn(move || read_lines(&noise[..], 10, 30, tx));
        let kinds: Vec<&str> = rx
            .iter()
            .map(|c| match c {
                Chunk::Line(_) => "line",
                Chunk::TooMuch => "too much",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["line", "line", "line", "line", "line", "too much"]);
    }

    #[test]
    fn pretty_text_keeps_order_and_matches_serde_layout() {
        let raw = r#"{"z":1,"a":{"y":[],"b":{}},"s":"a,b:{\"c\"}","n":1.50}"#;
        let out = pretty_json_text(raw);
        assert!(out.find("\"z\"").unwrap() < out.find("\"a\"").unwrap());
        assert!(out.contains("1.50"), "numbers keep their spelling: {out}");
        let back: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(raw).unwrap());
        // On sorted input the layout is serde_json's own.
        let sorted = r#"{"a":[1,{"b":null}],"c":"x","d":[],"e":{}}"#;
        let v: Value = serde_json::from_str(sorted).unwrap();
        assert_eq!(
            pretty_json_text(sorted),
            serde_json::to_string_pretty(&v).unwrap()
        );
    }
}
