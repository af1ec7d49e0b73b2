//! `replay`'s counterfactual flags (the logged calls re-billed with another tool list) and
//! `--invoice-usd` (the logged total against an invoice). Kept apart from `replay.rs`, which only
//! calls in here; the sums and their table are in `analysis::replay` and `report::replay`.

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::counterfactual::ToolListChange;
use crate::model::tools::load_tool_files;

/// Flags of `replay` that change the tool list of the logged calls, as `whatif` spells them.
#[derive(Debug, clap::Args, Default)]
pub(crate) struct ChangeArgs {
    /// The tool list the logged calls were made with (MCP tools/list JSON or an API tool array;
    /// repeatable): what --remove-tools and --keep-tools name.
    #[arg(long = "tools", value_name = "FILE")]
    pub tools: Vec<PathBuf>,
    /// Counterfactual: tools added to every logged call (repeatable).
    #[arg(long, value_name = "FILE")]
    pub add_tools: Vec<PathBuf>,
    /// Counterfactual: tool names removed from every logged call (comma-separated or repeated; needs
    /// --tools).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub remove_tools: Vec<String>,
    /// Counterfactual: keep only these tool names (comma-separated or repeated; needs --tools).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub keep_tools: Option<Vec<String>>,
    /// Counterfactual: the tool block of every logged call grows by N tokens (negative: shrinks),
    /// without tool files.
    #[arg(long, value_name = "N", allow_hyphen_values = true, conflicts_with_all = ["add_tools", "remove_tools", "keep_tools"], value_parser = clap::value_parser!(i64).range(-super::MAX_FLAG_TOKENS..=super::MAX_FLAG_TOKENS))]
    pub tool_tokens_delta: Option<i64>,
    /// Reconcile the logged total (each call at its own model's prices) with an invoice of this many
    /// dollars: the difference, its share, and what could explain it.
    #[arg(long, value_name = "USD", allow_hyphen_values = true)]
    pub invoice_usd: Option<f64>,
}

impl ChangeArgs {
    /// The change asked for, if any (tool files loaded, so errors name them).
    pub(crate) fn change(&self) -> Result<Option<ToolListChange>> {
        let change = ToolListChange {
            tools: load_tool_files(&self.tools)?,
            add: load_tool_files(&self.add_tools)?,
            remove: self.remove_tools.clone(),
            keep: self.keep_tools.clone(),
            tokens_delta: self.tool_tokens_delta,
        };
        if !change.is_some() {
            if !self.tools.is_empty() {
                anyhow::bail!(crate::Error::invalid(
                    "command line",
                    "--tools",
                    "names the logged tool list for a change: add --remove-tools, --keep-tools or --add-tools"
                ));
            }
            return Ok(None);
        }
        // Names are checked before any log is read.
        change.apply()?;
        Ok(Some(change))
    }
}
