//! Traces of simulated sessions (`pcsim run --trace-out FILE`): for every call of a run, the request
//! body a client would send (the scenario's tools, a system prompt and messages of the sizes the
//! run drew, the strategy's breakpoints as `cache_control`) and a response whose usage is the bill,
//! in the provider's own usage shape.
//!
//! Each text is written with exactly the token count the run gave it (counted with the model's
//! tokenizer), so the prompt `explain` reads back is the prompt the simulator billed. The bill of each
//! call is the engine's, on that prompt, against one account's cache, in the run's time order;
//! without injections it is the run's own bill (a test holds this call by call).
//!
//! Injections make traces with a known cause of a miss (docs/explain.md): a timestamp at the start
//! of the system prompt (`timestamp`), the first user message edited before call K (`edit@K`), and
//! the turn before call K sent as N content parts (`parts@K=N`, past a 20-block lookback when N is
//! large), and answers that call tools (`tool-calls=N`: each answer also calls one of the first N
//! tools of the list, in turn, so a conversation calls those N tools and no other). Tool-list
//! changes, pauses, small prefixes and many sessions on one prefix come from the scenario itself.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::predict;
use super::prompt::{build, scale_to, Layout, ModelRules, Sizer};
use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::input::trace::{exchange_of, TraceRecord};
use crate::model::catalog::ModelSpec;
use crate::model::strategy::{Anchor, Mode, ResolvedStrategy, Strategy};
use crate::model::tokens::ToolRendering;
use crate::model::tools::{gemini_declaration, openai_tool, Tool};
use crate::sim::engine::cache::CacheStore;
use crate::sim::simulate::SimResult;
use rand::{RngExt, SeedableRng};

/// Unix time of a trace's first call (the usage log's epoch, 2026-01-01T00:00:00Z).
const EPOCH: f64 = 1_767_225_600.0;

/// A cause injected into a written trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injection {
    /// The system prompt starts with the call's date and time.
    Timestamp,
    /// The first user message is edited before call K (and stays edited).
    Edit(usize),
    /// The turn before call K is sent as N content parts.
    Parts(usize, usize),
    /// Each answer also calls one of the first N tools of the list, in turn.
    ToolCalls(usize),
}

impl Injection {
    /// Parses `timestamp`, `edit@K`, `parts@K=N` or `tool-calls=N`.
    pub(crate) fn parse(s: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(
                "command line",
                "--trace-inject",
                format!("`{s}`: expected timestamp, edit@K, parts@K=N (K a call number >= 2) or tool-calls=N (N >= 1)"),
            )
        };
        if s == "timestamp" {
            return Ok(Injection::Timestamp);
        }
        if let Some(n) = s.strip_prefix("tool-calls=") {
            let n: usize = n.parse().map_err(|_| bad())?;
            return if n >= 1 {
                Ok(Injection::ToolCalls(n))
            } else {
                Err(bad())
            };
        }
        if let Some(k) = s.strip_prefix("edit@") {
            let k: usize = k.parse().map_err(|_| bad())?;
            return if k >= 2 {
                Ok(Injection::Edit(k))
            } else {
                Err(bad())
            };
        }
        if let Some(rest) = s.strip_prefix("parts@") {
            let (k, n) = rest.split_once('=').ok_or_else(bad)?;
            let (k, n): (usize, usize) =
                (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
            return if k >= 2 && n >= 1 {
                Ok(Injection::Parts(k, n))
            } else {
                Err(bad())
            };
        }
        Err(bad())
    }
}

/// The API a model's trace is written for.
fn api_of(model: &ModelSpec) -> &'static str {
    match model.provider.as_str() {
        "anthropic" => "anthropic",
        p if p.contains("google") || p.contains("gemini") => "gemini",
        _ => "openai",
    }
}

/// Filler words of one token each (with their leading space) in every built-in tokenizer.
const FILLER: [&str; 6] = [" the", " a", " of", " and", " to", " in"];

