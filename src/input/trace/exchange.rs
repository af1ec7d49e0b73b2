//! A trace record's request body cut into the regions of its prompt, in the provider's cache order
//! (tools, system, messages), each with a fingerprint; the breakpoints the request sets; the request
//! settings whose change invalidates cached parts; and the usage the response billed.
//!
//! Region fingerprints are FNV-1a over the region's own content (a message part's role included;
//! `cache_control` left out, so moving a breakpoint does not change content). The region keeps its
//! content only while the record is explained (for sizing and diff excerpts); what outlives the
//! record is hashes.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::json::Json;
use super::{SkippedRecord, TraceRecord};
use crate::base::hash::{chain, fingerprint, fnv1a};
use crate::input::usagelog::{response_usage, LoggedCall};
use crate::model::tools::Tool;

/// The API a request was made to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`).
    #[serde(rename = "anthropic-messages")]
    AnthropicMessages,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses (`/v1/responses`).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Gemini `generateContent` / `streamGenerateContent`.
    #[serde(rename = "gemini")]
    Gemini,
}

impl Api {
    /// The spelling in output and docs.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenAiChat => "openai-chat",
            Api::OpenAiResponses => "openai-responses",
            Api::Gemini => "gemini",
        }
    }
}

/// The part of the prompt a region belongs to, in cache order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    /// One tool definition.
    Tool,
    /// One block of the system prompt.
    System,
    /// One content part of one message.
    Message,
}

/// What a region holds, kept while its record is explained.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A tool definition.
    Tool(Tool),
    /// Text.
    Text(String),
    /// Any other part (tool call, tool result, document) as compact JSON.
    Json(String),
    /// An image (its bytes are not text; sized by an assumption, see docs/explain.md).
    Image,
}

/// One region of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// Tools, system or messages.
    pub kind: RegionKind,
    /// Index of the tool, of the system block, or of the message (0-based).
    pub index: usize,
    /// Index of the content part within its message (0 for tools and system blocks).
    pub part: usize,
    /// The tool's name, or the message's role (`system` for system blocks).
    pub name: String,
    /// Fingerprint of the content.
    pub hash: u64,
    /// The content.
    pub content: Content,
    /// The cache breakpoint the request sets right after this region: its TTL tier (`5m`, `1h`),
    /// or `default` where the request names none.
    pub breakpoint: Option<String>,
}

/// Request settings whose change can invalidate cached parts (fingerprints; 0: not set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    /// `tool_choice` (Gemini: `toolConfig`).
    pub tool_choice: u64,
    /// Extended thinking / reasoning settings.
    pub thinking: u64,
    /// Images anywhere in the prompt.
    pub images: usize,
}

/// One call of a trace, interpreted.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Where it came from.
    pub at: String,
    /// Start time, Unix seconds.
    pub time: Option<f64>,
    /// Session id, if any.
    pub session: Option<String>,
    /// The API.
    pub api: Api,
    /// The model the request names.
    pub model: String,
    /// The prompt's regions in cache order.
    pub regions: Vec<Region>,
    /// Settings that can invalidate cached parts.
    pub settings: Settings,
    /// The usage the response billed.
    pub billed: LoggedCall,
    /// Names of the tools the conversation is seen calling on this call (sorted, each once): tool
    /// calls in the request's messages (earlier answers) and in the response.
    pub called_tools: Vec<String>,
    /// The request's `prompt_cache_key`, when it sets one.
    pub prompt_cache_key: Option<String>,
}

