//! Usage logs: the token buckets of each logged call, read from whatever a user has on disk.
//!
//! Formats are detected per record, so one file may mix them:
//! - Anthropic Messages usage (`input_tokens`, `cache_creation_input_tokens`,
//!   `cache_read_input_tokens`, `cache_creation.ephemeral_5m/1h_input_tokens`, and
//!   `output_tokens_details`, which newer responses carry and which does not make them OpenAI's);
//! - OpenAI Chat Completions (`prompt_tokens`, `prompt_tokens_details.cached_tokens`), DeepSeek's
//!   `prompt_cache_hit_tokens`, and LiteLLM's normalised form of Anthropic usage (`prompt_tokens`
//!   counting writes and reads, `cache_creation_input_tokens` beside it);
//! - OpenAI Responses (`input_tokens`, `input_tokens_details.cached_tokens`);
//! - LiteLLM `StandardLoggingPayload` records (`startTime`, `metadata.usage_object`, `trace_id`);
//! - Gemini `usageMetadata` (`promptTokenCount`, `cachedContentTokenCount`, `candidatesTokenCount`,
//!   `thoughtsTokenCount`, `toolUsePromptTokenCount`);
//! - Amazon Bedrock Converse usage (`inputTokens`, `cacheReadInputTokens`, `cacheWriteInputTokens`)
//!   and Bedrock model-invocation log records (`input.inputTokenCount`, ...);
//! - Cohere `billed_units` (v2 `usage`, v1 `meta`);
//! - Claude Code session transcripts (`message.usage`, `sessionId`, `cwd`, `isSidechain`, `agentId`);
//! - Codex CLI rollouts (`session_meta`, `turn_context`, `event_msg` of type `token_count`, with
//!   each call's `last_token_usage` or only the running `total_token_usage`), in `codex.rs`;
//! - LiteLLM `SpendLogs` rows (the proxy's table; the GCS / PubSub payload with `metadata` a JSON
//!   string), in `litellm.rs` with the logging payload;
//! - Claude Code `progress` lines (a sub-agent's `data.message.message.usage`), in `claude_code.rs`;
//! - OpenTelemetry GenAI spans (`gen_ai.usage.*`, OTLP JSON), in `otel.rs`;
//! - Langfuse observations (`usageDetails`, `costDetails`), in `langfuse.rs`;
//! - Helicone request exports (`prompt_cache_read_tokens`, `prompt_cache_write_tokens`), in
//!   `helicone.rs`;
//! - Gemini CLI chat files (`messages[].tokens`), in `gemini_cli.rs`;
//! - OpenCode message files and exports (`tokens.cache.read/write`, `cost`), in `opencode.rs`.
//!
//! Where a record states what the call cost (`costUSD`, `spend`, `response_cost`, `cost_usd`,
//! `costDetails.total`, `cost`), it is kept beside the counts.
//!
//! Every call keeps its session, agent, project and time where the record has them, so a replay can
//! split the log into conversations. A record pcsim cannot read is counted, and the first few are
//! described; it never stops the file.
//!
//! One concept: the token buckets of a logged call read from one record of any format above; the
//! formats with a file of their own are named, the rest share the record reader here.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::base::hash::FastMap;
use crate::error::{Error, Result};

mod claude_code;
mod codex;
mod fast;
mod gemini_cli;
mod helicone;
mod langfuse;
mod litellm;
mod opencode;
mod otel;

use claude_code::progress_line;
use codex::codex_line;
use litellm::litellm_payload;

/// One logged call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedCall {
    /// Where it came from: `line N` or `record N`.
    pub at: String,
    /// Which kind of usage record it was (`anthropic`, `openai-chat`, `openai-responses`,
    /// `litellm`, `gemini`, `bedrock`, `cohere`, `claude-code`, `codex`).
    pub format: &'static str,
    /// Model named by the record, if any.
    pub model: Option<String>,
    /// Start time in Unix seconds, if the record has one.
    pub unix_time: Option<f64>,
    /// Session (conversation) id, if the record has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Agent id within the session (a sub-agent), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// A sub-agent (sidechain) call: its own conversation and cache, billed all the same.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sidechain: bool,
    /// Project (working directory) the call was made from, if the record says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Prompt tokens (uncached + written + read).
    pub prompt_tokens: u64,
    /// Tokens billed at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache with a 5-minute (or unspecified) lifetime.
    pub cache_write_5m_tokens: u64,
    /// Tokens written with a 1-hour lifetime.
    pub cache_write_1h_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// What the log itself says the call cost in USD (`costUSD`, `spend`, `response_cost`,
    /// `cost_usd`, ...), if it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stated_usd: Option<f64>,
    /// The response id that merges a call's repeated lines (Claude Code's `message.id`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

impl LoggedCall {
    fn empty(at: &str, format: &'static str) -> Self {
        LoggedCall {
            at: at.to_string(),
            format,
            model: None,
            unix_time: None,
            session: None,
            agent: None,
            sidechain: false,
            project: None,
            prompt_tokens: 0,
            uncached_tokens: 0,
            cache_write_5m_tokens: 0,
            cache_write_1h_tokens: 0,
            cache_read_tokens: 0,
            output_tokens: 0,
            stated_usd: None,
            response_id: None,
        }
    }

    /// Sets the buckets from uncached, written (5m, 1h), read and output counts.
    fn set(&mut self, uncached: u64, w5: u64, w1h: u64, read: u64, output: u64) {
        self.uncached_tokens = uncached;
        self.cache_write_5m_tokens = w5;
        self.cache_write_1h_tokens = w1h;
        self.cache_read_tokens = read;
        self.prompt_tokens = uncached + w5 + w1h + read;
        self.output_tokens = output;
    }
}

/// How many unreadable records are described by name (the rest are only counted).
pub(crate) const UNREADABLE_EXAMPLES: usize = 5;

