//! One server entry of a configuration read as its client reads it: command, arguments,
//! environment, transport, tool filters and working folder, with each client's spelling of them.

use serde_json::Map;

use super::clients::Format;
use super::*;

pub(super) fn strings(v: Option<&Value>, origin: &str, at: &str) -> Result<Option<Vec<String>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str().map(str::to_string).ok_or_else(|| {
                    Error::invalid(
                        origin,
                        format!("{at}[{i}]"),
                        format!("must be a string, found {x}"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(other) => Err(Error::invalid(
            origin,
            at,
            format!("must be an array of strings, found {other}"),
        )),
    }
}

/// One entry: `Ok(Ok(server))`, `Ok(Err(reason))` for an entry not captured, `Err` for a malformed
/// one.
pub(super) fn read_entry(
    name: &str,
    at: &str,
    entry: &Value,
    origin: &str,
    ctx: &Ctx,
) -> Result<std::result::Result<ServerEntry, String>> {
    let e = entry
        .as_object()
        .ok_or_else(|| Error::invalid(origin, at, "a server entry must be an object"))?;
    // Zed's older form: "command": { "path", "args", "env" }.
    let nested = e.get("command").and_then(Value::as_object);
    let field = |k: &str| -> Option<&Value> {
        match (k, nested) {
            ("command", Some(n)) => n.get("path"),
            ("args" | "env", Some(n)) if n.contains_key(k) => n.get(k),
            _ => e.get(k),
        }
    };
    let format = clients::format(ctx.client);
    if let Some(reason) = not_captured(e, field("command").is_none(), format) {
        return Ok(Err(reason));
    }
    let cmd_at = if nested.is_some() {
        format!("{at}.command.path")
    } else {
        format!("{at}.command")
    };
    let command = field("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| {
            Error::invalid(
                origin,
                &cmd_at,
                "a stdio server needs a non-empty string `command`",
            )
        })?
        .to_string();
    let args = strings(field("args"), origin, &format!("{at}.args"))?.unwrap_or_default();
    let env = entry_env(field("env"), e, origin, at, ctx)?;
    let (inc_key, exc_key) = format.tool_filter_keys();
    let include_tools = strings(e.get(inc_key), origin, &format!("{at}.{inc_key}"))?;
    let exclude_tools =
        strings(e.get(exc_key), origin, &format!("{at}.{exc_key}"))?.unwrap_or_default();
    let cwd_text = match e.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(Error::invalid(
                origin,
                format!("{at}.cwd"),
                format!("must be a string, found {other}"),
            ))
        }
    };
    let entry = ServerEntry {
        name: name.to_string(),
        command,
        args,
        env,
        cwd: None,
        include_tools,
        exclude_tools,
    };
    expanded(entry, e, at, cmd_at, cwd_text, origin, ctx)
}

/// Why an entry is not captured, if it is not: disabled, a remote server (a URL or a transport
/// other than stdio, when it has no `command`), or one its client starts itself (a Zed
/// extension's server).
fn not_captured(e: &Map<String, Value>, no_command: bool, format: &dyn Format) -> Option<String> {
    if e.get("disabled").and_then(Value::as_bool) == Some(true)
        || e.get("enabled").and_then(Value::as_bool) == Some(false)
    {
        return Some("disabled".into());
    }
    if !no_command {
        return None;
    }
    let transport = e
        .get("type")
        .or_else(|| e.get("transport"))
        .and_then(Value::as_str)
        .unwrap_or("stdio");
    let url = ["url", "serverUrl", "httpUrl"]
        .iter()
        .find_map(|k| e.get(*k).and_then(Value::as_str).map(|u| (*k, u)));
    if let Some((key, u)) = url {
        let kind = match (key, transport) {
            ("httpUrl", _) => "streamable HTTP",
            (_, "stdio") => "url",
            (_, t) => t,
        };
        return Some(format!(
            "remote server ({kind}, {u}); only stdio servers can be captured"
        ));
    }
    if transport != "stdio" {
        return Some(format!(
            "remote server ({transport}); only stdio servers can be captured"
        ));
    }
    format.starts_itself(e)
}

