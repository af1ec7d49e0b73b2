//! A traced call's prompt as the cache sees it: its regions sized in tokens, laid out in the
//! provider's cache order with the markers of the model and of the settings that invalidate, and
//! the breakpoints placed, as one [`Prompt`] of the engine (so the engine's own rules bill it).

use std::collections::HashMap;

use crate::base::hash::{chain, fnv1a};
use crate::input::trace::{Content, Exchange, RegionKind};
use crate::model::catalog::{CacheRules, ModelSpec, ToolChangeRule};
use crate::model::strategy::{Anchor, Mode, ResolvedStrategy, Strategy};
use crate::model::tokens::ListCounter;
use crate::sim::engine::cache::{PlacedBreakpoint, RuleParams};
use crate::sim::engine::prompt::{Prompt, Segment};

/// Tokens assumed for an image part (its bytes are not text): about a 1,000 x 1,000 image at
/// Anthropic's documented `width x height / 750`.
pub(crate) const IMAGE_TOKENS: u64 = 1_334;

/// The write slots of explain's bills: the model's default tier, `1h`, anything else.
pub(crate) const SLOT_1H: usize = 1;

/// What one item of a prompt is, for telling where two prompts first differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    /// The model (a different model caches apart).
    Model,
    /// A request setting that invalidates the part after it.
    Setting(&'static str),
    /// The tool list's own tokens (wrapper, preamble); its fingerprint is the list's under the
    /// `invalidate` rule, so any tool change starts here.
    Preamble,
    /// Tool `i`.
    Tool(usize),
    /// System block `i`.
    System(usize),
    /// Part `p` of message `m`.
    Message(usize, usize),
}

/// One item with its fingerprint and the token position at its end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub kind: ItemKind,
    pub hash: u64,
    /// Tokens from the start of the prompt to the end of this item.
    pub end: u64,
    /// The prompt boundary at its end (`None` before the first token).
    pub boundary: Option<usize>,
}

/// A model as explain bills it: its rules for the mode its default strategy uses.
#[derive(Debug)]
pub(crate) struct ModelRules<'c> {
    pub model: &'c ModelSpec,
    pub resolved: ResolvedStrategy,
    pub params: Option<RuleParams>,
    /// USD per base-rate input token.
    pub input_usd: f64,
    pub read_multiplier: f64,
    /// Write multiplier per slot (default tier, 1h, other).
    pub write_multipliers: [f64; 3],
}

impl<'c> ModelRules<'c> {
    pub(crate) fn new(model: &'c ModelSpec) -> crate::error::Result<Self> {
        let resolved = Strategy::parse(&model.default_strategy)?.resolve(model)?;
        let rules = resolved.rules.clone();
        let params = rules.as_ref().map(|r| RuleParams {
            min_tokens: r.min_tokens.value,
            granularity: r.granularity.value.max(1),
            refresh_on_hit: r.refresh_on_hit.value,
            lookback: r
                .lookback_blocks
                .as_ref()
                .map_or(usize::MAX, |l| l.value as usize),
            avail_delay_ms: 0,
        });
        let (read_multiplier, write_multipliers) = match &rules {
            None => (1.0, [1.0; 3]),
            Some(r) => {
                let default = r.tier(None).map_or(1.0, |(_, t)| t.write_multiplier.value);
                let h1 = r
                    .tiers
                    .get("1h")
                    .map_or(default, |t| t.write_multiplier.value);
                (r.read_multiplier.value, [default, h1, default])
            }
        };
        Ok(ModelRules {
            model,
            resolved,
            params,
            input_usd: model.input_usd_per_mtok.value / 1e6,
            read_multiplier,
            write_multipliers,
        })
    }

    pub(crate) fn rules(&self) -> Option<&CacheRules> {
        self.resolved.rules.as_ref()
    }

    pub(crate) fn mode(&self) -> Mode {
        self.resolved.mode
    }

