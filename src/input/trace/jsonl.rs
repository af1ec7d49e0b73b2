//! pcsim's own trace format: JSON Lines, one record per call,
//! `{"time": ..., "session": ..., "url": ..., "request": {...}, "response": {...}}`
//! (docs/explain.md). `time` is RFC 3339 or Unix seconds; `session` and `url` are optional.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{parse_line, read_lines, SkippedRecord, TraceFormat, TraceItem, TraceRecord};
use crate::input::usagelog::parse_time;

/// pcsim's JSON Lines trace (what `pcsim run --trace-out` writes).
#[derive(Debug, Clone, Copy)]
pub struct PcsimJsonl;

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    time: Option<Value>,
    #[serde(default)]
    session: Option<Value>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    request: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
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
        sink: &mut dyn FnMut(TraceItem),
    ) -> std::io::Result<u64> {
        read_lines(input, origin, sink, record)
    }
}

/// One line as a record, or the reason it is skipped.
fn record(line: &[u8], at: String, bytes: u64) -> TraceItem {
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
    let Some(request) = parsed.request.filter(Value::is_object) else {
        return skip("no `request` object".into());
    };
    let Some(response) = parsed.response.filter(Value::is_object) else {
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
        url: parsed.url,
        request,
        response,
        bytes,
    }))
}
