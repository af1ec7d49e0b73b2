//! Streamed responses reassembled into the body a non-streamed call would have returned, as far
//! as `explain` needs it: the model and the final usage.
//!
//! - Anthropic Messages: `message_start` carries the message (with the input side of the usage),
//!   each `message_delta` the usage so far; the later figures win.
//! - OpenAI Chat Completions: the chunk with a non-null `usage` (the last one, with
//!   `stream_options.include_usage`).
//! - OpenAI Responses: `response.completed` (or `.done`, `.incomplete`, `.failed`) carries the
//!   whole response.
//! - Gemini `streamGenerateContent`: the last chunk with `usageMetadata`.
//!
//! The tool calls of the answer are kept too (`explain`'s `drop_unused_tools` needs the tools a
//! conversation calls): Anthropic `content_block_start` blocks of a tool call join the message's
//! `content`, OpenAI Chat `delta.tool_calls` with a function name join `choices[0].message`.

use serde_json::{Map, Value};

/// Whether a body looks like a Server-Sent Events stream (`event:` or `data:` lines).
pub(crate) fn looks_like_sse(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("event:") || t.starts_with("data:") || t.starts_with(':')
}

/// The events of an SSE text as (event name, JSON data); a frame without `event:` is `message`,
/// `[DONE]` and data that is not JSON are dropped.
pub(crate) fn events_of_text(text: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut event: Option<String> = None;
    let mut data = String::new();
    let mut flush = |event: &mut Option<String>, data: &mut String| {
        if !data.is_empty() && data != "[DONE]" {
            if let Ok(v) = serde_json::from_str::<Value>(data) {
                out.push((event.take().unwrap_or_else(|| "message".into()), v));
            }
        }
        *event = None;
        data.clear();
    };
    for line in text.lines().chain(std::iter::once("")) {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            flush(&mut event, &mut data);
        } else if let Some(e) = line.strip_prefix("event:") {
            event = Some(e.trim().to_string());
        } else if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    out
}

/// A recorded event list (claude-tap's `sse_events` `{event, data}` or `ws_events` with a
/// `type`) as (event name, data).
pub(crate) fn events_of_list(list: &[Value]) -> Vec<(String, Value)> {
    list.iter()
        .filter_map(|e| {
            if let (Some(name), Some(data)) =
                (e.get("event").and_then(Value::as_str), e.get("data"))
            {
                let data = match data {
                    Value::String(s) => serde_json::from_str(s).ok()?,
                    other => other.clone(),
                };
                return Some((name.to_string(), data));
            }
            let name = e.get("type").and_then(Value::as_str).unwrap_or("message");
            Some((name.to_string(), e.clone()))
        })
        .collect()
}

/// The response body the events add up to, or `None` when no event carries a usage.
pub(crate) fn reassemble(events: &[(String, Value)]) -> Option<Value> {
    let mut anthropic: Option<Map<String, Value>> = None;
    let mut last_with_usage: Option<&Value> = None;
    let mut responses: Option<&Value> = None;
    let mut blocks: Vec<Value> = Vec::new();
    let mut chat_calls: Vec<Value> = Vec::new();
    for (name, data) in events {
        let ty = data.get("type").and_then(Value::as_str).unwrap_or(name);
        for c in data
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for call in c
                .get("delta")
                .and_then(|d| d.get("tool_calls"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if call.get("function").and_then(|f| f.get("name")).is_some() {
                    chat_calls.push(call.clone());
                }
            }
        }
        match ty {
            "content_block_start" => {
                if let Some(b) = data.get("content_block").filter(|b| {
                    matches!(
                        b.get("type").and_then(Value::as_str),
                        Some("tool_use" | "server_tool_use")
                    )
                }) {
                    blocks.push(b.clone());
                }
            }
            "message_start" => {
                anthropic = data.get("message").and_then(Value::as_object).cloned();
            }
            "message_delta" => {
                let (Some(msg), Some(Value::Object(delta))) =
                    (anthropic.as_mut(), data.get("usage"))
                else {
                    continue;
                };
                let usage = msg
                    .entry("usage")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(u) = usage {
                    for (k, v) in delta {
                        if !v.is_null() {
                            u.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            "response.completed" | "response.done" | "response.incomplete" | "response.failed" => {
                responses = data.get("response").or(responses);
            }
            _ => {
                let has_usage = data.get("usageMetadata").is_some()
                    || data.get("usage").is_some_and(|u| !u.is_null());
                if has_usage {
                    last_with_usage = Some(data);
                }
            }
        }
    }
    if let Some(mut m) = anthropic.filter(|m| m.contains_key("usage")) {
        if !blocks.is_empty() {
            if let Value::Array(c) = m
                .entry("content")
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                c.extend(blocks);
            }
        }
        return Some(Value::Object(m));
    }
    if let Some(r) = responses.filter(|r| r.get("usage").is_some()) {
        let mut r = r.clone();
        if let Some(o) = r.as_object_mut() {
            o.entry("object").or_insert_with(|| "response".into());
        }
        return Some(r);
    }
    let mut body = last_with_usage.cloned()?;
    if !chat_calls.is_empty() {
        body["choices"] = serde_json::json!([{"index": 0, "message": {"role": "assistant", "tool_calls": chat_calls}}]);
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_stream_takes_the_input_side_from_start_and_the_rest_from_the_last_delta() {
        let text = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"type\":\"message\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":42}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        assert!(looks_like_sse(text));
        let body = reassemble(&events_of_text(text)).unwrap();
        assert_eq!(body["type"], "message");
        assert_eq!(body["usage"]["cache_read_input_tokens"], 2000);
        assert_eq!(body["usage"]["output_tokens"], 42);
    }

    #[test]
    fn openai_and_gemini_streams_take_the_last_chunk_with_usage() {
        let chat = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"prompt_tokens_details\":{\"cached_tokens\":1024}}}\n\ndata: [DONE]\n\n";
        let body = reassemble(&events_of_text(chat)).unwrap();
        assert_eq!(body["usage"]["prompt_tokens"], 1200);
        let gemini = "data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":5}}\r\n\r\ndata: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":9}}\r\n\r\n";
        let body = reassemble(&events_of_text(gemini)).unwrap();
        assert_eq!(body["usageMetadata"]["candidatesTokenCount"], 9);
        assert!(reassemble(&events_of_text("data: {\"choices\":[]}\n\n")).is_none());
    }

    #[test]
    fn streamed_tool_calls_are_kept() {
        let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"grep\",\"input\":{}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":4}}\n\n";
        let body = reassemble(&events_of_text(anthropic)).unwrap();
        assert_eq!(body["content"][0]["name"], "grep");
        assert_eq!(body["content"].as_array().unwrap().len(), 1);
        let chat = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"run\",\"arguments\":\"\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":7}}\n\n";
        let body = reassemble(&events_of_text(chat)).unwrap();
        assert_eq!(body["usage"]["prompt_tokens"], 7);
        assert_eq!(
            body["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            "run"
        );
        assert_eq!(
            body["choices"][0]["message"]["tool_calls"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}