/// A parsed log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageLog {
    /// File it came from.
    pub origin: String,
    /// Calls in time order: log order, unless every call has a timestamp and some were logged
    /// after a later one (then sorted by time, stably; see `reordered_calls`).
    pub calls: Vec<LoggedCall>,
    /// Fields of usage objects pcsim does not know, with how often they appeared (ignored).
    pub unknown_fields: BTreeMap<String, usize>,
    /// Records with no usage (user turns, summaries, tool results).
    pub records_without_usage: usize,
    /// Transcript lines that repeat an earlier response's usage (one line per content block).
    pub duplicates_merged: usize,
    /// Sub-agent (sidechain) calls among `calls` (replayed as their own conversations, in the
    /// totals).
    pub sidechain_calls: usize,
    /// Kept for older readers of the JSON: sidechain calls are no longer left out, so this is 0.
    pub sidechain_skipped: usize,
    /// Calls a gateway logged as failed (LiteLLM `status: failure`), not billed and left out.
    pub failed_calls: usize,
    /// Records that could not be read (not JSON, or a usage object with a bad value).
    pub unreadable: usize,
    /// The first few unreadable records, each naming the file, line and field.
    pub unreadable_examples: Vec<String>,
    /// A final line that was cut off mid-write and was ignored.
    pub truncated_last_line: bool,
    /// Bytes read.
    pub bytes: u64,
    /// Calls whose record gives only the total prompt tokens where its format can split them (a
    /// LiteLLM row without `metadata.usage_object`): any cache reads and writes in them are billed
    /// at the base input rate.
    pub cache_split_unknown: usize,
    /// Calls that were logged after a call with a later timestamp, before the calls were put in
    /// time order (0 when the log was in order, or when some call has no timestamp).
    pub reordered_calls: usize,
}

impl UsageLog {
    fn unreadable(&mut self, message: String) {
        self.unreadable += 1;
        if self.unreadable_examples.len() < UNREADABLE_EXAMPLES {
            self.unreadable_examples.push(message);
        }
    }
}

/// Loads a log file, streaming JSON Lines (memory follows the number of calls, not the file size).
pub fn load_log(path: &Path) -> Result<UsageLog> {
    use crate::base::files::{open_input, OpenError};
    // Opened without blocking and checked on the descriptor: a pipe or device is refused, never
    // waited on; the log is remembered as an input, so no report is written over it.
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
            return Err(Error::invalid(
                path.display().to_string(),
                "path",
                "is a folder, not a file",
            ))
        }
        Err(OpenError::Special) => {
            return Err(Error::invalid(
                path.display().to_string(),
                "path",
                "is not a regular file (a device, pipe or socket); give the path of a file",
            ))
        }
    };
    read_log(file, &path.display().to_string()).map_err(|e| match e {
        Error::Io { source, .. } => Error::Io {
            path: path.to_path_buf(),
            action: "cannot read",
            source,
        },
        other => other,
    })
}

/// Parses log text: one JSON document (an array of records, or one record) or JSON Lines.
pub fn parse_log(text: &str, origin: &str) -> Result<UsageLog> {
    // The text is read in place (a byte slice is its own buffer), not copied into a reader's.
    read_log_text(text, origin, FileState::default()).map(|(log, _)| log)
}

/// [`read_log_with`] on text in memory: JSON Lines are read in place, line by line, without a copy
/// into a buffer nor a second check that the text is UTF-8.
fn read_log_text(text: &str, origin: &str, state: FileState) -> Result<(UsageLog, FileState)> {
    read_log_from(text.as_bytes(), Some(text), origin, state)
}

/// Reads a log from any reader; `origin` names it in messages.
pub(crate) fn read_log(reader: impl Read, origin: &str) -> Result<UsageLog> {
    let r = BufReader::with_capacity(1 << 16, reader);
    read_log_with(r, origin, FileState::default()).map(|(log, _)| log)
}

/// [`read_log`] from a given state; gives the state it ended in.
fn read_log_with(r: impl BufRead, origin: &str, state: FileState) -> Result<(UsageLog, FileState)> {
    read_log_from(r, None, origin, state)
}

