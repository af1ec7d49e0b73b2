//! claude-tap's JSON Lines trace (github.com/liaohch3/claude-tap): one record per call,
//! `{"timestamp", "request_id", "turn", "request": {"method", "path", "headers", "body"},
//! "response": {"status", "headers", "body", "sse_events"?}, "upstream_base_url"?}`.
//!
//! A streamed response's `body` is claude-tap's reassembly; when that is missing or is the raw
//! stream text, the response is reassembled here from `sse_events` (`{event, data}`), `ws_events`
//! (WebSocket transport, each event with its `type`) or the text itself.

use std::io::BufRead;

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::sse::{events_of_list, events_of_text, looks_like_sse, reassemble};
use super::{parse_line, read_lines, SkippedRecord, TraceFormat, TraceItem, TraceRecord};
use crate::input::usagelog::parse_time;

/// claude-tap's JSON Lines trace.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeTap;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    timestamp: Option<Value>,
    #[serde(default)]
    session_id: Option<Value>,
    #[serde(default)]
    upstream_base_url: Option<String>,
    #[serde(default, borrow)]
    request: Option<Half<'a>>,
    #[serde(default, borrow)]
    response: Option<Half<'a>>,
}

/// A request or response as claude-tap records it, its body left as the text it is.
#[derive(Deserialize)]
struct Half<'a> {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    status: Option<u64>,
    #[serde(default, borrow)]
    body: Option<&'a RawValue>,
    #[serde(default)]
    sse_events: Option<Vec<Value>>,
    #[serde(default)]
    ws_events: Option<Vec<Value>>,
}

impl TraceFormat for ClaudeTap {
    fn name(&self) -> &'static str {
        "claude-tap"
    }

    /// A JSON object whose `request` is an HTTP exchange (`method`, `path`, `headers` or `body`
    /// first) rather than an API body: found in the first record's text, which may be cut off by
    /// the 64 KiB head.
    fn sniff(&self, head: &[u8]) -> bool {
        let start = head.iter().position(|b| !b.is_ascii_whitespace());
        if start.is_none_or(|i| head[i] != b'{') {
            return false;
        }
        let first_line = head.split(|b| *b == b'\n').next().unwrap_or(head);
        let Some(at) = find(first_line, b"\"request\"") else {
            return false;
        };
        let rest = &first_line[at + 9..];
        let mut rest = rest.iter().skip_while(|b| b.is_ascii_whitespace());
        if rest.next() != Some(&b':') {
            return false;
        }
        let rest: Vec<u8> = rest
            .skip_while(|b| b.is_ascii_whitespace())
            .take(12)
            .copied()
            .collect();
        let Some(inner) = rest.strip_prefix(b"{") else {
            return false;
        };
        let inner: Vec<u8> = inner
            .iter()
            .skip_while(|b| b.is_ascii_whitespace())
            .copied()
            .collect();
        [&b"\"method\""[..], b"\"path\"", b"\"headers\"", b"\"body\""]
            .iter()
            .any(|k| inner.starts_with(k))
    }

    fn read(
        &self,
        input: &mut dyn BufRead,
        origin: &str,
        sink: &mut dyn FnMut(TraceItem<'_>),
    ) -> std::io::Result<u64> {
        read_lines(input, origin, sink, record)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One line as a record, or the reason it is skipped.
fn record(line: &[u8], at: String, bytes: u64) -> TraceItem<'_> {
    let skip = |reason: String| {
        TraceItem::Skipped(SkippedRecord {
            at: at.clone(),
            reason,
        })
    };
    let parsed: Line = match parse_line(line, "not a claude-tap record") {
        Ok(l) => l,
        Err(reason) => return skip(reason),
    };
    let (Some(req), Some(resp)) = (parsed.request, parsed.response) else {
        return skip("no `request` or no `response`".into());
    };
    if let Some(status) = resp.status.filter(|s| *s >= 400) {
        return skip(format!("HTTP {status} response: no usage billed"));
    }
    let Some(request) = req.body.map(RawValue::get).filter(|t| t.starts_with('{')) else {
        return skip("no `request.body` object".into());
    };
    // The response as recorded when it is a body with its usage (its text, as it is), else
    // reassembled from the stream.
    let recorded = resp.body.map(RawValue::get);
    let response = match recorded.map(|t| (t, serde_json::from_str::<Value>(t))) {
        Some((text, Ok(v @ Value::Object(_)))) if has_usage(&v) => Some(Cow::Borrowed(text)),
        Some((_, Ok(Value::String(s)))) if looks_like_sse(&s) => {
            reassemble(&events_of_text(&s)).map(|v| Cow::Owned(v.to_string()))
        }
        _ => None,
    }
    .or_else(|| {
        // A WebSocket record can hold several turns' responses with the last turn's request
        // body; the last response is the one that goes with it (as claude-tap pairs them).
        let events = resp.sse_events.as_deref().or(resp.ws_events.as_deref())?;
        reassemble(&events_of_list(events)).map(|v| Cow::Owned(v.to_string()))
    });
    let Some(response) = response else {
        return skip(
            "missing usage: neither `response.body` nor its stream events carry a usage".into(),
        );
    };
    let url = match (parsed.upstream_base_url, req.path) {
        (Some(base), Some(path)) if !base.ends_with(path.split('?').next().unwrap_or("")) => {
            Some(format!("{}{path}", base.trim_end_matches('/')))
        }
        (_, Some(path)) => Some(path),
        (base, None) => base,
    };
    let session = match parsed.session_id {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    TraceItem::Record(Box::new(TraceRecord {
        at,
        time: parsed.timestamp.as_ref().and_then(parse_time),
        session_from_body: session.is_none(),
        session,
        url,
        request: Cow::Borrowed(request),
        response,
        bytes,
    }))
}

fn has_usage(v: &Value) -> bool {
    v.get("usage").is_some_and(|u| !u.is_null()) || v.get("usageMetadata").is_some()
}
