//! `pcsim models --check-against FILE`: where the built-in catalog disagrees with a price tracker's
//! file, price by price: LiteLLM's price file (`model_prices_and_context_window.json`), for every
//! model whose catalog entry names its LiteLLM key (`litellm = "..."`), or genai-prices' data (a
//! JSON list of providers, `crate::input::genai_check`), for every model that names its
//! genai-prices id (`genai_prices = "PROVIDER/MODEL"`). Keeping the catalog current is then: run
//! the check on a fresh copy of the file (`scripts/check-prices`), read the differences, fix
//! `models.toml` with sources or record why the tracker is wrong.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::catalog::Catalog;

use crate::input::price_check::Checker;
pub use crate::input::price_check::{Agreement, CheckReport, Disagreement};

fn per_mtok(e: &Map<String, Value>, k: &str) -> Option<f64> {
    e.get(k).and_then(Value::as_f64).map(|x| x * 1e6)
}

fn ratio(e: &Map<String, Value>, num: &str, den: &str) -> Option<f64> {
    let (n, d) = (e.get(num)?.as_f64()?, e.get(den)?.as_f64()?);
    (d > 0.0).then_some(n / d)
}

/// Compares every model of `catalog` that names its key in the file's tracker with the file's
/// entry: a LiteLLM price file (an object of entries), or genai-prices' data (a list of providers,
/// whose dated prices are read on today's date; [`check_against_on`] names the day).
pub fn check_against(catalog: &Catalog, text: &str, origin: &str) -> Result<CheckReport> {
    check_against_on(catalog, text, origin, crate::base::date::Day::today())
}

