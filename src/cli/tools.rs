//! `pcsim tools`: what a tool list costs per call on each model, per tool, and after trimming.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use super::{with_charts, write_report_set, ChartArgs, Format};
use crate::analysis::toolreport::{filter_tools, tool_report};
use crate::model::catalog::Catalog;
use crate::model::tools::load_tool_files_with_warnings;
use crate::report;
use crate::report::chart::tools_charts;

/// Arguments of `tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct ToolsArgs {
    /// Tool files: MCP `tools/list` output (JSON-RPC response, result object or array) or tool arrays
    /// in Anthropic or OpenAI form. Several files combine in order, as several connected servers.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Model id to price (repeatable); default: the six measured models.
    #[arg(long = "model", value_name = "ID")]
    pub models: Vec<String>,
    /// Price only these tools (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub keep: Vec<String>,
    /// Leave out these tools (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub drop: Vec<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Table)]
    pub format: ToolsFormat,
    /// Also write tools.json and one chart per model, tools-<model>.png, into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print, per model, the exact text its family's tokenizer counts (the tool list as the provider
    /// renders it into the prompt) and the count, instead of the report.
    #[arg(long)]
    pub show_rendering: bool,
    #[command(flatten)]
    pub charts: ChartArgs,
}

/// Formats of `tools` (per-tool rows and trims nest, so there is no single CSV table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum ToolsFormat {
    /// Aligned text for the terminal.
    #[default]
    Table,
    /// JSON.
    Json,
}

/// Runs `pcsim tools`.
pub(crate) fn cmd_tools(catalog: &Catalog, a: ToolsArgs, out: &mut dyn Write) -> Result<()> {
    let png = a.charts.png_options()?;
    if let Some(dir) = &a.out {
        report::ensure_writable_dir(dir)?;
    }
    let models = catalog.select(&a.models)?;
    let (tools, warnings) = load_tool_files_with_warnings(&a.files)?;
    let tools = filter_tools(tools, &a.keep, &a.drop)?;
    // Warnings go to stderr so that JSON on stdout stays machine-readable; JSON also carries them.
    for w in &warnings {
        eprintln_safe!("warning: {w}");
    }
    if a.show_rendering {
        for m in &models {
            let r = m.rendering();
            let rendered = r.render(&tools);
            let raw = r.count_rendered(&rendered);
            writeln!(
                out,
                "=== {} (family {}): {}; {} tokens counted, {} billed ===",
                m.id,
                m.family,
                r.describe(),
                raw,
                r.block_tokens(&tools)
            )?;
            out.write_all(rendered.text().as_bytes())?;
            writeln!(out)?;
        }
        return Ok(());
    }
    let rep = tool_report(&models, &tools, warnings);
    super::warn_context(super::tool_block_warnings(models.iter().copied(), |m| {
        let r = rep.models.iter().find(|r| r.model == m.id)?;
        Some((r.tool_block_tokens, "the tool block".to_string()))
    }));
    let json = report::to_json(&rep)?;
    match a.format {
        ToolsFormat::Json => out.write_all(json.as_bytes())?,
        ToolsFormat::Table => out.write_all(rep.table().as_bytes())?,
    }
    if let Some(dir) = &a.out {
        let charts = a.charts.render(png, |o| tools_charts(&rep, o))?;
        // `write_reported` sends paths to stderr unless stdout is a table.
        let format = match a.format {
            ToolsFormat::Table => Format::Table,
            ToolsFormat::Json => Format::Json,
        };
        out.flush()?; // the report first, then the paths of the files written
        write_report_set(
            dir,
            &with_charts(&[("tools.json", json.as_bytes())], &charts),
            format,
        )?;
    }
    Ok(())
}
