//! `pcsim models --check-against FILE` on genai-prices' data (pydantic/genai-prices): a JSON list of
//! providers, each with its models and their prices in USD per million tokens (`input_mtok`,
//! `output_mtok`, `cache_read_mtok`, `cache_write_mtok`, `cache_write_1h_mtok`), a price being a
//! number or `{ base, tiers: [{ start, price }] }` (every token of a prompt longer than `start` at
//! `price`). A model's `prices` is one set, or a list of sets with `constraint.start_date` (the
//! last one in force applies); `price_variants` carry Batch (`when.processing = "batch"`) and Flex
//! / priority (`when.service_tier`) prices. `scripts/check-prices` writes this JSON from the
//! package's bundled data; the catalog names a model's entry as `genai_prices = "PROVIDER/MODEL"`.

use serde_json::{Map, Value};

use crate::base::date::Day;
use crate::error::Result;
use crate::input::price_check::{CheckReport, Checker};
use crate::model::catalog::Catalog;

/// A price's base value (a number, or the `base` of a tiered price).
fn base(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Object(o) => o.get("base").and_then(Value::as_f64),
        x => x.as_f64(),
    }
}

/// A tiered price's first tier: its start (prompts longer than it) and its price.
fn first_tier(v: Option<&Value>) -> Option<(f64, f64)> {
    let t = v?.get("tiers")?.as_array()?.first()?;
    Some((t.get("start")?.as_f64()?, t.get("price")?.as_f64()?))
}

/// Whether a constraint is in force on `day`: a start date on or before it, or a time-of-day
/// window (DeepSeek's peak hours, which genai-prices lists after the dated off-peak rates): the
/// catalog's list prices are the peak ones, so the check reads the file at a peak hour.
fn in_force(constraint: Option<&Value>, day: Day) -> bool {
    match constraint {
        None | Some(Value::Null) => true,
        Some(c) if c.get("start_time").is_some() => true,
        Some(c) => c
            .get("start_date")
            .and_then(Value::as_str)
            .and_then(|d| d.parse::<Day>().ok())
            .is_some_and(|d| d <= day),
    }
}

/// The model's prices in force on `day`.
fn prices_on(model: &Map<String, Value>, day: Day) -> Option<&Map<String, Value>> {
    match model.get("prices")? {
        Value::Object(p) => Some(p),
        Value::Array(list) => {
            let active = list
                .iter()
                .rev()
                .find(|c| in_force(c.get("constraint"), day))
                .or_else(|| list.first())?;
            active.get("prices")?.as_object()
        }
        _ => None,
    }
}

/// The variant's input and output prices for a service tier (`batch`, `flex`, `priority`), the
/// last one in force on `day`.
fn variant<'a>(
    model: &'a Map<String, Value>,
    tier: &str,
    day: Day,
) -> Option<&'a Map<String, Value>> {
    let (key, value) = if tier == "batch" {
        ("processing", "batch")
    } else {
        ("service_tier", tier)
    };
    model
        .get("price_variants")?
        .as_array()?
        .iter()
        .rev()
        .filter(|v| in_force(v.get("constraint"), day))
        .find(|v| {
            v.get("when")
                .and_then(|w| w.get(key))
                .and_then(Value::as_str)
                == Some(value)
        })?
        .get("prices")?
        .as_object()
}

fn find<'a>(providers: &'a [Value], id: &str) -> Option<&'a Map<String, Value>> {
    let (provider, model) = id.split_once('/')?;
    providers
        .iter()
        .find(|p| p.get("id").and_then(Value::as_str) == Some(provider))?
        .get("models")?
        .as_array()?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))?
        .as_object()
}

