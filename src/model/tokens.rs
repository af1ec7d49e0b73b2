//! How a family turns tool definitions into billed tokens.
//!
//! A family names a template kind ([`TemplateKind`]: the provider's own layout of a tool list as
//! prompt text, see [`crate::model::render`]) and a tokenizer ([`Vocabulary`]). pcsim renders the list
//! as the provider does, counts the text with the tokenizer, and applies the family's calibration:
//!
//! ```text
//! block tokens = round(factor * tokens(rendered list)) + preamble_tokens
//! ```
//!
//! `factor` is 1 where pcsim has the provider's own renderer and tokenizer (OpenAI harmony on
//! o200k_base); elsewhere it maps the o200k count of the rendering to the provider's billed tokens, fitted
//! to the measured facts. `preamble_tokens` is the fitted hidden text pcsim does not render.
//!
//! Per tool, `round(factor * tokens(tool's own text))`; the list's wrapper (header, footer, joints
//! where the tokenizer merges across two tools) is the remainder, [`ToolRendering::preamble_for`], so
//! that the per-tool parts and the preamble add up to the count of the whole text exactly.
//!
//! The `linear` kind is the byte-rate model of earlier catalogs (a rate on the bytes of the
//! pretty-printed JSON), kept so that such catalogs still load.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::render::{render_list, render_tool, Rendered, TemplateKind, TemplateText};
use crate::model::sourced::{check_number, Sourced};
use crate::model::tokenizer::{self, Vocabulary};
use crate::model::tools::{Tool, ToolMetrics};

/// The tokenizers a family can name in `tokenizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerName {
    /// OpenAI o200k_base (embedded).
    #[serde(alias = "o200k")]
    O200kBase,
}

/// Rendering parameters of one family (data from `models.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRendering {
    /// The provider's layout of a tool list (`harmony`, `anthropic`, `gemini`, `chat-json`, `linear`).
    #[serde(default)]
    pub template: TemplateKind,
    /// Overrides of the template's wrapper text and JSON style.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_text: Option<TemplateText>,
    /// The vocabulary counted with (default `o200k_base`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<TokenizerName>,
    /// A tiktoken-format vocabulary file instead (relative to the catalog file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_file: Option<PathBuf>,
    /// Billed tokens per counted token of the rendering (1 = the count itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<Sourced<f64>>,
    /// Tokens added once whenever at least one tool is present, on top of the rendering.
    pub preamble_tokens: Sourced<f64>,
    /// `linear` only: tokens added per tool regardless of its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_tool_tokens: Option<Sourced<f64>>,
    /// `linear` only: tokens per byte of description text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prose_tokens_per_byte: Option<Sourced<f64>>,
    /// `linear` only: tokens per byte of everything else in the tool's pretty-printed JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure_tokens_per_byte: Option<Sourced<f64>>,
    /// `tokenizer_file` resolved against the catalog's folder (set when the catalog loads).
    #[serde(skip)]
    pub(crate) resolved_file: Option<PathBuf>,
}

fn value(s: &Option<Sourced<f64>>) -> f64 {
    s.as_ref().map_or(0.0, |s| s.value)
}

impl ToolRendering {
    /// A `linear` rendering (the byte-rate model): `preamble` once, then per tool `per_tool` plus
    /// `prose` tokens per description byte and `structure` tokens per other byte.
    pub fn linear(
        preamble: Sourced<f64>,
        per_tool: Sourced<f64>,
        prose: Sourced<f64>,
        structure: Sourced<f64>,
    ) -> Self {
        ToolRendering {
            template: TemplateKind::Linear,
            template_text: None,
            tokenizer: None,
            tokenizer_file: None,
            factor: None,
            preamble_tokens: preamble,
            per_tool_tokens: Some(per_tool),
            prose_tokens_per_byte: Some(prose),
            structure_tokens_per_byte: Some(structure),
            resolved_file: None,
        }
    }

    /// The vocabulary this family counts with.
    pub fn vocabulary(&self) -> Vocabulary {
        match (&self.resolved_file, &self.tokenizer_file) {
            (Some(p), _) | (None, Some(p)) => Vocabulary::File(p.clone()),
            (None, None) => Vocabulary::O200k,
        }
    }

    /// The calibration factor (1 when none is given).
    pub fn factor(&self) -> f64 {
        self.factor.as_ref().map_or(1.0, |f| f.value)
    }

    fn text(&self) -> TemplateText {
        self.template_text.clone().unwrap_or_default()
    }

    /// The tool list as the provider's prompt text: what pcsim counts.
    pub fn render(&self, tools: &[Tool]) -> Rendered {
        render_list(self.template, &self.text(), tools)
    }

    /// Raw tokenizer count of `text` (special tokens as one each), before the factor.
    pub fn count_text(&self, text: &str, specials: &[String]) -> u64 {
        let vocab = self.vocabulary();
        // A file vocabulary was loaded when the catalog was read and o200k is compiled in, so this
        // cannot fail on user data; the bytes/4 estimate stands in should it ever do.
        tokenizer::count(&vocab, text, specials).unwrap_or_else(|_| (text.len() as u64).div_ceil(4))
    }

    /// Raw count of a whole rendered list.
    pub fn count_rendered(&self, r: &Rendered) -> u64 {
        self.count_text(&r.text(), &r.special_tokens)
    }

    fn scaled(&self, raw: u64) -> u64 {
        (self.factor() * raw as f64).round().max(0.0) as u64
    }

    fn linear_tool(&self, m: &ToolMetrics) -> u64 {
        let structure = m.bytes.saturating_sub(m.prose_bytes) as f64;
        let t = value(&self.per_tool_tokens)
            + value(&self.prose_tokens_per_byte) * m.prose_bytes as f64
            + value(&self.structure_tokens_per_byte) * structure;
        t.round().max(0.0) as u64
    }

