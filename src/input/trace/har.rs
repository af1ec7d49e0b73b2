//! HAR 1.2 (HTTP Archive: browser devtools, mitmproxy, Charles, proxies): `log.entries[]`, each a
//! request (`method`, `url`, `postData.text`) and its response (`status`, `content.text`, maybe
//! base64 with `content.encoding`), started at `startedDateTime`.
//!
//! The archive is read in large chunks by an entry scanner (`har_scan.rs`) that cuts each of
//! `log.entries[]` out by its brackets, and each entry is parsed on its own into the tree the JSON
//! Lines formats use (`json.rs`: strings borrowed from the entry's text where they have no escapes):
//! one entry is in memory at a time (a 100 MB body is one entry's worth), never the archive, and
//! an entry longer than [`MAX_HAR_ENTRY_BYTES`] is passed over without being held. An entry that is
//! not a POST to an API `explain` knows, has no body, whose body is cut off or binary, or that is
//! not valid JSON itself, is skipped with its reason; the entries after it are read.
//! Streamed responses (`text/event-stream`) are reassembled into the final body (`sse.rs`).

use std::borrow::Cow;
use std::io::BufRead;

use base64::Engine as _;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::exchange::known_endpoint;
use super::har_scan::{EntryScanner, Scan};
use super::json::Json;
use super::sse::{events_of_text, looks_like_sse, reassemble};
use super::{SkippedRecord, TraceFormat, TraceItem, TraceRecord};
use crate::base::files::MAX_INPUT_BYTES;
use crate::input::usagelog::parse_time;

/// Longest HAR entry read, in bytes: four times the input-file limit ([`MAX_INPUT_BYTES`]), so that
/// a request body of 100 MB and more, escaped as a JSON string in `postData.text`, still fits. A
/// longer entry is passed over (never held) and skipped with its length and this limit.
pub(crate) const MAX_HAR_ENTRY_BYTES: u64 = 4 * MAX_INPUT_BYTES;

/// HAR 1.2 archives (`.har`, or any file whose first key is `log`).
#[derive(Debug, Clone, Copy)]
pub struct Har;

impl TraceFormat for Har {
    fn name(&self) -> &'static str {
        "har"
    }

    /// A JSON object whose first key is `log`.
    fn sniff(&self, head: &[u8]) -> bool {
        let mut rest = head.iter().skip_while(|b| b.is_ascii_whitespace());
        if rest.next() != Some(&b'{') {
            return false;
        }
        let after: Vec<u8> = rest
            .skip_while(|b| b.is_ascii_whitespace())
            .take(5)
            .copied()
            .collect();
        after == b"\"log\""
    }

    fn read(
        &self,
        input: &mut dyn BufRead,
        origin: &str,
        sink: &mut dyn FnMut(TraceItem<'_>),
    ) -> std::io::Result<u64> {
        read_entries(input, origin, sink, MAX_HAR_ENTRY_BYTES as usize)
    }
}

