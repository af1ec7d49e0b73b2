//! `pcsim config FILE`: capture every stdio server of an MCP client configuration and report the
//! per-call cost of the tool block, per server and for the whole configuration, per model.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::capture::ServerOptions;
use super::{Format, TextFormat};
use pcsim::input::mcpconfig::{capture_all, load_config, overheads};
use pcsim::model::catalog::Catalog;
use pcsim::report::{self, table::TextTable, usd};

/// Arguments of `config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// The client configuration (`.mcp.json`, `claude_desktop_config.json`, ...).
    pub file: PathBuf,
    /// Model id (repeatable); default: the six measured models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Output format (table or json).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Also save each server's tool list as DIR/<server>.tools.json.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerOptions,
}

/// Runs `pcsim config`.
pub fn cmd_config(catalog: &Catalog, a: ConfigArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    let opts = a.server.to_options()?;
    let models = catalog.select(&a.models)?;
    let cfg = load_config(&a.file)?;
    if let Some(dir) = &a.save {
        report::ensure_writable_dir(dir)?;
    }
    for s in &cfg.skipped {
        eprintln!("warning: server `{}` not captured: {}", s.name, s.reason);
    }
    if cfg.servers.is_empty() {
        anyhow::bail!(pcsim::Error::invalid(
            &cfg.origin,
            "mcpServers",
            "no stdio server to capture"
        ));
    }
    let outcomes = capture_all(&cfg, &opts);
    for o in &outcomes {
        if let Err(e) = &o.tools {
            eprintln!("warning: {e}");
        }
    }
    if outcomes.iter().all(|o| o.tools.is_err()) {
        anyhow::bail!(pcsim::Error::Unsupported(format!(
            "{}: no server of the configuration could be captured",
            cfg.origin
        )));
    }
    if let Some(dir) = &a.save {
        for o in &outcomes {
            if let Some(raw) = &o.raw {
                let path = dir.join(format!("{}.tools.json", sanitize(&o.entry.name)));
                let mut text = serde_json::to_string_pretty(raw)?;
                text.push('\n');
                report::write_atomic(&path, text.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    let (rows, dups) = overheads(&models, &outcomes);
    if !dups.is_empty() {
        eprintln!(
            "warning: tool names defined by more than one server: {} (model APIs reject duplicates; clients rename them)",
            dups.join(", ")
        );
    }
    match format {
        Format::Json => {
            let servers: Vec<_> = outcomes
                .iter()
                .map(|o| {
                    serde_json::json!({
                        "name": o.entry.name,
                        "command": o.entry.command,
                        "args": o.entry.args,
                        "tools": o.tools.as_ref().ok().map(|t| t.len()),
                        "tool_names": o.tools.as_ref().ok().map(|t| t.iter().map(|x| x.name.clone()).collect::<Vec<_>>()),
                        "error": o.tools.as_ref().err(),
                    })
                })
                .collect();
            let v = serde_json::json!({
                "config": cfg.origin,
                "servers": servers,
                "skipped": cfg.skipped,
                "duplicate_tool_names": dups,
                "overhead": rows,
            });
            out.write_all(report::json::to_json(&v)?.as_bytes())?;
        }
        Format::Table | Format::Csv => {
            let mut t = TextTable::new(
                &["server", "command", "tools", "status"],
                &[false, false, true, false],
            );
            for o in &outcomes {
                let cmd = std::iter::once(o.entry.command.as_str())
                    .chain(o.entry.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                match &o.tools {
                    Ok(tools) => t.row(vec![
                        o.entry.name.clone(),
                        cmd,
                        tools.len().to_string(),
                        "ok".into(),
                    ]),
                    Err(e) => t.row(vec![
                        o.entry.name.clone(),
                        cmd,
                        "-".into(),
                        format!("error: {e}"),
                    ]),
                }
            }
            for s in &cfg.skipped {
                t.row(vec![
                    s.name.clone(),
                    "-".into(),
                    "-".into(),
                    format!("skipped: {}", s.reason),
                ]);
            }
            writeln!(out, "{}\n", cfg.origin)?;
            out.write_all(t.render().as_bytes())?;
            writeln!(out, "\nTool-block overhead per call:\n")?;
            let mut t = TextTable::new(
                &[
                    "model",
                    "server",
                    "tools",
                    "block tok",
                    "$/call uncached",
                    "$/call cache read",
                ],
                &[false, false, true, true, true, true],
            );
            for r in &rows {
                t.row(vec![
                    r.model.clone(),
                    r.server.clone().unwrap_or_else(|| "(all servers)".into()),
                    r.tools.to_string(),
                    r.block_tokens.to_string(),
                    usd(r.usd_per_call),
                    r.usd_per_call_cached.map_or("-".into(), usd),
                ]);
            }
            out.write_all(t.render().as_bytes())?;
        }
    }
    Ok(())
}

/// A server name as a file name: anything but letters, digits, `-`, `_` and `.` becomes `_`.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("server{s}")
    } else {
        s
    }
}