/// Interprets a record: its API, model, regions, breakpoints, settings and billed usage; or the
/// reason it is skipped.
pub fn exchange_of(rec: TraceRecord<'_>) -> Result<Exchange, SkippedRecord> {
    let skip = |reason: String| SkippedRecord {
        at: rec.at.clone(),
        reason,
    };
    // The body is read as a tree borrowed from its text (see `json.rs`): its texts are moved into
    // the regions, not copied twice.
    let mut request = match Json::parse(&rec.request) {
        Ok(v @ Json::Object(_)) => v,
        Ok(_) => return Err(skip("not a JSON object in the request body".into())),
        Err(e) if e.is_eof() => {
            return Err(skip(format!(
                "truncated JSON (the body ends early: {e}) in the request body"
            )))
        }
        Err(e) => return Err(skip(format!("not valid JSON ({e}) in the request body"))),
    };
    let api = match rec.url.as_deref() {
        Some(u) => api_of_url(u),
        None => api_of_bodies(&request, &rec.response),
    }
    .ok_or_else(|| {
        skip(match &rec.url {
            Some(u) => format!("unknown endpoint `{}`", short(u, 120)),
            None => "unknown endpoint: the request is not Anthropic Messages, OpenAI Chat Completions or Responses, or Gemini generateContent".into(),
        })
    })?;
    let billed = match response_usage(&rec.response, "response", &rec.at) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(skip(
                "missing usage: the response has no usage object".into(),
            ))
        }
        Err(e) => return Err(skip(format!("bad usage: {e}"))),
    };
    let model = request
        .get("model")
        .and_then(Json::as_str)
        .map(str::to_string)
        .or_else(|| rec.url.as_deref().and_then(gemini_model_of_url))
        .or_else(|| billed.model.clone())
        .ok_or_else(|| skip("no model: neither the request nor the response names one".into()))?;
    let session = match (&rec.session, rec.session_from_body) {
        (Some(s), _) => Some(s.clone()),
        (None, true) => session_hint(&request),
        (None, false) => None,
    };
    let mut ex = Exchange {
        at: rec.at.clone(),
        time: rec.time,
        session,
        api,
        model,
        regions: Vec::new(),
        settings: Settings::default(),
        billed,
        called_tools: Vec::new(),
        prompt_cache_key: request
            .get("prompt_cache_key")
            .and_then(Json::as_str)
            .map(str::to_string),
    };
    // Tool calls: in the history the request re-sends, and in the answer (parsed as a tree or
    // read from the stream's events).
    let mut called = Vec::new();
    for key in ["messages", "input", "contents"] {
        if let Some(history) = request.get(key) {
            tool_calls_in(history, &mut called);
        }
    }
    tool_calls_in_response(&rec.response, &mut called);
    called.sort_unstable();
    called.dedup();
    ex.called_tools = called;
    let body = &mut request;
    match api {
        Api::AnthropicMessages => anthropic(body, &mut ex),
        Api::OpenAiChat => openai_chat(body, &mut ex),
        Api::OpenAiResponses => openai_responses(body, &mut ex),
        Api::Gemini => gemini(body, &mut ex),
    }
    ex.settings.images = ex
        .regions
        .iter()
        .filter(|r| r.content == Content::Image)
        .count();
    Ok(ex)
}

/// Object types of a tool call in the APIs' messages and answers (Anthropic `tool_use` and
/// `server_tool_use`, OpenAI Responses `function_call`, `custom_tool_call` and `mcp_call`).
const CALL_TYPES: [&str; 5] = [
    "tool_use",
    "server_tool_use",
    "function_call",
    "custom_tool_call",
    "mcp_call",
];

/// Names of the tool calls anywhere in `v`: objects of a [`CALL_TYPES`] type, Gemini
/// `functionCall` parts, OpenAI Chat `tool_calls` (and their streamed deltas).
fn tool_calls_in(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::Array(items) => items.iter().for_each(|i| tool_calls_in(i, out)),
        Json::Object(entries) => {
            let ty = v.get("type").and_then(Json::as_str).unwrap_or("");
            if CALL_TYPES.contains(&ty) {
                if let Some(n) = v.get("name").and_then(Json::as_str) {
                    out.push(n.to_string());
                }
            }
            for (k, child) in entries {
                match k.as_ref() {
                    "functionCall" => {
                        if let Some(n) = child.get("name").and_then(Json::as_str) {
                            out.push(n.to_string());
                        }
                    }
                    "tool_calls" => {
                        for c in child.as_array().into_iter().flatten() {
                            if let Some(n) = c
                                .get("function")
                                .and_then(|f| f.get("name"))
                                .and_then(Json::as_str)
                            {
                                out.push(n.to_string());
                            }
                        }
                    }
                    // Definitions, not calls (a Responses answer echoes the request's tools).
                    "tools" => {}
                    _ => tool_calls_in(child, out),
                }
            }
        }
        _ => {}
    }
}