    /// (slot, TTL in ms) of a tier the request names (`5m`, `1h`, `default`).
    pub(crate) fn tier(&self, name: &str) -> (usize, u64) {
        let Some(r) = self.rules() else {
            return (0, 300_000);
        };
        let default_ms = r
            .tier(None)
            .map_or(300_000, |(_, t)| (t.ttl_seconds.value * 1000.0) as u64);
        match r.tiers.get(name) {
            Some(t) if name == "1h" => (SLOT_1H, (t.ttl_seconds.value * 1000.0) as u64),
            Some(t) if name != r.default_tier => (2, (t.ttl_seconds.value * 1000.0) as u64),
            _ => (0, default_ms),
        }
    }

    /// The name of the model's default tier.
    pub(crate) fn default_tier_name(&self) -> String {
        self.rules().map_or("5m".into(), |r| r.default_tier.clone())
    }

    /// Whether the model has a 1-hour tier.
    pub(crate) fn has_1h(&self) -> bool {
        self.rules().is_some_and(|r| r.tiers.contains_key("1h"))
    }

    /// Dollars of a split's input at this model's prices.
    pub(crate) fn input_usd(&self, read: u64, written: [u64; 3], uncached: u64) -> f64 {
        let w: f64 = (0..3)
            .map(|i| written[i] as f64 * self.write_multipliers[i])
            .sum();
        (uncached as f64 + read as f64 * self.read_multiplier + w) * self.input_usd
    }
}

/// Token counts of regions, remembered by fingerprint (a conversation re-sends its history on
/// every call; each text is counted once).
#[derive(Debug, Default)]
pub(crate) struct Sizer {
    texts: HashMap<(u64, u64), u64>,
    lists: HashMap<u64, ListCounter>,
}

/// Entries kept before the text memo starts over (memory stays bounded on any trace).
const MEMO_LIMIT: usize = 1 << 20;

impl Sizer {
    /// Each region's tokens in pcsim's token model, and the tool list's own tokens (preamble).
    pub(crate) fn estimate(&mut self, ex: &Exchange, model: &ModelSpec) -> (Vec<u64>, u64) {
        let rendering = model.rendering();
        let family = fnv1a(model.family.as_bytes());
        if self.texts.len() > MEMO_LIMIT {
            self.texts.clear();
        }
        let counter = self
            .lists
            .entry(family)
            .or_insert_with(|| ListCounter::new(rendering));
        let mut sizes = Vec::with_capacity(ex.regions.len());
        let mut tools = Vec::new();
        let mut hashes = Vec::new();
        for r in &ex.regions {
            let n = match &r.content {
                Content::Tool(t) => {
                    let h = t.content_hash();
                    tools.push(t);
                    hashes.push(h);
                    counter.tool_tokens(t, h)
                }
                Content::Text(s) | Content::Json(s) => *self
                    .texts
                    .entry((family, r.hash))
                    .or_insert_with(|| rendering.count_text(s, &[])),
                Content::Image => IMAGE_TOKENS,
            };
            sizes.push(n);
        }
        let sum: u64 = tools
            .iter()
            .zip(&hashes)
            .map(|(t, &h)| counter.tool_tokens(t, h))
            .sum();
        let preamble = counter.block(&tools, &hashes, sum).saturating_sub(sum);
        (sizes, preamble)
    }

    /// The tool list's own tokens (preamble) in pcsim's token model when only the tools named in
    /// `called` (sorted) are sent: what [`Sizer::estimate`] gives for that shorter list.
    pub(crate) fn kept_preamble(
        &mut self,
        ex: &Exchange,
        model: &ModelSpec,
        called: &[String],
    ) -> u64 {
        let rendering = model.rendering();
        let family = fnv1a(model.family.as_bytes());
        let counter = self
            .lists
            .entry(family)
            .or_insert_with(|| ListCounter::new(rendering));
        let mut tools = Vec::new();
        let mut hashes = Vec::new();
        for r in &ex.regions {
            if let Content::Tool(t) = &r.content {
                if called.binary_search(&r.name).is_ok() {
                    tools.push(t);
                    hashes.push(t.content_hash());
                }
            }
        }
        if tools.is_empty() {
            return 0;
        }
        let sum: u64 = tools
            .iter()
            .zip(&hashes)
            .map(|(t, &h)| counter.tool_tokens(t, h))
            .sum();
        counter.block(&tools, &hashes, sum).saturating_sub(sum)
    }
}

