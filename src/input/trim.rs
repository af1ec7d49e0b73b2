//! Trimming what-ifs: pure transforms of a tool list that show where a tool block's tokens are.
//!
//! Each transform returns new tools and leaves the input alone, so a report can price the original and
//! every trimmed variant side by side.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::model::tools::Tool;

/// One way of trimming a tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trim {
    /// Every tool description cut to its first sentence (parameter descriptions untouched).
    FirstSentence,
    /// Every `description` inside the input schemas removed (tool descriptions untouched).
    NoParamDescriptions,
    /// Only the parameters listed in the top-level `required` array kept.
    RequiredOnly,
    /// All three at once.
    All,
}

impl Trim {
    /// Every trim, in report order.
    pub(crate) const ALL: [Trim; 4] = [
        Trim::FirstSentence,
        Trim::NoParamDescriptions,
        Trim::RequiredOnly,
        Trim::All,
    ];

    /// Stable name used in reports and JSON.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Trim::FirstSentence => "first-sentence",
            Trim::NoParamDescriptions => "no-param-descriptions",
            Trim::RequiredOnly => "required-only",
            Trim::All => "all",
        }
    }

    /// The trim with this name ([`Trim::as_str`]), if any.
    pub(crate) fn parse(name: &str) -> Option<Trim> {
        Trim::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// What the trim does, for table captions.
    pub(crate) fn explain(self) -> &'static str {
        match self {
            Trim::FirstSentence => "tool descriptions cut to their first sentence",
            Trim::NoParamDescriptions => "descriptions inside input schemas removed",
            Trim::RequiredOnly => "optional parameters removed",
            Trim::All => "all three trims together",
        }
    }

    /// The tools with this trim applied.
    pub fn apply(self, tools: &[Tool]) -> Vec<Tool> {
        match self {
            Trim::FirstSentence => tools.iter().map(first_sentence_tool).collect(),
            Trim::NoParamDescriptions => tools.iter().map(no_param_descriptions).collect(),
            Trim::RequiredOnly => tools.iter().map(required_only).collect(),
            Trim::All => tools
                .iter()
                .map(|t| required_only(&no_param_descriptions(&first_sentence_tool(t))))
                .collect(),
        }
    }
}

/// Abbreviations whose full stop does not end a sentence.
const ABBREVIATIONS: [&str; 8] = [
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "eg.",
];

/// The first sentence of `text`: up to and including the first `.`, `!` or `?` that is followed by
/// whitespace or the end (not an abbreviation such as "e.g."), or up to the first blank line or line
/// break followed by a list item, whichever comes first. Leading and trailing whitespace is removed.
pub(crate) fn first_sentence(text: &str) -> String {
    let text = text.trim();
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let next = text[end..].chars().next();
        match c {
            '.' | '!' | '?' if next.is_none_or(char::is_whitespace) => {
                let word_start = text[..i]
                    .rfind(|ch: char| ch.is_whitespace() || ch == '(')
                    .map_or(0, |p| p + 1);
                let word = text[word_start..end].to_ascii_lowercase();
                if c == '.' && ABBREVIATIONS.contains(&word.as_str()) {
                    continue;
                }
                return text[..end].to_string();
            }
            '\n' => {
                // A paragraph break or the start of a list ends the lead sentence.
                let rest = text[end..].trim_start_matches([' ', '\t']);
                if rest.starts_with('\n')
                    || rest.starts_with("- ")
                    || rest.starts_with("* ")
                    || rest.starts_with(|ch: char| ch.is_ascii_digit())
                {
                    return text[..i].trim_end().to_string();
                }
            }
            _ => {}
        }
    }
    text.to_string()
}

fn first_sentence_tool(t: &Tool) -> Tool {
    Tool {
        description: first_sentence(&t.description),
        ..t.clone()
    }
}

/// The tool with every `description` keyword inside its input schema removed (at any depth; a
/// parameter that is *named* `description` stays).
pub(crate) fn no_param_descriptions(t: &Tool) -> Tool {
    Tool {
        input_schema: strip_descriptions(&t.input_schema, false),
        ..t.clone()
    }
}