/// Names of the tool calls of a response body, whole or streamed (each event's data).
fn tool_calls_in_response(text: &str, out: &mut Vec<String>) {
    if super::sse::looks_like_sse(text) {
        for (_, data) in super::sse::events_of_text(text) {
            let s = data.to_string();
            if let Ok(v) = Json::parse(&s) {
                tool_calls_in(&v, out);
            }
        }
    } else if let Ok(v) = Json::parse(text) {
        tool_calls_in(&v, out);
    }
}

/// A conversation id a request body carries when its trace record has none: Claude Code's
/// `metadata.user_id` (its `_session_` part when it has one), else OpenAI's `prompt_cache_key`.
fn session_hint(request: &Json) -> Option<String> {
    if let Some(user) = request
        .get("metadata")
        .and_then(|m| m.get("user_id"))
        .and_then(Json::as_str)
    {
        let session = user.rsplit_once("_session_").map_or(user, |(_, s)| s);
        return Some(session.to_string());
    }
    request
        .get("prompt_cache_key")
        .and_then(Json::as_str)
        .map(str::to_string)
}

fn short(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// The API of a request sent to `url`.
fn api_of_url(u: &str) -> Option<Api> {
    let path = u.split('?').next().unwrap_or(u);
    if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        Some(Api::Gemini)
    } else if path.ends_with("/chat/completions") {
        Some(Api::OpenAiChat)
    } else if path.ends_with("/responses") {
        Some(Api::OpenAiResponses)
    } else if path.ends_with("/messages") {
        Some(Api::AnthropicMessages)
    } else {
        None
    }
}

/// The API of a request whose record has no URL, from the bodies' shapes.
fn api_of_bodies(req: &Json, response: &str) -> Option<Api> {
    if req.get("contents").is_some() {
        Some(Api::Gemini)
    } else if req.get("input").is_some() || req.get("instructions").is_some() {
        Some(Api::OpenAiResponses)
    } else if req.get("messages").is_some() {
        let resp = Json::parse(response).unwrap_or(Json::Null);
        let anthropic = resp.get("type").and_then(Json::as_str) == Some("message")
            || req.get("system").is_some()
            || resp
                .get("usage")
                .is_some_and(|u| u.get("input_tokens").is_some());
        Some(if anthropic {
            Api::AnthropicMessages
        } else {
            Api::OpenAiChat
        })
    } else {
        None
    }
}

/// Whether `url` is an endpoint `explain` knows (the APIs of [`Api`]).
pub(crate) fn known_endpoint(url: &str) -> bool {
    api_of_url(url).is_some()
}

/// `gemini-3.6-flash` of `.../models/gemini-3.6-flash:generateContent`.
fn gemini_model_of_url(url: &str) -> Option<String> {
    let after = url.split("/models/").nth(1)?;
    let model = after.split(':').next()?;
    (!model.is_empty()).then(|| model.to_string())
}

/// The TTL tier a `cache_control` (or `prompt_cache_breakpoint`) object asks for.
fn tier_of(v: Option<&Json>) -> Option<String> {
    let v = v?;
    if v.is_null() {
        return None;
    }
    Some(
        v.get("ttl")
            .and_then(Json::as_str)
            .map_or("5m", |t| if t == "1h" { "1h" } else { "5m" })
            .to_string(),
    )
}

fn breakpoint_of(part: &Json) -> Option<String> {
    tier_of(part.get("cache_control")).or_else(|| {
        part.get("prompt_cache_breakpoint")
            .filter(|v| !v.is_null() && **v != Json::Bool(false))
            .map(|_| "default".to_string())
    })
}

/// The keys that mark a breakpoint on a part (they are not content).
const MARKERS: [&str; 2] = ["cache_control", "prompt_cache_breakpoint"];

/// The entries of an object in the order they keep once its breakpoint markers are removed, as
/// `serde_json::Map::remove` (a swap-remove with `preserve_order`) leaves them: a part's
/// fingerprint has always been taken over that text.
fn without_markers<'j, 'a>(
    entries: &'j [(Cow<'a, str>, Json<'a>)],
) -> Vec<&'j (Cow<'a, str>, Json<'a>)> {
    let mut kept: Vec<&(Cow<str>, Json)> = entries.iter().collect();
    for marker in MARKERS {
        if let Some(i) = kept.iter().position(|(k, _)| k == marker) {
            kept.swap_remove(i);
        }
    }
    kept
}

