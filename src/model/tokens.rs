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

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::hash::{chain, fnv1a};
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
    /// Where `preamble_tokens` is a fitted intercept of one measured list rather than a known
    /// preamble: it applies in full from this many tools on, and to shorter lists in proportion
    /// (`n / preamble_full_from_tools` of it), so that a residual fitted on 26 tools does not
    /// land whole on a one-tool list no fact measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preamble_full_from_tools: Option<Sourced<u64>>,
    /// Relative change of a tool's count per level of schema nesting above 1: a tool of depth `d`
    /// counts `raw x (1 + depth_slope x (d - 1))` before the factor. For a stand-in vocabulary whose
    /// ratio to the provider's own drifts with nesting (measured against a public relative of it);
    /// 0 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_slope: Option<Sourced<f64>>,
    /// Tokens added per tool regardless of its size: the `linear` model's per-tool constant, or,
    /// for a template kind, a stated residual the provider bills per tool beyond its published
    /// rendering (GPT-5.6: 64 measured against harmony's 56 per synthetic tool).
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
            preamble_full_from_tools: None,
            depth_slope: None,
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

    /// The depth correction (0 when none is given).
    pub fn depth_slope(&self) -> f64 {
        value(&self.depth_slope)
    }

    /// The weight of one tool's count: `1 + depth_slope x (depth - 1)` (never below 0.1).
    pub(crate) fn depth_weight(&self, tool: &Tool) -> f64 {
        let s = self.depth_slope();
        if s == 0.0 {
            return 1.0;
        }
        let d = crate::model::tools::schema_depth(&tool.input_schema) as f64;
        (1.0 + s * (d - 1.0)).max(0.1)
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

    fn linear_tool(&self, m: &ToolMetrics) -> u64 {
        let structure = m.bytes.saturating_sub(m.prose_bytes) as f64;
        let t = value(&self.per_tool_tokens)
            + value(&self.prose_tokens_per_byte) * m.prose_bytes as f64
            + value(&self.structure_tokens_per_byte) * structure;
        t.round().max(0.0) as u64
    }

    /// The preamble of a list of `tools` tools, in whole tokens: all of it, or its share of a
    /// fitted intercept below `preamble_full_from_tools`.
    fn fixed_preamble(&self, tools: usize) -> u64 {
        let share = match &self.preamble_full_from_tools {
            Some(full) if (tools as u64) < full.value => tools as f64 / full.value as f64,
            _ => 1.0,
        };
        (self.preamble_tokens.value * share).round().max(0.0) as u64
    }

    /// Raw tokenizer count of one tool's own text (without the list's wrapper), before the depth
    /// correction and the factor; 0 for the linear kind.
    pub(crate) fn raw_tool_count(&self, tool: &Tool) -> u64 {
        match self.template {
            TemplateKind::Linear => 0,
            kind => self.count_text(&render_tool(kind, &self.text(), tool), &[]),
        }
    }

    // Rounded down, so that the tools of a list never sum to more than the scaled count of the
    // whole list (the rest is the wrapper's, see `preamble_for`).
    fn scaled_tool(&self, tool: &Tool, raw: u64) -> u64 {
        (self.factor() * raw as f64 * self.depth_weight(tool) + self.tool_residual())
            .floor()
            .max(0.0) as u64
    }

    /// A template kind's per-tool residual (`per_tool_tokens`), 0 when none is stated.
    fn tool_residual(&self) -> f64 {
        match self.template {
            TemplateKind::Linear => 0.0,
            _ => value(&self.per_tool_tokens),
        }
    }

    /// Tokens of one tool (its own text, without the list's wrapper), in whole tokens.
    pub fn tool_tokens(&self, tool: &Tool) -> u64 {
        match self.template {
            TemplateKind::Linear => self.linear_tool(&tool.metrics()),
            _ => self.scaled_tool(tool, self.raw_tool_count(tool)),
        }
    }

    /// The raw count of the whole rendered list and of each tool's own text (as [`Self::raw_tool_count`]
    /// counts it), each text rendered and counted once; the whole text and the tools are counted in
    /// parallel (rayon), since a block report needs both.
    fn raw_counts(&self, tools: &[Tool]) -> (u64, Vec<u64>) {
        use rayon::prelude::*;
        let rendered = self.render(tools);
        // `render_list` writes each tool's text exactly as `render_tool` does.
        rayon::join(
            || self.count_rendered(&rendered),
            || {
                rendered
                    .tools
                    .par_iter()
                    .map(|t| self.count_text(t, &[]))
                    .collect()
            },
        )
    }

    fn corrected(&self, tools: &[Tool], whole: u64, own: &[u64]) -> f64 {
        if self.depth_slope() == 0.0 {
            return whole as f64;
        }
        let correction: f64 = tools
            .iter()
            .zip(own)
            .map(|(t, &o)| o as f64 * (self.depth_weight(t) - 1.0))
            .sum();
        whole as f64 + correction
    }

    /// The tokenizer count of the whole rendered list with the depth correction applied, before the
    /// factor: each tool's own count moves by its weight, the wrapper stays as counted. Equal to
    /// [`Self::count_rendered`] of [`Self::render`] when the family has no `depth_slope`.
    pub(crate) fn corrected_count(&self, tools: &[Tool]) -> f64 {
        if self.template == TemplateKind::Linear {
            return 0.0;
        }
        if self.depth_slope() == 0.0 {
            // No correction: the whole count alone (the tools' own counts would not move it).
            return self.count_rendered(&self.render(tools)) as f64;
        }
        let (whole, own) = self.raw_counts(tools);
        self.corrected(tools, whole, &own)
    }

    /// Tokens of a whole tool block: the rendered list counted as one text, scaled, plus the
    /// fixed preamble. Zero when there is no tool.
    pub fn block_tokens(&self, tools: &[Tool]) -> u64 {
        self.block_and_tool_tokens(tools).0
    }

    /// [`Self::block_tokens`] and [`Self::tool_tokens`] of every tool at once, each text counted
    /// once (what a per-tool report needs: half the tokenizing of calling both).
    pub fn block_and_tool_tokens(&self, tools: &[Tool]) -> (u64, Vec<u64>) {
        if tools.is_empty() {
            return (0, Vec::new());
        }
        match self.template {
            TemplateKind::Linear => {
                let per: Vec<u64> = tools.iter().map(|t| self.tool_tokens(t)).collect();
                (
                    self.fixed_preamble(tools.len()) + per.iter().sum::<u64>(),
                    per,
                )
            }
            _ => {
                let (whole, own) = self.raw_counts(tools);
                let per: Vec<u64> = tools
                    .iter()
                    .zip(&own)
                    .map(|(t, &o)| self.scaled_tool(t, o))
                    .collect();
                let parts: u64 = per.iter().sum();
                (
                    self.block_of(self.corrected(tools, whole, &own), parts, tools.len()),
                    per,
                )
            }
        }
    }

    /// A template kind's block from the corrected count of its whole list and the sum of its
    /// tools' [`Self::tool_tokens`] (`parts`).
    pub(crate) fn block_of(&self, corrected: f64, parts: u64, tools: usize) -> u64 {
        let block = (self.factor() * corrected + self.tool_residual() * tools as f64)
            .round()
            .max(0.0) as u64;
        // Counted alone, tools can sum to more than the whole text where the tokenizer
        // merges punctuation across two tools (`},{` in compact JSON) and the wrapper is
        // short; the block is then the sum, so that the parts always add up (Kimi: +3 of
        // 1,206 tokens on the git server).
        (block + self.fixed_preamble(tools)).max(parts)
    }

    /// The list's own tokens beyond its tools: `block_tokens(tools)` minus `tools_sum`, the sum of
    /// [`Self::tool_tokens`] over `tools` (the caller usually has it already). Zero without tools.
    pub fn preamble_for(&self, tools: &[Tool], tools_sum: u64) -> u64 {
        if tools.is_empty() {
            return 0;
        }
        match self.template {
            TemplateKind::Linear => self.fixed_preamble(tools.len()),
            _ => self.block_tokens(tools).saturating_sub(tools_sum),
        }
    }

    /// The fixed preamble in whole tokens (zero when there is no tool); for template kinds the
    /// wrapper's own tokens come on top, see [`Self::preamble_for`].
    pub fn preamble(&self, tool_count: usize) -> u64 {
        if tool_count == 0 {
            0
        } else {
            self.fixed_preamble(tool_count)
        }
    }

    /// A one-line description of how this family counts, for reports.
    pub(crate) fn describe(&self) -> String {
        match self.template {
            TemplateKind::Linear => "linear byte-rate model (no rendering)".into(),
            kind => format!(
                "{} rendering counted with {}, x{:.4}{}{} + {} tokens{}",
                serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                tokenizer::describe(&self.vocabulary()),
                self.factor(),
                if self.depth_slope() == 0.0 {
                    String::new()
                } else {
                    format!(
                        " x (1 {:+.4} per nesting level above 1)",
                        self.depth_slope()
                    )
                },
                if self.tool_residual() == 0.0 {
                    String::new()
                } else {
                    format!(" + {} per tool", self.tool_residual())
                },
                self.fixed_preamble(usize::MAX),
                self.preamble_full_from_tools
                    .as_ref()
                    .map_or(String::new(), |n| format!(
                        " (in proportion below {} tools)",
                        n.value
                    ))
            ),
        }
    }

    /// The rendering as `key = value` TOML lines, every field but `preamble_tokens` (for an overlay
    /// that replaces only the preamble).
    pub(crate) fn overlay_lines(&self) -> Vec<String> {
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
        if let Some(v) = &self.per_tool_tokens {
            check_number(
                origin,
                &format!("{at}.per_tool_tokens"),
                v,
                Some(0.0),
                Some(1e5),
            )?;
        }
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
            if self.factor.is_some()
                || self.depth_slope.is_some()
                || self.tokenizer.is_some()
                || self.tokenizer_file.is_some()
            {
                return Err(Error::invalid(
                    origin,
                    format!("{at}.template"),
                    "a factor or tokenizer needs a template to count (harmony, anthropic, gemini, chat-json)",
                ));
            }
        } else {
            // A template kind may state a per-tool residual; the byte rates are linear-only.
            for (name, v, _) in &linear[1..] {
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
            if let Some(n) = &self.preamble_full_from_tools {
                check_number(
                    origin,
                    &format!("{at}.preamble_full_from_tools"),
                    n,
                    Some(1.0),
                    Some(1e6),
                )?;
            }
            if let Some(d) = &self.depth_slope {
                check_number(
                    origin,
                    &format!("{at}.depth_slope"),
                    d,
                    Some(-0.5),
                    Some(0.5),
                )?;
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

/// [`ToolRendering::block_tokens`] of many tool lists on one rendering (a scenario's initial list
/// and the list after each tool-list event), each tool and each pair of neighbouring tools
/// rendered and counted once over all the lists.
///
/// The corrected count of a list `t1..tn` is found as
/// `count(t1) + sum over k of (count(t(k-1), tk) - count(t(k-1)))`, where `count` is
/// [`ToolRendering::corrected_count`] of a list of one or two tools: the tokenizer splits text into pieces that do not cross a tool's start, so adding a tool
/// changes only the end of the list (the tool before it, the joint, the footer), as
/// `analysis::toolreport::prefix_blocks` uses for a sweep. An event that drops, adds or replaces a
/// few tools of a long list then costs one lookup per tool of the list, not a count of its whole
/// text (which made 110 events on a 9,000-tool list take 19 s). The locality is a property of the
/// templates and the tokenizer, so it is checked: the first list of two tools or more is also
/// counted whole, and if the two differ every list is counted whole (exact, as before).
#[derive(Debug)]
pub(crate) struct ListCounter {
    rendering: ToolRendering,
    /// `tool_tokens` by tool content hash.
    tools: HashMap<u64, u64>,
    /// Corrected count of a list of the one tool, by content hash.
    single: HashMap<u64, f64>,
    /// What a tool adds after another, by the two content hashes.
    pair: HashMap<(u64, u64), f64>,
    /// Block tokens by the list's hash.
    lists: HashMap<u64, u64>,
    /// Whether the incremental count was found exact (None until a list of two tools is seen).
    exact: Option<bool>,
    /// Texts rendered and counted so far (tools, lists of one or two tools, whole lists).
    counted: u64,
}

impl ListCounter {
    /// An empty counter for `rendering` (a copy of it is kept).
    pub(crate) fn new(rendering: &ToolRendering) -> Self {
        ListCounter {
            rendering: rendering.clone(),
            tools: HashMap::new(),
            single: HashMap::new(),
            pair: HashMap::new(),
            lists: HashMap::new(),
            exact: None,
            counted: 0,
        }
    }

    /// The rendering counted with.
    pub(crate) fn rendering(&self) -> &ToolRendering {
        &self.rendering
    }

    /// [`ToolRendering::tool_tokens`] of `tool`, whose content hash ([`Tool::content_hash`]) is
    /// `hash`; counted once per distinct tool.
    pub(crate) fn tool_tokens(&mut self, tool: &Tool, hash: u64) -> u64 {
        let r = &self.rendering;
        let counted = &mut self.counted;
        *self.tools.entry(hash).or_insert_with(|| {
            *counted += 1;
            r.tool_tokens(tool)
        })
    }

    /// Counts kept (tools, lists of one tool, neighbouring pairs, whole lists).
    pub(crate) fn entries(&self) -> usize {
        self.tools.len() + self.single.len() + self.pair.len() + self.lists.len()
    }

    /// How many texts (a tool, a list of one or two tools, a whole list) were rendered and
    /// counted so far: the work, which grows with the distinct tools and neighbouring pairs, not
    /// with the lists' lengths.
    #[cfg(test)]
    pub(crate) fn texts_counted(&self) -> u64 {
        self.counted
    }

    /// [`ToolRendering::block_tokens`] of `tools`.
    pub(crate) fn block_tokens(&mut self, tools: &[Tool]) -> u64 {
        let hashes: Vec<u64> = tools.iter().map(Tool::content_hash).collect();
        let parts: u64 = tools
            .iter()
            .zip(&hashes)
            .map(|(t, &h)| self.tool_tokens(t, h))
            .sum();
        let list: Vec<&Tool> = tools.iter().collect();
        self.block(&list, &hashes, parts)
    }

    /// Whether lists are counted incrementally: `None` before the first list of two tools or
    /// more, then whether its incremental count equalled its whole count.
    #[cfg(test)]
    pub(crate) fn incremental(&self) -> Option<bool> {
        self.exact
    }

    /// [`ToolRendering::block_tokens`] of `list`, given each tool's content hash and `parts`, the
    /// sum of their [`Self::tool_tokens`].
    pub(crate) fn block(&mut self, list: &[&Tool], hashes: &[u64], parts: u64) -> u64 {
        let r = &self.rendering;
        if list.is_empty() {
            return 0;
        }
        if r.template == TemplateKind::Linear {
            return r.fixed_preamble(list.len()) + parts;
        }
        let key = hashes.iter().fold(fnv1a(b"tool list"), |h, &t| chain(h, t));
        if let Some(&b) = self.lists.get(&key) {
            return b;
        }
        let corrected = if self.exact == Some(false) {
            self.counted += 1;
            whole(r, list)
        } else {
            let incremental = self.incremental_count(list, hashes);
            let r = &self.rendering;
            if self.exact.is_none() && list.len() >= 2 {
                self.counted += 1;
                let whole = whole(r, list);
                self.exact = Some((incremental - whole).abs() < 1e-6 * whole.abs().max(1.0));
                whole
            } else {
                incremental
            }
        };
        let b = self.rendering.block_of(corrected, parts, list.len());
        self.lists.insert(key, b);
        b
    }

    fn incremental_count(&mut self, list: &[&Tool], hashes: &[u64]) -> f64 {
        let mut count = self.single(list[0], hashes[0]);
        for k in 1..list.len() {
            let key = (hashes[k - 1], hashes[k]);
            let added = match self.pair.get(&key) {
                Some(&a) => a,
                None => {
                    let before = self.single(list[k - 1], hashes[k - 1]);
                    self.counted += 1;
                    let both = self
                        .rendering
                        .corrected_count(&[list[k - 1].clone(), list[k].clone()]);
                    self.pair.insert(key, both - before);
                    both - before
                }
            };
            count += added;
        }
        count
    }

    /// The corrected count of a list of `tool` alone.
    fn single(&mut self, tool: &Tool, hash: u64) -> f64 {
        if let Some(&c) = self.single.get(&hash) {
            return c;
        }
        self.counted += 1;
        let c = self.rendering.corrected_count(std::slice::from_ref(tool));
        self.single.insert(hash, c);
        c
    }
}

/// The corrected count of a list of references, counted whole.
fn whole(r: &ToolRendering, list: &[&Tool]) -> f64 {
    let owned: Vec<Tool> = list.iter().map(|t| (*t).clone()).collect();
    r.corrected_count(&owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog::Catalog;
    use crate::model::tools::{schema_depth, synthetic_tool, synthetic_tools};

    fn sourced(v: f64) -> Sourced<f64> {
        Sourced {
            value: v,
            source: "assumed: test".into(),
            checked: None,
            checked_against: None,
        }
    }

    #[test]
    fn the_depth_slope_scales_each_tools_own_count_by_its_depth() {
        let c = Catalog::embedded().unwrap();
        let mut r = c.model("deepseek-v4-flash").unwrap().rendering().clone();
        assert_eq!(r.depth_slope(), 0.0);
        let flat = synthetic_tool(1, 3);
        let mut deep = synthetic_tool(2, 3);
        deep.input_schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b": {"type": "array", "items": {"type": "string"}}}}}});
        assert_eq!(schema_depth(&flat.input_schema), 1);
        assert_eq!(schema_depth(&deep.input_schema), 3);
        let tools = vec![flat.clone(), deep.clone()];
        let raw = r.count_rendered(&r.render(&tools)) as f64;
        assert_eq!(r.corrected_count(&tools), raw);
        r.depth_slope = Some(sourced(-0.1));
        // Depth 1 keeps its weight; depth 3 counts 1 - 0.1 x 2 = 0.8 of its own tokens.
        assert_eq!(r.depth_weight(&flat), 1.0);
        assert!((r.depth_weight(&deep) - 0.8).abs() < 1e-12);
        let own = r.raw_tool_count(&deep) as f64;
        assert!((r.corrected_count(&tools) - (raw - 0.2 * own)).abs() < 1e-9);
        assert_eq!(r.tool_tokens(&deep), (0.8 * own).floor() as u64);
        let per: u64 = tools.iter().map(|t| r.tool_tokens(t)).sum();
        assert_eq!(r.preamble_for(&tools, per) + per, r.block_tokens(&tools));
        assert!(
            r.describe().contains("-0.1000 per nesting level"),
            "{}",
            r.describe()
        );
        // Out of range, or on the linear kind, it is refused.
        r.depth_slope = Some(sourced(0.9));
        assert!(r.validate("c.toml", "family").is_err());
        let mut lin =
            ToolRendering::linear(sourced(0.0), sourced(1.0), sourced(0.25), sourced(0.25));
        lin.depth_slope = Some(sourced(-0.01));
        let e = lin
            .validate("c.toml", "family `x`")
            .unwrap_err()
            .to_string();
        assert!(e.contains("template"), "{e}");
    }

    fn deep_tool(i: usize) -> Tool {
        let mut t = synthetic_tool(i, 2);
        t.name = format!("deep_{i}");
        t.description = "Reads {\"a\": [1, 2]} and more. ".repeat(20);
        t.input_schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b": {"type": "array", "items": {"type": "string", "description": "}},{"}}}}},
            "required": ["a"]});
        t
    }

    #[test]
    fn list_counter_equals_the_whole_count_of_every_event_list_on_every_family() {
        // The lists a scenario's events make of one list: drops at the start, middle and end,
        // additions, a replacement, a reversal, one tool, none; with long descriptions, nesting
        // and punctuation that the tokenizer could merge across tools.
        let c = Catalog::embedded().unwrap();
        let mut base = synthetic_tools(1, 10, 2);
        base.insert(3, deep_tool(1));
        base.push(deep_tool(2));
        let extra = [synthetic_tool(40, 0), deep_tool(3), synthetic_tool(41, 7)];
        let mut lists: Vec<Vec<Tool>> = vec![base.clone()];
        for drop in [0, 3, 6, base.len() - 1] {
            let mut l = base.clone();
            l.remove(drop);
            lists.push(l);
        }
        let mut added = base.clone();
        added.extend(extra.iter().cloned());
        lists.push(added);
        let mut replaced = base.clone();
        replaced.splice(4..7, extra.iter().cloned());
        lists.push(replaced);
        lists.push(base.iter().rev().cloned().collect());
        lists.push(vec![deep_tool(4)]);
        lists.push(Vec::new());
        let mut families = 0;
        for m in &c.models {
            let r = m.rendering();
            let mut counter = ListCounter::new(r);
            for (k, l) in lists.iter().enumerate() {
                assert_eq!(
                    counter.block_tokens(l),
                    r.block_tokens(l),
                    "{} list {k}",
                    m.id
                );
                for t in l {
                    assert_eq!(counter.tool_tokens(t, t.content_hash()), r.tool_tokens(t));
                }
            }
            if r.template != TemplateKind::Linear {
                // Found incrementally, not by the whole-list fallback.
                assert_eq!(counter.incremental(), Some(true), "{}", m.id);
                families += 1;
            }
        }
        assert!(families >= 5, "{families}");
    }

    #[test]
    fn an_event_list_costs_its_new_neighbours_not_its_length() {
        // 300 tools, then 100 lists that each drop one tool: before, each list was rendered and
        // counted whole (over 30,000 tool texts); now each new list adds one neighbouring pair.
        let c = Catalog::embedded().unwrap();
        let r = c.model("claude-opus-4.8").unwrap().rendering();
        let tools = synthetic_tools(1, 300, 1);
        let mut counter = ListCounter::new(r);
        counter.block_tokens(&tools);
        let first = counter.texts_counted();
        // Each tool, its list of one, its pair with the next, and the whole list once.
        assert!(first <= 3 * 300 + 1, "{first}");
        for k in 0..100 {
            let mut l = tools.clone();
            l.remove(100 + k);
            assert_eq!(counter.block_tokens(&l), r.block_tokens(&l));
        }
        let events = counter.texts_counted() - first;
        assert!(events <= 100, "{events} texts counted for 100 event lists");
    }
}
