//! A configuration document of any client read into its server entries: where each client keeps
//! its server map (top level, per project, under `mcp`), its allow and exclude lists, and the limit
//! on the entries of one file.

use super::clients::{Format, RawEntry, Syntax};
use super::*;

/// Where `${workspaceFolder}` and relative paths point: the given workspace, else the file's folder
/// (its parent when that folder is a client's own, e.g. `.vscode`).
pub(super) fn workspace_of(path: Option<&Path>, opts: &LoadOptions) -> PathBuf {
    if let Some(w) = &opts.workspace {
        return w.clone();
    }
    let dir = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    // The client folders a configuration sits in (`.vscode`, `.continue/mcpServers`, ...), each
    // with how far up the workspace is.
    let up = dir.file_name().and_then(|n| n.to_str()).and_then(|n| {
        Client::ALL
            .iter()
            .flat_map(|c| clients::format(*c).own_folders())
            .find(|(folder, _)| *folder == n)
            .map(|(_, up)| *up)
    });
    match up {
        Some(up) => {
            let workspace = dir.ancestors().nth(up).map(Path::to_path_buf);
            workspace.unwrap_or(dir)
        }
        None => dir,
    }
}

/// Upper bound on the server entries of one configuration (its projects' included): `config`
/// starts every server at once, so a larger file is refused before any server is started.
pub const MAX_SERVERS: usize = 256;

