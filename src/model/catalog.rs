//! The model catalog (`models.toml`): prices, tool rendering and caching rules per model, every number
//! with its source. The catalog shipped at the project root is embedded in the binary as the default.
//!
//! One concept: the catalog as pcsim holds it, its types, the loading of a `models.toml` (alone or
//! laid over the embedded one) and the validation of every rule with an error that names the field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::model::prices::check_price;
use crate::model::sourced::{check_number, check_source};
pub use crate::model::sourced::{Sourced, SOURCE_KINDS};
use crate::model::tokens::ToolRendering;

/// The catalog embedded at build time from the project's `models.toml`.
pub const EMBEDDED_CATALOG: &str = include_str!("../../models.toml");

/// How the embedded catalog is named in errors and provenance.
pub(crate) const BUILTIN_ORIGIN: &str = "built-in models.toml";

/// The six models whose behaviour was measured; the default model set of scenarios.
pub const MEASURED_MODELS: [&str; 6] = [
    "claude-opus-4.8",
    "claude-opus-5",
    "gpt-5.6",
    "gemini-3.6-flash",
    "glm-5.2",
    "kimi-k3",
];

pub(crate) use crate::model::prices::MAX_USD_PER_MTOK;

/// What a change of the tool list does to cached prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChangeRule {
    /// Any change re-renders the whole tool block: everything from the tool block on misses.
    Invalidate,
    /// Tokens before the first changed tool still match; the rest misses.
    PreservePrefix,
    /// Changes travel as a message after the cached prefix (e.g. a mid-conversation tool-change beta);
    /// the original tool block stays in place and keeps hitting.
    Append,
}

impl ToolChangeRule {
    /// The spelling used in files and strategy strings.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolChangeRule::Invalidate => "invalidate",
            ToolChangeRule::PreservePrefix => "preserve_prefix",
            ToolChangeRule::Append => "append",
        }
    }
}

/// Request settings whose change between two calls can invalidate cached prompt parts, as scenario
/// events name them (`[[event]] change = "tool_choice"`).
pub(crate) const SETTING_CHANGES: [&str; 3] = ["tool_choice", "images", "thinking"];

/// The prompt parts in prompt order, as [`CacheRules::invalidates`] names the first part a setting
/// change invalidates (that part and every later one miss); `none` invalidates nothing.
pub(crate) const PROMPT_PARTS: [&str; 4] = ["tools", "system", "messages", "none"];

/// One time-to-live tier of cache writes (e.g. 5 min at 1.25x, 1 h at 2x).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TtlTier {
    /// Lifetime of an entry after the request that wrote or last read it, in seconds.
    pub ttl_seconds: Sourced<f64>,
    /// Price of a written token relative to the base input price.
    pub write_multiplier: Sourced<f64>,
}

/// The caching rules of one mode (explicit, automatic or implicit) of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheRules {
    /// Shortest prefix that can be cached at all; shorter ones are silently not cached.
    pub min_tokens: Sourced<u64>,
    /// Cached prefixes are counted in whole blocks of this many tokens.
    pub granularity: Sourced<u64>,
    /// Price of a token read from cache relative to the base input price.
    pub read_multiplier: Sourced<f64>,
    /// Whether a hit restarts the entry's time-to-live.
    pub refresh_on_hit: Sourced<bool>,
    /// TTL tiers by name (`5m`, `1h`, `30m`, `default`, ...).
    pub tiers: BTreeMap<String, TtlTier>,
    /// The tier used when a strategy does not name one.
    pub default_tier: String,
    /// Explicit mode: most breakpoints (cache writes) per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_breakpoints: Option<Sourced<u32>>,
    /// Explicit mode: how many block boundaries a breakpoint looks back over (itself included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookback_blocks: Option<Sourced<u32>>,
    /// Best-effort caches: probability that a lookup which could hit does hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_probability: Option<Sourced<f64>>,
    /// Best-effort routing: above this many requests per minute per prefix, requests overflow to
    /// other machines and miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_rpm_per_prefix: Option<Sourced<f64>>,
    /// Storage price per million cached tokens per hour, where the provider bills storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_usd_per_mtok_hour: Option<Sourced<f64>>,
    /// What a tool-list change does by default.
    pub tool_change: Sourced<ToolChangeRule>,
    /// Other tool-change behaviours the model offers (e.g. a beta), selectable by a strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_change_options: Option<Sourced<Vec<ToolChangeRule>>>,
    /// Explicit mode: the anchors a breakpoint may sit at (`tools`, `system`, `last`), where the
    /// provider restricts placement (e.g. OpenAI: only inside input messages); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_anchors: Option<Sourced<Vec<String>>>,
    /// For each request setting of `SETTING_CHANGES` the provider documents, the first prompt
    /// part (of `PROMPT_PARTS`) a change of it invalidates. A setting the table does not list
    /// invalidates nothing (no documented effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalidates: Option<Sourced<BTreeMap<String, String>>>,
}