/// [`read_log_with`]; `whole` is the text `r` reads when it is in memory (its JSON Lines are then
/// read from it in place).
// Over 120 lines: the line loop of a usage log: the state of the file (format, line, record in
// progress) is carried from line to line.
fn read_log_from(
    mut r: impl BufRead,
    whole: Option<&str>,
    origin: &str,
    mut state: FileState,
) -> Result<(UsageLog, FileState)> {
    let mut log = UsageLog {
        origin: origin.to_string(),
        ..Default::default()
    };
    let mut first = String::new();
    let io = |e: std::io::Error| match e.kind() {
        // A line or document past its limit (`read_line`, below): input beyond a limit.
        std::io::ErrorKind::FileTooLarge => Error::invalid(origin, "size", e.to_string()),
        _ => Error::Io {
            path: origin.into(),
            action: "reading",
            source: e,
        },
    };
    // Skip leading blank lines; the first line decides between JSON Lines and one document.
    let mut line_no = 0usize;
    loop {
        first.clear();
        let n = read_line(&mut r, &mut first).map_err(io)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        log.bytes += n as u64;
        // A UTF-8 byte-order mark (Windows tools write one) is not part of the first record.
        if line_no == 1 && first.starts_with('\u{feff}') {
            first.drain(..3);
        }
        if !first.trim().is_empty() {
            break;
        }
    }
    let lead = first.trim_start();
    let one_line_record = lead.starts_with('{')
        && serde_json::from_str::<&RawValue>(first.trim()).is_ok()
        && !first.trim().is_empty();
    if !lead.is_empty() && !one_line_record {
        // One JSON document over several lines (or garbage): read it whole.
        let mut rest = first.clone();
        r.by_ref()
            .take(MAX_LOG_LINE_BYTES + 1)
            .read_to_string(&mut rest)
            .map_err(io)?;
        if rest.len() as u64 > MAX_LOG_LINE_BYTES {
            return Err(io(too_large("a log that is one JSON document")));
        }
        log.bytes = rest.len() as u64;
        match serde_json::from_str::<&RawValue>(&rest) {
            Ok(raw) => {
                if raw.get().starts_with('[') {
                    let items: Vec<&RawValue> = serde_json::from_str(raw.get())
                        .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
                    for (i, item) in items.into_iter().enumerate() {
                        let at = format!("record {}", i + 1);
                        record(item.get(), &at, &mut log, &mut state);
                    }
                } else {
                    record(raw.get(), "record 1", &mut log, &mut state);
                }
            }
            Err(e) => {
                let lines: Vec<&str> = rest.lines().collect();
                let records = lines.iter().filter(|l| obj(l.trim()).is_some()).count();
                if lead.starts_with('[') || records == 0 {
                    return Err(Error::parse(origin, format!("not valid JSON: {e}")));
                }
                // JSON Lines whose first line is bad: go through it line by line.
                let n = lines.len();
                for (i, line) in lines.into_iter().enumerate() {
                    let at = format!("line {}", line_no + i);
                    let last = i + 1 == n && !rest.ends_with('\n');
                    jsonl_line(line, &at, last, &mut log, &mut state);
                }
            }
        }
    } else if let Some(rest) = whole.and_then(|w| w.get(log.bytes as usize..)) {
        // In memory: `r` has read `log.bytes` bytes of `whole` (whole lines), the rest is read in
        // place.
        if !lead.is_empty() {
            jsonl_in_place(first, rest, line_no, &mut log, &mut state);
        }
    } else if !lead.is_empty() {
        // Two buffers reused line after line (the next line is read first, to know whether this
        // one is the last); no allocation per line.
        let mut line = std::mem::take(&mut first).into_bytes();
        let mut next = Vec::new();
        let mut at = String::new();
        let mut at_line = line_no;
        loop {
            next.clear();
            let n = r.read_until(b'\n', &mut next).map_err(io)?;
            log.bytes += n as u64;
            let last = n == 0 && !line.ends_with(b"\n");
            // Invalid UTF-8 is replaced (it can only be in strings); valid text, the rule, is
            // checked by the faster check and borrowed.
            let text = match std::str::from_utf8(&line) {
                Ok(t) => Cow::Borrowed(t),
                Err(_) => String::from_utf8_lossy(&line),
            };
            line_label(&mut at, at_line);
            jsonl_line(&text, &at, last, &mut log, &mut state);
            if n == 0 {
                break;
            }
            std::mem::swap(&mut line, &mut next);
            at_line += 1;
        }
    }
    if log.calls.is_empty() {
        let mut problem = String::from(
            "no usage record found (expected Anthropic, OpenAI, LiteLLM, Gemini, Bedrock or Cohere usage, OpenTelemetry GenAI spans, Langfuse observations, Helicone requests, or Claude Code / Codex CLI / Gemini CLI / OpenCode session logs)",
        );
        if log.unreadable > 0 {
            problem.push_str(&format!(
                "; {} record{} could not be read: {}",
                log.unreadable,
                if log.unreadable == 1 { "" } else { "s" },
                log.unreadable_examples.join("; ")
            ));
        }
        return Err(Error::invalid(origin, "usage", problem));
    }
    log.reordered_calls = put_in_time_order(&mut log.calls);
    Ok((log, state))
}

/// The JSON Lines of a log in memory from its first record's line on: `first` (line `line_no`,
/// already read), then each line of `rest` in place, as the buffered loop of [`read_log_from`]
/// reads them (the same line numbers, bytes and last-line rule).
fn jsonl_in_place(
    first: String,
    mut rest: &str,
    line_no: usize,
    log: &mut UsageLog,
    state: &mut FileState,
) {
    let mut at = String::new();
    let mut at_line = line_no;
    let mut line: &str = &first;
    loop {
        let n = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let (next, tail) = rest.split_at(n);
        rest = tail;
        log.bytes += n as u64;
        let last = n == 0 && !line.ends_with('\n');
        line_label(&mut at, at_line);
        jsonl_line(line, &at, last, log, state);
        if n == 0 {
            break;
        }
        line = next;
        at_line += 1;
    }
}

/// Writes `line N` into `at` (a record's place in messages and in its call), without the
/// formatting machinery: it is written for every line.
fn line_label(at: &mut String, n: usize) {
    at.clear();
    at.push_str("line ");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    at.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// Sorts `calls` by timestamp (stably) when every call has one and some call was logged after a
/// later one; returns how many were (0: left as logged). A log exported newest first, or merged
/// from several writers, is replayed in the order the calls were made: in log order, each early
/// call logged late joined the later one with no gap, and a cache that had expired was taken as
/// alive (issue 29: +149.9% on a reversed log).
fn put_in_time_order(calls: &mut [LoggedCall]) -> usize {
    let mut latest = f64::NEG_INFINITY;
    let mut late = 0;
    for c in calls.iter() {
        let Some(t) = c.unix_time else {
            return 0;
        };
        if t < latest {
            late += 1;
        }
        latest = latest.max(t);
    }
    if late > 0 {
        calls.sort_by(|a, b| {
            a.unix_time
                .unwrap_or_default()
                .total_cmp(&b.unix_time.unwrap_or_default())
        });
    }
    late
}

/// Longest line of a JSON Lines log, and longest log that is one JSON document, in bytes (the
/// size limit of an input file): a line is held whole while it is parsed, so an 8 GB sparse file
/// (one line of zeros) aborted and a 1 GB line took 2 GB (issue 29).
pub(crate) const MAX_LOG_LINE_BYTES: u64 = crate::base::files::MAX_INPUT_BYTES;

/// The refusal of `what` past [`MAX_LOG_LINE_BYTES`].
fn too_large(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!("{what} is longer than the {MAX_LOG_LINE_BYTES}-byte limit of a log line"),
    )
}

/// Reads one line including its newline, at most [`MAX_LOG_LINE_BYTES`] (else an error of kind
/// `FileTooLarge`); invalid UTF-8 is replaced (it can only be in strings).
fn read_line(r: &mut impl BufRead, buf: &mut String) -> std::io::Result<usize> {
    let mut bytes = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_LOG_LINE_BYTES + 1)
        .read_until(b'\n', &mut bytes)?;
    if n as u64 > MAX_LOG_LINE_BYTES {
        return Err(too_large("a line"));
    }
    match String::from_utf8(bytes) {
        Ok(s) => buf.push_str(&s),
        Err(e) => buf.push_str(&String::from_utf8_lossy(e.as_bytes())),
    }
    Ok(n)
}

