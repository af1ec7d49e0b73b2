//! How a family turns tool definitions into billed tokens.
//!
//! The model: a fixed preamble (the provider's hidden "you have access to these tools" text) added once
//! when any tool is present, then for each tool a per-tool overhead plus separate rates for *prose*
//! (description text) and *structure* (names, types, punctuation and layout of the schema). Sizes are
//! measured in bytes of the tool's JSON in API form, pretty-printed with two-space indentation, the same
//! basis as the "bytes/4" estimate of the measured facts.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::sourced::{check_number, Sourced};
use crate::model::tools::{Tool, ToolMetrics};

/// Rendering parameters of one family (data from `models.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRendering {
    /// Tokens added once whenever at least one tool is present.
    pub preamble_tokens: Sourced<f64>,
    /// Tokens added per tool regardless of its size.
    pub per_tool_tokens: Sourced<f64>,
    /// Tokens per byte of description text.
    pub prose_tokens_per_byte: Sourced<f64>,
    /// Tokens per byte of everything else in the tool's JSON.
    pub structure_tokens_per_byte: Sourced<f64>,
}

impl ToolRendering {
    /// Tokens of one tool (without the preamble), rounded to a whole token.
    pub fn tool_tokens(&self, m: &ToolMetrics) -> u64 {
        let structure = m.bytes.saturating_sub(m.prose_bytes) as f64;
        let t = self.per_tool_tokens.value
            + self.prose_tokens_per_byte.value * m.prose_bytes as f64
            + self.structure_tokens_per_byte.value * structure;
        t.round().max(0.0) as u64
    }

    /// The preamble in whole tokens (zero when there is no tool).
    pub fn preamble(&self, tool_count: usize) -> u64 {
        if tool_count == 0 {
            0
        } else {
            self.preamble_tokens.value.round().max(0.0) as u64
        }
    }

    /// Tokens of a whole tool block: preamble plus every tool.
    pub fn block_tokens(&self, tools: &[Tool]) -> u64 {
        self.preamble(tools.len())
            + tools
                .iter()
                .map(|t| self.tool_tokens(&t.metrics()))
                .sum::<u64>()
    }

    pub(crate) fn validate(&self, origin: &str, at: &str) -> Result<()> {
        check_number(
            origin,
            &format!("{at}.preamble_tokens"),
            &self.preamble_tokens,
            Some(0.0),
            Some(1e6),
        )?;
        check_number(
            origin,
            &format!("{at}.per_tool_tokens"),
            &self.per_tool_tokens,
            Some(0.0),
            Some(1e5),
        )?;
        check_number(
            origin,
            &format!("{at}.prose_tokens_per_byte"),
            &self.prose_tokens_per_byte,
            Some(0.0),
            Some(4.0),
        )?;
        check_number(
            origin,
            &format!("{at}.structure_tokens_per_byte"),
            &self.structure_tokens_per_byte,
            Some(0.0),
            Some(4.0),
        )
    }
}