/// A text of exactly `n` tokens of `rendering`'s tokenizer (as `explain` counts text), starting with
/// `tag` when it fits, so texts of different places differ.
pub(crate) fn text_of_tokens(rendering: &ToolRendering, n: u64, tag: &str) -> String {
    if n == 0 {
        return String::new();
    }
    let mut base = tag.to_string();
    if rendering.count_text(&base, &[]) > n {
        base.clear();
    }
    let mut words: Vec<&str> = Vec::new();
    let text = |base: &str, words: &[&str]| {
        let mut s = base.to_string();
        for w in words {
            s.push_str(w);
        }
        if s.starts_with(' ') {
            s.remove(0);
        }
        s
    };
    let mut count = rendering.count_text(&text(&base, &words), &[]);
    // Counting is monotone in the words added; a few passes reach `n` exactly.
    for _ in 0..64 {
        if count == n {
            break;
        }
        if count < n {
            for i in 0..(n - count) {
                words.push(FILLER[(words.len() + i as usize) % FILLER.len()]);
            }
        } else if words.pop().is_none() {
            break;
        }
        count = rendering.count_text(&text(&base, &words), &[]);
    }
    text(&base, &words)
}

/// One content part of a written message.
#[derive(Debug, Clone)]
enum Part {
    /// Text.
    Text(String),
    /// A call of the named tool (no arguments).
    Call(String),
}

/// One session's conversation as the trace writes it.
#[derive(Default)]
struct SessionText {
    /// (role, parts) of each message.
    messages: Vec<(&'static str, Vec<Part>)>,
    /// The tool the previous answer called (`tool-calls=N`).
    previous_call: Option<String>,
    /// Tokens of the previous call's prompt outside the tool block and the system prompt.
    message_tokens: u64,
    /// Output tokens of the previous call.
    previous_output: u64,
    edited: bool,
}

/// One call of a written trace (rendered as a JSON Lines record by the report layer).
#[derive(Debug, Clone)]
pub(crate) struct TraceLine {
    /// Start time, Unix seconds.
    pub time: f64,
    /// Session id.
    pub session: String,
    /// Endpoint.
    pub url: String,
    /// Request body.
    pub request: Value,
    /// Response body.
    pub response: Value,
}

/// `HH:MM:SS` of Unix seconds, with its UTC date.
fn clock(unix: f64) -> String {
    let s = unix.floor() as i64;
    let d = s.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        crate::input::usagelog::utc_date(unix),
        d / 3600,
        d % 3600 / 60,
        d % 60
    )
}

/// The trace of `result` (run 0 of `scenario` on `model`), call by call in time order.
pub(crate) fn trace_records(
    scenario: &Scenario,
    model: &ModelSpec,
    result: &SimResult,
    injections: &[Injection],
) -> Result<Vec<TraceLine>> {
    let strategy = Strategy::parse(&result.strategy)?.resolve(model)?;
    let api = api_of(model);
    check_expressible(scenario, model, &strategy, api)?;
    let rendering = model.rendering();
    let rules = ModelRules::new(model)?;
    let mut sessions: HashMap<u32, SessionText> = HashMap::new();
    let mut store = CacheStore::new();
    let mut sizer = Sizer::default();
    // Best-effort hits drawn as the engine draws them (a stream of the scenario's seed).
    let mut draws = rand_chacha::ChaCha8Rng::seed_from_u64(scenario.seed);
    let hit_probability = match rules.mode() {
        Mode::Implicit => rules
            .rules()
            .and_then(|r| r.hit_probability.as_ref())
            .map_or(1.0, |p| p.value),
        _ => 1.0,
    };
    let mut out = Vec::with_capacity(result.calls.len());
    for bill in &result.calls {
        let call = bill.call as usize;
        let tools = tools_at(scenario, call);
        let settings = settings_at(scenario, call);
        let s = sessions.entry(bill.session).or_default();
        let system_tokens = scenario.system_tokens;
        grow(s, bill, system_tokens, rendering, injections);
        // `tool-calls=N`: this call's answer calls tool (call - 1) mod N of the first N.
        let calls_tool = injections.iter().find_map(|i| match i {
            Injection::ToolCalls(n) if !tools.is_empty() => {
                Some(tools[(call - 1) % (*n).min(tools.len())].name.clone())
            }
            _ => None,
        });
        let time = EPOCH + bill.time_s;
        let system = if injections.contains(&Injection::Timestamp) {
            let stamp = clock(time);
            text_of_tokens(
                rendering,
                system_tokens,
                &format!("Current time: {stamp}. You are a coding agent."),
            )
        } else {
            text_of_tokens(rendering, system_tokens, "You are a coding agent.")
        };
        let request = match api {
            "anthropic" => {
                anthropic_request(model, &tools, &system, &s.messages, &strategy, settings)
            }
            "gemini" => gemini_request(&tools, &system, &s.messages),
            _ => openai_request(model, &tools, &system, &s.messages, settings),
        };
        let url = match api {
            "anthropic" => "https://api.anthropic.com/v1/messages".to_string(),
            "gemini" => format!(
                "https://generativelanguage.googleapis.com/v1beta/models/{}:generateContent",
                model.id
            ),
            _ => "https://api.openai.com/v1/chat/completions".to_string(),
        };
        // The bill: the engine's rules on the prompt as explain reads it back.
        let answer_text = text_of_tokens(rendering, bill.output_tokens, "Done.");
        let placeholder = response(
            api,
            model,
            &answer_text,
            calls_tool.as_deref(),
            [0, 0, 0],
            0,
            0,
            bill.output_tokens,
        );
        let rec = TraceRecord {
            at: format!("session {} call {call}", bill.session),
            time: Some(time),
            session: Some(format!("session-{}", bill.session)),
            session_from_body: false,
            url: Some(url.clone()),
            request: request.to_string().into(),
            response: placeholder.to_string().into(),
            bytes: 0,
        };
        let ex = exchange_of(rec).map_err(|s| Error::invalid("trace", "request", s.reason))?;
        let (mut sizes, mut preamble) = sizer.estimate(&ex, model);
        let estimated: u64 = sizes.iter().sum::<u64>() + preamble;
        scale_to(&mut sizes, &mut preamble, estimated);
        let built = build(&ex, &rules, &sizes, preamble, Layout::default(), &[], &[]);
        let hit = hit_probability >= 1.0 || draws.random::<f64>() < hit_probability;
        let split = predict(&rules, &mut store, &built, (time * 1000.0) as u64, hit);
        let body = response(
            api,
            model,
            &answer_text,
            calls_tool.as_deref(),
            split.written,
            split.read,
            split.uncached,
            bill.output_tokens,
        );
        s.previous_call = calls_tool;
        out.push(TraceLine {
            time,
            session: format!("session-{}", bill.session),
            url,
            request,
            response: body,
        });
    }
    Ok(out)
}

