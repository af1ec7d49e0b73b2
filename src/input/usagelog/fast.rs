//! The commonest lines read in one pass: Claude Code transcript lines (`message`, `sessionId`,
//! `cwd`, ...) and the gateway-form records `run --usage-log` writes (`sent_at`, `session_id`,
//! `model`, `usage`). The line is read once into the few values a call needs, borrowed from the
//! text, every other field skipped without being kept; the message's fields are read in the same
//! pass (the general reader reads a line's fields, then the message's again, and a transcript's
//! user lines are mostly a tool result inside the message).
//!
//! What a line gives here is what the general reader ([`super::record`]) gives for it, by the same
//! functions: a line with a field not listed below (one some other reader would look at), a
//! `message` that is not an object, a `type` beside no `message`, or `usage` beside `message` is
//! left to the general reader, as is a line that is not valid JSON. A key given twice keeps its last
//! value, as there.

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    as_map, id_text, raw_f64, raw_time, read_usage, Found, Hint, Key, LoggedCall, Result, UsageLog,
    MAX_LOGGED_TOKENS,
};

/// Fields no reader looks at in a record that has a `message` (Claude Code's own bookkeeping):
/// skipped.
const SKIPPED: [&str; 17] = [
    "parentUuid",
    "logicalParentUuid",
    "userType",
    "version",
    "gitBranch",
    "uuid",
    "slug",
    "isMeta",
    "isCompactSummary",
    "isVisibleInTranscriptOnly",
    "isApiErrorMessage",
    "toolUseResult",
    "thinkingMetadata",
    "todos",
    "imagePasteIds",
    "level",
    "subtype",
];

/// The values of one line that the readers of its two shapes look at (text, read where used).
#[derive(Default)]
struct Line<'a> {
    message: Option<Message<'a>>,
    usage: Option<&'a RawValue>,
    kind: bool,
    is_sidechain: Option<&'a RawValue>,
    timestamp: Option<&'a RawValue>,
    sent_at: Option<&'a RawValue>,
    session_id: Option<&'a RawValue>,
    session_id_camel: Option<&'a RawValue>,
    agent: Option<&'a RawValue>,
    agent_id: Option<&'a RawValue>,
    cwd: Option<&'a RawValue>,
    model: Option<&'a RawValue>,
    request_id: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    cost_usd: Option<&'a RawValue>,
}

/// A transcript message's `usage`, `model` and `id`; its content skipped.
#[derive(Default)]
struct Message<'a> {
    usage: Option<&'a RawValue>,
    model: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
}

/// The visitor's refusal: the line is the general reader's.
const NOT_HERE: &str = "not a line of the fast path";

impl<'de: 'a, 'a> Deserialize<'de> for Line<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Line<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut m: M,
            ) -> std::result::Result<Line<'a>, M::Error> {
                let mut l = Line::default();
                while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
                    let slot = match k.as_ref() {
                        "message" => {
                            l.message = Some(m.next_value()?);
                            continue;
                        }
                        "type" => {
                            m.next_value::<IgnoredAny>()?;
                            l.kind = true;
                            continue;
                        }
                        "usage" => &mut l.usage,
                        "isSidechain" => &mut l.is_sidechain,
                        "timestamp" => &mut l.timestamp,
                        "sent_at" => &mut l.sent_at,
                        "session_id" => &mut l.session_id,
                        "sessionId" => &mut l.session_id_camel,
                        "agent" => &mut l.agent,
                        "agentId" => &mut l.agent_id,
                        "cwd" => &mut l.cwd,
                        "model" => &mut l.model,
                        "requestId" => &mut l.request_id,
                        "id" => &mut l.id,
                        "costUSD" => &mut l.cost_usd,
                        other if SKIPPED.contains(&other) => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                        _ => return Err(serde::de::Error::custom(NOT_HERE)),
                    };
                    *slot = Some(m.next_value()?);
                }
                Ok(l)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Message<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Message<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut m: M,
            ) -> std::result::Result<Message<'a>, M::Error> {
                let mut msg = Message::default();
                while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
                    let slot = match k.as_ref() {
                        "usage" => &mut msg.usage,
                        "model" => &mut msg.model,
                        "id" => &mut msg.id,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(m.next_value()?);
                }
                Ok(msg)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// An Anthropic usage object of the plain kind (`input_tokens`, `cache_creation_input_tokens`,
/// `cache_read_input_tokens`, `cache_creation.ephemeral_5m/1h_input_tokens`, `output_tokens`,
/// `service_tier`, `server_tool_use`), its counts within bounds: read without building a map. `None` for any other
/// usage (another field, a count that is not a whole number in bounds, writes by lifetime that do
/// not add up), which the general `read_usage` reads, to the same call or the same error.
fn plain_usage(text: &str, at: &str, format: &'static str) -> Option<LoggedCall> {
    let u: PlainUsage = serde_json::from_str(text).ok()?;
    let uncached = u.input_tokens.map(count)??;
    let written = u.cache_creation_input_tokens.map_or(Some(0), count)?;
    let read = u.cache_read_input_tokens.map_or(Some(0), count)?;
    let (w5, w1h) = match u.cache_creation {
        Some(cc) if cc.get().starts_with('{') => {
            let cc: PlainLifetimes = serde_json::from_str(cc.get()).ok()?;
            let a = cc.ephemeral_5m_input_tokens.map_or(Some(0), count)?;
            let b = cc.ephemeral_1h_input_tokens.map_or(Some(0), count)?;
            if a + b != written {
                return None;
            }
            (a, b)
        }
        _ => (written, 0),
    };
    let output = u.output_tokens.map_or(Some(0), count)?;
    let mut call = LoggedCall::empty(at, format);
    call.set(uncached, w5, w1h, read, output);
    Some(call)
}

