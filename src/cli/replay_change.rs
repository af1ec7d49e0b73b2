//! `replay`'s counterfactual flags (the logged calls re-billed with another tool list) and
//! `--invoice-usd` (the logged total against an invoice). Kept apart from `replay.rs`, which only
//! calls in here.

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::counterfactual::{Counterfactual, ToolListChange};
use crate::model::tools::load_tool_files;
use crate::report::{table::TextTable, usd};

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

/// Adds one file's counterfactual to the sums per (model, strategy).
pub(crate) fn add(sums: &mut Vec<Counterfactual>, cf: Counterfactual) {
    match sums
        .iter_mut()
        .find(|s| s.model == cf.model && s.strategy == cf.strategy)
    {
        Some(s) => {
            s.predicted_usd += cf.predicted_usd;
            s.changed_usd += cf.changed_usd;
            s.saving_usd += cf.saving_usd;
            s.saving_percent = if s.predicted_usd > 0.0 {
                s.saving_usd / s.predicted_usd * 100.0
            } else {
                0.0
            };
            s.changed.add(&cf.changed);
        }
        None => sums.push(cf),
    }
}

/// The counterfactual as a table.
pub(crate) fn table(change: &ToolListChange, sums: &[Counterfactual]) -> String {
    let mut s = format!(
        "\nCounterfactual: the logged calls with the tool list changed ({}):\n\n",
        change.describe()
    );
    let mut t = TextTable::new(
        &[
            "model",
            "strategy",
            "tool tok/call",
            "prefix tok",
            "as logged $",
            "changed $",
            "saving $",
            "saving %",
        ],
        &[false, false, true, true, true, true, true, true],
    );
    for c in sums {
        t.row(vec![
            c.model.clone(),
            c.strategy.clone(),
            format!("{:+}", c.tool_tokens_delta),
            format!("{} -> {}", c.prefix_tokens, c.changed_prefix_tokens),
            usd(c.predicted_usd),
            usd(c.changed_usd),
            usd(c.saving_usd),
            format!("{:.1}%", c.saving_percent),
        ]);
    }
    s.push_str(&t.render());
    s.push_str("as logged: the logged prompts replayed on pcsim's rules; changed: the same calls (times, sessions, outputs) with every prompt and the stable prefix changed by the tool tokens\n");
    s
}