impl CacheRules {
    /// The tier of the given name, or the default tier.
    pub(crate) fn tier(&self, name: Option<&str>) -> Option<(&str, &TtlTier)> {
        let name = name.unwrap_or(&self.default_tier);
        self.tiers.get_key_value(name).map(|(k, v)| (k.as_str(), v))
    }

    /// The first prompt part (`tools`, `system` or `messages`) a change of `setting` invalidates,
    /// or `None` when it invalidates nothing.
    pub(crate) fn invalidated_by(&self, setting: &str) -> Option<&str> {
        self.invalidates
            .as_ref()
            .and_then(|t| t.value.get(setting))
            .map(String::as_str)
            .filter(|p| *p != "none")
    }

    /// Whether the model can apply the given tool-change rule in this mode.
    pub(crate) fn supports_tool_change(&self, rule: ToolChangeRule) -> bool {
        self.tool_change.value == rule
            || self
                .tool_change_options
                .as_ref()
                .is_some_and(|o| o.value.contains(&rule))
    }
}

/// The caching modes a model offers. A mode that is absent is not offered; `none` always is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheModes {
    /// Breakpoints chosen by the caller (`cache_control`, `prompt_cache_breakpoint`, `cachePoint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explicit: Option<CacheRules>,
    /// Every prefix cached in blocks with no configuration, guaranteed while alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automatic: Option<CacheRules>,
    /// Automatic but best-effort: a hit happens only with `hit_probability`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<CacheRules>,
}

/// One model of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Stable id used on the command line and in reports, e.g. `claude-opus-4.8`.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Provider, e.g. `anthropic`.
    pub provider: String,
    /// Tokenizer / rendering family; models of one family render tools alike.
    pub family: String,
    /// Base input price, USD per million tokens.
    pub input_usd_per_mtok: Sourced<f64>,
    /// Output price, USD per million tokens.
    pub output_usd_per_mtok: Sourced<f64>,
    /// What the `cached` strategy means for this model (e.g. `explicit:tools+system+last`).
    pub default_strategy: String,
    /// How tool definitions become billed tokens (filled in from the family when omitted).
    #[serde(default)]
    pub tool_rendering: Option<ToolRendering>,
    /// The caching modes the model offers.
    #[serde(default)]
    pub cache: CacheModes,
    /// Free-form remarks (e.g. dating caveats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Other ids under which the same model (same prices and rules) is known, e.g. `gpt-5.6` for
    /// GPT-5.6 Sol; each becomes a model of its own when the catalog is loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Set by the loader on a model made from an alias: the id it is an alias of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
    /// The model's key in LiteLLM's price file, for `pcsim models --check-against`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub litellm: Option<String>,
    /// The model's id in genai-prices' data, `PROVIDER/MODEL` (e.g. `openai/gpt-5.6-sol`), for
    /// `pcsim models --check-against` on a genai-prices file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub genai_prices: Option<String>,
    /// Longest prompt the model accepts, in tokens (its context window for input); a simulated
    /// prompt above it is warned about (the provider would refuse the call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<Sourced<u64>>,
    /// Dated price changes, in date order (`[[model.price_change]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub price_change: Vec<crate::model::prices::PriceChange>,
    /// Service tiers by name (`batch`, `flex`, `priority`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub service_tier: BTreeMap<String, crate::model::prices::ServiceTier>,
    /// Price multiplier of regional / data-residency endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regional_multiplier: Option<Sourced<f64>>,
    /// Prices of prompts above a length threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<crate::model::prices::LongContext>,
    /// Set when prices were selected (`Catalog::priced`): what they are (day, sheet, tier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priced: Option<String>,
    /// Set by `Catalog::priced` when the selected prices do not exist for the model (e.g. a service
    /// tier it does not offer): selecting the model is then an error with this reason.
    #[serde(skip)]
    pub unavailable: Option<String>,
}

