//! Which prices a run uses: the catalog's list prices on a day (`--on`, dated `price_change`
//! entries), a named price sheet (`--price-sheet`, e.g. the gateway rates of the measured study), a
//! service tier (`--service-tier batch|flex|priority`) and regional endpoint pricing (`--regional`).
//!
//! The selection is applied to the catalog once, before anything is simulated: every model's prices
//! become the effective ones, so every command and every layer above prices alike.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::date::Day;
use crate::error::{closest, Error, Result};
use crate::model::catalog::{check_number, check_source, Catalog, ModelSpec, Sourced};

/// A dated change of a model's prices: from `effective_from` on, the given prices replace the
/// earlier ones (absent fields stay as they were).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceChange {
    /// First day (UTC) on which the change applies, `YYYY-MM-DD`.
    pub effective_from: String,
    /// New base input price, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_usd_per_mtok: Option<Sourced<f64>>,
    /// New output price, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_usd_per_mtok: Option<Sourced<f64>>,
    /// New cache-read multiplier, for every caching mode of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_multiplier: Option<Sourced<f64>>,
    /// New storage price of explicit caches, USD per million tokens per hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_usd_per_mtok_hour: Option<Sourced<f64>>,
}

/// One model's entry in a price sheet: the prices that replace the list prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SheetPrice {
    /// Model id (or alias) the prices belong to.
    pub id: String,
    /// Base input price, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_usd_per_mtok: Option<Sourced<f64>>,
    /// Output price, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_usd_per_mtok: Option<Sourced<f64>>,
    /// Cache-read multiplier, for every caching mode of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_multiplier: Option<Sourced<f64>>,
    /// Storage price of explicit caches, USD per million tokens per hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_usd_per_mtok_hour: Option<Sourced<f64>>,
}

/// A named set of prices other than the list prices (a gateway's table, a negotiated rate card).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSheetSpec {
    /// Name used with `--price-sheet`.
    pub id: String,
    /// The day the sheet's rates applied; models the sheet does not list are priced on this day.
    pub date: String,
    /// What the sheet is and where its rates come from.
    pub description: String,
    /// Per-model prices.
    #[serde(default)]
    pub model: Vec<SheetPrice>,
}

/// A service tier of a model (Batch, Flex, priority): multipliers on its standard prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceTier {
    /// Multiplier on the input side: uncached input, cache writes and cache reads alike.
    pub input_multiplier: Sourced<f64>,
    /// Multiplier on output tokens.
    pub output_multiplier: Sourced<f64>,
    /// Whether prompt caching works in this tier (its discounts then stack with the tier's).
    pub caching: Sourced<bool>,
}

/// A long-context price tier: a request whose prompt exceeds `above_tokens` is billed, all of it,
/// at these prices (cache reads and writes at the model's multipliers of the long input price).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongContext {
    /// Prompts longer than this many tokens take the long-context prices.
    pub above_tokens: Sourced<u64>,
    /// Input price above the threshold, USD per million tokens.
    pub input_usd_per_mtok: Sourced<f64>,
    /// Output price above the threshold, USD per million tokens.
    pub output_usd_per_mtok: Sourced<f64>,
    /// Cache-read multiplier above the threshold when it differs from the model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_multiplier: Option<Sourced<f64>>,
}

/// The service tiers `--service-tier` accepts.
pub const SERVICE_TIERS: [&str; 4] = ["standard", "batch", "flex", "priority"];

/// What a run is priced at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pricing {
    /// A named price sheet of the catalog.
    pub sheet: Option<String>,
    /// The day to price on; today (UTC) when absent, or the sheet's day with a sheet.
    pub on: Option<Day>,
    /// A service tier (`batch`, `flex`, `priority`); `standard` or absent: standard prices.
    pub service_tier: Option<String>,
    /// Regional / data-residency endpoint pricing (the model's `regional_multiplier`).
    pub regional: bool,
}

impl Pricing {
    /// The prices of a named sheet.
    pub fn sheet(id: &str) -> Self {
        Pricing {
            sheet: Some(id.to_string()),
            ..Pricing::default()
        }
    }