/// An object's entries, serialised in the given order.
struct Entries<'j, 'a>(Vec<&'j (Cow<'a, str>, Json<'a>)>);

impl serde::Serialize for Entries<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }
}

/// A part as compact JSON without its breakpoint markers (they are not content).
fn compact_without_markers(part: &Json) -> String {
    match part {
        Json::Object(m) if m.iter().any(|(k, _)| MARKERS.contains(&k.as_ref())) => {
            serde_json::to_string(&Entries(without_markers(m))).unwrap_or_default()
        }
        other => other.to_json_string(),
    }
}

fn region_hash(role: &str, content: &Content) -> u64 {
    let h = match content {
        Content::Tool(t) => t.content_hash(),
        Content::Text(s) => fingerprint(s.as_bytes()),
        Content::Json(s) => chain(fnv1a(b"json"), fingerprint(s.as_bytes())),
        Content::Image => fnv1a(b"image"),
    };
    chain(fnv1a(role.as_bytes()), h)
}

fn push(
    ex: &mut Exchange,
    kind: RegionKind,
    index: usize,
    name: &str,
    content: Content,
    bp: Option<String>,
) {
    let part = match kind {
        RegionKind::Message => ex
            .regions
            .iter()
            .rev()
            .take_while(|r| r.kind == kind && r.index == index)
            .count(),
        _ => 0,
    };
    ex.regions.push(Region {
        kind,
        index,
        part,
        name: name.to_string(),
        hash: region_hash(name, &content),
        content,
        breakpoint: bp,
    });
}

/// A tool definition in any of the APIs' forms as pcsim's [`Tool`]; a tool that is not a function
/// (a server tool such as web search) keeps its whole JSON as its schema.
fn tool_of(t: &Json) -> Tool {
    let f = t.get("function").unwrap_or(t);
    let name = f
        .get("name")
        .and_then(Json::as_str)
        .unwrap_or_else(|| t.get("type").and_then(Json::as_str).unwrap_or("unnamed"));
    let schema = f
        .get("input_schema")
        .or_else(|| f.get("parameters"))
        .or_else(|| f.get("parametersJsonSchema"))
        .map(Json::to_value);
    let input_schema = schema.unwrap_or_else(|| match t {
        Json::Object(m) => serde_json::to_value(Entries(without_markers(m))).unwrap_or(Value::Null),
        other => other.to_value(),
    });
    Tool {
        name: name.to_string(),
        description: f
            .get("description")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string(),
        input_schema,
    }
}

fn tools(list: Option<&Json>, ex: &mut Exchange) {
    for (i, t) in list
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let tool = tool_of(t);
        let name = tool.name.clone();
        push(
            ex,
            RegionKind::Tool,
            i,
            &name,
            Content::Tool(tool),
            breakpoint_of(t),
        );
    }
}

fn setting(v: Option<&Json>) -> u64 {
    match v {
        None | Some(Json::Null) => 0,
        Some(v) => fnv1a(v.to_json_string().as_bytes()),
    }
}

/// A string moved out of the body.
fn take(s: &mut Cow<'_, str>) -> String {
    std::mem::take(s).into_owned()
}

/// A content part as a region's content (its text moved out of the body).
fn part_content(part: &mut Json) -> Content {
    match part {
        Json::Str(s) => Content::Text(take(s)),
        Json::Object(_) => {
            let ty = part.get("type").and_then(Json::as_str).unwrap_or("");
            if matches!(ty, "image" | "image_url" | "input_image") || is_gemini_image(part) {
                return Content::Image;
            }
            let text_part = matches!(ty, "text" | "input_text" | "output_text" | "");
            if text_part {
                if let Some(Json::Str(t)) = part.get_mut("text") {
                    return Content::Text(take(t));
                }
            }
            Content::Json(compact_without_markers(part))
        }
        other => Content::Json(other.to_json_string()),
    }
}

fn is_gemini_image(m: &Json) -> bool {
    m.get("inlineData")
        .or_else(|| m.get("fileData"))
        .and_then(|d| d.get("mimeType"))
        .and_then(Json::as_str)
        .is_some_and(|t| t.starts_with("image/"))
}

