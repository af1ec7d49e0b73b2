//! Which prices a run uses: the catalog's list prices on a day (`--on`, dated `price_change`
//! entries), a named price sheet (`--price-sheet`, e.g. the gateway rates of the measured study), a
//! service tier (`--service-tier batch|flex|priority|off-peak`) and regional endpoint pricing (`--regional`).
//!
//! The selection is applied to the catalog once, before anything is simulated: every model's prices
//! become the effective ones, so every command and every layer above prices alike.

use crate::base::date::Day;
use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::model::catalog::{Catalog, ModelSpec};
pub(crate) use crate::model::prices::parse_day;
use crate::model::prices::MAX_USD_PER_MTOK;
use crate::model::sourced::Sourced;

/// The built-in price sheet of the gateway rates at which the measured study billed (2026-07-31):
/// the measured dollar facts hold on it, not on today's list prices.
pub(crate) const STUDY_PRICE_SHEET: &str = "study-2026-07-31";

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
    /// Prices given on the command line (`--price MODEL=IN,OUT`), in place of the list prices.
    pub overrides: Vec<PriceOverride>,
}

/// One `--price MODEL=IN,OUT`: a model's input and output prices in USD per million tokens, in
/// place of its list (or price-sheet) prices. A service tier and regional pricing still scale them;
/// the cache multipliers apply to them as to list prices; long-context prices are not changed.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceOverride {
    /// The model id (or alias) as given.
    pub model: String,
    /// USD per million input tokens.
    pub input_usd_per_mtok: f64,
    /// USD per million output tokens.
    pub output_usd_per_mtok: f64,
    /// The argument as given, for messages and sources.
    pub given: String,
}

/// The flag of [`PriceOverride`], as errors and sources name it.
pub(crate) const PRICE_FLAG: &str = "--price";

impl PriceOverride {
    /// Parses `MODEL=IN,OUT` (USD per million input and output tokens).
    pub fn parse(arg: &str) -> Result<Self> {
        let bad = |problem: String| {
            Error::invalid("command line", PRICE_FLAG, format!("`{arg}`: {problem}"))
        };
        let (model, prices) = arg.split_once('=').ok_or_else(|| {
            bad("expected MODEL=IN,OUT (USD per million input and output tokens), e.g. kimi-k3=3,15".into())
        })?;
        let model = model.trim();
        if model.is_empty() {
            return Err(bad("no model id before `=`".into()));
        }
        let parts: Vec<&str> = prices.split(',').map(str::trim).collect();
        let [input, output] = parts.as_slice() else {
            return Err(bad(format!(
                "expected two prices IN,OUT after `=`, got {}",
                parts.len()
            )));
        };
        let number = |what: &str, v: &str, min: f64| -> Result<f64> {
            let x: f64 = v
                .parse()
                .map_err(|_| bad(format!("{what} price `{v}` is not a number")))?;
            if !x.is_finite() || x < min || x > MAX_USD_PER_MTOK {
                let range = if min > 0.0 { "above 0" } else { "0 or more" };
                return Err(bad(format!(
                    "{what} price {v} must be {range} and at most {MAX_USD_PER_MTOK} USD per million tokens"
                )));
            }
            Ok(x)
        };
        Ok(PriceOverride {
            model: model.to_string(),
            input_usd_per_mtok: number("input", input, f64::MIN_POSITIVE)?,
            output_usd_per_mtok: number("output", output, 0.0)?,
            given: arg.to_string(),
        })
    }

