//! Duplicate keys in a JSON document. `serde_json` keeps the last of two equal keys in one object
//! without a word, so a client configuration naming one server twice lost the first (issue 29);
//! [`first_duplicate_key`] finds such a key, with its path, in one pass over the text.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// What one value holds: the path (keys and indices from the value down) of its first duplicate
/// key, if any.
struct Dup(Option<Vec<String>>);

impl<'de> Deserialize<'de> for Dup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DupVisitor)
    }
}

struct DupVisitor;

impl<'de> Visitor<'de> for DupVisitor {
    type Value = Dup;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_unit<E>(self) -> Result<Dup, E> {
        Ok(Dup(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dup, A::Error> {
        let mut found = None;
        let mut i = 0usize;
        while let Some(Dup(d)) = seq.next_element::<Dup>()? {
            if found.is_none() {
                found = d.map(|mut p| {
                    p.insert(0, format!("[{i}]"));
                    p
                });
            }
            i += 1;
        }
        Ok(Dup(found))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dup, A::Error> {
        let mut keys = std::collections::HashSet::new();
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            let Dup(d) = map.next_value::<Dup>()?;
            if found.is_none() {
                if let Some(mut p) = d {
                    p.insert(0, key.clone());
                    found = Some(p);
                } else if keys.contains(&key) {
                    found = Some(vec![key.clone()]);
                }
            }
            keys.insert(key);
        }
        Ok(Dup(found))
    }
}

/// The first key that appears twice in one object of the JSON `text`, as a dotted path
/// (`mcpServers.fs`); `None` when there is none or the text is not JSON (its parse says why).
pub(crate) fn first_duplicate_key(text: &str) -> Option<String> {
    let Dup(found) = serde_json::from_str::<Dup>(text).ok()?;
    found.map(|p| {
        p.iter().fold(String::new(), |mut s, k| {
            if !s.is_empty() && !k.starts_with('[') {
                s.push('.');
            }
            s.push_str(k);
            s
        })
    })
}

#[cfg(test)]
mod tests {
    use super::first_duplicate_key;

    #[test]
    fn duplicate_keys_are_found_with_their_path() {
        assert_eq!(first_duplicate_key(r#"{"a": 1, "b": 2}"#), None);
        assert_eq!(
            first_duplicate_key(r#"{"a": 1, "a": 2}"#).as_deref(),
            Some("a")
        );
        assert_eq!(
            first_duplicate_key(r#"{"mcpServers": {"fs": {}, "git": {}, "fs": {"x": 1}}}"#)
                .as_deref(),
            Some("mcpServers.fs")
        );
        assert_eq!(
            first_duplicate_key(r#"{"s": [{"k": 1}, {"k": 1, "k": 2}]}"#).as_deref(),
            Some("s[1].k")
        );
        // Equal keys in different objects are not duplicates.
        assert_eq!(first_duplicate_key(r#"[{"k": 1}, {"k": 2}]"#), None);
        assert_eq!(first_duplicate_key("not json"), None);
    }
}