/// One message's content (a string or an array of parts) as regions of message `index`.
fn message_parts(content: Option<&mut Json>, index: usize, role: &str, ex: &mut Exchange) {
    match content {
        None | Some(Json::Null) => {}
        Some(Json::Array(parts)) => {
            for p in parts {
                let bp = breakpoint_of(p);
                push(ex, RegionKind::Message, index, role, part_content(p), bp);
            }
        }
        Some(other) => {
            let c = part_content(other);
            push(ex, RegionKind::Message, index, role, c, None)
        }
    }
}

/// The role of a message or input item (`user` when it names none).
fn role_of(m: &Json, fallback_key: Option<&str>) -> String {
    m.get("role")
        .and_then(Json::as_str)
        .or_else(|| fallback_key.and_then(|k| m.get(k)).and_then(Json::as_str))
        .unwrap_or("user")
        .to_string()
}

fn anthropic(body: &mut Json, ex: &mut Exchange) {
    tools(body.get("tools"), ex);
    match body.get_mut("system") {
        Some(Json::Str(s)) => push(
            ex,
            RegionKind::System,
            0,
            "system",
            Content::Text(take(s)),
            None,
        ),
        Some(Json::Array(blocks)) => {
            for (i, b) in blocks.iter_mut().enumerate() {
                let bp = breakpoint_of(b);
                push(ex, RegionKind::System, i, "system", part_content(b), bp);
            }
        }
        _ => {}
    }
    if let Some(messages) = body.get_mut("messages").and_then(Json::as_array_mut) {
        for (i, m) in messages.iter_mut().enumerate() {
            let role = role_of(m, None);
            message_parts(m.get_mut("content"), i, &role, ex);
        }
    }
    // Top-level `cache_control` (automatic caching): a breakpoint on the last block.
    if let Some(tier) = tier_of(body.get("cache_control")) {
        if let Some(last) = ex.regions.last_mut() {
            last.breakpoint.get_or_insert(tier);
        }
    }
    ex.settings.tool_choice = setting(body.get("tool_choice"));
    ex.settings.thinking = setting(body.get("thinking"));
}

fn openai_chat(body: &mut Json, ex: &mut Exchange) {
    tools(body.get("tools"), ex);
    let (mut system, mut message) = (0usize, 0usize);
    if let Some(messages) = body.get_mut("messages").and_then(Json::as_array_mut) {
        for m in messages {
            let role = role_of(m, None);
            if matches!(role.as_str(), "system" | "developer") && message == 0 {
                let before = ex.regions.len();
                message_parts(m.get_mut("content"), system, "system", ex);
                for r in &mut ex.regions[before..] {
                    r.kind = RegionKind::System;
                    r.index = system;
                    system += 1;
                }
                continue;
            }
            message_parts(m.get_mut("content"), message, &role, ex);
            if let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) {
                let c = Content::Json(calls.to_json_string());
                push(ex, RegionKind::Message, message, &role, c, None);
            }
            message += 1;
        }
    }
    ex.settings.tool_choice = setting(body.get("tool_choice"));
    ex.settings.thinking = setting(
        body.get("reasoning_effort")
            .or_else(|| body.get("reasoning")),
    );
}

fn openai_responses(body: &mut Json, ex: &mut Exchange) {
    tools(body.get("tools"), ex);
    if let Some(Json::Str(s)) = body.get_mut("instructions") {
        let c = Content::Text(take(s));
        push(ex, RegionKind::System, 0, "system", c, None);
    }
    match body.get_mut("input") {
        Some(Json::Array(items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                let role = role_of(item, Some("type"));
                if item.get("content").is_some() {
                    message_parts(item.get_mut("content"), i, &role, ex);
                } else {
                    let c = part_content(item);
                    push(ex, RegionKind::Message, i, &role, c, None);
                }
            }
        }
        Some(other) => message_parts(Some(other), 0, "user", ex),
        None => {}
    }
    ex.settings.tool_choice = setting(body.get("tool_choice"));
    ex.settings.thinking = setting(body.get("reasoning"));
}

