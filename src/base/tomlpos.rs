//! Positions in TOML text for error messages: a TOML parse error as a message that starts with its
//! line and column and quotes the line ([`toml_error`], from the parser's error span), and the line
//! and column of a field named the way pcsim's errors name fields, from the spans of the parser's
//! own document tree ([`locate_toml_field`], used by [`Error::located_in`]).

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

/// One step of a field name: a key, or an element of an array (`event[2]`, or the element of
/// `model` whose `id` is `gpt-5.6`).
enum Step<'a> {
    Key(String),
    Index(usize),
    Id(&'a str),
}

/// The steps of a field named the way pcsim's errors name fields: `session.gap.mean`,
/// `event[2].at_call`, ``model `gpt-5.6`.cache.explicit.min_tokens``. `None` if the name is not of
/// that form (an unclosed selector).
fn field_steps(field: &str) -> Option<Vec<Step<'_>>> {
    let mut steps = Vec::new();
    let mut rest = field;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(" `") {
            let (id, r) = r.split_once('`')?;
            steps.push(Step::Id(id));
            rest = r;
        } else if let Some(r) = rest.strip_prefix('[') {
            let (i, r) = r.split_once(']')?;
            steps.push(Step::Index(i.trim().parse().ok()?));
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else {
            let end = rest.find(['.', ' ', '[']).unwrap_or(rest.len());
            let key = rest[..end].trim().trim_matches('"').trim_matches('\'');
            if !key.is_empty() {
                steps.push(Step::Key(key.to_string()));
            }
            rest = &rest[end..];
        }
    }
    Some(steps)
}

/// Line and column of a field named the way pcsim's errors name fields — `session.calls`,
/// `event[2].at_call` (0-based, in file order), ``model `gpt-5.6`.cache.explicit.min_tokens`` — in
/// TOML text, from the spans of the TOML parser's own document tree: the value of a key, the header
/// of a table. Falls back to the closest enclosing table or key that exists; `None` if the first
/// step is not there, an instance selector matches nothing, or the text does not parse.
pub(crate) fn locate_toml_field(text: &str, field: &str) -> Option<(usize, usize)> {
    use toml::de::{DeTable, DeValue};
    let steps = field_steps(field)?;
    let root = DeTable::parse(text).ok()?;
    let root = root.get_ref();
    let mut found: Option<std::ops::Range<usize>> = None;
    let mut table: Option<&DeTable> = Some(root);
    let mut array: Option<&[toml::Spanned<DeValue>]> = None;
    for (n, step) in steps.iter().enumerate() {
        let next = match step {
            Step::Key(k) => table.and_then(|t| t.get(k.as_str())),
            Step::Index(i) => array.and_then(|a| a.get(*i)),
            Step::Id(id) => array.and_then(|a| {
                a.iter().find(|e| match e.get_ref() {
                    DeValue::Table(t) => t
                        .get("id")
                        .is_some_and(|v| matches!(v.get_ref(), DeValue::String(s) if s == id)),
                    _ => false,
                })
            }),
        };
        let Some(next) = next else {
            // A selector that matches nothing, or a first key that is not there, locates nothing;
            // a missing deeper key falls back to what encloses it.
            if n == 0 || !matches!(step, Step::Key(_)) {
                return None;
            }
            break;
        };
        found = Some(next.span());
        table = None;
        array = None;
        match next.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(&a[..]),
            _ => {}
        }
    }
    found.map(|span| line_column(text, span.start))
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
    fn positions_come_from_the_parser_not_from_lines_that_look_like_toml() {
        // A multi-line string whose lines look like a table and a key, then the real ones: a line
        // scanner found the string's `calls = 1` (line 3).
        let text = "description = \"\"\"\n[session]\ncalls = 1\n\"\"\"\n[session]\ncalls = 0\n";
        assert_eq!(locate_toml_field(text, "session.calls"), Some((6, 9)));
        // Dotted keys, an element of a plain array, and a key of an inline table in an array.
        let text = "session.calls = 7\nlist = [1, 2, { name = \"x\" }]\n";
        assert_eq!(locate_toml_field(text, "session.calls"), Some((1, 17)));
        assert_eq!(locate_toml_field(text, "list[1]"), Some((2, 12)));
        assert_eq!(locate_toml_field(text, "list[2].name"), Some((2, 24)));
        assert_eq!(locate_toml_field(text, "list[9]"), None);
        assert_eq!(locate_toml_field(text, "nothing.here"), None);
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
