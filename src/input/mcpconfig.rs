//! MCP client configuration files (`.mcp.json`, Claude Desktop's `claude_desktop_config.json`, Cursor's
//! `mcp.json`, VS Code's `servers` map): the stdio servers they start, captured together, and the
//! per-call cost of the tool block they add, per server and for the whole configuration.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::error::{read_text, Error, Result};
use crate::input::capture::{capture_command, CaptureOptions};
use crate::model::catalog::ModelSpec;
use crate::model::strategy::Strategy;
use crate::model::tools::{parse_tool_list, Tool};

/// One stdio server of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerEntry {
    /// Its key in the `mcpServers` map.
    pub name: String,
    /// Program to run.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
}

/// A configuration entry pcsim does not start, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedServer {
    /// Its key in the map.
    pub name: String,
    /// Why it is not captured.
    pub reason: String,
}

/// A parsed configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpConfig {
    /// The file it came from.
    pub origin: String,
    /// Stdio servers, in name order.
    pub servers: Vec<ServerEntry>,
    /// Entries not captured (remote transports, disabled entries).
    pub skipped: Vec<SkippedServer>,
}

/// Loads a configuration file.
pub fn load_config(path: &Path) -> Result<McpConfig> {
    parse_config(&read_text(path)?, &path.display().to_string())
}

/// Parses configuration JSON; `origin` names it in errors. The server map is `mcpServers` (Claude
/// Desktop, Claude Code, Cursor, Windsurf) or `servers` (VS Code). `${VAR}` and `${VAR:-default}` in
/// `command`, `args` and `env` are expanded from the environment, as Claude Code does; a server that
/// needs an unset variable is skipped with the reason.
pub fn parse_config(text: &str, origin: &str) -> Result<McpConfig> {
    parse_config_with(text, origin, &|k| std::env::var(k).ok())
}

/// Expands `${VAR}` / `${VAR:-default}`; `Err(name)` for an unset variable without a default.
pub fn expand_vars(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (lookup(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(name.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// [`parse_config`] with an explicit environment, for tests.
pub fn parse_config_with(
    text: &str,
    origin: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpConfig> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
    let (key, map) = ["mcpServers", "servers"]
        .iter()
        .find_map(|k| v.get(*k).map(|m| (*k, m)))
        .ok_or_else(|| {
            Error::invalid(
                origin,
                "mcpServers",
                "no `mcpServers` (or `servers`) map: not an MCP client configuration",
            )
        })?;
    let map = map.as_object().ok_or_else(|| {
        Error::invalid(
            origin,
            key,
            "must be an object mapping server names to entries",
        )
    })?;
    let mut cfg = McpConfig {
        origin: origin.to_string(),
        servers: Vec::new(),
        skipped: Vec::new(),
    };
    for (name, entry) in map {
        let at = format!("{key}.{name}");
        let e = entry
            .as_object()
            .ok_or_else(|| Error::invalid(origin, &at, "a server entry must be an object"))?;
        if e.get("disabled").and_then(Value::as_bool) == Some(true) {
            cfg.skipped.push(SkippedServer {
                name: name.clone(),
                reason: "disabled".into(),
            });
            continue;
        }
        let transport = e
            .get("type")
            .or_else(|| e.get("transport"))
            .and_then(Value::as_str)
            .unwrap_or("stdio");
        if e.get("command").is_none() && (e.contains_key("url") || transport != "stdio") {
            cfg.skipped.push(SkippedServer {
                name: name.clone(),
                reason: format!(
                    "remote server ({}); only stdio servers can be captured",
                    if transport == "stdio" {
                        "url"
                    } else {
                        transport
                    }
                ),
            });
            continue;
        }
        let command = e
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| {
                Error::invalid(
                    origin,
                    format!("{at}.command"),
                    "a stdio server needs a non-empty string `command`",
                )
            })?
            .to_string();
        let args = match e.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        Error::invalid(
                            origin,
                            format!("{at}.args[{i}]"),
                            format!("arguments must be strings, found {x}"),
                        )
                    })
                })
                .collect::<Result<_>>()?,
            Some(other) => {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.args"),
                    format!("must be an array of strings, found {other}"),
                ))
            }
        };
        let env = match e.get("env") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, x)| match x {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    // Numbers and booleans are written unquoted in some hand-made configs.
                    Value::Number(_) | Value::Bool(_) => Ok((k.clone(), x.to_string())),
                    _ => Err(Error::invalid(
                        origin,
                        format!("{at}.env.{k}"),
                        format!("environment values must be strings, found {x}"),
                    )),
                })
                .collect::<Result<_>>()?,
            Some(other) => {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.env"),
                    format!("must be an object of strings, found {other}"),
                ))
            }
        };
        let mut entry = ServerEntry {
            name: name.clone(),
            command,
            args,
            env,
        };
        let mut missing = None;
        let mut expand = |s: &mut String, field: String| {
            if missing.is_some() {
                return;
            }
            match expand_vars(s, lookup) {
                Ok(v) => *s = v,
                Err(var) => missing = Some((var, field)),
            }
        };
        expand(&mut entry.command, format!("{at}.command"));
        for (i, a) in entry.args.iter_mut().enumerate() {
            expand(a, format!("{at}.args[{i}]"));
        }
        for (k, v) in entry.env.iter_mut() {
            expand(v, format!("{at}.env.{k}"));
        }
        if let Some((var, field)) = missing {
            cfg.skipped.push(SkippedServer {
                name: name.clone(),
                reason: format!(
                    "needs environment variable `{var}` (in {field}), which is not set"
                ),
            });
            continue;
        }
        cfg.servers.push(entry);
    }
    Ok(cfg)
}