fn jsonl_line(line: &str, at: &str, last: bool, log: &mut UsageLog, state: &mut FileState) {
    let t = line.trim();
    if t.is_empty() {
        return;
    }
    // A log being written may end mid-line: that last record is dropped with a warning.
    if last && serde_json::from_str::<&RawValue>(t).is_err() {
        log.truncated_last_line = true;
        return;
    }
    record(t, at, log, state);
}

/// What a file's earlier lines said that later lines rely on (Codex CLI rollouts).
#[derive(Default)]
struct FileState {
    /// Response id -> index in `calls`, to merge Claude Code's repeated lines.
    by_response: FastMap<String, usize>,
    codex_session: Option<String>,
    codex_cwd: Option<String>,
    codex_model: Option<String>,
    codex_last_total: Option<Value>,
    /// The last running total of a Codex rollout: (input, cached input, output) tokens.
    codex_prev_total: Option<[u64; 3]>,
    /// Every line to the general reader (the tests compare the fast path with it).
    general_only: bool,
    /// Lines the fast path read.
    fast_lines: usize,
}

/// One JSON object's fields, each value kept as its text (parsed where it is read), sorted by key; a
/// key given twice keeps its last value, as a map does. Keys are borrowed from the text unless they
/// hold escapes, so reading a line allocates one list, not a string per key.
#[derive(Debug, Default)]
pub(super) struct Obj<'a> {
    fields: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Obj<'a> {
    fn find(&self, key: &str) -> std::result::Result<usize, usize> {
        self.fields.binary_search_by(|(k, _)| k.as_ref().cmp(key))
    }

    /// The text of the value of `key`.
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.find(key).ok().map(|i| self.fields[i].1)
    }

    fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// `(key, value text)` in key order.
    fn iter(&self) -> impl Iterator<Item = (&str, &'a RawValue)> + '_ {
        self.fields.iter().map(|(k, v)| (k.as_ref(), *v))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Obj<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Fields<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Fields<'a> {
            type Value = Obj<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut m: M,
            ) -> std::result::Result<Obj<'a>, M::Error> {
                let mut o = Obj {
                    fields: Vec::with_capacity(m.size_hint().unwrap_or(16)),
                };
                while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
                    let v: &'a RawValue = m.next_value()?;
                    match o.find(&k) {
                        Ok(i) => o.fields[i].1 = v,
                        Err(i) => o.fields.insert(i, (k, v)),
                    }
                }
                Ok(o)
            }
        }
        d.deserialize_map(Fields(std::marker::PhantomData))
    }
}

/// Serialised as the map it is (keys in order), values as their text.
impl Serialize for Obj<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct KeyText<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for KeyText<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyText(std::marker::PhantomData))
    }
}

fn obj(text: &str) -> Option<Obj<'_>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}

fn sub<'a>(o: &Obj<'a>, key: &str) -> Option<Obj<'a>> {
    o.get(key).and_then(|r| obj(r.get()))
}

fn string(o: &Obj, key: &str) -> Option<String> {
    let r = o.get(key)?;
    serde_json::from_str::<String>(r.get()).ok()
}

fn value(o: &Obj, key: &str) -> Option<Value> {
    serde_json::from_str(o.get(key)?.get()).ok()
}

fn boolean(o: &Obj, key: &str) -> Option<bool> {
    serde_json::from_str(o.get(key)?.get()).ok()
}

fn first_string(o: &Obj, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| o.get(k).and_then(id_text))
}

fn first_time(o: &Obj, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| o.get(k).and_then(raw_time))
}

/// A value read as an id (session, agent, project, model): a non-empty string, or a number's text.
fn id_text(r: &RawValue) -> Option<String> {
    let text = r.get();
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text)
            .ok()
            .filter(|s| !s.is_empty());
    }
    match serde_json::from_str(text).ok()? {
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A value read as a time ([`parse_time`]), a string without escapes read in place.
fn raw_time(r: &RawValue) -> Option<f64> {
    if let Ok(s) = serde_json::from_str::<&str>(r.get()) {
        return parse_rfc3339(s).or_else(|| s.parse::<f64>().ok());
    }
    serde_json::from_str::<Value>(r.get())
        .ok()
        .as_ref()
        .and_then(parse_time)
}

const TIME_KEYS: [&str; 8] = [
    "timestamp",
    "sent_at",
    "startTime",
    "start_time",
    "created_at",
    "created",
    "createTime",
    "request_time",
];
const SESSION_KEYS: [&str; 6] = [
    "session_id",
    "sessionId",
    "conversation_id",
    "conversationId",
    "thread_id",
    "litellm_session_id",
];
const AGENT_KEYS: [&str; 5] = ["agent", "agent_id", "agentId", "agent_name", "agentName"];
const PROJECT_KEYS: [&str; 4] = ["project", "project_id", "cwd", "workspace"];

/// The record-level context (time, session, agent, project) from an object and its wrapper.
fn context(call: &mut LoggedCall, layers: &[&Obj]) {
    for o in layers {
        if call.unix_time.is_none() {
            call.unix_time = first_time(o, &TIME_KEYS);
        }
        if call.session.is_none() {
            call.session = first_string(o, &SESSION_KEYS);
        }
        if call.agent.is_none() {
            call.agent = first_string(o, &AGENT_KEYS);
        }
        if call.project.is_none() {
            call.project = first_string(o, &PROJECT_KEYS);
        }
        if call.model.is_none() {
            call.model = first_string(o, &["model", "modelVersion", "modelId", "model_id"]);
        }
    }
}

/// Reads one record into `log`.
fn record(text: &str, at: &str, log: &mut UsageLog, state: &mut FileState) {
    // Lines that cannot hold a usage count (no "sage" as in usage/usageMetadata, no "oken" as in
    // *_tokens/*TokenCount/token_count, no Codex context line) are checked for being JSON and
    // counted without building a tree: most transcript lines are user turns and tool results.
    let maybe_usage = ["sage", "oken", "session_meta", "turn_context"]
        .iter()
        .any(|m| text.contains(m));
    if !maybe_usage {
        match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => log.records_without_usage += 1,
            Err(e) => log.unreadable(format!("{}: {at}: not valid JSON: {e}", log.origin)),
        }
        return;
    }
    // Claude Code transcript lines and pcsim's own records, read in one pass.
    if !state.general_only && fast::read(text, at, log, state) {
        return;
    }
    let Some(o) = obj(text) else {
        match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => log.records_without_usage += 1,
            Err(e) => log.unreadable(format!("{}: {at}: not valid JSON: {e}", log.origin)),
        }
        return;
    };
    // Formats whose one record holds any number of calls (an OTLP export, a Gemini CLI chat, an
    // OpenCode export), or whose fields other readers would misread (Langfuse, Helicone).
    match many_calls(&o, at, log) {
        Ok(Some(calls)) => {
            if calls.is_empty() {
                log.records_without_usage += 1;
            }
            for (call, id) in calls {
                push(call, id, log, state);
            }
            return;
        }
        Ok(None) => {}
        Err(e) => {
            log.unreadable(e.to_string());
            return;
        }
    }
    match read_record(&o, at, log, state) {
        Ok(Some((mut call, id))) => {
            if call.stated_usd.is_none() {
                call.stated_usd = stated_cost(&o);
            }
            push(call, id, log, state)
        }
        Ok(None) => log.records_without_usage += 1,
        Err(e) => {
            let msg = e.to_string();
            log.unreadable(msg);
        }
    }
}

