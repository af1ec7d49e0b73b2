//! Tool definitions: loading MCP `tools/list` output (and API-form tool arrays), converting to the
//! form sent to model APIs, measuring, and generating synthetic tool sets.
//!
//! One concept: the tool definition (`Tool`) and what is done to one: read from a tool file (with
//! errors that point at the entry), rendered in each provider's API form, measured, and generated.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::base::files::read_text_within;
use crate::error::{Error, Result};

/// Fields that MCP servers send but clients drop before calling a model API.
pub const MCP_ONLY_FIELDS: [&str; 5] =
    ["annotations", "outputSchema", "title", "execution", "_meta"];

/// Upper bound on the tools of one list: per tool file and over all the files loaded together
/// (`load_tool_files`, `pcsim tools`, a scenario's list at any call). Checked on the array's length
/// before any tool is parsed or compared, so a huge file costs one JSON parse, not the parsing of
/// every tool and a duplicate check.
pub const MAX_TOOLS: usize = 10_000;

/// Upper bound on the bytes of tool definitions: per tool file, over the files of one list loaded
/// together (`pcsim tools`, `--tools`), over the captured lists of a configuration's servers
/// (`pcsim config`), and over every tool file a scenario loads (initial list, servers and events). Checked on the file's size before it is read and on the running total before
/// a file is parsed, so an oversized list costs no parsing, rendering or counting. Rendering and
/// counting a list on every default model costs about 1.3 s per MB on the 2-core development
/// machine (`pcsim tools` on 6.4 MB: 8.4 s), so at 2 MiB `tools` and `run` stay within 5 s; the
/// largest real MCP tool lists are tens of kilobytes, and 2 MiB is over 500,000 tokens.
pub const MAX_TOOL_BYTES: u64 = 2 * 1024 * 1024;

/// What a tool file is called in size refusals.
const TOOL_FILE: &str = "a tool file (tool definitions)";

/// One tool in API form: what a client sends to the model for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    /// Tool name, unique within a tool list.
    pub name: String,
    /// Tool description (prose).
    pub description: String,
    /// JSON Schema of the input (an object schema).
    pub input_schema: Value,
}

/// Sizes of a tool's JSON, the inputs of a family's rendering model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolMetrics {
    /// Bytes of the API-form JSON pretty-printed with two-space indentation.
    pub bytes: u64,
    /// Bytes of description text in it (the tool's and every nested `description` string).
    pub prose_bytes: u64,
}

impl Tool {
    /// The tool as a JSON object in the neutral API form `{name, description, input_schema}`.
    pub fn api_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        if !self.description.is_empty() {
            m.insert(
                "description".into(),
                Value::String(self.description.clone()),
            );
        }
        m.insert("input_schema".into(), self.input_schema.clone());
        Value::Object(m)
    }

    /// Byte sizes used by the rendering model.
    pub fn metrics(&self) -> ToolMetrics {
        let json = self.api_json();
        let bytes = serde_json::to_string_pretty(&json)
            .map(|s| s.len())
            .unwrap_or(0) as u64;
        ToolMetrics {
            bytes,
            prose_bytes: prose_bytes(&json, None),
        }
    }

    /// A stable identity of the tool's content (FNV-1a over its compact JSON, [`Self::api_json`]).
    pub fn content_hash(&self) -> u64 {
        /// [`Tool::api_json`] borrowed: the same JSON, written straight into the hash (no copy of
        /// the schema, no string).
        #[derive(Serialize)]
        struct Api<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            description: &'a str,
            input_schema: &'a Value,
        }
        let mut h = crate::base::hash::Fnv1aWriter::default();
        let api = Api {
            name: &self.name,
            description: &self.description,
            input_schema: &self.input_schema,
        };
        match serde_json::to_writer(&mut h, &api) {
            Ok(()) => h.0,
            // Serializing a JSON value into a sink that never fails cannot fail; hashed the long
            // way should it ever do.
            Err(_) => crate::base::hash::fnv1a(self.api_json().to_string().as_bytes()),
        }
    }
}