/// A count as `read_usage` takes it: `null` is 0, a whole number up to [`MAX_LOGGED_TOKENS`] itself;
/// `None` for anything else (left to `read_usage`, which names it).
fn count(r: &RawValue) -> Option<u64> {
    match r.get() {
        "null" => Some(0),
        t => serde_json::from_str::<u64>(t)
            .ok()
            .filter(|&n| n <= MAX_LOGGED_TOKENS),
    }
}

#[derive(Default)]
struct PlainUsage<'a> {
    input_tokens: Option<&'a RawValue>,
    cache_creation_input_tokens: Option<&'a RawValue>,
    cache_read_input_tokens: Option<&'a RawValue>,
    cache_creation: Option<&'a RawValue>,
    output_tokens: Option<&'a RawValue>,
}

#[derive(Default)]
struct PlainLifetimes<'a> {
    ephemeral_5m_input_tokens: Option<&'a RawValue>,
    ephemeral_1h_input_tokens: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for PlainUsage<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = PlainUsage<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut m: M,
            ) -> std::result::Result<PlainUsage<'a>, M::Error> {
                let mut u = PlainUsage::default();
                while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
                    let slot = match k.as_ref() {
                        "input_tokens" => &mut u.input_tokens,
                        "cache_creation_input_tokens" => &mut u.cache_creation_input_tokens,
                        "cache_read_input_tokens" => &mut u.cache_read_input_tokens,
                        "cache_creation" => &mut u.cache_creation,
                        "output_tokens" => &mut u.output_tokens,
                        "service_tier" | "server_tool_use" => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                        _ => return Err(serde::de::Error::custom(NOT_HERE)),
                    };
                    *slot = Some(m.next_value()?);
                }
                Ok(u)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for PlainLifetimes<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = PlainLifetimes<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut m: M,
            ) -> std::result::Result<PlainLifetimes<'a>, M::Error> {
                let mut l = PlainLifetimes::default();
                while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
                    let slot = match k.as_ref() {
                        "ephemeral_5m_input_tokens" => &mut l.ephemeral_5m_input_tokens,
                        "ephemeral_1h_input_tokens" => &mut l.ephemeral_1h_input_tokens,
                        _ => return Err(serde::de::Error::custom(NOT_HERE)),
                    };
                    *slot = Some(m.next_value()?);
                }
                Ok(l)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The usage object `text` read as `read_usage` reads it (with `hint`), its format `format` where
/// given (else the one `read_usage` tells; a plain usage object is Anthropic's).
fn usage(
    text: &str,
    at: &str,
    log: &mut UsageLog,
    prefix: &str,
    hint: Hint,
    format: Option<&'static str>,
) -> Option<Result<LoggedCall>> {
    if let Some(call) = plain_usage(text, at, format.unwrap_or("anthropic")) {
        return Some(Ok(call));
    }
    let map = as_map(text)?;
    let origin = log.origin.clone();
    Some(
        read_usage(&map, at, &origin, prefix, log, hint).map(|mut c| {
            if let Some(f) = format {
                c.format = f;
            }
            c
        }),
    )
}

/// A JSON string's value.
fn string(r: Option<&RawValue>) -> Option<String> {
    serde_json::from_str::<String>(r?.get()).ok()
}

/// The first of `values` that reads as an id, in order (the general reader's `first_string`).
fn first_id(values: &[Option<&RawValue>]) -> Option<String> {
    values.iter().find_map(|r| r.and_then(id_text))
}

/// The line read here, or `None` when it is the general reader's. `Some(Ok(None))`: a record without
/// usage.
pub(super) fn read(text: &str, at: &str, log: &mut UsageLog) -> Option<Result<Found>> {
    let l: Line = serde_json::from_str(text).ok()?;
    let mut call = match &l.message {
        // A transcript line; a message without usage is a user turn (the general reader would go on
        // to a `usage` beside the message).
        Some(msg) => {
            let read = msg.usage.and_then(|r| {
                usage(
                    r.get(),
                    at,
                    log,
                    "message.usage",
                    Hint::Anthropic,
                    Some("claude-code"),
                )
            });
            let mut call = match read {
                Some(Ok(c)) => c,
                Some(Err(e)) => return Some(Err(e)),
                None => return l.usage.is_none().then_some(Ok(None)),
            };
            call.model = string(msg.model);
            call.sidechain = l
                .is_sidechain
                .and_then(|r| serde_json::from_str::<bool>(r.get()).ok())
                == Some(true);
            call
        }
        // A `type` may make it a progress line or a Codex line.
        None if l.kind => return None,
        None => match l
            .usage
            .and_then(|r| usage(r.get(), at, log, "usage", Hint::None, None))
        {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Some(Err(e)),
            None => return Some(Ok(None)),
        },
    };
    context(&mut call, &l);
    let id = match &l.message {
        Some(msg) => string(msg.id).or_else(|| string(l.request_id)),
        None => string(l.id),
    };
    if call.stated_usd.is_none() {
        call.stated_usd = l.cost_usd.and_then(raw_f64);
    }
    Some(Ok(Some((call, id))))
}

/// The general reader's `context` on the keys a line here may have, in its order of keys.
fn context(call: &mut LoggedCall, l: &Line) {
    if call.unix_time.is_none() {
        call.unix_time = [l.timestamp, l.sent_at]
            .iter()
            .find_map(|r| r.and_then(raw_time));
    }
    if call.session.is_none() {
        call.session = first_id(&[l.session_id, l.session_id_camel]);
    }
    if call.agent.is_none() {
        call.agent = first_id(&[l.agent, l.agent_id]);
    }
    if call.project.is_none() {
        call.project = first_id(&[l.cwd]);
    }
    if call.model.is_none() {
        call.model = first_id(&[l.model]);
    }
}