/// Parses a configuration document of any client.
pub fn parse_document(
    text: &str,
    origin: &str,
    path: Option<&Path>,
    opts: &LoadOptions,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpConfig> {
    let kind = opts.client.or(path.and_then(client_by_path));
    let v = parse_text(text, origin, kind)?;
    let client = match kind {
        // Detected by path, the content may say otherwise (Goose's map in a YAML file elsewhere).
        Some(k) if opts.client.is_none() => clients::format(k).instead(&v).unwrap_or(k),
        Some(k) => k,
        None => client_by_content(&v),
    };
    let format = clients::format(client);
    let workspace = workspace_of(path, opts);
    let input_defaults = input_defaults(&v);
    let config_dir = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let ctx = Ctx {
        client,
        lookup,
        inputs: &opts.inputs,
        input_defaults: &input_defaults,
        workspace: &workspace,
        config_dir: &config_dir,
    };
    let mut cfg = McpConfig {
        origin: origin.to_string(),
        client,
        servers: Vec::new(),
        skipped: Vec::new(),
    };
    let (entries, map_key) = server_entries(&v, format, origin, opts)?;
    let (allowed, excluded) = format.server_lists(&v);
    // Every server is started at once (one thread and one process each): refused before any is.
    if entries.len() > MAX_SERVERS {
        return Err(Error::invalid(
            origin,
            map_key.unwrap_or("projects"),
            format!(
                "{} server entries exceed the limit of {MAX_SERVERS} servers in one configuration",
                entries.len()
            ),
        ));
    }
    for (name, at, e) in entries {
        if excluded.contains(&name) {
            cfg.skipped.push(SkippedServer {
                name,
                reason: "excluded by mcp.excluded".into(),
            });
            continue;
        }
        if allowed.as_ref().is_some_and(|a| !a.contains(&name)) {
            cfg.skipped.push(SkippedServer {
                name,
                reason: "not in mcp.allowed".into(),
            });
            continue;
        }
        // Entries of another shape (OpenCode's, Goose's) are brought to the `mcpServers` one first.
        let e = match format.entry_shape(e) {
            Ok(e) => e,
            Err(reason) => {
                cfg.skipped.push(SkippedServer { name, reason });
                continue;
            }
        };
        match read_entry(&name, &at, &e, origin, &ctx)? {
            Ok(entry) => cfg.servers.push(entry),
            Err(reason) => cfg.skipped.push(SkippedServer { name, reason }),
        }
    }
    Ok(cfg)
}

/// The document as a JSON value, from the syntax of its client (`kind`, when known): Codex's TOML,
/// Continue's and Goose's YAML, else JSON with comments (JSONC), each held to its size limit.
fn parse_text(text: &str, origin: &str, kind: Option<Client>) -> Result<Value> {
    let syntax = kind.map_or(Syntax::Jsonc, |k| clients::format(k).syntax());
    Ok(match syntax {
        Syntax::Toml => {
            crate::base::files::check_toml_size(text.len(), origin)?;
            let t: toml::Value = toml::from_str(text)
                .map_err(|e| Error::parse(origin, format!("not valid TOML: {e}")))?;
            serde_json::to_value(t).map_err(|e| Error::parse(origin, e))?
        }
        Syntax::Yaml if !text.trim_start().starts_with('{') => {
            // The YAML parser holds a document's events too: 48 MB of list items took 2 GB.
            if text.len() as u64 > crate::base::files::MAX_TOML_BYTES {
                return Err(Error::invalid(
                    origin,
                    "size",
                    format!(
                        "{} bytes is more than the {}-byte limit of a YAML file",
                        text.len(),
                        crate::base::files::MAX_TOML_BYTES
                    ),
                ));
            }
            serde_yaml_ng::from_str(text)
                .map_err(|e| Error::parse(origin, format!("not valid YAML: {e}")))?
        }
        _ => {
            let text = strip_jsonc(text);
            crate::base::files::check_json_values(&text, origin)?;
            let v = serde_json::from_str(&text)
                .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
            // Two equal keys in one object: the JSON parse keeps the last (a server lost).
            if let Some(key) = crate::input::json_keys::first_duplicate_key(&text) {
                return Err(Error::invalid(
                    origin,
                    key,
                    "this key appears twice in one object; only the last would count (remove or rename one)",
                ));
            }
            v
        }
    })
}

/// VS Code's `inputs` (top level or under `mcp`): the default of each input id that has one.
fn input_defaults(v: &Value) -> BTreeMap<String, String> {
    v.get("inputs")
        .or_else(|| v.pointer("/mcp/inputs"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|i| {
                    Some((
                        i.get("id")?.as_str()?.to_string(),
                        i.get("default")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every server entry of the document as (display name, field path, entry), from the server map
/// where its client keeps it (then from a second place it keeps them, as Claude Code's
/// `~/.claude.json` its projects' maps), with the key of the map that was found.
fn server_entries(
    v: &Value,
    format: &dyn Format,
    origin: &str,
    opts: &LoadOptions,
) -> Result<(Vec<RawEntry>, Option<&'static str>)> {
    let mut entries: Vec<RawEntry> = Vec::new();
    let map_entries = |key: &str, m: &Value, out: &mut Vec<RawEntry>| -> Result<()> {
        let m = m.as_object().ok_or_else(|| {
            Error::invalid(
                origin,
                key,
                "must be an object mapping server names to entries",
            )
        })?;
        for (name, e) in m {
            out.push((name.clone(), format!("{key}.{name}"), e.clone()));
        }
        Ok(())
    };
    let found = format.server_keys().iter().find_map(|&key| {
        let pointer = format!("/{}", key.replace('.', "/"));
        v.pointer(&pointer).map(|m| (key, m))
    });
    let more = format.more_entries(v, opts);
    match found {
        Some((key, Value::Array(list))) => {
            // Continue: a list of entries, each with its `name`.
            for (i, e) in list.iter().enumerate() {
                let name = e
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("server {}", i + 1));
                entries.push((name, format!("{key}[{i}]"), e.clone()));
            }
        }
        Some((key, m)) => map_entries(key, m, &mut entries)?,
        None if more.is_some() => {}
        None => {
            return Err(Error::invalid(
                origin,
                "mcpServers",
                "no server map (`mcpServers`, `servers`, `context_servers`, `mcp_servers`, OpenCode's `mcp` or Goose's `extensions`): not an MCP client configuration",
            ))
        }
    }
    entries.extend(more.unwrap_or_default());
    Ok((entries, found.map(|(key, _)| key)))
}