/// An entry's environment: its `env` object (numbers and booleans taken as text), then Codex's
/// `env_vars`, names passed through from the environment.
fn entry_env(
    env_field: Option<&Value>,
    e: &Map<String, Value>,
    origin: &str,
    at: &str,
    ctx: &Ctx,
) -> Result<BTreeMap<String, String>> {
    let mut env: BTreeMap<String, String> = match env_field {
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
    // Codex: `env_vars` names variables passed through from the environment.
    if let Some(names) = strings(e.get("env_vars"), origin, &format!("{at}.env_vars"))? {
        for n in names {
            if let Some(v) = (ctx.lookup)(&n) {
                env.entry(n).or_insert(v);
            }
        }
    }
    Ok(env)
}

/// The entry with its variables expanded as its client expands them (command, arguments,
/// environment), Cursor's and VS Code's `envFile` read under its own `env`, and its working folder
/// resolved in the workspace; `Ok(Err(reason))` when a variable or the env file keeps the server
/// from starting as configured.
fn expanded(
    mut entry: ServerEntry,
    e: &Map<String, Value>,
    at: &str,
    cmd_at: String,
    cwd_text: Option<String>,
    origin: &str,
    ctx: &Ctx,
) -> Result<std::result::Result<ServerEntry, String>> {
    // The field goes where the reason has `{IN}`, else at the end.
    let fail = |field: String, reason: String| {
        let within = format!("(in {field})");
        if reason.contains(IN) {
            reason.replace(IN, &within)
        } else {
            format!("{reason} {within}")
        }
    };
    entry.command = match expand(&entry.command, ctx) {
        Ok(v) => v,
        Err(r) => return Ok(Err(fail(cmd_at, r))),
    };
    for (i, a) in entry.args.iter_mut().enumerate() {
        match expand(a, ctx) {
            Ok(v) => *a = v,
            Err(r) => return Ok(Err(fail(format!("{at}.args[{i}]"), r))),
        }
    }
    for (k, val) in entry.env.iter_mut() {
        match expand(val, ctx) {
            Ok(v) => *val = v,
            Err(r) => return Ok(Err(fail(format!("{at}.env.{k}"), r))),
        }
    }
    // Cursor and VS Code: `envFile` loads a dotenv file; the entry's own `env` wins over it. A file
    // that cannot be read keeps the server from starting as configured (it would start without its
    // keys and die with no pointer to why).
    if clients::format(ctx.client).reads_env_file() {
        match e.get("envFile") {
            None | Some(Value::Null) => {}
            Some(Value::String(raw)) => {
                let f = match expand(raw, ctx) {
                    Ok(v) => v,
                    Err(r) => return Ok(Err(fail(format!("{at}.envFile"), r))),
                };
                let p = PathBuf::from(&f);
                // A path that starts with a variable (`${workspaceFolder}/.env`) is where the
                // variable put it; a plain relative one is in the workspace.
                let p = if p.is_absolute() || raw.starts_with("${") {
                    p
                } else {
                    ctx.workspace.join(p)
                };
                match clients::read_env_file(&p) {
                    Ok(vars) => {
                        for (k, v) in vars {
                            entry.env.entry(k).or_insert(v);
                        }
                    }
                    Err(err) => {
                        return Ok(Err(fail(
                            format!("{at}.envFile"),
                            format!(
                                "names the env file {} {IN}, which cannot be read ({err}); the server would start without its variables",
                                p.display()
                            ),
                        )))
                    }
                }
            }
            Some(other) => {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.envFile"),
                    format!("must be a string, found {other}"),
                ))
            }
        }
    }
    if let Some(c) = cwd_text {
        let c = match expand(&c, ctx) {
            Ok(v) => v,
            Err(r) => return Ok(Err(fail(format!("{at}.cwd"), r))),
        };
        let p = PathBuf::from(&c);
        entry.cwd = Some(if p.is_absolute() {
            p
        } else {
            ctx.workspace.join(p)
        });
    }
    Ok(Ok(entry))
}