    /// List prices on a day.
    pub fn on(day: Day) -> Self {
        Pricing {
            on: Some(day),
            ..Pricing::default()
        }
    }
}

/// Parses a day given on the command line or in a file.
pub fn parse_day(origin: &str, field: &str, text: &str) -> Result<Day> {
    text.parse::<Day>()
        .map_err(|e| Error::invalid(origin, field, e))
}

fn set(target: &mut Sourced<f64>, from: &Option<Sourced<f64>>) {
    if let Some(v) = from {
        *target = v.clone();
    }
}

fn set_read(model: &mut ModelSpec, from: &Option<Sourced<f64>>) {
    if let Some(v) = from {
        for rules in [
            &mut model.cache.explicit,
            &mut model.cache.automatic,
            &mut model.cache.implicit,
        ]
        .into_iter()
        .flatten()
        {
            rules.read_multiplier = v.clone();
        }
    }
}

fn set_storage(model: &mut ModelSpec, from: &Option<Sourced<f64>>) {
    if let Some(v) = from {
        if let Some(rules) = &mut model.cache.explicit {
            rules.storage_usd_per_mtok_hour = Some(v.clone());
        }
    }
}

/// Multiplies a sourced price, recording the factor and its source.
fn scale(v: &mut Sourced<f64>, factor: f64, why: &str) {
    v.value *= factor;
    v.source = format!("{} x {factor} ({why})", v.source);
}

