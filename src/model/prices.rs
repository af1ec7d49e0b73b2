//! The priced parts of a model beyond its base prices, as `models.toml` writes them: dated price
//! changes, price sheets, service tiers and long-context tiers, and the checks every price passes
//! (a source and a `checked` date). How a run selects among them is [`crate::model::pricing`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::date::Day;
use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::model::sourced::{check_number, check_source, Sourced};

/// Upper bound on any price (USD per million tokens, or per million tokens per hour): a thousand
/// times the dearest real price, low enough that every cost stays a finite number.
pub(crate) const MAX_USD_PER_MTOK: f64 = 1e6;
use MAX_USD_PER_MTOK as MAX;

/// Parses a day given on the command line or in a file.
pub(crate) fn parse_day(origin: &str, field: &str, text: &str) -> Result<Day> {
    text.parse::<Day>()
        .map_err(|e| Error::invalid(origin, field, e))
}

/// A dated change of a model's prices: from `effective_from` on, the given prices replace the
/// earlier ones (absent fields stay as they were). With `until` it is a promotion: after that day
/// the prices in force before it return (later changes still apply on their own days).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceChange {
    /// First day (UTC) on which the change applies, `YYYY-MM-DD`.
    pub effective_from: String,
    /// Last day (UTC) on which the change applies, `YYYY-MM-DD`; absent: until a later change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// What the change is (a cut, a promotion, a new model served under the id), with its
    /// evidence where sources disagree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    /// New input price of the long-context tier, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context_input_usd_per_mtok: Option<Sourced<f64>>,
    /// New output price of the long-context tier, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context_output_usd_per_mtok: Option<Sourced<f64>>,
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
    /// Input price of the long-context tier, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context_input_usd_per_mtok: Option<Sourced<f64>>,
    /// Output price of the long-context tier, USD per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context_output_usd_per_mtok: Option<Sourced<f64>>,
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
pub(crate) const SERVICE_TIERS: [&str; 5] = ["standard", "batch", "flex", "priority", "off-peak"];

/// The `checked` of a price that nobody could compare with a source: it must then say why in
/// `checked_against` (starting with `unchecked:`), so no date is invented for it.
pub(crate) const UNCHECKED: &str = "unchecked";