fn prose_bytes(v: &Value, key: Option<&str>) -> u64 {
    match v {
        Value::String(s) if key == Some("description") => s.len() as u64,
        Value::Object(m) => {
            // Inside `properties`, keys are parameter names: a parameter called "description" is
            // structure, not prose, so its key must not be taken as the description field.
            m.iter()
                .map(|(k, x)| {
                    prose_bytes(
                        x,
                        if key == Some("properties") {
                            None
                        } else {
                            Some(k)
                        },
                    )
                })
                .sum()
        }
        Value::Array(a) => a.iter().map(|x| prose_bytes(x, None)).sum(),
        _ => 0,
    }
}

/// Loads one tool file. Accepted shapes: a JSON-RPC response `{"result":{"tools":[...]}}`, a result
/// object `{"tools":[...]}`, a bare array; tools in MCP form (`inputSchema`), Anthropic form
/// (`input_schema`) or OpenAI form (`{"type":"function","function":{...,"parameters"}}`).
/// Warnings (things clients accept) are dropped; see [`load_tool_files_with_warnings`].
pub fn load_tool_file(path: &Path) -> Result<Vec<Tool>> {
    load_tool_file_with_warnings(path).map(|(t, _)| t)
}

/// Like [`load_tool_file`], also returning warnings about inputs that clients accept but that are
/// probably not what the author meant (a missing description, a missing input schema, ...).
pub(crate) fn load_tool_file_with_warnings(path: &Path) -> Result<(Vec<Tool>, Vec<String>)> {
    let text = read_text_within(path, MAX_TOOL_BYTES, TOOL_FILE)?;
    parse_tool_list_with_warnings(&text, &path.display().to_string())
}

/// Parses tool-list JSON text; `origin` names it in errors.
pub fn parse_tool_list(text: &str, origin: &str) -> Result<Vec<Tool>> {
    parse_tool_list_with_warnings(text, origin).map(|(t, _)| t)
}

/// Parses tool-list JSON text, returning the tools and warnings; `origin` names it in both.
pub(crate) fn parse_tool_list_with_warnings(
    text: &str,
    origin: &str,
) -> Result<(Vec<Tool>, Vec<String>)> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
    // A JSON-RPC error response is a common thing to save by mistake: say what the server said.
    if let Some(err) = v.get("error").filter(|_| v.get("result").is_none()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)");
        return Err(Error::invalid(
            origin,
            "error",
            format!("a JSON-RPC error response, not a tool list: {msg}"),
        ));
    }
    let list = locate_tool_array(&v).ok_or_else(|| {
        Error::invalid(
            origin,
            "tools",
            format!(
                "not a tool list: expected a JSON-RPC response with result.tools, an object with `tools`, or an array of tools; found {}",
                describe_json(&v)
            ),
        )
    })?;
    let array_path = tool_array_path(&v);
    if list.len() > MAX_TOOLS {
        return Err(Error::invalid(
            origin,
            if array_path.is_empty() {
                "tools".to_string()
            } else {
                array_path.join(".")
            },
            format!(
                "{} tools in the file exceed the limit of {MAX_TOOLS} tools in one list",
                list.len()
            ),
        ));
    }
    let mut tools = Vec::with_capacity(list.len());
    let mut warnings = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let tool = parse_tool(item, origin, i, &mut warnings)
            .map_err(|e| locate_tool_error(e, text, origin, &array_path, i, item))?;
        tools.push(tool);
    }
    let mut seen = std::collections::HashMap::new();
    for (i, t) in tools.iter().enumerate() {
        if let Some(first) = seen.insert(t.name.as_str(), i) {
            let e = Error::invalid(
                origin,
                format!("tools[{i}].name"),
                format!(
                    "duplicate tool name `{}` in one file (also tools[{first}]); model APIs reject duplicate names",
                    t.name
                ),
            );
            return Err(locate_tool_error(e, text, origin, &array_path, i, &list[i]));
        }
    }
    if tools.is_empty() {
        warnings.push(format!("{origin}: the tool list is empty"));
    }
    Ok((tools, warnings))
}

