//! Positions in TOML text for error messages: a TOML parse error as a message that starts with its
//! line and column and quotes the line ([`toml_error`]), and the line and column of a field named
//! the way pcsim's errors name fields, found by a line scanner ([`locate_toml_field`], used by
//! [`Error::located_in`]).

use crate::base::text::closest;
use crate::error::Error;

/// A TOML syntax or schema error as an [`Error::Parse`] whose message starts with the line and column,
/// names the offending line, and suggests the closest field or value for an unknown one.
pub(crate) fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> Error {
    let mut message = e.message().trim().to_string();
    if let Some(hint) = unknown_name_hint(&message) {
        message.push_str(&hint);
    }
    let Some(span) = e.span() else {
        return Error::parse(origin, message);
    };
    let (line, column) = line_column(text, span.start);
    let source_line = text.lines().nth(line - 1).unwrap_or("").trim_end();
    // At most 120 characters of the line, from 60 before the column: a 60 MB line is not repeated.
    let skip = column.saturating_sub(61);
    let mut source_line: String = source_line.chars().skip(skip).take(120).collect();
    if skip > 0 {
        source_line.insert(0, '…');
    }
    Error::parse(
        origin,
        format!("line {line}, column {column}: {message}\n  {line} | {source_line}"),
    )
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// "; did you mean `x`?" for serde's "unknown field `y`, expected one of `x`, ..." messages.
fn unknown_name_hint(message: &str) -> Option<String> {
    let rest = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.split_once(p).map(|(_, r)| r))?;
    let (wanted, rest) = rest.split_once('`')?;
    let expected = rest.split_once("expected")?.1;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(wanted, candidates.iter().copied()).map(|c| format!("; did you mean `{c}`?"))
}

impl Error {
    /// Adds `:line:column` to the file of an [`Error::Invalid`] about `origin` when the field can be
    /// found in `text`, the TOML it came from (see [`locate_toml_field`]). Other errors (including
    /// those about other files, such as a tool file named by a scenario) are returned unchanged.
    pub(crate) fn located_in(self, text: &str, origin: &str) -> Self {
        match self {
            Error::Invalid {
                file,
                field,
                problem,
            } if file == origin => {
                let file = match locate_toml_field(text, &field) {
                    Some((line, column)) => format!("{file}:{line}:{column}"),
                    None => file,
                };
                Error::Invalid {
                    file,
                    field,
                    problem,
                }
            }
            other => other,
        }
    }
}

/// One `key = value` (or table header) of a TOML text, with its full path.
struct TomlSite {
    /// Array-of-tables instance the site belongs to: (array name, 0-based index).
    instance: Option<(String, usize)>,
    path: Vec<String>,
    line: usize,
    column: usize,
    value: String,
}

fn toml_key_parts(key: &str) -> Vec<String> {
    key.split('.')
        .map(|k| k.trim().trim_matches('"').trim_matches('\'').to_string())
        .filter(|k| !k.is_empty())
        .collect()
}

