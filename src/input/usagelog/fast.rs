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
//! left to the general reader, as is a line that is not valid JSON. A usage object is read in the
//! same pass, as counts: one that is not of the plain kind (another field, a count that is not a
//! whole number in bounds, writes by lifetime that do not add up) leaves the whole line to the
//! general reader, which reads it with the same `read_usage` (to the same call, or the same error
//! naming the field). A key given twice keeps its last value, as there.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{raw_f64, FileState, Found, Key, LoggedCall, UsageLog, MAX_LOGGED_TOKENS};

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
    usage: Option<PlainUsage<'a>>,
    kind: bool,
    is_sidechain: Option<&'a RawValue>,
    timestamp: Option<Time>,
    sent_at: Option<Time>,
    session_id: Option<Id<'a>>,
    session_id_camel: Option<Id<'a>>,
    agent: Option<Id<'a>>,
    agent_id: Option<Id<'a>>,
    cwd: Option<Id<'a>>,
    model: Option<Id<'a>>,
    request_id: Option<Text<'a>>,
    id: Option<Text<'a>>,
    cost_usd: Option<&'a RawValue>,
}

/// A transcript message's `usage`, `model` and `id`; its content skipped.
#[derive(Default)]
struct Message<'a> {
    usage: Option<PlainUsage<'a>>,
    model: Option<Text<'a>>,
    id: Option<Text<'a>>,
}

/// A value read in the line's pass as the general reader reads it afterwards from its text, each
/// kind of value to what that reader makes of it (`None` where it reads nothing).
trait ReadValue<'de>: Sized {
    /// What a string gives (borrowed from the line when it has no escapes).
    fn text(s: std::borrow::Cow<'de, str>) -> Self;
    /// What a number gives.
    fn number(n: serde_json::Number) -> Self;
    /// What any other value (`null`, a boolean, an array, an object) gives.
    fn other() -> Self;
}

