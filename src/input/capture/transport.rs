//! The process side of a capture ([`capture_command`]): spawns the server, feeds it through a writer
//! thread and reads its stdout on another (so no send and no wait outlives the deadline, whatever
//! the server sends or fails to read), drains its stderr and bounds message and total sizes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::process::{become_subreaper, start_watchdog, ChildGuard, CAPTURE_MARKER};
use super::protocol::{capture_over, server_error, Received, Transport};
use super::types::{Capture, CaptureOptions};
use crate::error::Result;

/// What the stdout reader thread hands over.
pub(super) enum Chunk {
    Line(String),
    Eof,
    TooLong,
    TooMuch,
    Failed(String),
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
pub(super) fn read_lines(
    out: impl Read,
    max_message: usize,
    max_total: usize,
    tx: mpsc::SyncSender<Chunk>,
) {
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
    start_watchdog();
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
