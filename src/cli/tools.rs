//! `pcsim tools`: what a tool list costs per call on each model, per tool, and after trimming.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::Format;
use pcsim::catalog::Catalog;
use pcsim::report;
use pcsim::toolreport::{filter_tools, tool_report};
use pcsim::tools::load_tool_files_with_warnings;

/// Arguments of `tools`.
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
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
    /// Output format on standard output (table or json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `pcsim tools`.
pub fn cmd_tools(catalog: &Catalog, a: ToolsArgs, out: &mut dyn Write) -> Result<()> {
    if a.format == Format::Csv {
        bail!("`tools` supports --format table or json");
    }
    let models = catalog.select(&a.models)?;
    let (tools, warnings) = load_tool_files_with_warnings(&a.files)?;
    let tools = filter_tools(tools, &a.keep, &a.drop)?;
    // Warnings go to stderr so that JSON on stdout stays machine-readable; JSON also carries them.
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let rep = tool_report(&models, &tools, warnings);
    match a.format {
        Format::Json => out.write_all(report::json::to_json(&rep)?.as_bytes())?,
        _ => out.write_all(rep.table().as_bytes())?,
    }
    Ok(())
}
