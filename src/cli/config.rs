//! `pcsim config FILE`: capture every stdio server of an MCP client configuration and report the
//! per-call cost of the tool block, per server and for the whole configuration, per model.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::capture::ServerOptions;
use super::{Format, TextFormat};
use crate::analysis::config::{capture_config, ConfigCapture, ConfigOverheads};
use crate::input::mcpconfig::{load_config_with, Client, LoadOptions};
use crate::model::catalog::Catalog;
use crate::report;

/// Arguments of `config`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    /// The client configuration: `.mcp.json`, `~/.claude.json`, `claude_desktop_config.json`, Cursor
    /// or VS Code `mcp.json`, Windsurf `mcp_config.json`, Gemini CLI or Zed `settings.json`, Codex CLI
    /// `config.toml`, Continue `config.yaml`.
    pub file: PathBuf,
    /// Read the file as this client's format (default: detected from the path and the content):
    /// claude-code, claude-desktop, cursor, windsurf, vscode, gemini-cli, zed, codex, continue,
    /// generic.
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    /// A value for `${input:ID}` (VS Code) or `${{ inputs.ID }}` (Continue), repeatable.
    #[arg(long = "input", value_name = "ID=VALUE")]
    pub inputs: Vec<String>,
    /// The workspace folder for `${workspaceFolder}` and relative `cwd` (default: the folder of the
    /// file, or its parent for `.vscode/`, `.gemini/`, ...).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// For `~/.claude.json`: only this project's servers besides the user's (default: every project).
    #[arg(long, value_name = "PATH")]
    pub project: Option<String>,
    /// Model id (repeatable); default: the six measured models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Output format (table or json).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Also save each server's tool list, as the client sends it (filtered, and with Claude Code's
    /// `mcp__<server>__` prefix), as DIR/<server>.tools.json.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Also write a scenario to FILE: one `[[tools.server]]` per captured server (its tool list as
    /// the client sends it, saved beside FILE as `<stem>.<server>.tools.json`) and the built-in
    /// default session, ready for `pcsim run FILE`.
    #[arg(long, value_name = "FILE")]
    pub scenario_out: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerOptions,
    #[command(flatten)]
    pub doc: super::docreport::ReportArgs,
}

/// Runs `pcsim config`: the flags turned into load and capture options, the two steps of
/// [`crate::analysis::config`] called, the files asked for written and the report printed.
pub(crate) fn cmd_config(catalog: &Catalog, a: ConfigArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    let opts = a.server.to_options()?;
    let models = catalog.select(&a.models)?;
    let doc_kind = a.doc.check()?;
    let mut lo = LoadOptions {
        client: a.client.as_deref().map(Client::parse).transpose()?,
        workspace: a.workspace.clone(),
        project: a.project.clone(),
        ..LoadOptions::default()
    };
    for kv in &a.inputs {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            crate::Error::invalid(
                "command line",
                "--input",
                format!("`{kv}` must be ID=VALUE"),
            )
        })?;
        lo.inputs.insert(k.to_string(), v.to_string());
    }
    let cfg = load_config_with(&a.file, &lo)?;
    if let Some(dir) = &a.save {
        report::ensure_writable_dir(dir)?;
    }
    if let Some(file) = &a.scenario_out {
        report::check_output_path(file)?;
        report::ensure_writable_dir(scenario_dir(file))?;
    }
    let captured = capture_config(cfg, &opts, &mut |w| eprintln_safe!("warning: {w}"))?;
    if let Some(dir) = &a.save {
        let files = captured.tool_files();
        let members: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_bytes()))
            .collect();
        // Paths on stderr: stdout carries the report.
        super::write_report_set(dir, &members, Format::Json)?;
    }
    if let Some(file) = &a.scenario_out {
        write_scenario(file, &a.file, &captured, &a.models, format)?;
    }
    let ConfigOverheads { rows, duplicates } = captured.overheads(&models)?;
    let (cfg, outcomes) = (&captured.config, &captured.outcomes);
    super::warn_context(super::tool_block_warnings(models.iter().copied(), |m| {
        let r = rows
            .iter()
            .find(|r| r.server.is_none() && r.model == m.id)?;
        Some((
            r.block_tokens,
            "the tool block of every server of the configuration together".to_string(),
        ))
    }));
    if !duplicates.is_empty() {
        eprintln_safe!(
            "warning: tool names defined by more than one server: {} (model APIs reject duplicates; clients rename them)",
            duplicates.join(", ")
        );
    }
    match format {
        Format::Json => {
            let v = report::config::json(cfg, outcomes, &rows, &duplicates);
            out.write_all(report::to_json(&v)?.as_bytes())?;
        }
        Format::Table | Format::Csv => {
            out.write_all(report::config::text(cfg, outcomes, &rows).as_bytes())?;
        }
    }
    if let (Some(kind), Some(path)) = (doc_kind, &a.doc.report) {
        let doc = report::config::document(
            cfg,
            outcomes,
            &rows,
            &duplicates,
            &models,
            &super::ChartArgs::default().png_options()?,
            super::docreport::provenance(catalog, None),
        )?;
        out.flush()?;
        super::docreport::write(path, kind, &doc, a.format == TextFormat::Table)?;
    }
    Ok(())
}

/// The folder a scenario file is written into.
fn scenario_dir(file: &std::path::Path) -> &std::path::Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    }
}

/// Writes the scenario of `config --scenario-out FILE` and the tool list of every captured server
/// beside it, as one set (all or nothing).
fn write_scenario(
    file: &std::path::Path,
    config: &std::path::Path,
    captured: &ConfigCapture,
    models: &[String],
    format: Format,
) -> Result<()> {
    use crate::report::scenario_file::{scenario_from_config, ScenarioServer};
    let stem = file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let tool_files = captured.scenario_tool_files(&stem);
    let servers: Vec<ScenarioServer> = tool_files
        .iter()
        .map(|(n, f, _)| ScenarioServer { name: n, file: f })
        .collect();
    let text = scenario_from_config(
        &config.display().to_string(),
        captured.config.client.as_str(),
        &stem,
        models,
        &servers,
    );
    let file_name = file
        .file_name()
        .map_or("scenario.toml".into(), |s| s.to_string_lossy().into_owned());
    let mut members: Vec<(&str, &[u8])> = vec![(file_name.as_str(), text.as_bytes())];
    for (_, n, t) in &tool_files {
        members.push((n.as_str(), t.as_bytes()));
    }
    super::write_report_set(scenario_dir(file), &members, format)
}