impl ModelSpec {
    /// The tool rendering (always present after the catalog is loaded).
    // Allowed: `Catalog` loading fills every model's rendering from its family (or refuses the
    // file), so this cannot fail on user data; only a hand-built `ModelSpec` without one can.
    #[allow(clippy::expect_used)]
    pub fn rendering(&self) -> &ToolRendering {
        self.tool_rendering
            .as_ref()
            .expect("catalog loading fills every model's tool rendering")
    }

    /// Dollars for `tokens` at the base input price.
    pub fn input_usd(&self, tokens: f64) -> f64 {
        tokens * self.input_usd_per_mtok.value / 1e6
    }

    /// Dollars for `tokens` at the output price.
    pub fn output_usd(&self, tokens: f64) -> f64 {
        tokens * self.output_usd_per_mtok.value / 1e6
    }
}

/// A rendering family: models that turn tool definitions into the same number of tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// Family id referenced by models.
    pub id: String,
    /// The rendering model of the family.
    pub tool_rendering: ToolRendering,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    family: Vec<Family>,
    #[serde(default)]
    model: Vec<ModelSpec>,
    #[serde(default)]
    price_sheet: Vec<crate::model::prices::PriceSheetSpec>,
    #[serde(default)]
    tracker: Vec<crate::model::prices::Tracker>,
    #[serde(default)]
    model_family: Vec<ModelFamily>,
}

/// `[[model_family]]`: gives one model (and its aliases) another rendering family, e.g. the
/// family `pcsim calibrate --only` fits for that model alone, leaving the rest of its family as
/// it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFamily {
    /// The model's id (or one of its aliases).
    model: String,
    /// The family it renders tools with from now on.
    family: String,
}

/// A validated catalog of models.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Where the catalog came from (a path, or `built-in models.toml`).
    pub origin: String,
    /// When `origin` is an overlay: the catalog it was laid on (`built-in models.toml`).
    pub overlaid_on: Option<String>,
    /// Rendering families.
    pub families: Vec<Family>,
    /// Models, in file order (a model's aliases follow it).
    pub models: Vec<ModelSpec>,
    /// Named price sheets (`--price-sheet`).
    pub price_sheets: Vec<crate::model::prices::PriceSheetSpec>,
    /// Price trackers' files that prices were checked against (`[[tracker]]`).
    pub trackers: Vec<crate::model::prices::Tracker>,
}

impl Catalog {
    /// Parses catalog text and checks everything but the models' default strategies (checked by
    /// [`Catalog::from_toml_str`], which sits above the strategy module); `origin` names it in
    /// errors.
    pub(crate) fn from_toml_str_unchecked_strategies(text: &str, origin: &str) -> Result<Self> {
        let mut raw: RawCatalog =
            toml::from_str(text).map_err(|e| crate::base::tomlpos::toml_error(origin, text, &e))?;
        // A file of families only is an overlay on the built-in catalog (what `pcsim calibrate`
        // writes): its families replace the built-in ones of the same id.
        let mut overlaid_on = None;
        if raw.model.is_empty() && !raw.family.is_empty() && text != EMBEDDED_CATALOG {
            raw = overlay_on_builtin(raw, origin)?;
            overlaid_on = Some(BUILTIN_ORIGIN.to_string());
        }
        Self::from_raw(raw, text, origin, overlaid_on)
    }

    /// Parses catalog text as an overlay on the built-in catalog (`--catalog FILE`): its families,
    /// models and price sheets replace the built-in ones of the same id and add the others. A full
    /// catalog overlaid gives its own models exactly; the built-in models it does not define stay.
    pub(crate) fn overlay_toml_str_unchecked_strategies(text: &str, origin: &str) -> Result<Self> {
        let raw: RawCatalog =
            toml::from_str(text).map_err(|e| crate::base::tomlpos::toml_error(origin, text, &e))?;
        if text == EMBEDDED_CATALOG {
            return Self::from_raw(raw, text, origin, None);
        }
        let raw = overlay_on_builtin(raw, origin)?;
        Self::from_raw(raw, text, origin, Some(BUILTIN_ORIGIN.to_string()))
    }

