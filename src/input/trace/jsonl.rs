//! pcsim's own trace format: JSON Lines, one record per call,
//! `{"time": ..., "session": ..., "url": ..., "request": {...}, "response": {...}}`
//! (docs/explain.md). `time` is RFC 3339 or Unix seconds; `session` and `url` are optional.

use std::io::BufRead;

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{parse_line, read_lines, SkippedRecord, TraceFormat, TraceItem, TraceRecord};
use crate::input::usagelog::parse_time;

/// pcsim's JSON Lines trace (what `pcsim run --trace-out` writes).
#[derive(Debug, Clone, Copy)]
pub struct PcsimJsonl;

/// A line, its bodies left as the text they are (checked as JSON, not built into trees).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    time: Option<Value>,
    #[serde(default)]
    session: Option<Value>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, borrow)]
    request: Option<&'a RawValue>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
}

/// The text of a body that is a JSON object.
fn object(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get).filter(|t| t.starts_with('{'))
}

impl TraceFormat for PcsimJsonl {
    fn name(&self) -> &'static str {
        "pcsim-jsonl"
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let start = head.iter().position(|b| !b.is_ascii_whitespace());
        start.is_some_and(|i| head[i] == b'{')
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

/// One line as a record, or the reason it is skipped.
fn record(line: &[u8], at: String, bytes: u64) -> TraceItem<'_> {
    let skip = |reason: String| {
        TraceItem::Skipped(SkippedRecord {
            at: at.clone(),
            reason,
        })
    };
    let parsed: Line = match parse_line(line, "not valid JSON") {
        Ok(l) => l,
        Err(reason) => return skip(reason),
    };
    let Some(request) = object(parsed.request) else {
        return skip("no `request` object".into());
    };
    let Some(response) = object(parsed.response) else {
        return skip("no `response` object".into());
    };
    let session = match parsed.session {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    TraceItem::Record(Box::new(TraceRecord {
        at,
        time: parsed.time.as_ref().and_then(parse_time),
        session,
        session_from_body: false,
        url: parsed.url,
        request: Cow::Borrowed(request),
        response: Cow::Borrowed(response),
        bytes,
    }))
}
