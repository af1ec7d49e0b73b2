//! Traces: full request/response pairs of real (or simulated) API calls, read record by record for
//! `pcsim explain`.
//!
//! A trace file is read as a stream: one record (one request body and its response) is in memory at
//! a time, so a file of any size is read in memory bounded by its largest record. A record pcsim
//! cannot use (not JSON, cut off, no usage in the response, an endpoint it does not know, a binary
//! body) is skipped with its place and the reason, never stopping the file.
//!
//! One file per format, each a [`TraceFormat`]; [`FORMATS`] lists them in the order they are tried
//! on a file's first bytes. A new format (claude-tap's JSONL export, HAR 1.2, ...) is one more file
//! here that turns its records into [`TraceRecord`]s, and one more entry in [`FORMATS`]; everything
//! after the record (the request's regions, the billed usage, the explanation) is shared.
//!
//! - `har.rs`: HAR 1.2 archives, the entries array streamed one entry at a time;
//! - `har_scan.rs`: the entries of a HAR cut out of its text by their brackets, chunk by chunk;
//! - `claude_tap.rs`: claude-tap's JSON Lines export;
//! - `jsonl.rs`: pcsim's own JSON Lines `{time, session, url, request, response}` (docs/explain.md);
//! - `sse.rs`: streamed (SSE) responses reassembled into the final body with its usage;
//! - `exchange.rs`: a record's request body cut into regions in the provider's cache order, with
//!   its breakpoints, settings and billed usage.

mod claude_tap;
mod exchange;
mod har;
mod har_scan;
mod json;
mod jsonl;
mod sse;

use std::borrow::Cow;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

pub use claude_tap::ClaudeTap;
pub(crate) use exchange::{exchange_of, Api, Content, Exchange, RegionKind};
pub use har::Har;
pub use jsonl::PcsimJsonl;

/// One request/response pair as a trace format gives it, before its body is interpreted. The
/// bodies are their JSON text, borrowed from the line they were read from where the format allows
/// it (no copy, no tree: `exchange_of` reads the request once, into its regions).
#[derive(Debug, Clone)]
pub struct TraceRecord<'a> {
    /// Where it came from: `FILE: line N`.
    pub at: String,
    /// Start time in Unix seconds, if the record has one.
    pub time: Option<f64>,
    /// Session (conversation) id, if the record has one.
    pub session: Option<String>,
    /// Whether, when `session` is `None`, the request body may name the session (Claude Code's
    /// `metadata.user_id`, OpenAI's `prompt_cache_key`): formats that record no session of their
    /// own (HAR, claude-tap) say yes.
    pub session_from_body: bool,
    /// The URL the request was sent to, if the record says.
    pub url: Option<String>,
    /// The request body: the JSON text of an object.
    pub request: Cow<'a, str>,
    /// The response body (reassembled when it was streamed): JSON text.
    pub response: Cow<'a, str>,
    /// Bytes the record took in its file.
    pub bytes: u64,
}

#[cfg(test)]
impl TraceRecord<'_> {
    /// The record with its own copy of the bodies (kept past the line it was read from).
    pub(crate) fn into_owned(self) -> TraceRecord<'static> {
        TraceRecord {
            at: self.at,
            time: self.time,
            session: self.session,
            session_from_body: self.session_from_body,
            url: self.url,
            request: Cow::Owned(self.request.into_owned()),
            response: Cow::Owned(self.response.into_owned()),
            bytes: self.bytes,
        }
    }
}

/// A record that was skipped, with its place and the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedRecord {
    /// Where it was: `FILE: line N`.
    pub at: String,
    /// Why it was skipped.
    pub reason: String,
}

/// What a format hands on for each record: a record, or a skipped one.
#[derive(Debug)]
pub enum TraceItem<'a> {
    /// A record to interpret.
    Record(Box<TraceRecord<'a>>),
    /// A record that could not be read.
    Skipped(SkippedRecord),
}

#[cfg(test)]
impl TraceItem<'_> {
    /// The item with its own copy of the bodies.
    pub(crate) fn into_owned(self) -> TraceItem<'static> {
        match self {
            TraceItem::Record(r) => TraceItem::Record(Box::new(r.into_owned())),
            TraceItem::Skipped(s) => TraceItem::Skipped(s),
        }
    }
}