/// What the record itself says the call cost: Claude Code's `costUSD` (older transcripts), a
/// gateway's `cost_usd`, LiteLLM's `response_cost`.
fn stated_cost(o: &Obj) -> Option<f64> {
    ["costUSD", "cost_usd", "response_cost"]
        .iter()
        .find_map(|k| o.get(k).and_then(raw_f64))
}

/// A value read as a number of dollars: a JSON number.
fn raw_f64(r: &RawValue) -> Option<f64> {
    serde_json::from_str::<Value>(r.get()).ok()?.as_f64()
}

/// Calls of one record, each with the id that merges its repeats.
type Many = Vec<(LoggedCall, Option<String>)>;

/// The readers of formats in their own files, tried in turn; `None` when none of them reads `o`.
fn many_calls(o: &Obj, at: &str, log: &mut UsageLog) -> Result<Option<Many>> {
    let origin = log.origin.clone();
    if let Some(c) = otel::read(o, at, &origin, log)? {
        return Ok(Some(c));
    }
    if let Some(c) = langfuse::read(o, at, &origin, log)? {
        return Ok(Some(c));
    }
    if let Some(c) = helicone::read(o, at, &origin)? {
        return Ok(Some(c));
    }
    if let Some(c) = gemini_cli::read(o, at, &origin, log)? {
        return Ok(Some(c));
    }
    opencode::read(o, at, &origin, log)
}

/// A token count given as a number or as a decimal string (OTLP JSON writes 64-bit integers as
/// strings).
fn count_value(v: &Value, origin: &str, field: String) -> Result<u64> {
    match v {
        Value::String(s) => match s.parse::<u64>() {
            Ok(n) => token_count(&Value::from(n), origin, field),
            Err(_) => token_count(v, origin, field),
        },
        _ => token_count(v, origin, field),
    }
}

fn push(mut call: LoggedCall, id: Option<String>, log: &mut UsageLog, state: &mut FileState) {
    call.response_id.clone_from(&id);
    // Claude Code writes one transcript line per content block, each repeating the response's
    // usage; the response is one call, its usage the last line's (final output count).
    if let Some(id) = id {
        if let Some(&i) = state.by_response.get(&id) {
            let first = &log.calls[i];
            let merged = LoggedCall {
                at: first.at.clone(),
                unix_time: first.unix_time.or(call.unix_time),
                ..call
            };
            log.calls[i] = merged;
            log.duplicates_merged += 1;
            return;
        }
        state.by_response.insert(id, log.calls.len());
    }
    if call.sidechain {
        log.sidechain_calls += 1;
    }
    log.calls.push(call);
}

type Found = Option<(LoggedCall, Option<String>)>;

fn read_record(o: &Obj, at: &str, log: &mut UsageLog, state: &mut FileState) -> Result<Found> {
    let origin = log.origin.clone();
    // Claude Code transcript line (or any wrapper with message.usage).
    if let Some(msg) = sub(o, "message") {
        if let Some(usage) = msg.get("usage").and_then(|r| as_map(r.get())) {
            let mut call = read_usage(&usage, at, &origin, "message.usage", log, Hint::Anthropic)?;
            call.format = "claude-code";
            call.model = string(&msg, "model");
            call.sidechain = boolean(o, "isSidechain") == Some(true);
            context(&mut call, &[o]);
            let id = string(&msg, "id").or_else(|| string(o, "requestId"));
            return Ok(Some((call, id)));
        }
        // A transcript's user turn; other records with a `message` (Cohere v2) go on below.
        if !o.contains_key("usage") && !o.contains_key("meta") {
            return Ok(None);
        }
    }
    // Claude Code progress line: a sub-agent's message relayed into the parent transcript.
    if string(o, "type").as_deref() == Some("progress") {
        return progress_line(o, at, &origin, log);
    }
    // Codex CLI rollout lines.
    if let (Some(kind), Some(payload)) = (string(o, "type"), sub(o, "payload")) {
        return codex_line(&kind, &payload, o, at, &origin, log, state);
    }
    // LiteLLM: the payload may be wrapped as `standard_logging_object`.
    if let Some(inner) = sub(o, "standard_logging_object") {
        return litellm_payload(&inner, at, &origin, log);
    }
    if o.contains_key("startTime")
        && (o.contains_key("prompt_tokens") || o.contains_key("call_type"))
    {
        return litellm_payload(o, at, &origin, log);
    }
    // Request/response log records: the response carries the usage, the wrapper the context.
    if let Some(resp) = sub(o, "response") {
        if resp.contains_key("usage") || resp.contains_key("usageMetadata") {
            return match response_record(&resp, at, &origin, log)? {
                Some((mut call, id)) => {
                    context(&mut call, &[o, &resp]);
                    Ok(Some((call, id)))
                }
                None => Ok(None),
            };
        }
    }
    // Bedrock model-invocation log record.
    if let (Some(input), Some(output)) = (sub(o, "input"), sub(o, "output")) {
        if input.contains_key("inputTokenCount") {
            let n = |m: &Obj, k: &str, f: &str| count_raw(m, k, &origin, &format!("{at}: {f}"));
            let mut call = LoggedCall::empty(at, "bedrock");
            let uncached = n(&input, "inputTokenCount", "input.inputTokenCount")?;
            let read = n(
                &input,
                "cacheReadInputTokenCount",
                "input.cacheReadInputTokenCount",
            )?;
            let write = n(
                &input,
                "cacheWriteInputTokenCount",
                "input.cacheWriteInputTokenCount",
            )?;
            let out = n(&output, "outputTokenCount", "output.outputTokenCount")?;
            call.set(uncached, write, 0, read, out);
            context(&mut call, &[o]);
            return Ok(Some((call, string(o, "requestId"))));
        }
    }
    if let Some(found) = response_record(o, at, &origin, log)? {
        return Ok(Some(found));
    }
    // A bare usage object.
    if [
        "input_tokens",
        "prompt_tokens",
        "promptTokenCount",
        "inputTokens",
    ]
    .iter()
    .any(|k| o.contains_key(k))
    {
        let map = as_map_obj(o);
        let mut call = read_usage(&map, at, &origin, "", log, Hint::None)?;
        context(&mut call, &[o]);
        return Ok(Some((call, None)));
    }
    Ok(None)
}