/// Grows a session's messages to call `bill.call`: the task on call 1; then the previous answer and
/// the turn since (in `parts@K=N` parts), with `edit@K` applied; sizes from the run's bills.
fn grow(
    s: &mut SessionText,
    bill: &crate::sim::billing::CallBill,
    system_tokens: u64,
    rendering: &ToolRendering,
    injections: &[Injection],
) {
    let call = bill.call as usize;
    let messages_now = bill
        .prompt_tokens
        .saturating_sub(bill.tool_block_tokens + system_tokens);
    let tag = |what: &str| format!("[session {} call {call} {what}]", bill.session);
    if call == 1 {
        s.messages = vec![(
            "user",
            vec![Part::Text(text_of_tokens(
                rendering,
                messages_now,
                &tag("task"),
            ))],
        )];
    } else {
        let growth = messages_now.saturating_sub(s.message_tokens + s.previous_output);
        let answer = text_of_tokens(rendering, s.previous_output, &tag("answer"));
        let mut answer_parts = Vec::new();
        if s.previous_output > 0 {
            answer_parts.push(Part::Text(answer));
        }
        if let Some(name) = s.previous_call.take() {
            answer_parts.push(Part::Call(name));
        }
        if !answer_parts.is_empty() {
            s.messages.push(("assistant", answer_parts));
        }
        let parts = injections
            .iter()
            .find_map(|i| match i {
                Injection::Parts(k, n) if *k == call => Some(*n),
                _ => None,
            })
            .unwrap_or(1);
        let mut texts = Vec::new();
        let per = growth / parts as u64;
        for p in 0..parts {
            let n = if p + 1 == parts {
                growth - per * (parts as u64 - 1)
            } else {
                per
            };
            if n > 0 {
                texts.push(Part::Text(text_of_tokens(
                    rendering,
                    n,
                    &tag(&format!("result {}", p + 1)),
                )));
            }
        }
        if !texts.is_empty() {
            s.messages.push(("user", texts));
        }
    }
    if !s.edited && injections.contains(&Injection::Edit(call)) {
        if let Some(Part::Text(first)) = s.messages.first_mut().map(|(_, p)| &mut p[0]) {
            let n = rendering.count_text(first, &[]);
            *first = text_of_tokens(
                rendering,
                n,
                &format!("[session {} task, edited]", bill.session),
            );
            s.edited = true;
        }
    }
    s.message_tokens = messages_now;
    s.previous_output = bill.output_tokens;
}