    fn from_raw(
        mut raw: RawCatalog,
        text: &str,
        origin: &str,
        overlaid_on: Option<String>,
    ) -> Result<Self> {
        for (i, mf) in raw.model_family.iter().enumerate() {
            let m = raw
                .model
                .iter_mut()
                .find(|m| m.id == mf.model || m.aliases.contains(&mf.model))
                .ok_or_else(|| {
                    Error::invalid(
                        origin,
                        format!("model_family[{i}].model"),
                        format!("no model `{}`", mf.model),
                    )
                    .located_in(text, origin)
                })?;
            m.family = mf.family.clone();
            m.tool_rendering = None;
        }
        let mut catalog = Catalog {
            origin: origin.to_string(),
            overlaid_on,
            families: raw.family,
            models: raw.model,
            price_sheets: raw.price_sheet,
            trackers: raw.tracker,
        };
        catalog
            .resolve_and_validate()
            .map_err(|e| e.located_in(text, origin))?;
        Ok(catalog)
    }

    /// Where the catalog came from, for provenance: `FILE laid on built-in models.toml` for an
    /// overlay, else the origin.
    pub(crate) fn describe(&self) -> String {
        match &self.overlaid_on {
            Some(base) => format!("{} laid on {base}", self.origin),
            None => self.origin.clone(),
        }
    }

    /// The model with this id, or an error that suggests the closest id.
    pub fn model(&self, id: &str) -> Result<&ModelSpec> {
        if let Some(m) = self.models.iter().find(|m| m.id == id) {
            if let Some(why) = &m.unavailable {
                return Err(Error::invalid(
                    "--model",
                    id,
                    format!("{why}; choose other models with --model"),
                ));
            }
            return Ok(m);
        }
        self.models.iter().find(|m| m.id == id).ok_or_else(|| {
            let hint = closest(id, self.models.iter().map(|m| m.id.as_str()))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            Error::UnknownModel {
                id: id.to_string(),
                hint,
            }
        })
    }

    /// Models for a list of ids (all must exist), each once in the order first named, or the
    /// measured six when `ids` is empty. Repeats are merged so that 10,000 copies of one id cost the
    /// work of one model in every command.
    pub(crate) fn select(&self, ids: &[String]) -> Result<Vec<&ModelSpec>> {
        if ids.is_empty() {
            return MEASURED_MODELS.iter().map(|id| self.model(id)).collect();
        }
        let mut seen = std::collections::HashSet::new();
        ids.iter()
            .filter(|id| seen.insert(id.as_str()))
            .map(|id| self.model(id))
            .collect()
    }