/// A short description of a JSON value's shape for error messages.
fn describe_json(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(m) => {
            let keys: Vec<&str> = m.keys().map(String::as_str).take(6).collect();
            if keys.is_empty() {
                "an empty object".into()
            } else {
                format!("an object with keys {}", keys.join(", "))
            }
        }
    }
}

/// Keys leading to the tool array, by the same rules as `locate_tool_array`.
fn tool_array_path(v: &Value) -> Vec<&'static str> {
    let mut path = Vec::new();
    let mut cur = v;
    while let Value::Object(m) = cur {
        match m.get("result") {
            Some(r) => {
                path.push("result");
                cur = r;
            }
            None => {
                path.push("tools");
                break;
            }
        }
    }
    path
}

/// Adds `:line:column` to the file of an error about tool `index`: the offending key when the field
/// names one (`name`, `description`, the schema), else the tool itself.
fn locate_tool_error(
    e: Error,
    text: &str,
    origin: &str,
    array_path: &[&str],
    index: usize,
    item: &Value,
) -> Error {
    let Error::Invalid {
        file,
        field,
        problem,
    } = e
    else {
        return e;
    };
    if file != origin {
        return Error::Invalid {
            file,
            field,
            problem,
        };
    }
    let mut path: Vec<JsonSeg> = array_path.iter().map(|k| JsonSeg::Key(k)).collect();
    path.push(JsonSeg::Index(index));
    let openai = item.get("type").and_then(Value::as_str) == Some("function")
        && item.get("function").is_some_and(Value::is_object);
    let def = if openai {
        item.get("function")
    } else {
        Some(item)
    };
    let key = [
        "name",
        "description",
        "inputSchema",
        "input_schema",
        "parameters",
    ]
    .into_iter()
    .find(|k| {
        let wanted = if k.starts_with("input") || *k == "parameters" {
            "inputSchema"
        } else {
            k
        };
        field.ends_with(&format!(".{wanted}")) && def.is_some_and(|d| d.get(k).is_some())
    });
    let element = json_offset(text, &path);
    if openai {
        path.push(JsonSeg::Key("function"));
    }
    if let Some(k) = key {
        path.push(JsonSeg::Key(k));
    }
    let file = match json_offset(text, &path).or(element) {
        Some(offset) => {
            let (line, column) = crate::base::tomlpos::line_column(text, offset);
            format!("{file}:{line}:{column}")
        }
        None => file,
    };
    Error::Invalid {
        file,
        field,
        problem,
    }
}