/// Scales estimated sizes so that they add up to the billed prompt (the bill is the truth; the
/// difference is message framing and the provider's own text), keeping every prefix sum rounded.
pub(crate) fn scale_to(sizes: &mut [u64], preamble: &mut u64, billed: u64) {
    let est: u64 = sizes.iter().sum::<u64>() + *preamble;
    if est == billed || est == 0 {
        return;
    }
    let f = billed as f64 / est as f64;
    let mut cum_est = 0u64;
    let mut cum_scaled = 0u64;
    let mut step = |n: &mut u64| {
        cum_est += *n;
        let target = ((cum_est as f64 * f).round() as u64).min(billed);
        *n = target.saturating_sub(cum_scaled);
        cum_scaled = target;
    };
    step(preamble);
    for s in sizes.iter_mut() {
        step(s);
    }
}

/// What a simulated fix changes in how a prompt is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Tools sorted by name (a frozen tool order).
    pub sort_tools: bool,
    /// System blocks that changed in this conversation move after the last message.
    pub move_volatile_system: bool,
    /// A breakpoint after the tool block.
    pub tools_breakpoint: bool,
    /// Every breakpoint at the 1-hour tier.
    pub all_1h: bool,
    /// Only the tools the conversation calls are sent (see [`build`]'s `called`).
    pub drop_unused_tools: bool,
}

/// A call's prompt built for the engine.
#[derive(Debug, Default)]
pub(crate) struct Built {
    pub prompt: Prompt,
    pub items: Vec<Item>,
    pub breakpoints: Vec<PlacedBreakpoint>,
}

fn setting_items(
    ex: &Exchange,
    rules: Option<&CacheRules>,
    part: &str,
) -> Vec<(&'static str, u64)> {
    let s = &ex.settings;
    [
        ("tool_choice", s.tool_choice),
        ("thinking", s.thinking),
        ("images", s.images as u64),
    ]
    .into_iter()
    .filter(|(name, _)| rules.and_then(|r| r.invalidated_by(name)) == Some(part))
    .collect()
}