/// An API response (Anthropic, OpenAI, Gemini, Bedrock, Cohere) with its usage object.
fn response_record(o: &Obj, at: &str, origin: &str, log: &mut UsageLog) -> Result<Found> {
    if let Some(meta) = o.get("usageMetadata").and_then(|r| as_map(r.get())) {
        let mut call = read_usage(&meta, at, origin, "usageMetadata", log, Hint::Gemini)?;
        context(&mut call, &[o]);
        return Ok(Some((call, string(o, "responseId"))));
    }
    // Cohere v1 puts billed units under `meta`.
    if let Some(meta) = sub(o, "meta") {
        if meta.contains_key("billed_units") {
            let map = as_map_obj(&meta);
            let mut call = read_usage(&map, at, origin, "meta", log, Hint::Cohere)?;
            context(&mut call, &[o]);
            return Ok(Some((
                call,
                string(o, "response_id").or_else(|| string(o, "generation_id")),
            )));
        }
    }
    let Some(usage) = o.get("usage").and_then(|r| as_map(r.get())) else {
        return Ok(None);
    };
    let hint = match string(o, "type").as_deref() {
        Some("message") => Hint::Anthropic,
        _ if string(o, "object").as_deref() == Some("response") => Hint::OpenAiResponses,
        _ if o.contains_key("stopReason") || o.contains_key("metrics") => Hint::Bedrock,
        _ => Hint::None,
    };
    let mut call = read_usage(&usage, at, origin, "usage", log, hint)?;
    context(&mut call, &[o]);
    Ok(Some((call, string(o, "id"))))
}

/// The billed usage of one API response body (Anthropic Messages, OpenAI Chat Completions or
/// Responses, Gemini `usageMetadata`, ...), as a usage log reads it: what `explain` compares its
/// prediction with. `Ok(None)`: the body is JSON but has no usage object.
pub(crate) fn response_usage(body: &str, at: &str, origin: &str) -> Result<Option<LoggedCall>> {
    let Some(o) = obj(body) else {
        return Ok(None);
    };
    let mut scratch = UsageLog {
        origin: origin.to_string(),
        ..Default::default()
    };
    Ok(response_record(&o, at, origin, &mut scratch)?.map(|(call, _)| call))
}

fn as_map(text: &str) -> Option<Map<String, Value>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}

fn as_map_obj(o: &Obj) -> Map<String, Value> {
    o.iter()
        .filter_map(|(k, r)| {
            serde_json::from_str(r.get())
                .ok()
                .map(|v| (k.to_string(), v))
        })
        .collect()
}

fn count_raw(o: &Obj, key: &str, origin: &str, field: &str) -> Result<u64> {
    match value(o, key) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => token_count(&v, origin, field.to_string()),
    }
}

/// Largest token count accepted in one field of one logged call: above any context window, and small
/// enough that no sum over a log (at most [`crate::base::files::MAX_INPUT_BYTES`] of text, so a few
/// million calls) can overflow a `u64`.
pub(crate) const MAX_LOGGED_TOKENS: u64 = 1_000_000_000;

/// A logged token count: a whole number from 0 to [`MAX_LOGGED_TOKENS`].
fn token_count(v: &Value, origin: &str, field: String) -> Result<u64> {
    match v.as_u64() {
        Some(n) if n > MAX_LOGGED_TOKENS => Err(Error::invalid(
            origin,
            field,
            format!("value {n} is more than {MAX_LOGGED_TOKENS} tokens, beyond any context window"),
        )),
        Some(n) => Ok(n),
        None => Err(Error::invalid(
            origin,
            field,
            format!("value {v} is not a token count"),
        )),
    }
}

/// What the surrounding record says the usage object is.
#[derive(Clone, Copy, PartialEq)]
enum Hint {
    None,
    Anthropic,
    OpenAiResponses,
    Gemini,
    Bedrock,
    Cohere,
}