/// Every header and key of a TOML text (one level of inline tables included), by a line scanner that
/// is good enough for error locations; it is only used on text that the TOML parser accepted.
fn toml_sites(text: &str) -> Vec<TomlSite> {
    let mut sites = Vec::new();
    let mut table: Vec<String> = Vec::new();
    let mut instance: Option<(String, usize)> = None;
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim_start();
        let indent = raw.chars().count() - trimmed.chars().count();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        if let Some(h) = trimmed.strip_prefix("[[") {
            let name = h.split("]]").next().unwrap_or("");
            table = toml_key_parts(name);
            let key = table.join(".");
            let i = counts.entry(key.clone()).or_insert(0);
            // Only top-level arrays (model, family, event) identify instances in field names.
            if table.len() == 1 {
                instance = Some((key, *i));
            }
            *i += 1;
            sites.push(TomlSite {
                instance: instance.clone(),
                path: table.clone(),
                line,
                column: indent + 1,
                value: String::new(),
            });
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('[') {
            let name = h.split(']').next().unwrap_or("");
            table = toml_key_parts(name);
            if instance
                .as_ref()
                .is_some_and(|(a, _)| table.first() != Some(a))
            {
                instance = None;
            }
            sites.push(TomlSite {
                instance: instance.clone(),
                path: table.clone(),
                line,
                column: indent + 1,
                value: String::new(),
            });
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        let mut path = table.clone();
        path.extend(toml_key_parts(key));
        let value_start =
            key.chars().count() + 1 + (value.chars().count() - value.trim_start().chars().count());
        let value = value.trim();
        sites.push(TomlSite {
            instance: instance.clone(),
            path: path.clone(),
            line,
            column: indent + value_start + 1,
            value: value.trim_matches('"').to_string(),
        });
        // One level of inline table: `x = { a = 1, b = "..." }`.
        if let Some(inner) = value.strip_prefix('{') {
            let offset = indent + value_start + 2;
            let mut consumed = 0;
            for part in inner.split(',') {
                if let Some((k, v)) = part.split_once('=') {
                    let mut p = path.clone();
                    p.extend(toml_key_parts(k));
                    let lead = v.chars().count() - v.trim_start().chars().count();
                    sites.push(TomlSite {
                        instance: instance.clone(),
                        path: p,
                        line,
                        column: offset + consumed + k.chars().count() + 1 + lead,
                        value: v
                            .trim()
                            .trim_end_matches('}')
                            .trim()
                            .trim_matches('"')
                            .to_string(),
                    });
                }
                consumed += part.chars().count() + 1;
            }
        }
    }
    sites
}

/// Line and column of a field named the way pcsim's errors name fields — `session.calls`,
/// `event[2].at_call` (0-based, in file order), ``model `gpt-5.6`.cache.explicit.min_tokens`` — in
/// TOML text. Falls back to the closest enclosing table or key that exists; `None` if nothing matches.
pub(crate) fn locate_toml_field(text: &str, field: &str) -> Option<(usize, usize)> {
    // Split off an instance selector on the first segment.
    let (first, rest) = match field.find(['.', ' ', '[']) {
        Some(i) => field.split_at(i),
        None => (field, ""),
    };
    let mut selector_index: Option<usize> = None;
    let mut selector_id: Option<&str> = None;
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(" `") {
        let (id, r) = r.split_once('`')?;
        selector_id = Some(id);
        rest = r;
    } else if let Some(r) = rest.strip_prefix('[') {
        let (i, r) = r.split_once(']')?;
        selector_index = i.parse().ok();
        rest = r;
    }
    let mut path = vec![first.to_string()];
    path.extend(toml_key_parts(rest.trim_start_matches('.')));
    let sites = toml_sites(text);
    let wanted_instance: Option<usize> = match (selector_index, selector_id) {
        (Some(i), _) => Some(i),
        (None, Some(id)) => sites
            .iter()
            .find(|s| s.path == [first.to_string(), "id".to_string()] && s.value == id)
            .and_then(|s| s.instance.as_ref().map(|(_, i)| *i)),
        (None, None) => None,
    };
    if (selector_index.is_some() || selector_id.is_some()) && wanted_instance.is_none() {
        return None;
    }
    let in_scope = |s: &&TomlSite| match wanted_instance {
        Some(i) => s
            .instance
            .as_ref()
            .is_some_and(|(a, k)| a == first && *k == i),
        None => true,
    };
    for len in (1..=path.len()).rev() {
        if let Some(s) = sites
            .iter()
            .filter(in_scope)
            .find(|s| s.path[..] == path[..len])
        {
            return Some((s.line, s.column));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_fields_by_path_instance_and_inline_key() {
        let text = "name = \"x\"\n[session]\ncalls = 0\ngap = { dist = \"exponential\", mean = -1 }\n\n[[model]]\nid = \"a\"\nprice = { value = 1.0, source = \"s\" }\n[[model]]\nid = \"b\"\nprice = { value = -5, source = \"s\" }\n[model.cache.explicit]\nmin = 3\n[[event]]\nat_call = 1\n[[event]]\nat_call = 99\n";
        assert_eq!(locate_toml_field(text, "session.calls"), Some((3, 9)));
        assert_eq!(locate_toml_field(text, "session.gap.mean"), Some((4, 38)));
        assert_eq!(locate_toml_field(text, "model `b`.price"), Some((11, 9)));
        assert_eq!(
            locate_toml_field(text, "model `b`.price.source"),
            Some((11, 32))
        );
        assert_eq!(
            locate_toml_field(text, "model `b`.cache.explicit.min"),
            Some((13, 7))
        );
        // A missing key points at its table.
        assert_eq!(
            locate_toml_field(text, "model `b`.cache.explicit.tiers"),
            Some((12, 1))
        );
        assert_eq!(locate_toml_field(text, "event[1].at_call"), Some((17, 11)));
        assert_eq!(locate_toml_field(text, "model `zz`.price"), None);
    }

    #[test]
    fn unknown_field_gets_a_suggestion() {
        let m = "unknown field `cals`, expected one of `calls`, `system_tokens`";
        assert_eq!(
            unknown_name_hint(m).as_deref(),
            Some("; did you mean `calls`?")
        );
        assert_eq!(
            unknown_name_hint("unknown field `zzzzzzzz`, expected `calls`"),
            None
        );
    }
}