fn gemini(body: &mut Json, ex: &mut Exchange) {
    let mut i = 0usize;
    for t in body
        .get("tools")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        for d in t
            .get("functionDeclarations")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let tool = tool_of(d);
            let name = tool.name.clone();
            push(ex, RegionKind::Tool, i, &name, Content::Tool(tool), None);
            i += 1;
        }
    }
    let key = if body.contains_key("systemInstruction") {
        "systemInstruction"
    } else {
        "system_instruction"
    };
    if let Some(parts) = body
        .get_mut(key)
        .and_then(|s| s.get_mut("parts"))
        .and_then(Json::as_array_mut)
    {
        for (k, p) in parts.iter_mut().enumerate() {
            push(ex, RegionKind::System, k, "system", part_content(p), None);
        }
    }
    if let Some(contents) = body.get_mut("contents").and_then(Json::as_array_mut) {
        for (k, c) in contents.iter_mut().enumerate() {
            let role = role_of(c, None);
            message_parts(c.get_mut("parts"), k, &role, ex);
        }
    }
    ex.settings.tool_choice = setting(body.get("toolConfig"));
    ex.settings.thinking = setting(
        body.get("generationConfig")
            .and_then(|g| g.get("thinkingConfig")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text a part was fingerprinted over before the borrowed tree: `serde_json::Value` with the
    /// markers removed by `Map::remove`.
    fn as_value_did(text: &str) -> String {
        match serde_json::from_str::<Value>(text).unwrap() {
            Value::Object(mut m) => {
                m.remove("cache_control");
                m.remove("prompt_cache_breakpoint");
                Value::Object(m).to_string()
            }
            other => other.to_string(),
        }
    }

    #[test]
    fn a_part_without_its_markers_is_the_text_value_wrote() {
        for text in [
            r#"{"type":"tool_result","cache_control":{"type":"ephemeral"},"tool_use_id":"t1","content":"a\nb","is_error":false}"#,
            r#"{"cache_control":{"type":"ephemeral"},"a":1,"prompt_cache_breakpoint":true,"b":2,"c":3}"#,
            r#"{"prompt_cache_breakpoint":{},"a":1,"b":[1,2.5],"cache_control":null}"#,
            r#"{"a":1,"b":2}"#,
            r#"[1,{"cache_control":{}}]"#,
        ] {
            let tree = Json::parse(text).unwrap();
            assert_eq!(compact_without_markers(&tree), as_value_did(text), "{text}");
        }
    }

    fn called(url: &str, request: &str, response: &str) -> Vec<String> {
        let rec = TraceRecord {
            at: "t".into(),
            time: None,
            session: None,
            session_from_body: false,
            url: Some(url.into()),
            request: request.into(),
            response: response.into(),
            bytes: 0,
        };
        exchange_of(rec).unwrap().called_tools
    }

    /// Tool calls are read from the history and the answer, in each API's shape; tool definitions
    /// and results are not calls.
    #[test]
    fn tool_calls_of_every_api() {
        let anthropic = called(
            "https://api.anthropic.com/v1/messages",
            r#"{"model":"m","tools":[{"name":"defined","input_schema":{}}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"grep","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":"x"}]}]}"#,
            r#"{"type":"message","content":[{"type":"tool_use","id":"2","name":"edit","input":{}}],"usage":{"input_tokens":1,"output_tokens":1}}"#,
        );
        assert_eq!(anthropic, ["edit", "grep"]);
        let chat = called(
            "https://api.openai.com/v1/chat/completions",
            r#"{"model":"m","tools":[{"type":"function","function":{"name":"defined"}}],"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"grep","arguments":"{}"}}]}]}"#,
            r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"d","type":"function","function":{"name":"grep","arguments":"{}"}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#,
        );
        assert_eq!(chat, ["grep"]);
        let responses = called(
            "https://api.openai.com/v1/responses",
            r#"{"model":"m","input":[{"type":"function_call","call_id":"c","name":"grep","arguments":"{}"}]}"#,
            r#"{"output":[{"type":"function_call","name":"run","arguments":"{}"}],"tools":[{"type":"function","name":"defined"}],"usage":{"input_tokens":1,"output_tokens":1}}"#,
        );
        assert_eq!(responses, ["grep", "run"]);
        let gemini = called(
            "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent",
            r#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"grep","args":{}}}]}],"tools":[{"functionDeclarations":[{"name":"defined"}]}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"ok"}]}}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}"#,
        );
        assert_eq!(gemini, ["grep"]);
    }
}