/// A step into a JSON document.
enum JsonSeg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Byte offset of the value at `path` in `text`, which must already be known to be valid JSON; a small
/// scanner, since `serde_json::Value` keeps no positions. `None` when the path is not there.
fn json_offset(text: &str, path: &[JsonSeg]) -> Option<usize> {
    fn ws(b: &[u8], i: &mut usize) {
        while matches!(b.get(*i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            *i += 1;
        }
    }
    /// From an opening quote to just after the closing one.
    fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        loop {
            match b.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    }
    /// From the start of a value to just after it.
    fn skip(b: &[u8], i: usize) -> Option<usize> {
        match b.get(i)? {
            b'"' => string_end(b, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match b.get(j)? {
                        b'"' => {
                            j = string_end(b, j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let mut j = i;
                while !matches!(
                    b.get(j),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                ) {
                    j += 1;
                }
                Some(j)
            }
        }
    }
    let b = text.as_bytes();
    let mut i = 0;
    ws(b, &mut i);
    for seg in path {
        match (seg, b.get(i)?) {
            (JsonSeg::Key(k), b'{') => {
                i += 1;
                loop {
                    ws(b, &mut i);
                    if *b.get(i)? != b'"' {
                        return None;
                    }
                    let end = string_end(b, i)?;
                    let key = text.get(i + 1..end - 1)?;
                    i = end;
                    ws(b, &mut i);
                    if *b.get(i)? != b':' {
                        return None;
                    }
                    i += 1;
                    ws(b, &mut i);
                    if key == *k {
                        break;
                    }
                    i = skip(b, i)?;
                    ws(b, &mut i);
                    if *b.get(i)? != b',' {
                        return None;
                    }
                    i += 1;
                }
            }
            (JsonSeg::Index(n), b'[') => {
                i += 1;
                for _ in 0..*n {
                    ws(b, &mut i);
                    i = skip(b, i)?;
                    ws(b, &mut i);
                    if *b.get(i)? != b',' {
                        return None;
                    }
                    i += 1;
                }
                ws(b, &mut i);
                if *b.get(i)? == b']' {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(i)
}

fn locate_tool_array(v: &Value) -> Option<&Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        Value::Object(m) => {
            if let Some(r) = m.get("result") {
                return locate_tool_array(r);
            }
            m.get("tools").and_then(Value::as_array)
        }
        _ => None,
    }
}

fn parse_tool(
    item: &Value,
    origin: &str,
    index: usize,
    warnings: &mut Vec<String>,
) -> Result<Tool> {
    let obj = item.as_object().ok_or_else(|| {
        Error::invalid(
            origin,
            format!("tools[{index}]"),
            format!(
                "a tool must be a JSON object, found {}",
                describe_json(item)
            ),
        )
    })?;
    // OpenAI form nests the definition under `function`.
    let obj = match (obj.get("type").and_then(Value::as_str), obj.get("function")) {
        (Some("function"), Some(Value::Object(f))) => f,
        (Some("function"), Some(other)) => {
            return Err(Error::invalid(
                origin,
                format!("tools[{index}].function"),
                format!("must be an object, found {}", describe_json(other)),
            ))
        }
        _ => obj,
    };
    let name = match obj.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("tools[{index}].name"),
                format!("a tool needs a non-empty string name, found {other}"),
            ))
        }
        None => {
            return Err(Error::invalid(
                origin,
                format!("tools[{index}].name"),
                "a tool needs a non-empty string name; this tool has none",
            ))
        }
    };
    let at = format!("tools[{index}] (`{name}`)");
    if !api_safe_name(&name) {
        warnings.push(format!(
            "{origin}: {at}: the name does not match ^[a-zA-Z0-9_-]{{1,64}}$, which the Anthropic and OpenAI APIs require; clients rename such a tool or fail"
        ));
    }
    let description = match obj.get("description") {
        None | Some(Value::Null) => {
            // MCP makes the description optional and clients send the tool without one.
            warnings.push(format!(
                "{origin}: {at} has no description; clients send it without one (the model sees only the name and schema)"
            ));
            String::new()
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("{at}.description"),
                format!(
                    "description must be a string, found {}",
                    describe_json(other)
                ),
            ))
        }
    };
    let (key, schema) = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|k| obj.get(*k).map(|v| (*k, v)))
        .map_or((None, None), |(k, v)| (Some(k), Some(v)));
    let schema = match schema {
        // Clients substitute an empty object schema for a tool that takes no input.
        None | Some(Value::Null) => {
            warnings.push(format!(
                "{origin}: {at} has no input schema; clients send an empty object schema (no parameters)"
            ));
            serde_json::json!({"type": "object", "properties": {}})
        }
        Some(s @ Value::Object(m)) => {
            match m.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                None => warnings.push(format!(
                    "{origin}: {at}.{} has no `\"type\": \"object\"`; MCP requires it and some APIs reject the tool without it",
                    key.unwrap_or("inputSchema")
                )),
                Some(t) => warnings.push(format!(
                    "{origin}: {at}.{} has type {t}, not \"object\"; Anthropic and OpenAI reject such a tool",
                    key.unwrap_or("inputSchema")
                )),
            }
            s.clone()
        }
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("{at}.{}", key.unwrap_or("inputSchema")),
                format!(
                    "the input schema must be a JSON object, found {}",
                    describe_json(other)
                ),
            ))
        }
    };
    Ok(Tool {
        name,
        description,
        input_schema: schema,
    })
}