/// Compares every model of `catalog` that names its genai-prices id with the file's prices in
/// force on `day`.
// Over 120 lines: one loop over the catalog's models comparing each price field with the file's,
// each mismatch a row of the same report.
pub(crate) fn check(
    catalog: &Catalog,
    providers: &[Value],
    _origin: &str,
    day: Day,
) -> Result<CheckReport> {
    let mut report = CheckReport {
        tracker: "genai-prices".into(),
        ..CheckReport::default()
    };
    for m in &catalog.models {
        if m.alias_of.is_some() {
            continue;
        }
        let Some(key) = &m.genai_prices else {
            report.not_compared.push(m.id.clone());
            continue;
        };
        let Some(entry) = find(providers, key) else {
            report.missing_keys.push((m.id.clone(), key.clone()));
            continue;
        };
        let Some(p) = prices_on(entry, day) else {
            report.missing_keys.push((m.id.clone(), key.clone()));
            continue;
        };
        let mut c = Checker {
            report: &mut report,
            model: m,
            key,
        };
        let input = base(p.get("input_mtok"));
        let ratio = |k: &str| Some(base(p.get(k))? / input.filter(|x| *x > 0.0)?);
        c.cmp(
            "input_usd_per_mtok",
            Some(m.input_usd_per_mtok.value),
            input,
            true,
        );
        c.cmp(
            "output_usd_per_mtok",
            Some(m.output_usd_per_mtok.value),
            base(p.get("output_mtok")),
            true,
        );
        c.cmp(
            "context_window",
            m.context_window.as_ref().map(|w| w.value as f64),
            entry.get("context_window").and_then(Value::as_f64),
            false,
        );
        for (mode, rules) in [
            ("explicit", &m.cache.explicit),
            ("automatic", &m.cache.automatic),
            ("implicit", &m.cache.implicit),
        ] {
            let Some(r) = rules else { continue };
            c.cmp(
                &format!("cache.{mode}.read_multiplier"),
                Some(r.read_multiplier.value),
                ratio("cache_read_mtok"),
                false,
            );
            if mode == "explicit" {
                // genai-prices' plain cache-write price is the default write (5 min at Anthropic,
                // 30 min at OpenAI 5.6+); `cache_write_1h_mtok` the 1-hour tier.
                let name = if r.tiers.contains_key("5m") {
                    "5m"
                } else {
                    r.default_tier.as_str()
                };
                let default_write = r
                    .tiers
                    .get(name)
                    .filter(|_| name != "1h")
                    .map(|t| t.write_multiplier.value);
                c.cmp(
                    &format!("cache.{mode}.tiers.{name}.write_multiplier"),
                    default_write,
                    ratio("cache_write_mtok"),
                    false,
                );
                c.cmp(
                    &format!("cache.{mode}.tiers.1h.write_multiplier"),
                    r.tiers.get("1h").map(|t| t.write_multiplier.value),
                    ratio("cache_write_1h_mtok"),
                    false,
                );
            }
        }
        let lc = m.long_context.as_ref();
        let long_in = first_tier(p.get("input_mtok"));
        c.cmp(
            "long_context.above_tokens",
            lc.map(|l| l.above_tokens.value as f64),
            long_in.map(|(start, _)| start),
            true,
        );
        if let Some((_, price)) = long_in {
            c.cmp(
                "long_context.input_usd_per_mtok",
                lc.map(|l| l.input_usd_per_mtok.value),
                Some(price),
                true,
            );
            c.cmp(
                "long_context.output_usd_per_mtok",
                lc.map(|l| l.output_usd_per_mtok.value),
                first_tier(p.get("output_mtok")).map(|(_, p)| p),
                true,
            );
        }
        for tier in ["batch", "flex", "priority"] {
            let t = m.service_tier.get(tier);
            let v = variant(entry, tier, day);
            let of = |k: &str| {
                let own = base(v?.get(k))?;
                Some(own / base(p.get(k)).filter(|x| *x > 0.0)?)
            };
            c.cmp(
                &format!("service_tier.{tier}.input_multiplier"),
                t.map(|t| t.input_multiplier.value),
                of("input_mtok"),
                false,
            );
            c.cmp(
                &format!("service_tier.{tier}.output_multiplier"),
                t.map(|t| t.output_multiplier.value),
                of("output_mtok"),
                false,
            );
        }
    }
    Ok(report)
}