/// The visitor of a [`ReadValue`]: every kind of JSON value taken, arrays and objects skipped.
struct ValueVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: ReadValue<'de>> Visitor<'de> for ValueVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<T, E> {
        Ok(T::text(std::borrow::Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<T, E> {
        Ok(T::text(std::borrow::Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<T, E> {
        Ok(T::text(std::borrow::Cow::Owned(v)))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<T, E> {
        Ok(T::number(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<T, E> {
        Ok(T::number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<T, E> {
        Ok(serde_json::Number::from_f64(v).map_or_else(T::other, T::number))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<T, E> {
        Ok(T::other())
    }
    fn visit_unit<E>(self) -> std::result::Result<T, E> {
        Ok(T::other())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> std::result::Result<T, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::other())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> std::result::Result<T, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(T::other())
    }
}

/// Deserialize for a [`ReadValue`].
macro_rules! read_value {
    ($t:ident) => {
        impl<'de: 'a, 'a> Deserialize<'de> for $t<'a> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                d.deserialize_any(ValueVisitor(std::marker::PhantomData))
            }
        }
    };
}

/// A value as `id_text` reads it: a non-empty string, or a number's text.
struct Id<'a>(Option<std::borrow::Cow<'a, str>>);

impl<'de: 'a, 'a> ReadValue<'de> for Id<'a> {
    fn text(s: std::borrow::Cow<'de, str>) -> Self {
        Id((!s.is_empty()).then_some(s))
    }
    fn number(n: serde_json::Number) -> Self {
        Id(Some(std::borrow::Cow::Owned(n.to_string())))
    }
    fn other() -> Self {
        Id(None)
    }
}
read_value!(Id);

/// A value as `string` reads it: a string, whatever it holds.
struct Text<'a>(Option<std::borrow::Cow<'a, str>>);

impl<'de: 'a, 'a> ReadValue<'de> for Text<'a> {
    fn text(s: std::borrow::Cow<'de, str>) -> Self {
        Text(Some(s))
    }
    fn number(_: serde_json::Number) -> Self {
        Text(None)
    }
    fn other() -> Self {
        Text(None)
    }
}
read_value!(Text);

/// A value as `raw_time` reads it ([`super::parse_time`]): an RFC 3339 time or a number in a
/// string, or a number (of milliseconds past 1e11).
struct Time(Option<f64>);

impl<'de> ReadValue<'de> for Time {
    fn text(s: std::borrow::Cow<'de, str>) -> Self {
        Time(super::parse_rfc3339(&s).or_else(|| s.parse::<f64>().ok()))
    }
    fn number(n: serde_json::Number) -> Self {
        Time(n.as_f64().map(|x| if x > 1e11 { x / 1000.0 } else { x }))
    }
    fn other() -> Self {
        Time(None)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor(std::marker::PhantomData))
    }
}

/// The visitor's refusal: the line is the general reader's.
const NOT_HERE: &str = "not a line of the fast path";

/// A line read into a [`Line`] in place (a line's values are many: returned by value, they were
/// copied at every level of the parser).
struct LineSeed<'l, 'a>(&'l mut Line<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for LineSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for LineSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<(), M::Error> {
        let l = self.0;
        while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
            let slot = match k.as_ref() {
                "message" => {
                    // A second `message` replaces the first whole, as a map's last value does.
                    m.next_value_seed(MessageSeed(l.message.insert(Message::default())))?;
                    continue;
                }
                "type" => {
                    m.next_value::<IgnoredAny>()?;
                    l.kind = true;
                    continue;
                }
                "usage" => {
                    l.usage = Some(m.next_value()?);
                    continue;
                }
                "timestamp" => {
                    l.timestamp = Some(m.next_value()?);
                    continue;
                }
                "sent_at" => {
                    l.sent_at = Some(m.next_value()?);
                    continue;
                }
                "requestId" => {
                    l.request_id = Some(m.next_value()?);
                    continue;
                }
                "id" => {
                    l.id = Some(m.next_value()?);
                    continue;
                }
                "session_id" | "sessionId" | "agent" | "agentId" | "cwd" | "model" => {
                    let slot = match k.as_ref() {
                        "session_id" => &mut l.session_id,
                        "sessionId" => &mut l.session_id_camel,
                        "agent" => &mut l.agent,
                        "agentId" => &mut l.agent_id,
                        "cwd" => &mut l.cwd,
                        _ => &mut l.model,
                    };
                    *slot = Some(m.next_value()?);
                    continue;
                }
                "isSidechain" => &mut l.is_sidechain,
                "costUSD" => &mut l.cost_usd,
                other if SKIPPED.contains(&other) => {
                    m.next_value::<IgnoredAny>()?;
                    continue;
                }
                _ => return Err(serde::de::Error::custom(NOT_HERE)),
            };
            *slot = Some(m.next_value()?);
        }
        Ok(())
    }
}

/// A transcript message read into a [`Message`] in place.
struct MessageSeed<'l, 'a>(&'l mut Message<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for MessageSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for MessageSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<(), M::Error> {
        let msg = self.0;
        while let Some(Key(k)) = m.next_key::<Key<'a>>()? {
            match k.as_ref() {
                "usage" => msg.usage = Some(m.next_value()?),
                "model" => msg.model = Some(m.next_value()?),
                "id" => msg.id = Some(m.next_value()?),
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// An Anthropic usage object of the plain kind (`input_tokens`, `cache_creation_input_tokens`,
/// `cache_read_input_tokens`, `cache_creation.ephemeral_5m/1h_input_tokens`, `output_tokens`,
/// `service_tier`, `server_tool_use`), its counts within bounds, as the call it gives. `None` when
/// it has no `input_tokens` or its writes by lifetime are not plain (the general reader's).
fn plain_usage(u: &PlainUsage, at: &str, format: &'static str) -> Option<LoggedCall> {
    let uncached = u.input_tokens?.0;
    let written = u.cache_creation_input_tokens.map_or(0, |c| c.0);
    let read = u.cache_read_input_tokens.map_or(0, |c| c.0);
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
    let output = u.output_tokens.map_or(0, |c| c.0);
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

/// A count as [`count`] takes it, read in the line's one pass: a value that is not one fails the
/// line, which the general reader then reads (and names what is wrong).
#[derive(Clone, Copy)]
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        // What `count` accepts: `null` (0) or what reads as a `u64`, up to the limit.
        match Option::<u64>::deserialize(d)? {
            None => Ok(Count(0)),
            Some(n) if n <= MAX_LOGGED_TOKENS => Ok(Count(n)),
            Some(_) => Err(serde::de::Error::custom(NOT_HERE)),
        }
    }
}

/// A plain usage object's counts, read in the line's pass; its `cache_creation` kept as text.
#[derive(Default)]
struct PlainUsage<'a> {
    input_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
    cache_creation: Option<&'a RawValue>,
    output_tokens: Option<Count>,
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
                        "cache_creation" => {
                            u.cache_creation = Some(m.next_value()?);
                            continue;
                        }
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

/// A JSON string's value (the general reader's `string`).
fn string(t: &Option<Text>) -> Option<String> {
    t.as_ref()?.0.as_deref().map(str::to_string)
}

/// The first of `values` that reads as an id, in order (the general reader's `first_string`).
fn first_id(values: &[&Option<Id>]) -> Option<String> {
    values
        .iter()
        .find_map(|v| v.as_ref().and_then(|i| i.0.as_deref()))
        .map(str::to_string)
}

/// Reads the line into `log` (its call pushed, or counted as a record without usage); `false` when
/// it is the general reader's.
pub(super) fn read(text: &str, at: &str, log: &mut UsageLog, state: &mut FileState) -> bool {
    match call(text, at) {
        Some(Some((call, id))) => super::push(call, id, log, state),
        Some(None) => log.records_without_usage += 1,
        None => return false,
    }
    state.fast_lines += 1;
    true
}

/// The line's call and the id that merges its repeats, or `None` when it is the general reader's.
/// `Some(None)`: a record without usage.
#[inline(always)]
fn call(text: &str, at: &str) -> Option<Found> {
    // `serde_json::from_str`, into a line made here.
    let mut l = Line::default();
    let mut de = serde_json::Deserializer::from_str(text);
    LineSeed(&mut l).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let mut call = match &l.message {
        // A transcript line; a message without usage is a user turn (the general reader would go on
        // to a `usage` beside the message). A usage that is not plain is the general reader's.
        Some(msg) => {
            let mut call = match &msg.usage {
                Some(u) => plain_usage(u, at, "claude-code")?,
                None => return l.usage.is_none().then_some(None),
            };
            call.model = string(&msg.model);
            call.sidechain = l
                .is_sidechain
                .and_then(|r| serde_json::from_str::<bool>(r.get()).ok())
                == Some(true);
            call
        }
        // A `type` may make it a progress line or a Codex line.
        None if l.kind => return None,
        None => match &l.usage {
            Some(u) => plain_usage(u, at, "anthropic")?,
            None => return Some(None),
        },
    };
    context(&mut call, &l);
    let id = match &l.message {
        Some(msg) => string(&msg.id).or_else(|| string(&l.request_id)),
        None => string(&l.id),
    };
    if call.stated_usd.is_none() {
        call.stated_usd = l.cost_usd.and_then(raw_f64);
    }
    Some(Some((call, id)))
}

/// The general reader's `context` on the keys a line here may have, in its order of keys.
fn context(call: &mut LoggedCall, l: &Line) {
    if call.unix_time.is_none() {
        call.unix_time = [&l.timestamp, &l.sent_at]
            .iter()
            .find_map(|t| t.as_ref().and_then(|t| t.0));
    }
    if call.session.is_none() {
        call.session = first_id(&[&l.session_id, &l.session_id_camel]);
    }
    if call.agent.is_none() {
        call.agent = first_id(&[&l.agent, &l.agent_id]);
    }
    if call.project.is_none() {
        call.project = first_id(&[&l.cwd]);
    }
    if call.model.is_none() {
        call.model = first_id(&[&l.model]);
    }
}