/// True when `name` is accepted as a tool name by the Anthropic and OpenAI APIs.
fn api_safe_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Loads several tool files into one list, in order (several servers connected at once).
/// Duplicate names across files are an error naming both files, as API providers reject them.
pub fn load_tool_files(paths: &[impl AsRef<Path>]) -> Result<Vec<Tool>> {
    load_tool_files_with_warnings(paths).map(|(t, _)| t)
}

/// Like `load_tool_files`, also returning the warnings of every file, in order.
pub fn load_tool_files_with_warnings(
    paths: &[impl AsRef<Path>],
) -> Result<(Vec<Tool>, Vec<String>)> {
    load_tool_files_counted(paths, &mut 0)
}

/// [`load_tool_files`] for one of several lists loaded by one input (a scenario's initial list,
/// servers and events): `loaded` is the bytes of tool files it loaded before, and grows by these
/// files; the total is held to [`MAX_TOOL_BYTES`] before each file is parsed.
pub(crate) fn load_tool_files_within(
    paths: &[impl AsRef<Path>],
    loaded: &mut u64,
) -> Result<Vec<Tool>> {
    load_tool_files_counted(paths, loaded).map(|(t, _)| t)
}

fn load_tool_files_counted(
    paths: &[impl AsRef<Path>],
    loaded: &mut u64,
) -> Result<(Vec<Tool>, Vec<String>)> {
    let mut all: Vec<Tool> = Vec::new();
    // Name -> index of the file that defined it first: one hash lookup per tool (linear).
    let mut defined: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut warnings = Vec::new();
    for (file, p) in paths.iter().enumerate() {
        let origin = p.as_ref().display().to_string();
        let text = read_text_within(p.as_ref(), MAX_TOOL_BYTES, TOOL_FILE)?;
        let size = text.len() as u64;
        if *loaded + size > MAX_TOOL_BYTES {
            return Err(Error::invalid(
                &origin,
                "size",
                format!(
                    "{size} bytes of tool definitions here and {} in the tool files loaded before it exceed the {MAX_TOOL_BYTES}-byte limit of tool definitions loaded together",
                    *loaded
                ),
            ));
        }
        *loaded += size;
        let (tools, w) = parse_tool_list_with_warnings(&text, &origin)?;
        // The combined list is one list sent to the model: the same limit, before the duplicate check.
        if all.len() + tools.len() > MAX_TOOLS {
            return Err(Error::invalid(
                &origin,
                "tools",
                format!(
                    "{} tools in this file and {} in the files before it exceed the limit of {MAX_TOOLS} tools in one list",
                    tools.len(),
                    all.len()
                ),
            ));
        }
        warnings.extend(w);
        for t in tools {
            if let Some(&first) = defined.get(&t.name) {
                let first = paths[first].as_ref().display().to_string();
                return Err(Error::invalid(
                    &origin,
                    format!("tool `{}`", t.name),
                    format!("duplicate tool name: also defined in {first}; model APIs reject duplicate names (clients that connect both servers must rename one, e.g. with a server prefix)"),
                ));
            }
            defined.insert(t.name.clone(), file);
            all.push(t);
        }
    }
    Ok((all, warnings))
}

// ---------------------------------------------------------------------------------------------
// Provider API forms

/// Schema keywords that Gemini rejects even on its JSON Schema path (`parametersJsonSchema`), so
/// clients strip them from MCP schemas at every depth.
pub(crate) const GEMINI_UNSUPPORTED_SCHEMA_KEYS: [&str; 1] = ["$schema"];