const ANTHROPIC_FIELDS: [&str; 8] = [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "service_tier",
    "server_tool_use",
    "output_tokens_details",
];
/// Fields only Anthropic's usage has: their presence settles the format.
const ANTHROPIC_ONLY: [&str; 4] = [
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "server_tool_use",
];
const OPENAI_CHAT_FIELDS: [&str; 11] = [
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
    // LiteLLM's normalised Anthropic usage keeps these beside the OpenAI fields.
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "cost",
];
const OPENAI_RESPONSES_FIELDS: [&str; 5] = [
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_details",
    "output_tokens_details",
];
const GEMINI_FIELDS: [&str; 10] = [
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "cachedContentTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
    "promptTokensDetails",
    "cacheTokensDetails",
    "candidatesTokensDetails",
    "toolUsePromptTokensDetails",
];
const BEDROCK_FIELDS: [&str; 6] = [
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
    "cacheDetails",
];
const COHERE_FIELDS: [&str; 4] = ["billed_units", "tokens", "cached_tokens", "api_version"];
/// Keys a bare usage record may carry besides the usage fields: the model and the record-level
/// context keys that `context` reads (kept in one list each, so the two cannot drift apart).
fn is_record_field(k: &str) -> bool {
    k == "model"
        || ["costUSD", "cost_usd", "response_cost"].contains(&k)
        || [&TIME_KEYS[..], &SESSION_KEYS, &AGENT_KEYS, &PROJECT_KEYS]
            .iter()
            .any(|keys| keys.contains(&k))
}

/// Bedrock Converse's `cacheDetails`: the cache writes by lifetime, `[{ "ttl": "1h",
/// "inputTokens": N }, { "ttl": "5m", ... }]` (docs.aws.amazon.com/bedrock prompt caching,
/// providers.md 1f). Returns the 1-hour writes, billed at the 1-hour rate; the rest of
/// `cacheWriteInputTokens` stays at the 5-minute rate. 1-hour writes above the total are refused.
fn bedrock_1h_writes(
    u: &Map<String, Value>,
    write: u64,
    origin: &str,
    path: &dyn Fn(&str) -> String,
) -> Result<u64> {
    let Some(details) = u.get("cacheDetails").filter(|v| !v.is_null()) else {
        return Ok(0);
    };
    let bad = |problem: String| Error::invalid(origin, path("cacheDetails"), problem);
    let list = details.as_array().ok_or_else(|| {
        bad(format!(
            "expected a list of {{ttl, inputTokens}}, found {details}"
        ))
    })?;
    let mut w1h = 0u64;
    for d in list {
        let ttl = d.get("ttl").and_then(Value::as_str);
        let n = match d.get("inputTokens") {
            None | Some(Value::Null) => 0,
            Some(v) => token_count(v, origin, path("cacheDetails.inputTokens"))?,
        };
        if ttl == Some("1h") {
            w1h += n;
        }
    }
    if w1h > write {
        return Err(bad(format!(
            "{w1h} one-hour cache writes but cacheWriteInputTokens is {write}"
        )));
    }
    Ok(w1h)
}