fn strip_descriptions(v: &Value, in_properties: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| in_properties || k.as_str() != "description")
                .map(|(k, x)| {
                    let props = !in_properties && k == "properties";
                    (k.clone(), strip_descriptions(x, props))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| strip_descriptions(x, false)).collect()),
        _ => v.clone(),
    }
}

/// The tool with only its required top-level parameters (those named in the schema's `required`
/// array). Nested object schemas are left whole: a client that calls the tool still has to fill them.
pub(crate) fn required_only(t: &Tool) -> Tool {
    let Some(schema) = t.input_schema.as_object() else {
        return t.clone();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = schema.clone();
    if let Some(Value::Object(props)) = schema.get("properties") {
        let kept: Map<String, Value> = props
            .iter()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.insert("properties".into(), Value::Object(kept));
    }
    Tool {
        input_schema: Value::Object(out),
        ..t.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_sentence_cases() {
        assert_eq!(first_sentence("Reads a file. Then more."), "Reads a file.");
        assert_eq!(
            first_sentence("Search, e.g. by name. Second."),
            "Search, e.g. by name."
        );
        assert_eq!(
            first_sentence("Version 1.2 is used here! Rest"),
            "Version 1.2 is used here!"
        );
        assert_eq!(
            first_sentence("Lead line\n\nWhen to use:\n- a"),
            "Lead line"
        );
        assert_eq!(first_sentence("Tools:\n- one\n- two"), "Tools:");
        assert_eq!(first_sentence("  no full stop  "), "no full stop");
        assert_eq!(first_sentence(""), "");
        assert_eq!(first_sentence("Ünïcode ok. More"), "Ünïcode ok.");
    }

    fn tool() -> Tool {
        Tool {
            name: "t".into(),
            description: "Does a thing. In detail.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A param named description."},
                    "opt": {"type": "object", "description": "x",
                            "properties": {"inner": {"type": "string", "description": "y"}}}
                },
                "required": ["description"]
            }),
        }
    }

    #[test]
    fn no_param_descriptions_keeps_a_parameter_named_description() {
        let t = no_param_descriptions(&tool());
        assert_eq!(t.description, "Does a thing. In detail.");
        assert_eq!(
            t.input_schema["properties"]["description"],
            json!({"type": "string"})
        );
        assert_eq!(
            t.input_schema["properties"]["opt"],
            json!({"type": "object", "properties": {"inner": {"type": "string"}}})
        );
        // Only the tool's own description is prose now.
        assert_eq!(t.metrics().prose_bytes, t.description.len() as u64);
    }

    #[test]
    fn required_only_drops_optional_parameters() {
        let t = required_only(&tool());
        let props = t.input_schema["properties"].as_object().unwrap();
        assert_eq!(props.keys().collect::<Vec<_>>(), ["description"]);
        assert_eq!(t.input_schema["required"], json!(["description"]));
        // No `required` array: every parameter is optional and goes.
        let mut bare = tool();
        bare.input_schema
            .as_object_mut()
            .unwrap()
            .remove("required");
        assert!(required_only(&bare).input_schema["properties"]
            .as_object()
            .unwrap()
            .is_empty());
    }

    #[test]
    fn every_trim_shrinks_or_keeps_and_all_is_smallest() {
        let tools = vec![tool(), crate::model::tools::synthetic_tool(1, 3)];
        let before: u64 = tools.iter().map(|t| t.metrics().bytes).sum();
        let size = |ts: &[Tool]| ts.iter().map(|t| t.metrics().bytes).sum::<u64>();
        let sizes: Vec<u64> = Trim::ALL.iter().map(|t| size(&t.apply(&tools))).collect();
        for s in &sizes {
            assert!(*s < before, "{sizes:?} vs {before}");
        }
        assert!(sizes[3] <= *sizes[..3].iter().min().unwrap());
        // Pure: the input is untouched.
        assert_eq!(tools[0], tool());
    }
}