impl Catalog {
    /// The catalog with every model's prices as `pricing` selects them.
    pub fn priced(&self, pricing: &Pricing) -> Result<Catalog> {
        let flag = "--price-sheet";
        let sheet =
            match &pricing.sheet {
                None => None,
                Some(id) => Some(self.price_sheets.iter().find(|s| &s.id == id).ok_or_else(
                    || {
                        let hint = closest(id, self.price_sheets.iter().map(|s| s.id.as_str()))
                            .map(|c| format!("; did you mean `{c}`?"))
                            .unwrap_or_default();
                        let known = self
                            .price_sheets
                            .iter()
                            .map(|s| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ");
                        Error::invalid(
                            flag,
                            id,
                            format!(
                                "{} has no price sheet of this name{hint} (sheets: {known})",
                                self.origin
                            ),
                        )
                    },
                )?),
            };
        let day = match (pricing.on, sheet) {
            (Some(d), _) => d,
            (None, Some(s)) => parse_day(
                &self.origin,
                &format!("price_sheet `{}`.date", s.id),
                &s.date,
            )?,
            (None, None) => Day::today(),
        };
        let tier = pricing.service_tier.as_deref().filter(|t| *t != "standard");
        let mut out = self.clone();
        for model in &mut out.models {
            let mut applied = vec![format!("list prices on {day}")];
            // Dated changes, in date order (checked at load).
            let changes = model.price_change.clone();
            for c in &changes {
                let from = parse_day(
                    &self.origin,
                    "price_change.effective_from",
                    &c.effective_from,
                )?;
                if from <= day {
                    set(&mut model.input_usd_per_mtok, &c.input_usd_per_mtok);
                    set(&mut model.output_usd_per_mtok, &c.output_usd_per_mtok);
                    set_read(model, &c.read_multiplier);
                    set_storage(model, &c.storage_usd_per_mtok_hour);
                }
            }
            if let Some(sheet) = sheet {
                let own = model.alias_of.as_deref().unwrap_or(&model.id).to_string();
                if let Some(p) = sheet.model.iter().find(|p| p.id == model.id || p.id == own) {
                    set(&mut model.input_usd_per_mtok, &p.input_usd_per_mtok);
                    set(&mut model.output_usd_per_mtok, &p.output_usd_per_mtok);
                    set_read(model, &p.read_multiplier);
                    set_storage(model, &p.storage_usd_per_mtok_hour);
                    applied = vec![format!("price sheet `{}`", sheet.id)];
                }
            }
            if let Some(name) = tier {
                let Some(t) = model.service_tier.get(name).cloned() else {
                    let offered = model.service_tier.keys().cloned().collect::<Vec<_>>();
                    model.unavailable = Some(format!(
                        "`--service-tier {name}`: model `{}` has no `{name}` tier in {} ({})",
                        model.id,
                        self.origin,
                        if offered.is_empty() {
                            "it lists no service tiers".to_string()
                        } else {
                            format!("its tiers: {}", offered.join(", "))
                        }
                    ));
                    continue;
                };
                let why = format!("{name} tier");
                scale(
                    &mut model.input_usd_per_mtok,
                    t.input_multiplier.value,
                    &why,
                );
                scale(
                    &mut model.output_usd_per_mtok,
                    t.output_multiplier.value,
                    &why,
                );
                if let Some(lc) = &mut model.long_context {
                    scale(&mut lc.input_usd_per_mtok, t.input_multiplier.value, &why);
                    scale(&mut lc.output_usd_per_mtok, t.output_multiplier.value, &why);
                }
                if let Some(rules) = &mut model.cache.explicit {
                    if let Some(s) = &mut rules.storage_usd_per_mtok_hour {
                        // Storage is billed per token-hour, not per request: the tier leaves it alone.
                        s.source = format!("{} (not changed by the {name} tier)", s.source);
                    }
                }
                if !t.caching.value {
                    model.cache = Default::default();
                    model.default_strategy = "none".into();
                }
                applied.push(format!("{name} tier"));
            }
            if pricing.regional {
                let Some(m) = model.regional_multiplier.clone() else {
                    model.unavailable = Some(format!(
                        "`--regional`: model `{}` has no regional_multiplier in {}",
                        model.id, self.origin
                    ));
                    continue;
                };
                scale(&mut model.input_usd_per_mtok, m.value, "regional endpoint");
                scale(&mut model.output_usd_per_mtok, m.value, "regional endpoint");
                if let Some(lc) = &mut model.long_context {
                    scale(&mut lc.input_usd_per_mtok, m.value, "regional endpoint");
                    scale(&mut lc.output_usd_per_mtok, m.value, "regional endpoint");
                }
                applied.push("regional endpoint".into());
            }
            model.priced = Some(applied.join(", "));
        }
        Ok(out)
    }
}

/// A price must say when it was last compared with its source.
pub(crate) fn check_checked(origin: &str, field: &str, v: &Sourced<f64>) -> Result<()> {
    match &v.checked {
        None => Err(Error::invalid(
            origin,
            format!("{field}.checked"),
            "a price needs `checked = \"YYYY-MM-DD\"`, the day it was last compared with its source",
        )),
        Some(c) => parse_day(origin, &format!("{field}.checked"), c).map(|_| ()),
    }
}

/// Checks a price: a finite number in range, with a source and a `checked` date.
pub(crate) fn check_price(
    origin: &str,
    field: &str,
    v: &Sourced<f64>,
    min: f64,
    max: f64,
) -> Result<()> {
    check_number(origin, field, v, Some(min), Some(max))?;
    check_checked(origin, field, v)
}

fn check_opt_price(
    origin: &str,
    field: &str,
    v: &Option<Sourced<f64>>,
    min: f64,
    max: f64,
) -> Result<()> {
    v.as_ref()
        .map_or(Ok(()), |v| check_price(origin, field, v, min, max))
}

/// Validates the pricing parts of a model (dated changes, tiers, long context).
pub(crate) fn validate_model_pricing(origin: &str, at: &str, m: &ModelSpec) -> Result<()> {
    use crate::model::catalog::MAX_USD_PER_MTOK as MAX;
    let mut last: Option<Day> = None;
    for (i, c) in m.price_change.iter().enumerate() {
        let f = format!("{at}.price_change[{i}]");
        let day = parse_day(origin, &format!("{f}.effective_from"), &c.effective_from)?;
        if last.is_some_and(|l| l >= day) {
            return Err(Error::invalid(
                origin,
                format!("{f}.effective_from"),
                "price changes must be listed in date order, one per day",
            ));
        }
        last = Some(day);
        check_opt_price(
            origin,
            &format!("{f}.input_usd_per_mtok"),
            &c.input_usd_per_mtok,
            f64::MIN_POSITIVE,
            MAX,
        )?;
        check_opt_price(
            origin,
            &format!("{f}.output_usd_per_mtok"),
            &c.output_usd_per_mtok,
            0.0,
            MAX,
        )?;
        check_opt_price(
            origin,
            &format!("{f}.read_multiplier"),
            &c.read_multiplier,
            0.0,
            1.0,
        )?;
        check_opt_price(
            origin,
            &format!("{f}.storage_usd_per_mtok_hour"),
            &c.storage_usd_per_mtok_hour,
            0.0,
            MAX,
        )?;
    }
    for (name, t) in &m.service_tier {
        let f = format!("{at}.service_tier.{name}");
        if !SERVICE_TIERS[1..].contains(&name.as_str()) {
            return Err(Error::invalid(
                origin,
                f,
                format!(
                    "unknown service tier; use {}",
                    SERVICE_TIERS[1..].join(", ")
                ),
            ));
        }
        check_price(
            origin,
            &format!("{f}.input_multiplier"),
            &t.input_multiplier,
            f64::MIN_POSITIVE,
            100.0,
        )?;
        check_price(
            origin,
            &format!("{f}.output_multiplier"),
            &t.output_multiplier,
            0.0,
            100.0,
        )?;
        check_source(origin, &format!("{f}.caching"), &t.caching.source)?;
    }
    if let Some(r) = &m.regional_multiplier {
        check_price(
            origin,
            &format!("{at}.regional_multiplier"),
            r,
            f64::MIN_POSITIVE,
            100.0,
        )?;
    }
    if let Some(lc) = &m.long_context {
        let f = format!("{at}.long_context");
        check_number(
            origin,
            &format!("{f}.above_tokens"),
            &lc.above_tokens,
            Some(1.0),
            Some(1e9),
        )?;
        check_price(
            origin,
            &format!("{f}.input_usd_per_mtok"),
            &lc.input_usd_per_mtok,
            f64::MIN_POSITIVE,
            MAX,
        )?;
        check_price(
            origin,
            &format!("{f}.output_usd_per_mtok"),
            &lc.output_usd_per_mtok,
            0.0,
            MAX,
        )?;
        check_opt_price(
            origin,
            &format!("{f}.read_multiplier"),
            &lc.read_multiplier,
            0.0,
            1.0,
        )?;
    }
    Ok(())
}

/// Validates the price sheets of a catalog against its models.
pub(crate) fn validate_sheets(
    origin: &str,
    sheets: &[PriceSheetSpec],
    models: &[ModelSpec],
) -> Result<()> {
    use crate::model::catalog::MAX_USD_PER_MTOK as MAX;
    let mut ids = std::collections::HashSet::new();
    for s in sheets {
        let at = format!("price_sheet `{}`", s.id);
        if !ids.insert(&s.id) {
            return Err(Error::invalid(origin, at, "defined twice"));
        }
        parse_day(origin, &format!("{at}.date"), &s.date)?;
        let mut seen = BTreeMap::new();
        for p in &s.model {
            let f = format!("{at}.model `{}`", p.id);
            if !models.iter().any(|m| m.id == p.id) {
                let hint = closest(&p.id, models.iter().map(|m| m.id.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(origin, f, format!("no such model{hint}")));
            }
            if seen.insert(p.id.clone(), ()).is_some() {
                return Err(Error::invalid(origin, f, "listed twice"));
            }
            check_opt_price(
                origin,
                &format!("{f}.input_usd_per_mtok"),
                &p.input_usd_per_mtok,
                f64::MIN_POSITIVE,
                MAX,
            )?;
            check_opt_price(
                origin,
                &format!("{f}.output_usd_per_mtok"),
                &p.output_usd_per_mtok,
                0.0,
                MAX,
            )?;
            check_opt_price(
                origin,
                &format!("{f}.read_multiplier"),
                &p.read_multiplier,
                0.0,
                1.0,
            )?;
            check_opt_price(
                origin,
                &format!("{f}.storage_usd_per_mtok_hour"),
                &p.storage_usd_per_mtok_hour,
                0.0,
                MAX,
            )?;
        }
    }
    Ok(())
}