// Over 120 lines: the usage object of every provider's format, field by field, with the notes on
// unknown fields; the formats share most fields, so they are read together.
fn read_usage(
    u: &Map<String, Value>,
    at: &str,
    origin: &str,
    prefix: &str,
    log: &mut UsageLog,
    hint: Hint,
) -> Result<LoggedCall> {
    let path = |k: &str| {
        if prefix.is_empty() {
            format!("{at}: {k}")
        } else {
            format!("{at}: {prefix}.{k}")
        }
    };
    // The count `k` of `m`, the object at `within` ("" for the usage object itself): the field
    // named in an error is the key's full path, so it is derived from where the count is read.
    let count = |m: &Map<String, Value>, within: &str, k: &str| -> Result<u64> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(0),
            // A count within bounds needs no field name (formatted only for an error).
            Some(v) if v.as_u64().is_some_and(|n| n <= MAX_LOGGED_TOKENS) => {
                Ok(v.as_u64().unwrap_or_default())
            }
            Some(v) if within.is_empty() => token_count(v, origin, path(k)),
            Some(v) => token_count(v, origin, path(&format!("{within}.{k}"))),
        }
    };
    let mut note_unknown = |m: &Map<String, Value>, known: &[&str], within: &str| {
        for k in m.keys() {
            let known_here =
                known.contains(&k.as_str()) || (within.is_empty() && is_record_field(k));
            if !known_here {
                let name = if within.is_empty() {
                    k.clone()
                } else {
                    format!("{within}.{k}")
                };
                *log.unknown_fields.entry(name).or_default() += 1;
            }
        }
    };
    let mut call = LoggedCall::empty(at, "anthropic");
    let details = |k: &str| u.get(k).and_then(Value::as_object);
    let anthropic_only = ANTHROPIC_ONLY.iter().any(|k| u.contains_key(*k));
    if hint == Hint::Gemini || u.contains_key("promptTokenCount") {
        call.format = "gemini";
        note_unknown(u, &GEMINI_FIELDS, "");
        // promptTokenCount includes the cached tokens; tool-use prompt tokens are input too.
        let prompt = count(u, "", "promptTokenCount")? + count(u, "", "toolUsePromptTokenCount")?;
        let read = count(u, "", "cachedContentTokenCount")?;
        if read > prompt {
            return Err(Error::invalid(
                origin,
                path("cachedContentTokenCount"),
                format!("{read} cached tokens but only {prompt} prompt tokens"),
            ));
        }
        let output = count(u, "", "candidatesTokenCount")? + count(u, "", "thoughtsTokenCount")?;
        call.set(prompt - read, 0, 0, read, output);
    } else if hint == Hint::Bedrock || u.contains_key("inputTokens") {
        call.format = "bedrock";
        note_unknown(u, &BEDROCK_FIELDS, "");
        // Converse counts cache reads and writes beside inputTokens, as Anthropic does.
        let uncached = count(u, "", "inputTokens")?;
        let read = count(u, "", "cacheReadInputTokens")?;
        let write = count(u, "", "cacheWriteInputTokens")?;
        let w1h = bedrock_1h_writes(u, write, origin, &path)?;
        call.set(
            uncached,
            write - w1h,
            w1h,
            read,
            count(u, "", "outputTokens")?,
        );
    } else if hint == Hint::Cohere || u.contains_key("billed_units") {
        call.format = "cohere";
        note_unknown(u, &COHERE_FIELDS, "");
        let billed = details("billed_units").ok_or_else(|| {
            Error::invalid(
                origin,
                path("billed_units"),
                "must be an object of token counts",
            )
        })?;
        note_unknown(
            billed,
            &[
                "input_tokens",
                "output_tokens",
                "search_units",
                "classifications",
                "images",
            ],
            "billed_units",
        );
        let input = count(billed, "billed_units", "input_tokens")?;
        let read = count(u, "", "cached_tokens")?.min(input);
        let output = count(billed, "billed_units", "output_tokens")?;
        call.set(input - read, 0, 0, read, output);
    } else if u.contains_key("prompt_tokens") {
        call.format = "openai-chat";
        note_unknown(u, &OPENAI_CHAT_FIELDS, "");
        let prompt = count(u, "", "prompt_tokens")?;
        let mut read = count(u, "", "prompt_cache_hit_tokens")?;
        // LiteLLM's normalised Anthropic usage: prompt_tokens counts the writes and the reads, which
        // are also given as cache_creation_input_tokens / cache_read_input_tokens.
        let mut write = count(u, "", "cache_creation_input_tokens")?;
        read = read.max(count(u, "", "cache_read_input_tokens")?);
        let mut split: Option<(u64, u64)> = None;
        if let Some(d) = details("prompt_tokens_details") {
            note_unknown(
                d,
                &[
                    "cached_tokens",
                    "cache_write_tokens",
                    "cache_creation_tokens",
                    "cache_creation_token_details",
                    "audio_tokens",
                    "text_tokens",
                    "image_tokens",
                ],
                "prompt_tokens_details",
            );
            read = read.max(count(d, "prompt_tokens_details", "cached_tokens")?);
            write = write
                .max(count(d, "prompt_tokens_details", "cache_write_tokens")?)
                .max(count(d, "prompt_tokens_details", "cache_creation_tokens")?);
            if let Some(cd) = d
                .get("cache_creation_token_details")
                .and_then(Value::as_object)
            {
                let a = count(
                    cd,
                    "prompt_tokens_details.cache_creation_token_details",
                    "ephemeral_5m_input_tokens",
                )?;
                let b = count(
                    cd,
                    "prompt_tokens_details.cache_creation_token_details",
                    "ephemeral_1h_input_tokens",
                )?;
                if a + b > 0 {
                    split = Some((a, b));
                }
            }
        }
        if let Some(d) = details("completion_tokens_details") {
            note_unknown(
                d,
                &[
                    "reasoning_tokens",
                    "audio_tokens",
                    "accepted_prediction_tokens",
                    "rejected_prediction_tokens",
                    "text_tokens",
                ],
                "completion_tokens_details",
            );
        }
        if read + write > prompt {
            return Err(Error::invalid(
                origin,
                path("prompt_tokens"),
                format!("{prompt} prompt tokens but {read} cached and {write} written"),
            ));
        }
        let (w5, w1h) = match split {
            Some((a, b)) if a + b == write => (a, b),
            _ => (write, 0),
        };
        call.set(
            prompt - read - write,
            w5,
            w1h,
            read,
            count(u, "", "completion_tokens")?,
        );
    } else if hint == Hint::OpenAiResponses
        || (hint != Hint::Anthropic
            && !anthropic_only
            && (u.contains_key("input_tokens_details") || u.contains_key("output_tokens_details")))
    {
        call.format = "openai-responses";
        note_unknown(u, &OPENAI_RESPONSES_FIELDS, "");
        let prompt = count(u, "", "input_tokens")?;
        let (mut read, mut write) = (0, 0);
        if let Some(d) = details("input_tokens_details") {
            note_unknown(
                d,
                &["cached_tokens", "cache_write_tokens"],
                "input_tokens_details",
            );
            read = count(d, "input_tokens_details", "cached_tokens")?;
            write = count(d, "input_tokens_details", "cache_write_tokens")?;
        }
        if let Some(d) = details("output_tokens_details") {
            note_unknown(d, &["reasoning_tokens"], "output_tokens_details");
        }
        if read + write > prompt {
            return Err(Error::invalid(
                origin,
                path("input_tokens"),
                format!("{prompt} input tokens but {read} cached and {write} written"),
            ));
        }
        call.set(
            prompt - read - write,
            write,
            0,
            read,
            count(u, "", "output_tokens")?,
        );
    } else if u.contains_key("input_tokens") {
        note_unknown(u, &ANTHROPIC_FIELDS, "");
        let uncached = count(u, "", "input_tokens")?;
        let written = count(u, "", "cache_creation_input_tokens")?;
        let read = count(u, "", "cache_read_input_tokens")?;
        let (mut w5, mut w1h) = (written, 0);
        if let Some(cc) = details("cache_creation") {
            note_unknown(
                cc,
                &["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"],
                "cache_creation",
            );
            let a = count(cc, "cache_creation", "ephemeral_5m_input_tokens")?;
            let b = count(cc, "cache_creation", "ephemeral_1h_input_tokens")?;
            if a + b != written {
                return Err(Error::invalid(
                    origin,
                    path("cache_creation"),
                    format!("the 5m and 1h writes ({a} + {b}) do not add up to cache_creation_input_tokens ({written})"),
                ));
            }
            (w5, w1h) = (a, b);
        }
        call.set(uncached, w5, w1h, read, count(u, "", "output_tokens")?);
    } else {
        return Err(Error::invalid(
            origin,
            path("input_tokens"),
            "a usage object needs input_tokens (Anthropic, OpenAI Responses), prompt_tokens (OpenAI Chat), promptTokenCount (Gemini), inputTokens (Bedrock) or billed_units (Cohere)",
        ));
    }
    Ok(call)
}

/// Unix seconds from a number (seconds, or milliseconds when very large) or an RFC 3339 string.
pub(crate) fn parse_time(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().map(|x| if x > 1e11 { x / 1000.0 } else { x }),
        Value::String(s) => parse_rfc3339(s).or_else(|| s.parse::<f64>().ok()),
        _ => None,
    }
}

pub(crate) use crate::base::date::{parse_rfc3339, utc_date};

#[cfg(test)]
mod tests;