/// Nesting depth of a schema: object properties and array items each add a level.
pub(crate) fn schema_depth(v: &Value) -> usize {
    let props = v
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.values().map(|x| 1 + schema_depth(x)).max().unwrap_or(1))
        .unwrap_or(0);
    let items = v.get("items").map_or(0, |x| 1 + schema_depth(x));
    let any = ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_array))
        .flatten()
        .map(schema_depth)
        .max()
        .unwrap_or(0);
    props.max(items).max(any)
}

/// The tool in Anthropic Messages API form: `{name, description, input_schema}`.
pub fn anthropic_tool(tool: &Tool) -> Value {
    tool.api_json()
}

/// The tool in OpenAI Chat Completions form: `{"type":"function","function":{name, description,
/// parameters}}`.
pub fn openai_tool(tool: &Tool) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), Value::String(tool.name.clone()));
    if !tool.description.is_empty() {
        f.insert(
            "description".into(),
            Value::String(tool.description.clone()),
        );
    }
    f.insert("parameters".into(), tool.input_schema.clone());
    serde_json::json!({"type": "function", "function": Value::Object(f)})
}

/// One Gemini function declaration `{name, description, parametersJsonSchema}`, as current clients
/// (e.g. `@google/genai`'s `mcpToGeminiTool`) send MCP tools: the JSON Schema whole, minus the keywords
/// Gemini rejects (`GEMINI_UNSUPPORTED_SCHEMA_KEYS`) at every depth (not inside `properties`, where
/// keys are parameter names). The older `parameters` field takes only an OpenAPI subset and rejects
/// `additionalProperties`, which most MCP servers emit.
pub fn gemini_declaration(tool: &Tool) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), Value::String(tool.name.clone()));
    if !tool.description.is_empty() {
        f.insert(
            "description".into(),
            Value::String(tool.description.clone()),
        );
    }
    f.insert(
        "parametersJsonSchema".into(),
        strip_schema_keys(&tool.input_schema, &GEMINI_UNSUPPORTED_SCHEMA_KEYS, false),
    );
    Value::Object(f)
}

/// Gemini's `tools` entry for a whole list: `{"functionDeclarations":[...]}`.
#[cfg(test)]
pub(crate) fn gemini_tools(tools: &[Tool]) -> Value {
    serde_json::json!({"functionDeclarations": tools.iter().map(gemini_declaration).collect::<Vec<_>>()})
}

