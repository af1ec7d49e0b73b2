//! HAR 1.2 (HTTP Archive: browser devtools, mitmproxy, Charles, proxies): `log.entries[]`, each a
//! request (`method`, `url`, `postData.text`) and its response (`status`, `content.text`, maybe
//! base64 with `content.encoding`), started at `startedDateTime`.
//!
//! The entries array is streamed with serde_json's deserializer: one entry is in memory at a time
//! (a 100 MB body is one entry's worth), never the archive. An entry that is not a POST to an API
//! `explain` knows, has no body, or whose body is cut off or binary is skipped with its reason.
//! Streamed responses (`text/event-stream`) are reassembled into the final body (`sse.rs`).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::io::{BufRead, Read};

use base64::Engine as _;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::exchange::known_endpoint;
use super::sse::{events_of_text, looks_like_sse, reassemble};
use super::{SkippedRecord, TraceFormat, TraceItem, TraceRecord};
use crate::input::usagelog::parse_time;

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
        let bytes = Cell::new(0u64);
        let reader = Counting {
            inner: input,
            bytes: &bytes,
        };
        let mut state = Entries {
            origin,
            sink,
            bytes: &bytes,
            done_at: 0,
            index: 0,
        };
        let mut de = serde_json::Deserializer::from_reader(reader);
        let result = (&mut de).deserialize_map(Archive(&mut state));
        match result {
            Ok(()) => Ok(bytes.get()),
            Err(e) if e.is_io() => Err(std::io::Error::other(e.to_string())),
            Err(e) => {
                let reason = if e.is_eof() {
                    format!(
                        "truncated JSON (the archive ends inside entry {}: {e})",
                        state.index + 1
                    )
                } else {
                    format!(
                        "not valid JSON (entry {}: {e}); the rest of the archive is not read",
                        state.index + 1
                    )
                };
                (state.sink)(TraceItem::Skipped(SkippedRecord {
                    at: format!("{origin}: entry {}", state.index + 1),
                    reason,
                }));
                Ok(bytes.get())
            }
        }
    }
}

/// A reader that counts the bytes it hands on (serde_json reads a byte at a time).
struct Counting<'a> {
    inner: &'a mut dyn BufRead,
    bytes: &'a Cell<u64>,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }
}

/// Where the entries go while the archive is streamed.
struct Entries<'a, 'b> {
    origin: &'a str,
    sink: &'b mut dyn FnMut(TraceItem<'_>),
    bytes: &'a Cell<u64>,
    /// Bytes read when the previous entry ended.
    done_at: u64,
    /// Entries seen so far.
    index: usize,
}

/// The top-level object: `log` is read, every other key ignored.
struct Archive<'s, 'a, 'b>(&'s mut Entries<'a, 'b>);
/// The `log` object: `entries` is read, every other key ignored.
struct Log<'s, 'a, 'b>(&'s mut Entries<'a, 'b>);
/// The `entries` array, one entry at a time.
struct EntryList<'s, 'a, 'b>(&'s mut Entries<'a, 'b>);

impl<'de> Visitor<'de> for Archive<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR object {\"log\": {...}}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "log" {
                map.next_value_seed(Log(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Log<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Log<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the HAR `log` object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "entries" {
                map.next_value_seed(EntryList(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for EntryList<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EntryList<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the HAR `log.entries` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let s = self.0;
        while let Some(entry) = seq.next_element::<Value>()? {
            s.index += 1;
            let now = s.bytes.get();
            let bytes = now - s.done_at;
            s.done_at = now;
            let at = format!("{}: entry {}", s.origin, s.index);
            (s.sink)(record(entry, at, bytes));
        }
        Ok(())
    }
}

/// One entry as a record, or the reason it is skipped.
fn record(mut entry: Value, at: String, bytes: u64) -> TraceItem<'static> {
    let skip = |reason: String| {
        TraceItem::Skipped(SkippedRecord {
            at: at.clone(),
            reason,
        })
    };
    let req = &entry["request"];
    let method = req["method"].as_str().unwrap_or("");
    let url = req["url"].as_str().unwrap_or("").to_string();
    if !method.eq_ignore_ascii_case("POST") {
        return skip(format!("not an API call: {method} {}", short(&url)));
    }
    if !known_endpoint(&url) {
        return skip(format!("unknown endpoint `{}`", short(&url)));
    }
    let status = entry["response"]["status"].as_u64().unwrap_or(0);
    if status >= 400 {
        return skip(format!("HTTP {status} response: no usage billed"));
    }
    let time = parse_time(&entry["startedDateTime"]);
    let request_text = match body_text(&mut entry["request"]["postData"]) {
        Ok(t) => t,
        Err(why) => return skip(format!("request body: {why}")),
    };
    // The request is checked as JSON here (the reason names the body) and read into its regions
    // once, by `exchange_of`.
    if let Err(why) = check_body(&request_text, false) {
        return skip(format!("{why} in the request body"));
    }
    let content = &mut entry["response"]["content"];
    let mime = content["mimeType"].as_str().unwrap_or("").to_string();
    let response_text = match body_text(content) {
        Ok(t) => t,
        Err(why) => return skip(format!("response body: {why}")),
    };
    let response = if mime.starts_with("text/event-stream") || looks_like_sse(&response_text) {
        match reassemble(&events_of_text(&response_text)) {
            Some(v) => v.to_string(),
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
            Some(v) => v.to_string(),
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
        request: Cow::Owned(request_text),
        response: Cow::Owned(response),
        bytes,
    }))
}

fn short(s: &str) -> String {
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// The text of a `postData` or `content` object, base64-decoded when its `encoding` says so.
fn body_text(holder: &mut Value) -> Result<String, String> {
    let encoding = holder["encoding"].as_str().unwrap_or("").to_string();
    let Some(Value::String(text)) = holder.get_mut("text") else {
        return Err("none recorded (the archive was saved without content)".into());
    };
    let text = std::mem::take(text);
    if !encoding.eq_ignore_ascii_case("base64") {
        return Ok(text);
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("bad base64: {e}"))?;
    String::from_utf8(raw).map_err(|_| "binary body: not UTF-8 text".to_string())
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