/// [`check_against`] with genai-prices' dated prices read on `day` (the day `catalog` was priced
/// on). A LiteLLM file has no dates.
// Over 120 lines: one loop over the catalog's models comparing each price field with the file's
// entry, each mismatch a row of the same report.
pub fn check_against_on(
    catalog: &Catalog,
    text: &str,
    origin: &str,
    day: crate::base::date::Day,
) -> Result<CheckReport> {
    crate::base::files::check_json_values(text, origin)?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
    if let Some(providers) = v.as_array() {
        return crate::input::genai_check::check(catalog, providers, origin, day);
    }
    let db = v.as_object().ok_or_else(|| {
        Error::invalid(
            origin,
            "(top level)",
            "expected an object mapping model keys to entries (LiteLLM) or a list of providers (genai-prices)",
        )
    })?;
    let mut report = CheckReport {
        tracker: "litellm".into(),
        ..CheckReport::default()
    };
    for m in &catalog.models {
        if m.alias_of.is_some() {
            continue;
        }
        let Some(key) = &m.litellm else {
            report.not_compared.push(m.id.clone());
            continue;
        };
        let Some(entry) = db.get(key).filter(|v| v.is_object()) else {
            report.missing_keys.push((m.id.clone(), key.clone()));
            continue;
        };
        // Prices given only by prompt-length ranges are compared as import-litellm reads them
        // (base prices and one long-context tier); an entry it cannot read so is compared as
        // filed, and its prices then show as missing from the file.
        let flat = crate::input::litellm_entry::flatten_tiered(entry)
            .ok()
            .flatten()
            .map(|(v, _)| v);
        let Some(e) = flat.as_ref().unwrap_or(entry).as_object() else {
            continue;
        };
        let mut c = Checker {
            report: &mut report,
            model: m,
            key,
        };
        c.cmp(
            "input_usd_per_mtok",
            Some(m.input_usd_per_mtok.value),
            per_mtok(e, "input_cost_per_token"),
            true,
        );
        c.cmp(
            "output_usd_per_mtok",
            Some(m.output_usd_per_mtok.value),
            per_mtok(e, "output_cost_per_token"),
            true,
        );
        c.cmp(
            "context_window",
            m.context_window.as_ref().map(|w| w.value as f64),
            e.get("max_input_tokens").and_then(Value::as_f64),
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
                ratio(e, "cache_read_input_token_cost", "input_cost_per_token"),
                false,
            );
            if mode == "explicit" {
                let tier = |n: &str| r.tiers.get(n).map(|t| t.write_multiplier.value);
                // LiteLLM's plain cache-creation price is the default write (5 min at Anthropic,
                // 30 min at OpenAI 5.6+); its `_above_1hr` price the 1-hour tier.
                let default_write = tier("5m").or_else(|| {
                    r.tiers
                        .get(&r.default_tier)
                        .filter(|_| r.default_tier != "1h")
                        .map(|t| t.write_multiplier.value)
                });
                c.cmp(
                    &format!(
                        "cache.{mode}.tiers.{}.write_multiplier",
                        if r.tiers.contains_key("5m") {
                            "5m"
                        } else {
                            r.default_tier.as_str()
                        }
                    ),
                    default_write,
                    ratio(e, "cache_creation_input_token_cost", "input_cost_per_token"),
                    false,
                );
                c.cmp(
                    &format!("cache.{mode}.tiers.1h.write_multiplier"),
                    tier("1h"),
                    ratio(
                        e,
                        "cache_creation_input_token_cost_above_1hr",
                        "input_cost_per_token",
                    ),
                    false,
                );
                c.cmp(
                    &format!("cache.{mode}.tiers.12h.write_multiplier"),
                    tier("12h"),
                    ratio(
                        e,
                        "cache_creation_input_token_cost_above_12hr",
                        "input_cost_per_token",
                    ),
                    false,
                );
            }
            c.cmp(
                &format!("cache.{mode}.min_tokens"),
                Some(r.min_tokens.value as f64),
                e.get("prompt_cache_min_tokens").and_then(Value::as_f64),
                false,
            );
        }
        // Long-context tier: LiteLLM names the threshold in the field (`_above_272k_tokens`).
        let long = e.keys().find_map(|k| {
            let t = k
                .strip_prefix("input_cost_per_token_above_")?
                .strip_suffix("k_tokens")?;
            t.parse::<u64>().ok().map(|t| (t * 1000, k.clone()))
        });
        let lc = m.long_context.as_ref();
        c.cmp(
            "long_context.above_tokens",
            lc.map(|l| l.above_tokens.value as f64),
            long.as_ref().map(|(t, _)| *t as f64),
            true,
        );
        if let Some((t, k)) = &long {
            c.cmp(
                "long_context.input_usd_per_mtok",
                lc.map(|l| l.input_usd_per_mtok.value),
                per_mtok(e, k),
                true,
            );
            c.cmp(
                "long_context.output_usd_per_mtok",
                lc.map(|l| l.output_usd_per_mtok.value),
                per_mtok(
                    e,
                    &format!("output_cost_per_token_above_{}k_tokens", t / 1000),
                ),
                true,
            );
        }
        for (tier, suffix) in [
            ("batch", "batches"),
            ("flex", "flex"),
            ("priority", "priority"),
        ] {
            let t = m.service_tier.get(tier);
            c.cmp(
                &format!("service_tier.{tier}.input_multiplier"),
                t.map(|t| t.input_multiplier.value),
                ratio(
                    e,
                    &format!("input_cost_per_token_{suffix}"),
                    "input_cost_per_token",
                ),
                false,
            );
            c.cmp(
                &format!("service_tier.{tier}.output_multiplier"),
                t.map(|t| t.output_multiplier.value),
                ratio(
                    e,
                    &format!("output_cost_per_token_{suffix}"),
                    "output_cost_per_token",
                ),
                false,
            );
        }
        // DeepSeek's off-peak rates: `off_peak_pricing`, as the `off-peak` tier's multipliers.
        let off = e.get("off_peak_pricing").and_then(Value::as_object);
        let off_ratio = |k: &str| Some(off?.get(k)?.as_f64()? / e.get(k)?.as_f64()?);
        let t = m.service_tier.get("off-peak");
        c.cmp(
            "service_tier.off-peak.input_multiplier",
            t.map(|t| t.input_multiplier.value),
            off_ratio("input_cost_per_token"),
            false,
        );
        c.cmp(
            "service_tier.off-peak.output_multiplier",
            t.map(|t| t.output_multiplier.value),
            off_ratio("output_cost_per_token"),
            false,
        );
        // Anthropic's entries give the US data-residency factor as `provider_specific_entry.us`.
        let regional = ["eu", "us"]
            .iter()
            .find_map(|r| {
                e.get(&format!("regional_processing_uplift_multiplier_{r}"))
                    .and_then(Value::as_f64)
            })
            .or_else(|| {
                e.get("provider_specific_entry")
                    .and_then(|p| p.get("us"))
                    .and_then(Value::as_f64)
            });
        c.cmp(
            "regional_multiplier",
            m.regional_multiplier.as_ref().map(|r| r.value),
            regional,
            false,
        );
    }
    Ok(report)
}