/// A trace file format: recognised by its first bytes, read as a stream of records.
pub trait TraceFormat: Sync {
    /// The format's name in messages (`pcsim-jsonl`, `claude-tap`, `har`).
    fn name(&self) -> &'static str;
    /// Whether a file starting with `head` (its first bytes, at most 64 KiB) is in this format.
    fn sniff(&self, head: &[u8]) -> bool;
    /// Reads every record of `input` (named `origin` in messages) into `sink`, in file order;
    /// returns the bytes read. Only an I/O error stops it: a bad record is a
    /// [`TraceItem::Skipped`].
    fn read(
        &self,
        input: &mut dyn BufRead,
        origin: &str,
        sink: &mut dyn FnMut(TraceItem<'_>),
    ) -> std::io::Result<u64>;
}

/// Reads JSON Lines: every non-blank line of `input` becomes one item through `record(line, at,
/// bytes)` (`at` is `ORIGIN: line N`); returns the bytes read. The line formats (pcsim's own,
/// claude-tap's) differ only in `record`.
pub(super) fn read_lines(
    input: &mut dyn BufRead,
    origin: &str,
    sink: &mut dyn FnMut(TraceItem<'_>),
    record: impl for<'l> Fn(&'l [u8], String, u64) -> TraceItem<'l>,
) -> std::io::Result<u64> {
    let mut buf = Vec::new();
    let mut bytes = 0u64;
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = input.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(bytes);
        }
        bytes += n as u64;
        line_no += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        sink(record(&buf, format!("{origin}: line {line_no}"), n as u64));
    }
}

/// One line parsed as `T`, or the reason it is skipped: not UTF-8 (a binary body), cut off
/// (truncated JSON), or not JSON of the shape (`not_what` names the shape for the reason).
pub(super) fn parse_line<'l, T: serde::Deserialize<'l>>(
    line: &'l [u8],
    not_what: &str,
) -> std::result::Result<T, String> {
    let text = std::str::from_utf8(line)
        .map_err(|_| "binary body: the line is not UTF-8 text".to_string())?;
    serde_json::from_str(text.trim()).map_err(|e| {
        if e.is_eof() {
            format!("truncated JSON (the record ends early: {e})")
        } else {
            format!("{not_what}: {e}")
        }
    })
}

/// The formats pcsim reads, in the order they are tried on a file's first bytes.
/// `PcsimJsonl` comes last: it accepts any file starting with `{`.
pub static FORMATS: &[&dyn TraceFormat] = &[&Har, &ClaudeTap, &PcsimJsonl];

/// The extensions of trace files a folder walk takes.
pub(crate) const TRACE_EXTENSIONS: [&str; 3] = ["jsonl", "json", "har"];

/// The trace files named by `paths`: files as given, folders walked for `.jsonl`, `.json` and
/// `.har` files as [`crate::input::walk::input_files`] walks them (each file once, no link followed
/// into a folder, sorted, so runs repeat).
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    Ok(crate::input::walk::input_files(paths, &TRACE_EXTENSIONS)?.files)
}

/// Reads one trace file record by record into `sink`; returns the bytes read. The format is the
/// first of [`FORMATS`] whose `sniff` accepts the file's first bytes.
pub fn read_trace_file(path: &Path, sink: &mut dyn FnMut(TraceItem<'_>)) -> Result<u64> {
    use crate::base::files::{open_input, OpenError};
    let origin = path.display().to_string();
    let file = match open_input(path) {
        Ok((f, _)) => f,
        Err(OpenError::Io(e)) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                action: "cannot read",
                source: e,
            })
        }
        Err(OpenError::Folder) => {
            return Err(Error::invalid(origin, "path", "is a folder, not a file"))
        }
        Err(OpenError::Special) => {
            return Err(Error::invalid(
                origin,
                "path",
                "is not a regular file (a device, pipe or socket); give the path of a file",
            ))
        }
    };
    read_trace(file, &origin, sink).map_err(|e| match e {
        Error::Io { source, .. } => Error::Io {
            path: path.to_path_buf(),
            action: "cannot read",
            source,
        },
        other => other,
    })
}

/// [`read_trace_file`] on any reader; `origin` names it in messages.
pub fn read_trace(
    input: impl std::io::Read,
    origin: &str,
    sink: &mut dyn FnMut(TraceItem<'_>),
) -> Result<u64> {
    let mut r = std::io::BufReader::with_capacity(1 << 16, input);
    let io = |e: std::io::Error| Error::Io {
        path: origin.into(),
        action: "reading",
        source: e,
    };
    let head = r.fill_buf().map_err(io)?;
    if head.is_empty() {
        return Err(Error::invalid(origin, "trace", "the file is empty"));
    }
    let Some(format) = FORMATS.iter().find(|f| f.sniff(head)) else {
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
        return Err(Error::invalid(
            origin,
            "trace",
            format!(
                "not a trace pcsim reads (formats: {}; see docs/explain.md)",
                names.join(", ")
            ),
        ));
    };
    format.read(&mut r, origin, sink).map_err(io)
}

#[cfg(test)]
mod tests;