    fn source(&self) -> String {
        format!("command line {PRICE_FLAG} {}", self.given)
    }
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

fn set_long_context(
    model: &mut ModelSpec,
    input: &Option<Sourced<f64>>,
    output: &Option<Sourced<f64>>,
) {
    if let Some(lc) = &mut model.long_context {
        set(&mut lc.input_usd_per_mtok, input);
        set(&mut lc.output_usd_per_mtok, output);
    }
}

/// Applies the model's dated price changes in force on `day` (in date order, as checked at load):
/// a change applies from its `effective_from` through its `until` (a promotion), so after a
/// promotion the prices in force before it return. Returns the first day of the latest change
/// applied, the day the prices in force date from.
fn apply_price_changes(model: &mut ModelSpec, day: Day, origin: &str) -> Result<Option<Day>> {
    let mut in_force = None;
    let changes = model.price_change.clone();
    for c in &changes {
        let from = parse_day(origin, "price_change.effective_from", &c.effective_from)?;
        let until = match &c.until {
            Some(u) => Some(parse_day(origin, "price_change.until", u)?),
            None => None,
        };
        if from <= day && until.is_none_or(|u| day <= u) {
            set(&mut model.input_usd_per_mtok, &c.input_usd_per_mtok);
            set(&mut model.output_usd_per_mtok, &c.output_usd_per_mtok);
            set_read(model, &c.read_multiplier);
            set_storage(model, &c.storage_usd_per_mtok_hour);
            set_long_context(
                model,
                &c.long_context_input_usd_per_mtok,
                &c.long_context_output_usd_per_mtok,
            );
            in_force = Some(from);
        }
    }
    Ok(in_force)
}

/// Multiplies a sourced price, recording the factor and its source.
fn scale(v: &mut Sourced<f64>, factor: f64, why: &str) {
    v.value *= factor;
    v.source = format!("{} x {factor} ({why})", v.source);
}

impl Catalog {
    /// The catalog with every model's prices as `pricing` selects them.
    // Over 120 lines: the price selection in order (sheet, day, tier, overrides), then one pass
    // applying it to every model; the options are checked before any model is changed.
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
        for (i, o) in pricing.overrides.iter().enumerate() {
            if !self.models.iter().any(|m| m.id == o.model) {
                let hint = closest(&o.model, self.models.iter().map(|m| m.id.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_else(|| " (`pcsim models` lists them)".into());
                return Err(Error::invalid(
                    "command line",
                    PRICE_FLAG,
                    format!(
                        "`{}`: {} has no model `{}`{hint}; a model outside the catalog needs a [[model]] entry in --catalog FILE first (its caching rules: minimum, multipliers, lifetime), which --price can then reprice",
                        o.given, self.origin, o.model
                    ),
                ));
            }
            if let Some(first) = pricing.overrides[..i].iter().find(|p| p.model == o.model) {
                return Err(Error::invalid(
                    "command line",
                    PRICE_FLAG,
                    format!(
                        "`{}`: model `{}` is priced twice (also `{}`)",
                        o.given, o.model, first.given
                    ),
                ));
            }
        }
        let mut out = self.clone();
        for model in &mut out.models {
            let in_force = apply_price_changes(model, day, &self.origin)?;
            let mut applied = vec![match in_force {
                Some(since) => format!("list prices on {day} (price change of {since})"),
                None => format!("list prices on {day}"),
            }];
            if let Some(sheet) = sheet {
                let own = model.alias_of.as_deref().unwrap_or(&model.id).to_string();
                if let Some(p) = sheet.model.iter().find(|p| p.id == model.id || p.id == own) {
                    set(&mut model.input_usd_per_mtok, &p.input_usd_per_mtok);
                    set(&mut model.output_usd_per_mtok, &p.output_usd_per_mtok);
                    set_read(model, &p.read_multiplier);
                    set_storage(model, &p.storage_usd_per_mtok_hour);
                    set_long_context(
                        model,
                        &p.long_context_input_usd_per_mtok,
                        &p.long_context_output_usd_per_mtok,
                    );
                    applied = vec![format!("price sheet `{}`", sheet.id)];
                }
            }
            // A price given for the model, or for the model an alias copies (unless the alias has
            // its own).
            let own = model.alias_of.clone();
            let given = pricing
                .overrides
                .iter()
                .find(|o| o.model == model.id)
                .or_else(|| {
                    pricing
                        .overrides
                        .iter()
                        .find(|o| own.as_deref() == Some(o.model.as_str()))
                });
            if let Some(o) = given {
                let sourced = |value: f64| Sourced {
                    value,
                    source: o.source(),
                    checked: None,
                    checked_against: None,
                };
                model.input_usd_per_mtok = sourced(o.input_usd_per_mtok);
                model.output_usd_per_mtok = sourced(o.output_usd_per_mtok);
                applied = vec![format!("command line {PRICE_FLAG}")];
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