/// The outcome of capturing one server.
#[derive(Debug, Clone)]
pub struct ServerOutcome {
    /// The entry.
    pub entry: ServerEntry,
    /// Its tools, or the error message that names the server.
    pub tools: std::result::Result<Vec<Tool>, String>,
    /// The raw `tools/list` result, for saving.
    pub raw: Option<Value>,
}

/// Captures every server of a configuration, in parallel (each bounded by `opts.timeout`), so the
/// whole configuration takes about as long as its slowest server.
pub fn capture_all(cfg: &McpConfig, opts: &CaptureOptions) -> Vec<ServerOutcome> {
    std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .servers
            .iter()
            .map(|e| {
                s.spawn(move || {
                    let got =
                        capture_command(&e.name, &e.command, &e.args, &e.env, opts).and_then(|c| {
                            let raw = c.result_json();
                            let tools = parse_tool_list(&raw.to_string(), &e.name)?;
                            Ok((tools, raw))
                        });
                    match got {
                        Ok((tools, raw)) => ServerOutcome {
                            entry: e.clone(),
                            tools: Ok(tools),
                            raw: Some(raw),
                        },
                        Err(err) => ServerOutcome {
                            entry: e.clone(),
                            tools: Err(err.to_string()),
                            raw: None,
                        },
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(&cfg.servers)
            .map(|(h, e)| {
                h.join().unwrap_or_else(|_| ServerOutcome {
                    entry: e.clone(),
                    tools: Err(format!("MCP server `{}`: capture thread panicked", e.name)),
                    raw: None,
                })
            })
            .collect()
    })
}

/// The per-call cost of one tool block on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overhead {
    /// The server, or `None` for the whole configuration.
    pub server: Option<String>,
    /// Model id.
    pub model: String,
    /// Number of tools.
    pub tools: usize,
    /// Tokens of the rendered block (the preamble counted once).
    pub block_tokens: u64,
    /// Dollars per call when the block is sent uncached.
    pub usd_per_call: f64,
    /// Dollars per call when the block is read from cache under the model's default strategy
    /// (`None` when the model has no caching).
    pub usd_per_call_cached: Option<f64>,
}

fn overhead_row(model: &ModelSpec, server: Option<&str>, tools: &[Tool]) -> Overhead {
    let block = model.rendering().block_tokens(tools);
    let read = Strategy::parse("cached")
        .and_then(|s| s.resolve(model))
        .ok()
        .and_then(|r| r.rules)
        .map(|r| r.read_multiplier.value);
    Overhead {
        server: server.map(str::to_string),
        model: model.id.clone(),
        tools: tools.len(),
        block_tokens: block,
        usd_per_call: model.input_usd(block as f64),
        usd_per_call_cached: read.map(|m| model.input_usd(block as f64) * m),
    }
}

/// Overhead of each captured server and of all of them together, for each model (models outer).
/// Duplicate tool names across servers are kept in the total (a client would have to rename them)
/// and returned so the caller can warn.
pub fn overheads(
    models: &[&ModelSpec],
    outcomes: &[ServerOutcome],
) -> (Vec<Overhead>, Vec<String>) {
    let all: Vec<Tool> = outcomes
        .iter()
        .filter_map(|o| o.tools.as_ref().ok())
        .flatten()
        .cloned()
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut dups: Vec<String> = Vec::new();
    for t in &all {
        if !seen.insert(t.name.as_str()) && !dups.contains(&t.name) {
            dups.push(t.name.clone());
        }
    }
    let mut rows = Vec::new();
    for m in models {
        for o in outcomes {
            if let Ok(tools) = &o.tools {
                rows.push(overhead_row(m, Some(&o.entry.name), tools));
            }
        }
        rows.push(overhead_row(m, None, &all));
    }
    (rows, dups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_desktop_and_vscode_shapes() {
        let desktop = r#"{"mcpServers":{
            "memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]},
            "github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"x","PORT":8080}},
            "remote":{"type":"http","url":"https://example.com/mcp"},
            "off":{"command":"x","disabled":true}}}"#;
        let c = parse_config(desktop, "c.json").unwrap();
        let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
        // In the file's order (serde_json keeps it: the tool renderers need schemas as sent).
        assert_eq!(names, ["memory", "github"]);
        assert_eq!(c.servers[1].env["PORT"], "8080");
        assert_eq!(
            c.servers[0].args,
            ["-y", "@modelcontextprotocol/server-memory"]
        );
        let skipped: Vec<_> = c
            .skipped
            .iter()
            .map(|s| (s.name.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(skipped[1].0, "off");
        assert!(skipped[0].1.contains("http"), "{skipped:?}");
        let vscode =
            r#"{"servers":{"time":{"type":"stdio","command":"uvx","args":["mcp-server-time"]}}}"#;
        assert_eq!(
            parse_config(vscode, "v.json").unwrap().servers[0].command,
            "uvx"
        );
    }

    #[test]
    fn expands_variables_like_claude_code() {
        let env = |k: &str| (k == "TOKEN").then(|| "abc".to_string());
        assert_eq!(expand_vars("Bearer ${TOKEN}", &env).unwrap(), "Bearer abc");
        assert_eq!(
            expand_vars("${PORT:-8080}/${TOKEN}", &env).unwrap(),
            "8080/abc"
        );
        assert_eq!(expand_vars("${NOPE}", &env).unwrap_err(), "NOPE");
        let text = r#"{"mcpServers":{
            "gh":{"command":"npx","args":["server-github"],"env":{"GITHUB_TOKEN":"${TOKEN}"}},
            "db":{"command":"npx","args":["server-postgres","${DATABASE_URL}"]}}}"#;
        let c = parse_config_with(text, "c.json", &env).unwrap();
        assert_eq!(c.servers.len(), 1);
        assert_eq!(c.servers[0].env["GITHUB_TOKEN"], "abc");
        assert!(
            c.skipped[0]
                .reason
                .contains("`DATABASE_URL` (in mcpServers.db.args[1])"),
            "{:?}",
            c.skipped
        );
    }

    #[test]
    fn bad_entries_name_file_and_field() {
        for (text, want) in [
            (r#"{"other":{}}"#, "mcpServers"),
            (
                r#"{"mcpServers":{"a":{"args":[]}}}"#,
                "mcpServers.a.command",
            ),
            (
                r#"{"mcpServers":{"a":{"command":"x","args":[1]}}}"#,
                "mcpServers.a.args[0]",
            ),
            (
                r#"{"mcpServers":{"a":{"command":"x","env":{"K":[1]}}}}"#,
                "mcpServers.a.env.K",
            ),
        ] {
            let e = parse_config(text, "cfg.json").unwrap_err().to_string();
            assert!(e.contains("cfg.json") && e.contains(want), "{e}");
        }
    }

    #[test]
    fn total_counts_the_preamble_once() {
        let catalog = crate::model::catalog::Catalog::embedded().unwrap();
        let m = catalog.model("claude-opus-4.8").unwrap();
        let entry = |n: &str| ServerEntry {
            name: n.into(),
            command: "x".into(),
            args: vec![],
            env: BTreeMap::new(),
        };
        let outcomes = vec![
            ServerOutcome {
                entry: entry("a"),
                tools: Ok(crate::model::tools::synthetic_tools(1, 2, 3)),
                raw: None,
            },
            ServerOutcome {
                entry: entry("b"),
                tools: Ok(crate::model::tools::synthetic_tools(3, 3, 3)),
                raw: None,
            },
            ServerOutcome {
                entry: entry("broken"),
                tools: Err("no".into()),
                raw: None,
            },
        ];
        let (rows, dups) = overheads(&[m], &outcomes);
        assert!(dups.is_empty());
        assert_eq!(rows.len(), 3);
        // Two lists rendered together are one block: its count is the whole text's, not the sum.
        let r = m.rendering();
        let all = crate::model::tools::synthetic_tools(1, 5, 3);
        assert_eq!(rows[2].block_tokens, r.block_tokens(&all));
        assert_eq!(rows[2].tools, 5);
        assert_eq!(rows[0].block_tokens, r.block_tokens(&all[..2]));
        assert!(rows[0].block_tokens + rows[1].block_tokens > rows[2].block_tokens);
        let cached = rows[0].usd_per_call_cached.unwrap();
        assert!((cached - rows[0].usd_per_call * 0.1).abs() < 1e-12);
    }
}