/// Refuses what a trace cannot carry as the run simulated it.
fn check_expressible(
    scenario: &Scenario,
    model: &ModelSpec,
    strategy: &ResolvedStrategy,
    api: &str,
) -> Result<()> {
    let refuse = |why: String| Err(Error::invalid("command line", "--trace-out", why));
    if strategy.tool_change != crate::model::catalog::ToolChangeRule::Invalidate {
        return refuse(format!(
            "strategy {} changes tools by message (append) or keeps a prefix of the list; a trace writes the tool list as sent, so use a strategy without /tool-changes=",
            strategy.name
        ));
    }
    if scenario.setting_events.iter().any(|e| e.change == "images") {
        return refuse(
            "the scenario changes images, which a trace cannot size; leave that event out".into(),
        );
    }
    if api != "anthropic" && strategy.mode != Mode::None {
        let own = Strategy::parse(&model.default_strategy)?.resolve(model)?;
        if own.name != strategy.name {
            return refuse(format!(
                "{} requests carry no cache_control: a trace of {} shows the model's own caching ({}), not {}; use --strategy cached",
                api_name(api),
                model.id,
                own.name,
                strategy.name
            ));
        }
    }
    if api == "anthropic" && strategy.mode == Mode::Automatic {
        return refuse(format!("{} offers no automatic mode", model.id));
    }
    Ok(())
}

fn api_name(api: &str) -> &'static str {
    match api {
        "gemini" => "Gemini",
        _ => "OpenAI",
    }
}

fn tools_at(scenario: &Scenario, call: usize) -> Vec<Tool> {
    let mut list: Vec<&Tool> = scenario.tools.iter().collect();
    let mut events: Vec<_> = scenario
        .events
        .iter()
        .filter(|e| e.at_call <= call)
        .collect();
    events.sort_by_key(|e| e.at_call);
    for e in events {
        list = e.apply_refs(&list);
    }
    list.into_iter().cloned().collect()
}

/// Which settings are flipped at `call` (`tool_choice`, `thinking`): each event toggles one.
fn settings_at(scenario: &Scenario, call: usize) -> (bool, bool) {
    let mut s = (false, false);
    for e in scenario.setting_events.iter().filter(|e| e.at_call <= call) {
        match e.change.as_str() {
            "tool_choice" => s.0 = !s.0,
            "thinking" => s.1 = !s.1,
            _ => {}
        }
    }
    s
}

fn cache_control(tier: &str) -> Value {
    if tier == "1h" {
        json!({"type": "ephemeral", "ttl": "1h"})
    } else {
        json!({"type": "ephemeral"})
    }
}

fn anthropic_request(
    model: &ModelSpec,
    tools: &[Tool],
    system: &str,
    messages: &[(&'static str, Vec<Part>)],
    strategy: &ResolvedStrategy,
    settings: (bool, bool),
) -> Value {
    let tier = |a: Anchor| {
        strategy
            .breakpoints
            .iter()
            .find(|b| b.anchor == a)
            .map(|b| b.tier.clone())
    };
    let mut tools_json: Vec<Value> = tools.iter().map(Tool::api_json).collect();
    if let (Some(t), Some(last)) = (tier(Anchor::Tools), tools_json.last_mut()) {
        last["cache_control"] = cache_control(&t);
    }
    let mut body = json!({"model": model.id, "max_tokens": 4096});
    if !tools_json.is_empty() {
        body["tools"] = Value::Array(tools_json);
    }
    if !system.is_empty() {
        let mut block = json!({"type": "text", "text": system});
        if let Some(t) = tier(Anchor::System) {
            block["cache_control"] = cache_control(&t);
        }
        body["system"] = json!([block]);
    }
    let mut msgs: Vec<Value> = messages
        .iter()
        .map(|(role, parts)| {
            let content: Vec<Value> = parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => json!({"type": "text", "text": t}),
                    Part::Call(name) => {
                        json!({"type": "tool_use", "id": format!("toolu_{name}"), "name": name, "input": {}})
                    }
                })
                .collect();
            json!({"role": role, "content": content})
        })
        .collect();
    if let Some(t) = tier(Anchor::Last) {
        if let Some(part) = msgs
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|c| c.last_mut())
        {
            part["cache_control"] = cache_control(&t);
        }
    }
    body["messages"] = Value::Array(msgs);
    if settings.0 {
        body["tool_choice"] = json!({"type": "any"});
    }
    if settings.1 {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
    }
    body
}