    fn fixed_preamble(&self) -> u64 {
        self.preamble_tokens.value.round().max(0.0) as u64
    }

    /// Tokens of one tool (its own text, without the list's wrapper), in whole tokens.
    pub fn tool_tokens(&self, tool: &Tool) -> u64 {
        match self.template {
            TemplateKind::Linear => self.linear_tool(&tool.metrics()),
            // Rounded down, so that the tools of a list never sum to more than the scaled count of
            // the whole list (the rest is the wrapper's, see `preamble_for`).
            kind => {
                let raw = self.count_text(&render_tool(kind, &self.text(), tool), &[]);
                (self.factor() * raw as f64).floor().max(0.0) as u64
            }
        }
    }

    /// Tokens of a whole tool block: the rendered list counted as one text, scaled, plus the
    /// fixed preamble. Zero when there is no tool.
    pub fn block_tokens(&self, tools: &[Tool]) -> u64 {
        if tools.is_empty() {
            return 0;
        }
        match self.template {
            TemplateKind::Linear => {
                self.fixed_preamble() + tools.iter().map(|t| self.tool_tokens(t)).sum::<u64>()
            }
            _ => {
                let whole = self.scaled(self.count_rendered(&self.render(tools)));
                // Counted alone, tools can sum to more than the whole text where the tokenizer
                // merges punctuation across two tools (`},{` in compact JSON) and the wrapper is
                // short; the block is then the sum, so that the parts always add up (Kimi: +3 of
                // 1,206 tokens on the git server).
                let parts: u64 = tools.iter().map(|t| self.tool_tokens(t)).sum();
                (whole + self.fixed_preamble()).max(parts)
            }
        }
    }

    /// The list's own tokens beyond its tools: `block_tokens(tools)` minus `tools_sum`, the sum of
    /// [`Self::tool_tokens`] over `tools` (the caller usually has it already). Zero without tools.
    pub fn preamble_for(&self, tools: &[Tool], tools_sum: u64) -> u64 {
        if tools.is_empty() {
            return 0;
        }
        match self.template {
            TemplateKind::Linear => self.fixed_preamble(),
            _ => self.block_tokens(tools).saturating_sub(tools_sum),
        }
    }

    /// The fixed preamble in whole tokens (zero when there is no tool); for template kinds the
    /// wrapper's own tokens come on top, see [`Self::preamble_for`].
    pub fn preamble(&self, tool_count: usize) -> u64 {
        if tool_count == 0 {
            0
        } else {
            self.fixed_preamble()
        }
    }

    /// A one-line description of how this family counts, for reports.
    pub fn describe(&self) -> String {
        match self.template {
            TemplateKind::Linear => "linear byte-rate model (no rendering)".into(),
            kind => format!(
                "{} rendering counted with {}, x{:.4} + {} tokens",
                serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                tokenizer::describe(&self.vocabulary()),
                self.factor(),
                self.fixed_preamble()
            ),
        }
    }

    /// The rendering as `key = value` TOML lines, every field but `preamble_tokens` (for an overlay
    /// that replaces only the preamble).
    pub fn overlay_lines(&self) -> Vec<String> {
        let Ok(toml::Value::Table(t)) = toml::Value::try_from(self) else {
            return Vec::new();
        };
        t.into_iter()
            .filter(|(k, _)| k != "preamble_tokens")
            .map(|(k, v)| format!("{k} = {v}"))
            .collect()
    }

    pub(crate) fn resolve(&mut self, catalog_dir: Option<&std::path::Path>) {
        self.resolved_file = self
            .tokenizer_file
            .as_ref()
            .map(|f| tokenizer::resolve_file(catalog_dir, f));
    }

    pub(crate) fn validate(&self, origin: &str, at: &str) -> Result<()> {
        check_number(
            origin,
            &format!("{at}.preamble_tokens"),
            &self.preamble_tokens,
            Some(0.0),
            Some(1e6),
        )?;
        let linear = [
            ("per_tool_tokens", &self.per_tool_tokens, 1e5),
            ("prose_tokens_per_byte", &self.prose_tokens_per_byte, 4.0),
            (
                "structure_tokens_per_byte",
                &self.structure_tokens_per_byte,
                4.0,
            ),
        ];
        if self.template == TemplateKind::Linear {
            for (name, v, max) in linear {
                let v = v.as_ref().ok_or_else(|| {
                    Error::invalid(
                        origin,
                        format!("{at}.{name}"),
                        "missing: the linear model needs per_tool_tokens, prose_tokens_per_byte and structure_tokens_per_byte (or name a `template`)",
                    )
                })?;
                check_number(origin, &format!("{at}.{name}"), v, Some(0.0), Some(max))?;
            }
            if self.factor.is_some() || self.tokenizer.is_some() || self.tokenizer_file.is_some() {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.template"),
                    "a factor or tokenizer needs a template to count (harmony, anthropic, gemini, chat-json)",
                ));
            }
        } else {
            for (name, v, _) in linear {
                if v.is_some() {
                    return Err(Error::invalid(
                        origin,
                        format!("{at}.{name}"),
                        "applies to the linear model only; a template family is counted, not rated per byte",
                    ));
                }
            }
            if let Some(f) = &self.factor {
                check_number(origin, &format!("{at}.factor"), f, Some(0.01), Some(100.0))?;
            }
            if self.tokenizer.is_some() && self.tokenizer_file.is_some() {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.tokenizer_file"),
                    "name either `tokenizer` or `tokenizer_file`, not both",
                ));
            }
            tokenizer::check(&self.vocabulary(), origin, &format!("{at}.tokenizer_file"))?;
        }
        Ok(())
    }
}