/// Reads the entries of the archive `input` (named `origin`) into `sink`, each of at most `limit`
/// bytes; returns the bytes read (up to the archive's closing brace).
pub(super) fn read_entries(
    input: &mut dyn BufRead,
    origin: &str,
    sink: &mut dyn FnMut(TraceItem<'_>),
    limit: usize,
) -> std::io::Result<u64> {
    let mut scanner = EntryScanner::new(limit);
    loop {
        let scan = scanner.next(input)?;
        let n = scanner.index();
        let skip = |at: String, reason: String| TraceItem::Skipped(SkippedRecord { at, reason });
        let entry_at = || format!("{origin}: entry {n}");
        match scan {
            Scan::Entry => {
                let at = entry_at();
                let item = match serde_json::from_slice::<Json>(scanner.entry()) {
                    Ok(entry) => record(entry, at, scanner.entry_bytes()),
                    Err(e) => skip(at, format!("not valid JSON (entry {n}: {e})")),
                };
                sink(item);
            }
            Scan::TooLong { len } => sink(skip(
                entry_at(),
                format!(
                    "entry too long ({len} bytes, more than the {limit}-byte limit of a HAR entry)"
                ),
            )),
            Scan::EndsInsideEntry { len } => {
                sink(skip(
                    entry_at(),
                    format!(
                        "truncated JSON (the archive ends inside entry {n}, {len} bytes after its start at byte {})",
                        scanner.entry_start()
                    ),
                ));
                return Ok(scanner.offset());
            }
            Scan::EndsEarly => {
                sink(skip(
                    format!("{origin}: end"),
                    format!(
                        "truncated JSON (the archive ends at byte {}, after {n} entries, before its closing brackets)",
                        scanner.offset()
                    ),
                ));
                return Ok(scanner.offset());
            }
            Scan::Bad(why) => {
                sink(skip(
                    format!("{origin}: entry {}", n + 1),
                    format!(
                        "not valid JSON (entry {}: {why}); the rest of the archive is not read",
                        n + 1
                    ),
                ));
                return Ok(scanner.offset());
            }
            Scan::End => return Ok(scanner.offset()),
        }
    }
}

/// One entry as a record, or the reason it is skipped. The bodies are the entry's strings, taken
/// from its tree (no copy).
fn record(mut entry: Json<'_>, at: String, bytes: u64) -> TraceItem<'_> {
    let skip = |reason: String| {
        TraceItem::Skipped(SkippedRecord {
            at: at.clone(),
            reason,
        })
    };
    let req = entry.get("request");
    let method = field(req, "method").unwrap_or("");
    let url = field(req, "url").unwrap_or("").to_string();
    if !method.eq_ignore_ascii_case("POST") {
        return skip(format!("not an API call: {method} {}", short(&url)));
    }
    if !known_endpoint(&url) {
        return skip(format!("unknown endpoint `{}`", short(&url)));
    }
    let status = match entry.get("response").and_then(|r| r.get("status")) {
        Some(Json::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    if status >= 400 {
        return skip(format!("HTTP {status} response: no usage billed"));
    }
    let time = entry
        .get("startedDateTime")
        .map(Json::to_value)
        .as_ref()
        .and_then(parse_time);
    let post_data = entry.get_mut("request").and_then(|r| r.get_mut("postData"));
    let request_text = match body_text(post_data) {
        Ok(t) => t,
        Err(why) => return skip(format!("request body: {why}")),
    };
    // The request is checked as JSON here (the reason names the body) and read into its regions
    // once, by `exchange_of`.
    if let Err(why) = check_body(&request_text, false) {
        return skip(format!("{why} in the request body"));
    }
    let content = entry.get_mut("response").and_then(|r| r.get_mut("content"));
    let mime = field(content.as_deref(), "mimeType")
        .unwrap_or("")
        .to_string();
    let response_text = match body_text(content) {
        Ok(t) => t,
        Err(why) => return skip(format!("response body: {why}")),
    };
    let response = if mime.starts_with("text/event-stream") || looks_like_sse(&response_text) {
        match reassemble(&events_of_text(&response_text)) {
            Some(v) => Cow::Owned(v.to_string()),
            None => return skip("missing usage: no event of the stream carries a usage".into()),
        }
    } else if response_text.trim_start().starts_with('[') {
        // Gemini `streamGenerateContent` without `alt=sse`: a JSON array of the chunks.
        let chunks = match serde_json::from_str::<Vec<Value>>(&response_text) {
            Ok(c) => c,
            Err(e) if e.is_eof() => {
                return skip(format!(
                    "truncated JSON (the body ends early: {e}) in the response body"
                ))
            }
            Err(e) => return skip(format!("not valid JSON ({e}) in the response body")),
        };
        let events: Vec<(String, Value)> = chunks
            .into_iter()
            .map(|c| ("message".to_string(), c))
            .collect();
        match reassemble(&events) {
            Some(v) => Cow::Owned(v.to_string()),
            None => return skip("missing usage: no chunk of the stream carries a usage".into()),
        }
    } else {
        match check_body(&response_text, true) {
            Ok(()) => response_text,
            Err(why) => return skip(format!("{why} in the response body")),
        }
    };
    TraceItem::Record(Box::new(TraceRecord {
        at,
        time,
        session: None,
        session_from_body: true,
        url: Some(url),
        request: request_text,
        response,
        bytes,
    }))
}

/// The string at `key` of `v`, when `v` is an object that has one.
fn field<'v>(v: Option<&'v Json<'_>>, key: &str) -> Option<&'v str> {
    v.and_then(|v| v.get(key)).and_then(Json::as_str)
}

fn short(s: &str) -> String {
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// The text of a `postData` or `content` object, taken out of the entry's tree, base64-decoded
/// when its `encoding` says so.
fn body_text<'a>(holder: Option<&mut Json<'a>>) -> Result<Cow<'a, str>, String> {
    let none = || "none recorded (the archive was saved without content)".to_string();
    let Some(holder) = holder else {
        return Err(none());
    };
    let base64 = holder
        .get("encoding")
        .and_then(Json::as_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("base64"));
    let Some(Json::Str(text)) = holder.get_mut("text") else {
        return Err(none());
    };
    let text = std::mem::take(text);
    if !base64 {
        return Ok(text);
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("bad base64: {e}"))?;
    String::from_utf8(raw)
        .map(Cow::Owned)
        .map_err(|_| "binary body: not UTF-8 text".to_string())
}

/// Whether a body is a JSON object, or why not. The request is checked (`IgnoredAny`: its syntax,
/// no tree; `exchange_of` reads it, and names the body in a reason it finds); a response is parsed.
fn check_body(text: &str, parse: bool) -> Result<(), String> {
    let checked = if parse {
        serde_json::from_str::<Value>(text).map(|v| v.is_object())
    } else {
        serde_json::from_str::<IgnoredAny>(text).map(|_| text.trim_start().starts_with('{'))
    };
    match checked {
        Ok(true) => Ok(()),
        Ok(false) => Err("not a JSON object".into()),
        Err(e) if e.is_eof() => Err(format!("truncated JSON (the body ends early: {e})")),
        Err(e) => Err(format!("not valid JSON ({e})")),
    }
}