/// Removes schema keywords `keys` at every depth; `in_properties` marks a `properties` map, whose
/// keys are parameter names and must survive.
fn strip_schema_keys(v: &Value, keys: &[&str], in_properties: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| in_properties || !keys.contains(&k.as_str()))
                .map(|(k, x)| {
                    let child_is_props = !in_properties && k == "properties";
                    (k.clone(), strip_schema_keys(x, keys, child_is_props))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| strip_schema_keys(x, keys, false))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// A synthetic tool of identical shape: `params` string parameters and one-line descriptions.
pub fn synthetic_tool(index: usize, params: usize) -> Tool {
    let mut props = Map::new();
    let mut required = Vec::new();
    for j in 1..=params {
        let name = format!("param_{j}");
        props.insert(
            name.clone(),
            serde_json::json!({"type": "string", "description": format!("Input value {j}.")}),
        );
        required.push(Value::String(name));
    }
    Tool {
        name: format!("synthetic_tool_{index:02}"),
        description: format!("Runs synthetic operation {index} and returns the result."),
        input_schema: serde_json::json!({"type": "object", "properties": props, "required": required}),
    }
}

/// `count` synthetic tools numbered from `first`.
pub fn synthetic_tools(first: usize, count: usize, params: usize) -> Vec<Tool> {
    (first..first + count)
        .map(|i| synthetic_tool(i, params))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_hash_is_fnv1a_of_the_compact_api_json() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference/mcp");
        let mut tools = load_tool_file(&dir.join("server-github.tools.json")).unwrap();
        assert!(tools.len() > 20);
        // Without a description, and with text JSON escapes.
        tools[0].description.clear();
        tools[1].description = "quote \" tab \t é \u{1}".into();
        for t in &tools {
            let expected = crate::base::hash::fnv1a(t.api_json().to_string().as_bytes());
            assert_eq!(t.content_hash(), expected, "{}", t.name);
        }
    }

    #[test]
    fn accepts_every_shape() {
        let mcp = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"x","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}"#;
        let anthropic = r#"[{"name":"a","description":"x","input_schema":{"type":"object"}}]"#;
        let openai = r#"[{"type":"function","function":{"name":"a","description":"x","parameters":{"type":"object"}}}]"#;
        let bare = r#"{"tools":[{"name":"a","description":"x","inputSchema":{"type":"object"}}]}"#;
        let parsed: Vec<_> = [mcp, anthropic, openai, bare]
            .iter()
            .map(|t| parse_tool_list(t, "t").unwrap())
            .collect();
        for p in &parsed {
            assert_eq!(p, &parsed[0]);
        }
        assert!(!parsed[0][0].api_json().to_string().contains("annotations"));
    }

    #[test]
    fn rejects_nameless_tool_and_bad_schema() {
        let e = parse_tool_list(r#"[{"description":"x"}]"#, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.json") && e.contains("tools[0].name"), "{e}");
        let e = parse_tool_list(r#"[{"name":"a","inputSchema":[1]}]"#, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`a`") && e.contains("object"), "{e}");
        let e = parse_tool_list("{not json", "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.json") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn errors_point_at_the_line_and_column_of_the_bad_value() {
        let text = "{\"result\": {\"tools\": [\n  {\"name\": \"a\", \"inputSchema\": {}},\n  {\"name\": \"b\",\n   \"inputSchema\": [1]}\n]}}";
        let e = parse_tool_list(text, "f.json").unwrap_err().to_string();
        assert!(
            e.starts_with("f.json:4:19: field `tools[1] (`b`).inputSchema`"),
            "{e}"
        );
        let openai =
            "[{\"type\": \"function\", \"function\": {\"name\": \"x\", \"description\": 5}}]";
        let e = parse_tool_list(openai, "o.json").unwrap_err().to_string();
        assert!(
            e.starts_with("o.json:1:64: field `tools[0] (`x`).description`"),
            "{e}"
        );
        let dup = "[{\"name\": \"a\"},\n {\"name\": \"a\"}]";
        let e = parse_tool_list(dup, "d.json").unwrap_err().to_string();
        assert!(e.starts_with("d.json:2:11: field `tools[1].name`"), "{e}");
        let e = parse_tool_list("[1, \"x\"]", "n.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("n.json:1:2: field `tools[0]`"), "{e}");
    }

    #[test]
    fn prose_counts_descriptions_not_a_parameter_named_description() {
        let t = Tool {
            name: "t".into(),
            description: "abcd".into(),
            input_schema: serde_json::json!({"type":"object","properties":{"description":{"type":"string","description":"xy"}}}),
        };
        assert_eq!(t.metrics().prose_bytes, 6);
    }

    #[test]
    fn mcp_only_fields_are_dropped_in_every_api_form() {
        let text = r#"{"tools":[{"name":"a","title":"A","description":"x","inputSchema":{"type":"object"},
            "outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"forbidden"},"_meta":{"k":1}}]}"#;
        let t = parse_tool_list(text, "t").unwrap();
        for v in [anthropic_tool(&t[0]), openai_tool(&t[0]), gemini_tools(&t)] {
            let s = v.to_string();
            for f in MCP_ONLY_FIELDS {
                assert!(!s.contains(&format!("\"{f}\"")), "{f} left in {s}");
            }
        }
    }

    #[test]
    fn provider_forms_have_the_documented_keys() {
        let t = Tool {
            name: "get_weather".into(),
            description: "Weather.".into(),
            input_schema: serde_json::json!({"type":"object","$schema":"x","additionalProperties":false,
                "properties":{"additionalProperties":{"type":"string","additionalProperties":false}}}),
        };
        let a = anthropic_tool(&t);
        assert_eq!(a["name"], "get_weather");
        assert_eq!(a["input_schema"], t.input_schema);
        let o = openai_tool(&t);
        assert_eq!(o["type"], "function");
        assert_eq!(o["function"]["description"], "Weather.");
        assert_eq!(o["function"]["parameters"], t.input_schema);
        let g = gemini_tools(std::slice::from_ref(&t));
        let p = &g["functionDeclarations"][0]["parametersJsonSchema"];
        // `$schema` goes; JSON Schema keywords Gemini accepts on this path stay.
        assert!(p.get("$schema").is_none());
        assert_eq!(p["additionalProperties"], false);
        let mut with_param = t.clone();
        with_param.input_schema = serde_json::json!({"type":"object","properties":{"$schema":{"type":"string","$schema":"x"}}});
        // A parameter that happens to be called `$schema` stays, minus the keyword inside its schema.
        assert_eq!(
            gemini_declaration(&with_param)["parametersJsonSchema"]["properties"]["$schema"],
            serde_json::json!({"type":"string"})
        );
        // Round trip: every form parses back to the same tool.
        for v in [a, o] {
            let back = parse_tool_list(&serde_json::json!([v]).to_string(), "rt").unwrap();
            assert_eq!(back[0], t);
        }
    }

    #[test]
    fn accepted_oddities_give_warnings_naming_the_tool() {
        let (t, w) = parse_tool_list_with_warnings(
            r#"[{"name":"bare"},{"name":"s","description":"d","inputSchema":{"properties":{}}}]"#,
            "f.json",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].input_schema["type"], "object");
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].contains("f.json") && w[0].contains("`bare`") && w[0].contains("no description")
        );
        assert!(w[1].contains("`bare`") && w[1].contains("no input schema"));
        assert!(w[2].contains("`s`") && w[2].contains("type"));
        let (_, w) = parse_tool_list_with_warnings(
            r#"[{"name":"read file","description":"d","inputSchema":{"type":"object"}}]"#,
            "f.json",
        )
        .unwrap();
        assert!(
            w.len() == 1 && w[0].contains("`read file`") && w[0].contains("64"),
            "{w:?}"
        );
    }

    #[test]
    fn bad_inputs_name_file_and_tool() {
        let cases = [
            ("[1, 2]", "tools[0]"),
            (
                r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}"#,
                "Method not found",
            ),
            (r#"{"items":[]}"#, "keys items"),
            (r#"[{"name":"a","description":7}]"#, "`a`"),
            (r#"[{"name":""}]"#, "tools[0].name"),
            (r#"[{"name":"a"},{"name":"a"}]"#, "also tools[0]"),
            (
                r#"[{"type":"function","function":"x"}]"#,
                "tools[0].function",
            ),
        ];
        for (text, want) in cases {
            let e = parse_tool_list(text, "f.json").unwrap_err().to_string();
            assert!(e.contains("f.json") && e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn several_files_combine_in_order_and_reject_cross_file_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        let c = dir.path().join("c.json");
        std::fs::write(
            &a,
            r#"[{"name":"x","description":"d"},{"name":"y","description":"d"}]"#,
        )
        .unwrap();
        std::fs::write(&b, r#"{"tools":[{"name":"z"}]}"#).unwrap();
        std::fs::write(&c, r#"[{"name":"y","description":"again"}]"#).unwrap();
        let (t, w) = load_tool_files_with_warnings(&[&a, &b]).unwrap();
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "z"]);
        assert!(w.iter().any(|w| w.contains("b.json") && w.contains("`z`")));
        let e = load_tool_files(&[&a, &c]).unwrap_err().to_string();
        assert!(
            e.contains("c.json") && e.contains("a.json") && e.contains("`y`"),
            "{e}"
        );
    }

    #[test]
    fn synthetic_tool_size_is_stable() {
        // The calibration of models.toml depends on this shape: 533 bytes pretty, 92 of them prose.
        let m = synthetic_tool(7, 3).metrics();
        assert_eq!((m.bytes, m.prose_bytes), (533, 92));
    }
}
