//! A JSON tree borrowed from the text it was parsed from: strings without escapes are slices of
//! the text (no copy), objects are their entries in order (no map built). A request body of a trace
//! is read once, front to back, into its regions; building a `serde_json::Value` (a map per object,
//! a copy per string) was most of `explain`'s time.
//!
//! It is a drop-in for the reading `explain` does with `serde_json::Value`, with the same results:
//! numbers are `serde_json::Number` (parsed by the same parser), an object's repeated key keeps its
//! first place and its last value (as `Value` with `preserve_order` keeps them), and serialising a
//! tree writes the bytes `Value::to_string` writes for the same text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// One JSON value, its strings borrowed from the text where they have no escapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as `serde_json` parses it.
    Number(Number),
    /// A string.
    Str(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object: its entries in the order of the text, each key once.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// Parses `text` (a whole JSON text).
    pub(crate) fn parse(text: &'a str) -> serde_json::Result<Json<'a>> {
        serde_json::from_str(text)
    }

    /// The value of `key` when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// [`Json::get`], mutable.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        match self {
            Json::Object(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Whether this is an object with `key`.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub(crate) fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The elements, mutable, if this is an array.
    pub(crate) fn as_array_mut(&mut self) -> Option<&mut Vec<Json<'a>>> {
        match self {
            Json::Array(v) => Some(v),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Compact JSON text, byte for byte what `Value::to_string` writes for the same value.
    pub(crate) fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The same value as a `serde_json::Value`.
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::Str(t) => s.serialize_str(t),
            Json::Array(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for e in v {
                    seq.serialize_element(e)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
        }
    }
}

/// Objects with more entries than this find a repeated key through a set, not a scan.
const SCAN_KEYS: usize = 32;

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        Deserialize::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Json<'de>, E> {
        Ok(Number::from_f64(n).map_or(Json::Null, Json::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s.to_string())))
    }
    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(e) = seq.next_element()? {
            v.push(e);
        }
        Ok(Json::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        let mut seen: Option<std::collections::HashMap<Cow<'de, str>, usize>> = None;
        while let Some(Key(k)) = map.next_key()? {
            let v: Json<'de> = map.next_value()?;
            // A repeated key keeps its first place and takes the last value (as `Value` does).
            let at = match &mut seen {
                Some(set) => set.get(&k).copied(),
                None => entries.iter().position(|(e, _)| *e == k),
            };
            match at {
                Some(i) => entries[i].1 = v,
                None => {
                    if let Some(set) = &mut seen {
                        set.insert(k.clone(), entries.len());
                    }
                    entries.push((k, v));
                    if seen.is_none() && entries.len() > SCAN_KEYS {
                        seen = Some(
                            entries
                                .iter()
                                .enumerate()
                                .map(|(i, (k, _))| (k.clone(), i))
                                .collect(),
                        );
                    }
                }
            }
        }
        Ok(Json::Object(entries))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts whose tree must serialise as `Value` does: escapes, numbers of every kind, repeated
    /// keys, nesting, unicode.
    const TEXTS: [&str; 8] = [
        r#"{"a":1,"b":[true,false,null],"c":{"d":"e\n\"f\"","g":-3,"h":1.5e3,"i":0.1}}"#,
        r#"{"k":1,"z":2,"k":3}"#,
        r#"[1e400, 18446744073709551615, -9223372036854775808, 1.0, 2.50]"#,
        r#"{"text":"caf\u00e9 \ud83d\ude00 \/ \t","x":"plain"}"#,
        r#"  { "spaced" : [ 1 , 2 ] , "e" : { } , "a" : [ ] }  "#,
        r#""just a string""#,
        r#"{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"b7":7,"b8":8,"b9":9,"c0":0,"c1":1,"c2":2,"c3":3,"c4":4,"c5":5,"c6":6,"c7":7,"c8":8,"c9":9,"d0":0,"d1":1,"d2":2,"a3":33,"d3":3}"#,
        r#"{"nested":[[[{"deep":[{"x":"\u0000"}]}]]]}"#,
    ];

    #[test]
    fn a_tree_serialises_as_serde_json_value_does() {
        for text in TEXTS {
            let value: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(e) => {
                    assert!(Json::parse(text).is_err(), "{text}: {e}");
                    continue;
                }
            };
            let tree = Json::parse(text).unwrap();
            assert_eq!(tree.to_json_string(), value.to_string(), "{text}");
            assert_eq!(tree.to_value(), value, "{text}");
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let text = r#"{"plain":"abc","escaped":"a\nb"}"#;
        let tree = Json::parse(text).unwrap();
        assert!(matches!(
            tree.get("plain"),
            Some(Json::Str(Cow::Borrowed("abc")))
        ));
        assert!(matches!(tree.get("escaped"), Some(Json::Str(Cow::Owned(s))) if s == "a\nb"));
        assert_eq!(tree.get("missing"), None);
    }
}