fn openai_request(
    model: &ModelSpec,
    tools: &[Tool],
    system: &str,
    messages: &[(&'static str, Vec<Part>)],
    settings: (bool, bool),
) -> Value {
    let mut msgs = Vec::new();
    if !system.is_empty() {
        msgs.push(json!({"role": "system", "content": system}));
    }
    for (role, parts) in messages {
        let content: Vec<Value> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(json!({"type": "text", "text": t})),
                Part::Call(_) => None,
            })
            .collect();
        let mut m = json!({"role": role, "content": content});
        let calls: Vec<Value> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Call(name) => Some(openai_call(name)),
                Part::Text(_) => None,
            })
            .collect();
        if !calls.is_empty() {
            m["tool_calls"] = Value::Array(calls);
        }
        msgs.push(m);
    }
    let mut body = json!({"model": model.id, "messages": msgs});
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools.iter().map(openai_tool).collect());
    }
    if settings.0 {
        body["tool_choice"] = json!("required");
    }
    if settings.1 {
        body["reasoning_effort"] = json!("high");
    }
    body
}

fn gemini_request(tools: &[Tool], system: &str, messages: &[(&'static str, Vec<Part>)]) -> Value {
    let contents: Vec<Value> = messages
        .iter()
        .map(|(role, parts)| {
            let role = if *role == "assistant" {
                "model"
            } else {
                "user"
            };
            let parts: Vec<Value> = parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => json!({"text": t}),
                    Part::Call(name) => json!({"functionCall": {"name": name, "args": {}}}),
                })
                .collect();
            json!({"role": role, "parts": parts})
        })
        .collect();
    let mut body = json!({"contents": contents});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    if !tools.is_empty() {
        body["tools"] = json!([{"functionDeclarations": tools.iter().map(gemini_declaration).collect::<Vec<_>>()}]);
    }
    body
}

/// An OpenAI Chat Completions tool call of `name` (no arguments).
fn openai_call(name: &str) -> Value {
    json!({"id": format!("call_{name}"), "type": "function", "function": {"name": name, "arguments": "{}"}})
}

/// A response in the API's own shape whose usage is the bill; `call` names a tool the answer calls.
#[allow(clippy::too_many_arguments)]
fn response(
    api: &str,
    model: &ModelSpec,
    text: &str,
    call: Option<&str>,
    written: [u64; 3],
    read: u64,
    uncached: u64,
    output: u64,
) -> Value {
    let write: u64 = written.iter().sum();
    let prompt = uncached + write + read;
    let mut body = match api {
        "anthropic" => json!({
            "id": "msg_pcsim",
            "type": "message",
            "role": "assistant",
            "model": model.id,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": uncached,
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": written[0] + written[2],
                    "ephemeral_1h_input_tokens": written[1],
                },
                "output_tokens": output,
            }
        }),
        "gemini" => json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}],
            "modelVersion": model.id,
            "usageMetadata": {
                "promptTokenCount": prompt,
                "cachedContentTokenCount": read,
                "candidatesTokenCount": output,
                "totalTokenCount": prompt + output,
            }
        }),
        _ => json!({
            "object": "chat.completion",
            "model": model.id,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
                "prompt_tokens_details": {"cached_tokens": read},
            }
        }),
    };
    if let Some(name) = call {
        let (parts, part) = match api {
            "anthropic" => (
                &mut body["content"],
                json!({"type": "tool_use", "id": format!("toolu_{name}"), "name": name, "input": {}}),
            ),
            "gemini" => (
                &mut body["candidates"][0]["content"]["parts"],
                json!({"functionCall": {"name": name, "args": {}}}),
            ),
            _ => (
                &mut body["choices"][0]["message"]["tool_calls"],
                openai_call(name),
            ),
        };
        match parts.as_array_mut() {
            Some(list) => list.push(part),
            None => *parts = json!([part]),
        }
    }
    body
}