/// Lays a call out: model marker, tools (preamble, each tool), system blocks, message parts, with
/// the setting markers before the part each invalidates, and places the breakpoints. With
/// `layout.drop_unused_tools`, only the tools named in `called` (sorted) are sent, `preamble` is
/// then the kept list's, and a breakpoint the request set on a dropped tool moves to the end of
/// the kept tools (where a client sending the shorter list would set it).
// Over 120 lines: lays out one prompt in its order (model marker, tools, system, messages, then the
// breakpoints), each part appending to the same `Built` and the later parts reading the boundaries
// the earlier ones left.
pub(crate) fn build(
    ex: &Exchange,
    m: &ModelRules,
    sizes: &[u64],
    preamble: u64,
    layout: Layout,
    volatile: &[usize],
    called: &[String],
) -> Built {
    let mut b = Built::default();
    let rules = m.rules();
    let invalidate = m.resolved.tool_change == ToolChangeRule::Invalidate;
    let marker = |b: &mut Built, kind: ItemKind, hash: u64| {
        b.prompt.salt_next(chain(fnv1a(b"explain-marker"), hash));
        b.items.push(Item {
            kind,
            hash,
            end: b.prompt.tokens(),
            boundary: b.prompt.last_boundary(),
        });
    };
    marker(&mut b, ItemKind::Model, fnv1a(m.model.id.as_bytes()));
    let push = |b: &mut Built, kind: ItemKind, hash: u64, tokens: u64, id: u64| {
        b.prompt.push(Segment { tokens, id });
        b.items.push(Item {
            kind,
            hash,
            end: b.prompt.tokens(),
            boundary: b.prompt.last_boundary(),
        });
    };
    let mut wanted: Vec<(Option<usize>, String)> = Vec::new();
    // Tools.
    let mut tool_idx: Vec<usize> = (0..ex.regions.len())
        .filter(|&i| ex.regions[i].kind == RegionKind::Tool)
        .collect();
    let mut dropped_breakpoint: Option<String> = None;
    if layout.drop_unused_tools {
        tool_idx.retain(|&i| {
            let r = &ex.regions[i];
            let keep = called.binary_search(&r.name).is_ok();
            if !keep && r.breakpoint.is_some() {
                dropped_breakpoint.clone_from(&r.breakpoint);
            }
            keep
        });
    }
    if layout.sort_tools {
        tool_idx.sort_by(|&a, &b| ex.regions[a].name.cmp(&ex.regions[b].name));
    }
    if !tool_idx.is_empty() {
        for (name, v) in setting_items(ex, rules, "tools") {
            marker(&mut b, ItemKind::Setting(name), v);
        }
        let list = tool_idx
            .iter()
            .fold(fnv1a(b"tools"), |h, &i| chain(h, ex.regions[i].hash));
        let salt = if invalidate { list } else { 0 };
        push(&mut b, ItemKind::Preamble, salt, preamble, chain(salt, 1));
        for (k, &i) in tool_idx.iter().enumerate() {
            let r = &ex.regions[i];
            push(
                &mut b,
                ItemKind::Tool(k),
                r.hash,
                sizes[i],
                chain(salt, r.hash),
            );
            if let Some(t) = &r.breakpoint {
                wanted.push((b.prompt.last_boundary(), t.clone()));
            }
        }
    }
    let tools_end = b.prompt.last_boundary();
    if let (Some(t), false) = (dropped_breakpoint, tool_idx.is_empty()) {
        wanted.push((tools_end, t));
    }
    for (name, v) in setting_items(ex, rules, "system") {
        marker(&mut b, ItemKind::Setting(name), v);
    }
    let mut moved = Vec::new();
    for (i, r) in ex.regions.iter().enumerate() {
        if r.kind != RegionKind::System {
            continue;
        }
        if layout.move_volatile_system && volatile.contains(&r.index) {
            moved.push(i);
            continue;
        }
        push(&mut b, ItemKind::System(r.index), r.hash, sizes[i], r.hash);
        if let Some(t) = &r.breakpoint {
            wanted.push((b.prompt.last_boundary(), t.clone()));
        }
    }
    let system_end = b.prompt.last_boundary();
    for (name, v) in setting_items(ex, rules, "messages") {
        marker(&mut b, ItemKind::Setting(name), v);
    }
    for (i, r) in ex.regions.iter().enumerate() {
        if r.kind != RegionKind::Message {
            continue;
        }
        push(
            &mut b,
            ItemKind::Message(r.index, r.part),
            r.hash,
            sizes[i],
            r.hash,
        );
        if let Some(t) = &r.breakpoint {
            wanted.push((b.prompt.last_boundary(), t.clone()));
        }
    }
    let last = b.prompt.last_boundary();
    // Volatile system text after the last breakpoint: billed, never part of a cached prefix.
    for i in moved {
        let r = &ex.regions[i];
        push(&mut b, ItemKind::System(r.index), r.hash, sizes[i], r.hash);
    }
    // APIs without cache_control get the model's own breakpoints (OpenAI: the end of the system
    // prompt and of the latest message).
    if m.mode() == Mode::Explicit && ex.api != crate::input::trace::Api::AnthropicMessages {
        for bp in &m.resolved.breakpoints {
            let at = match bp.anchor {
                Anchor::Tools => tools_end,
                Anchor::System => system_end,
                Anchor::Last => last,
            };
            wanted.push((at, bp.tier.clone()));
        }
    }
    if layout.tools_breakpoint && tools_end.is_some() {
        wanted.push((tools_end, m.default_tier_name()));
    }
    for (at, tier) in wanted {
        let Some(boundary) = at else { continue };
        let tier = if layout.all_1h && m.has_1h() {
            "1h"
        } else {
            tier.as_str()
        };
        let (slot, ttl_ms) = m.tier(tier);
        if !b.breakpoints.iter().any(|p| p.boundary == boundary) {
            b.breakpoints.push(PlacedBreakpoint {
                boundary,
                slot,
                ttl_ms,
            });
        }
    }
    b.breakpoints.sort_by_key(|p| p.boundary);
    b
}