/// A price must say when it was last compared with its source, or that it was not
/// (`checked = "unchecked"` with `checked_against = "unchecked: why"`).
pub(crate) fn check_checked(origin: &str, field: &str, v: &Sourced<f64>) -> Result<()> {
    match &v.checked {
        None => Err(Error::invalid(
            origin,
            format!("{field}.checked"),
            "a price needs `checked = \"YYYY-MM-DD\"`, the day it was last compared with its source (or `checked = \"unchecked\"` with `checked_against = \"unchecked: why\"`)",
        )),
        Some(c) if c == UNCHECKED => match v.checked_against.as_deref() {
            Some(why) if why.starts_with("unchecked:") && why.len() > "unchecked:".len() + 1 => {
                Ok(())
            }
            _ => Err(Error::invalid(
                origin,
                format!("{field}.checked_against"),
                "a price with `checked = \"unchecked\"` needs `checked_against = \"unchecked: why\"`, saying why it could not be compared with a source",
            )),
        },
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

/// The prices a dated change or a price-sheet entry may set, in the order [`check_set_prices`]
/// takes them: each field with its range.
const SET_PRICES: [(&str, f64, f64); 6] = [
    ("input_usd_per_mtok", f64::MIN_POSITIVE, MAX),
    ("output_usd_per_mtok", 0.0, MAX),
    ("read_multiplier", 0.0, 1.0),
    ("storage_usd_per_mtok_hour", 0.0, MAX),
    ("long_context_input_usd_per_mtok", f64::MIN_POSITIVE, MAX),
    ("long_context_output_usd_per_mtok", 0.0, MAX),
];

/// Checks the prices a dated change or a sheet entry sets (input, output, read, storage,
/// long-context input and output): the two carry the same six optional prices, under `at`.
fn check_set_prices(origin: &str, at: &str, prices: [&Option<Sourced<f64>>; 6]) -> Result<()> {
    for ((field, min, max), v) in SET_PRICES.iter().zip(prices) {
        check_opt_price(origin, &format!("{at}.{field}"), v, *min, *max)?;
    }
    Ok(())
}

/// Validates the pricing parts of a model (dated changes, tiers, long context).
// Over 120 lines: one check per pricing part of a model (dated changes, service tiers, regions,
// long context), in file order, each naming its field.
pub(crate) fn validate_model_pricing(
    origin: &str,
    at: &str,
    price_change: &[PriceChange],
    service_tier: &BTreeMap<String, ServiceTier>,
    regional_multiplier: &Option<Sourced<f64>>,
    long_context: &Option<LongContext>,
) -> Result<()> {
    let mut last: Option<Day> = None;
    for (i, c) in price_change.iter().enumerate() {
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
        if let Some(until) = &c.until {
            let end = parse_day(origin, &format!("{f}.until"), until)?;
            if end < day {
                return Err(Error::invalid(
                    origin,
                    format!("{f}.until"),
                    format!("{until} is before effective_from {}", c.effective_from),
                ));
            }
        }
        if (c.long_context_input_usd_per_mtok.is_some()
            || c.long_context_output_usd_per_mtok.is_some())
            && long_context.is_none()
        {
            return Err(Error::invalid(
                origin,
                f,
                "sets long-context prices on a model without `[model.long_context]`",
            ));
        }
        check_set_prices(
            origin,
            &f,
            [
                &c.input_usd_per_mtok,
                &c.output_usd_per_mtok,
                &c.read_multiplier,
                &c.storage_usd_per_mtok_hour,
                &c.long_context_input_usd_per_mtok,
                &c.long_context_output_usd_per_mtok,
            ],
        )?;
    }
    for (name, t) in service_tier {
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
    if let Some(r) = regional_multiplier {
        check_price(
            origin,
            &format!("{at}.regional_multiplier"),
            r,
            f64::MIN_POSITIVE,
            100.0,
        )?;
    }
    if let Some(lc) = long_context {
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
pub(crate) fn validate_sheets(origin: &str, sheets: &[PriceSheetSpec], ids: &[&str]) -> Result<()> {
    let mut names = std::collections::HashSet::new();
    for s in sheets {
        let at = format!("price_sheet `{}`", s.id);
        if !names.insert(&s.id) {
            return Err(Error::invalid(origin, at, "defined twice"));
        }
        parse_day(origin, &format!("{at}.date"), &s.date)?;
        let mut seen = BTreeMap::new();
        for p in &s.model {
            let f = format!("{at}.model `{}`", p.id);
            if !ids.contains(&p.id.as_str()) {
                let hint = closest(&p.id, ids.iter().copied())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(origin, f, format!("no such model{hint}")));
            }
            if seen.insert(p.id.clone(), ()).is_some() {
                return Err(Error::invalid(origin, f, "listed twice"));
            }
            check_set_prices(
                origin,
                &f,
                [
                    &p.input_usd_per_mtok,
                    &p.output_usd_per_mtok,
                    &p.read_multiplier,
                    &p.storage_usd_per_mtok_hour,
                    &p.long_context_input_usd_per_mtok,
                    &p.long_context_output_usd_per_mtok,
                ],
            )?;
        }
    }
    Ok(())
}

/// A price tracker's file that catalog prices were compared with (`[[tracker]]`): a published
/// copy of many providers' prices (LiteLLM's price file, genai-prices' data) with a version and a
/// release day. A price whose `checked_against` names it cannot have been checked against it
/// later than the file's own day says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tracker {
    /// Id a price's `checked_against` names, e.g. `litellm-1.110.2`.
    pub id: String,
    /// The tracker's name, e.g. `LiteLLM`.
    pub name: String,
    /// The package version the file is from.
    pub version: String,
    /// The day (UTC) the package was published, `YYYY-MM-DD`: the newest day its prices speak for.
    pub released: String,
    /// Where the file comes from and where a copy is kept (a path in the repository).
    pub file: String,
}

/// Checks the catalog's trackers and every price's `checked_against` that names one: the price's
/// `checked` day is no later than the tracker's release day (a price cannot have been compared on
/// 2026-12-03 with a file of 2026-07-24 and be called current as of 2026-12-03).
pub(crate) fn validate_trackers<T: Serialize>(
    origin: &str,
    trackers: &[Tracker],
    items: &[(String, &T)],
) -> Result<()> {
    let mut released = BTreeMap::new();
    for t in trackers {
        let at = format!("tracker `{}`", t.id);
        let day = parse_day(origin, &format!("{at}.released"), &t.released)?;
        if released.insert(t.id.as_str(), day).is_some() {
            return Err(Error::invalid(origin, at, "defined twice"));
        }
    }
    for (at, item) in items {
        let v =
            serde_json::to_value(item).map_err(|e| Error::invalid(origin, at, e.to_string()))?;
        check_checked_against(origin, at, &v, &released)?;
    }
    Ok(())
}

fn check_checked_against(
    origin: &str,
    at: &str,
    v: &serde_json::Value,
    released: &BTreeMap<&str, Day>,
) -> Result<()> {
    match v {
        serde_json::Value::Object(o) => {
            if let (Some(checked), Some(against)) = (
                o.get("checked").and_then(|c| c.as_str()),
                o.get("checked_against").and_then(|c| c.as_str()),
            ) {
                if let Some(day) = released.get(against) {
                    let c = parse_day(origin, &format!("{at}.checked"), checked)?;
                    if c > *day {
                        return Err(Error::invalid(
                            origin,
                            format!("{at}.checked"),
                            format!(
                                "{checked} is later than {day}, the release day of `{against}` it was checked against"
                            ),
                        ));
                    }
                }
            }
            for (k, x) in o {
                check_checked_against(origin, &format!("{at}.{k}"), x, released)?;
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                check_checked_against(origin, &format!("{at}[{i}]"), x, released)?;
            }
        }
        _ => {}
    }
    Ok(())
}