    // Over 120 lines: the catalog's checks in dependency order (families, then models, ids,
    // aliases, then the price sheets); each step needs the ones before it to have passed.
    fn resolve_and_validate(&mut self) -> Result<()> {
        let origin = self.origin.clone();
        if self.models.is_empty() {
            return Err(Error::invalid(
                &origin,
                "model",
                "the catalog defines no model",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        // A family's tokenizer file is named relative to the catalog file that names it.
        let dir = std::path::Path::new(&origin)
            .is_file()
            .then(|| {
                std::path::Path::new(&origin)
                    .parent()
                    .map(std::path::Path::to_path_buf)
            })
            .flatten();
        for family in &mut self.families {
            family.tool_rendering.resolve(dir.as_deref());
        }
        for model in &mut self.models {
            if let Some(r) = &mut model.tool_rendering {
                r.resolve(dir.as_deref());
            }
        }
        for family in &self.families {
            if !seen.insert(family.id.clone()) {
                return Err(Error::invalid(
                    &origin,
                    format!("family `{}`", family.id),
                    "defined twice",
                ));
            }
            family
                .tool_rendering
                .validate(&origin, &format!("family `{}`.tool_rendering", family.id))?;
        }
        let mut ids = std::collections::HashSet::new();
        for (index, model) in self.models.iter_mut().enumerate() {
            let at = format!("model `{}`", model.id);
            if model.id.trim().is_empty() {
                return Err(Error::invalid(
                    &origin,
                    format!("model[{index}].id"),
                    "empty model id",
                ));
            }
            if !ids.insert(model.id.clone()) {
                return Err(Error::invalid(&origin, format!("{at}.id"), "defined twice"));
            }
            if let Some(w) = &model.context_window {
                check_number(
                    &origin,
                    &format!("{at}.context_window"),
                    w,
                    Some(1.0),
                    Some(1e9),
                )?;
            }
            check_price(
                &origin,
                &format!("{at}.input_usd_per_mtok"),
                &model.input_usd_per_mtok,
                f64::MIN_POSITIVE,
                MAX_USD_PER_MTOK,
            )?;
            check_price(
                &origin,
                &format!("{at}.output_usd_per_mtok"),
                &model.output_usd_per_mtok,
                0.0,
                MAX_USD_PER_MTOK,
            )?;
            crate::model::prices::validate_model_pricing(
                &origin,
                &at,
                &model.price_change,
                &model.service_tier,
                &model.regional_multiplier,
                &model.long_context,
            )?;
            if model.tool_rendering.is_none() {
                let family = self
                    .families
                    .iter()
                    .find(|f| f.id == model.family)
                    .ok_or_else(|| {
                        Error::invalid(
                            &origin,
                            format!("{at}.family"),
                            format!(
                                "no family `{}` is defined and the model has no tool_rendering of its own",
                                model.family
                            ),
                        )
                    })?;
                model.tool_rendering = Some(family.tool_rendering.clone());
            } else if let Some(r) = &model.tool_rendering {
                r.validate(&origin, &format!("{at}.tool_rendering"))?;
            }
            for (mode, rules) in [
                ("explicit", &model.cache.explicit),
                ("automatic", &model.cache.automatic),
                ("implicit", &model.cache.implicit),
            ] {
                if let Some(rules) = rules {
                    validate_rules(&origin, &format!("{at}.cache.{mode}"), mode, rules)?;
                }
            }
        }
        // Aliases: a copy of the model under each other id, right after it.
        let mut models = Vec::with_capacity(self.models.len());
        for model in std::mem::take(&mut self.models) {
            let aliases = model.aliases.clone();
            models.push(model.clone());
            for alias in aliases {
                if !ids.insert(alias.clone()) || alias.trim().is_empty() {
                    return Err(Error::invalid(
                        &origin,
                        format!("model `{}`.aliases", model.id),
                        format!("alias `{alias}` is empty or already an id"),
                    ));
                }
                let mut copy = model.clone();
                copy.id = alias;
                copy.alias_of = Some(model.id.clone());
                copy.aliases.clear();
                models.push(copy);
            }
        }
        self.models = models;
        let ids: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
        crate::model::prices::validate_sheets(&origin, &self.price_sheets, &ids)?;
        let models: Vec<(String, &ModelSpec)> = self
            .models
            .iter()
            .filter(|m| m.alias_of.is_none())
            .map(|m| (format!("model `{}`", m.id), m))
            .collect();
        crate::model::prices::validate_trackers(&origin, &self.trackers, &models)?;
        let sheets: Vec<(String, &crate::model::prices::PriceSheetSpec)> = self
            .price_sheets
            .iter()
            .map(|s| (format!("price_sheet `{}`", s.id), s))
            .collect();
        crate::model::prices::validate_trackers(&origin, &self.trackers, &sheets)?;
        Ok(())
    }
}

/// The built-in catalog with `over`'s entries laid on it by id: a family, model or price sheet of
/// `over` replaces the built-in one of the same id (in its place) or is added at the end. A model
/// of `over` whose id is a built-in model's alias takes that id over (the alias is dropped).
/// The first id that `items` define twice, with the 1-based positions of both definitions.
fn defined_twice<T>(items: &[T], id: impl Fn(&T) -> &str) -> Option<(String, usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (i, x) in items.iter().enumerate() {
        if let Some(&first) = seen.get(id(x)) {
            return Some((id(x).to_string(), first + 1, i + 1));
        }
        seen.insert(id(x), i);
    }
    None
}

fn overlay_on_builtin(over: RawCatalog, origin: &str) -> Result<RawCatalog> {
    // Within the overlay, an id defined twice is refused naming both (the last won silently, issue
    // 29); replacing a built-in entry of the same id is what an overlay is for.
    let twice = [
        ("model", defined_twice(&over.model, |m| m.id.as_str())),
        ("family", defined_twice(&over.family, |f| f.id.as_str())),
        (
            "price_sheet",
            defined_twice(&over.price_sheet, |p| p.id.as_str()),
        ),
        ("tracker", defined_twice(&over.tracker, |t| t.id.as_str())),
    ];
    for (table, dup) in twice {
        if let Some((id, a, b)) = dup {
            return Err(Error::invalid(
                origin,
                format!("{table} `{id}`"),
                format!("defined twice: [[{table}]] entries {a} and {b} of this file (keep one)"),
            ));
        }
    }
    let mut base: RawCatalog = toml::from_str(EMBEDDED_CATALOG)
        .map_err(|e| crate::base::tomlpos::toml_error(BUILTIN_ORIGIN, EMBEDDED_CATALOG, &e))?;
    fn lay<T>(base: &mut Vec<T>, over: Vec<T>, id: impl Fn(&T) -> &str) {
        for o in over {
            match base.iter().position(|b| id(b) == id(&o)) {
                Some(i) => base[i] = o,
                None => base.push(o),
            }
        }
    }
    for m in &over.model {
        for b in &mut base.model {
            b.aliases.retain(|a| a != &m.id);
        }
    }
    lay(&mut base.family, over.family, |f| f.id.as_str());
    lay(&mut base.model, over.model, |m| m.id.as_str());
    lay(&mut base.price_sheet, over.price_sheet, |p| p.id.as_str());
    lay(&mut base.tracker, over.tracker, |t| t.id.as_str());
    base.model_family.extend(over.model_family);
    Ok(base)
}

// Over 120 lines: one check per field of a family's cache rules, in file order, each naming its
// field; a list of checks, not logic to split.
fn validate_rules(origin: &str, at: &str, mode: &str, r: &CacheRules) -> Result<()> {
    check_number(
        origin,
        &format!("{at}.min_tokens"),
        &r.min_tokens,
        Some(0.0),
        Some(1e9),
    )?;
    check_number(
        origin,
        &format!("{at}.granularity"),
        &r.granularity,
        Some(1.0),
        Some(1e6),
    )?;
    check_price(
        origin,
        &format!("{at}.read_multiplier"),
        &r.read_multiplier,
        0.0,
        1.0,
    )?;
    check_source(
        origin,
        &format!("{at}.refresh_on_hit"),
        &r.refresh_on_hit.source,
    )?;
    check_source(origin, &format!("{at}.tool_change"), &r.tool_change.source)?;
    if r.tiers.is_empty() {
        return Err(Error::invalid(
            origin,
            format!("{at}.tiers"),
            "at least one TTL tier is needed",
        ));
    }
    if !r.tiers.contains_key(&r.default_tier) {
        return Err(Error::invalid(
            origin,
            format!("{at}.default_tier"),
            format!(
                "`{}` is not one of the tiers ({})",
                r.default_tier,
                r.tiers.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    for (name, tier) in &r.tiers {
        let f = format!("{at}.tiers.{name}");
        check_number(
            origin,
            &format!("{f}.ttl_seconds"),
            &tier.ttl_seconds,
            Some(0.001),
            Some(366.0 * 86400.0),
        )?;
        check_price(
            origin,
            &format!("{f}.write_multiplier"),
            &tier.write_multiplier,
            0.0,
            100.0,
        )?;
        if tier.write_multiplier.value < r.read_multiplier.value {
            return Err(Error::invalid(
                origin,
                format!("{f}.write_multiplier"),
                format!(
                    "value {} is below the read multiplier {}: a write cannot cost less than a read",
                    tier.write_multiplier.value, r.read_multiplier.value
                ),
            ));
        }
    }
    if mode == "explicit" {
        let mb = r.max_breakpoints.as_ref().ok_or_else(|| {
            Error::invalid(
                origin,
                format!("{at}.max_breakpoints"),
                "explicit mode needs max_breakpoints",
            )
        })?;
        check_number(
            origin,
            &format!("{at}.max_breakpoints"),
            mb,
            Some(1.0),
            Some(1000.0),
        )?;
        let lb = r.lookback_blocks.as_ref().ok_or_else(|| {
            Error::invalid(
                origin,
                format!("{at}.lookback_blocks"),
                "explicit mode needs lookback_blocks",
            )
        })?;
        check_number(
            origin,
            &format!("{at}.lookback_blocks"),
            lb,
            Some(1.0),
            Some(1e6),
        )?;
    }
    if let Some(p) = &r.hit_probability {
        check_number(
            origin,
            &format!("{at}.hit_probability"),
            p,
            Some(0.0),
            Some(1.0),
        )?;
    }
    if let Some(p) = &r.routing_rpm_per_prefix {
        check_number(
            origin,
            &format!("{at}.routing_rpm_per_prefix"),
            p,
            Some(f64::MIN_POSITIVE),
            None,
        )?;
    }
    if let Some(p) = &r.storage_usd_per_mtok_hour {
        check_price(
            origin,
            &format!("{at}.storage_usd_per_mtok_hour"),
            p,
            0.0,
            MAX_USD_PER_MTOK,
        )?;
    }
    if let Some(o) = &r.tool_change_options {
        check_source(origin, &format!("{at}.tool_change_options"), &o.source)?;
    }
    if let Some(t) = &r.invalidates {
        let f = format!("{at}.invalidates");
        check_source(origin, &f, &t.source)?;
        for (k, v) in &t.value {
            if !SETTING_CHANGES.contains(&k.as_str()) {
                let hint = closest(k, SETTING_CHANGES.iter().copied())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(
                    origin,
                    format!("{f}.{k}"),
                    format!(
                        "unknown setting{hint} (settings: {})",
                        SETTING_CHANGES.join(", ")
                    ),
                ));
            }
            if !PROMPT_PARTS.contains(&v.as_str()) {
                return Err(Error::invalid(
                    origin,
                    format!("{f}.{k}"),
                    format!(
                        "`{v}` is not a prompt part; use {}",
                        PROMPT_PARTS.join(", ")
                    ),
                ));
            }
        }
    }
    if let Some(a) = &r.allowed_anchors {
        check_source(origin, &format!("{at}.allowed_anchors"), &a.source)?;
        if let Some(bad) = a
            .value
            .iter()
            .find(|x| !["tools", "system", "last"].contains(&x.as_str()))
        {
            return Err(Error::invalid(
                origin,
                format!("{at}.allowed_anchors"),
                format!("unknown anchor `{bad}`; use tools, system or last"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_loads_and_has_the_measured_models() {
        let c = Catalog::embedded().unwrap();
        for id in MEASURED_MODELS {
            assert!(c.model(id).is_ok(), "{id} missing");
        }
    }

    #[test]
    fn unknown_model_suggests_closest() {
        let c = Catalog::embedded().unwrap();
        let e = c.model("claude-opus-48").unwrap_err().to_string();
        assert!(e.contains("did you mean `claude-opus-4.8`"), "{e}");
    }

    fn mutate(from: &str, to: &str) -> String {
        let text = EMBEDDED_CATALOG.replacen(from, to, 1);
        assert_ne!(text, EMBEDDED_CATALOG, "pattern `{from}` not found");
        Catalog::from_toml_str(&text, "m.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn negative_price_is_rejected_with_field_name() {
        let e = mutate(
            "input_usd_per_mtok = { value = 5.0",
            "input_usd_per_mtok = { value = -5.0",
        );
        assert!(
            e.contains("m.toml") && e.contains("input_usd_per_mtok") && e.contains("-5"),
            "{e}"
        );
    }

    #[test]
    fn nan_price_is_rejected() {
        let e = mutate(
            "input_usd_per_mtok = { value = 5.0",
            "input_usd_per_mtok = { value = nan",
        );
        assert!(e.contains("not a finite number"), "{e}");
    }

    #[test]
    fn absurd_price_is_rejected() {
        let e = mutate(
            "output_usd_per_mtok = { value = 25.0",
            "output_usd_per_mtok = { value = 1e308",
        );
        assert!(
            e.contains("output_usd_per_mtok") && e.contains("1e308"),
            "{e}"
        );
    }

    #[test]
    fn read_multiplier_above_one_is_rejected() {
        let e = mutate(
            "read_multiplier = { value = 0.1",
            "read_multiplier = { value = 1.5",
        );
        assert!(
            e.contains("read_multiplier") && e.contains("at most 1"),
            "{e}"
        );
    }

    #[test]
    fn missing_source_kind_is_rejected() {
        let e = mutate("source = \"measured:", "source = \"I think:");
        assert!(e.contains("must start with one of"), "{e}");
    }

    #[test]
    fn empty_id_points_at_its_model() {
        let text = EMBEDDED_CATALOG.replacen("id = \"gpt-5.6-sol\"", "id = \" \"", 1);
        let line = text.lines().position(|l| l == "id = \" \"").unwrap() + 1;
        let e = Catalog::from_toml_str(&text, "m.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("m.toml:{line}:6: field `model[2].id`")),
            "{e}"
        );
    }

    #[test]
    fn malformed_toml_names_line() {
        let e = Catalog::from_toml_str("[[model]\nid = 3", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.toml:") && e.contains("line 1"), "{e}");
    }
}
