//! Import of LiteLLM's price database (`model_prices_and_context_window.json`) into pcsim's catalog
//! form: prices, cache read and write rates (5 min and 1 h writes), the tool-use system prompt, and the
//! long-context tiers (kept as notes, since the engine bills one price per model). Every number carries
//! its source; every field that could not be mapped is reported.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::error::{closest, Error, Result};
use crate::model::catalog::{Catalog, Family};

/// What an import produced.
#[derive(Debug, Clone, Default)]
pub struct Import {
    /// Catalog TOML (families used, then models), loadable with `Catalog::from_toml_str`.
    pub toml: String,
    /// Keys imported, in order.
    pub imported: Vec<String>,
    /// Keys not imported, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Price-like fields pcsim has no place for: field name -> number of entries carrying it.
    pub unmapped: BTreeMap<String, usize>,
    /// Fields kept only as notes (long-context tiers): field name -> count.
    pub notes_only: BTreeMap<String, usize>,
    /// Capability and limit fields that do not affect cost, ignored: field name -> count.
    pub ignored: BTreeMap<String, usize>,
}

/// Fields read into the catalog.
const MAPPED: [&str; 7] = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
    "cache_read_input_token_cost",
    "litellm_provider",
    "tool_use_system_prompt_tokens",
];

/// Modes that are chat-style models pcsim can simulate.
const CHAT_MODES: [&str; 3] = ["chat", "responses", "completion"];

fn is_ignored_field(k: &str) -> bool {
    k.starts_with("supports_")
        || k.starts_with("supported_")
        || k.starts_with("max_")
        || matches!(
            k,
            "mode" | "deprecation_date" | "source" | "metadata" | "rpm" | "tpm" | "comment"
        )
}

/// A long-context tier field such as `input_cost_per_token_above_200k_tokens`: (base field, threshold).
fn long_context(k: &str) -> Option<(&str, &str)> {
    let i = k.rfind("_above_")?;
    let rest = &k[i + "_above_".len()..];
    rest.strip_suffix("_tokens").map(|t| (&k[..i], t))
}

/// The pcsim rendering family for a LiteLLM provider / key.
fn family_for(provider: &str, key: &str) -> &'static str {
    let p = provider.to_ascii_lowercase();
    let k = key.to_ascii_lowercase();
    if p.contains("anthropic") || k.contains("claude") {
        "claude-4.8"
    } else if p == "openai" || p.starts_with("azure") || k.contains("gpt-") {
        "openai-o200k"
    } else if p.contains("gemini") || p.starts_with("vertex_ai") || k.contains("gemini") {
        "gemini"
    } else {
        "generic"
    }
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A float as TOML, rounded to 12 significant digits so 3.75e-6 / 3e-6 prints as 1.25.
fn f(x: f64) -> String {
    let rounded: f64 = format!("{x:.12e}").parse().unwrap_or(x);
    format!("{rounded:?}")
}

fn num(out: &mut String, name: &str, value: String, source: &str) {
    let _ = writeln!(
        out,
        "{name} = {{ value = {value}, source = {} }}",
        q(source)
    );
}

/// A price: a sourced number with the day it was read (`checked`), here the day of the import.
fn num_price(out: &mut String, name: &str, value: String, source: &str, checked: &str) {
    let _ = writeln!(
        out,
        "{name} = {{ value = {value}, source = {}, checked = {} }}",
        q(source),
        q(checked)
    );
}

fn price(e: &Map<String, Value>, k: &str) -> Option<f64> {
    e.get(k).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// Upper bound on the keys of a LiteLLM database: twenty times the file of 2025 (about 2,500 keys).
pub const MAX_IMPORT_ENTRIES: usize = 50_000;

/// Imports `text` (the JSON database); `keys` selects entries (all chat models when empty).
pub fn import(text: &str, origin: &str, keys: &[String]) -> Result<Import> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::parse(origin, format!("not valid JSON: {e}")))?;
    let db = v.as_object().ok_or_else(|| {
        Error::invalid(
            origin,
            "(top level)",
            "expected an object mapping model keys to entries",
        )
    })?;
    // Checked before any entry is read: the catalog built from them is parsed again as a whole.
    if db.len() > MAX_IMPORT_ENTRIES {
        return Err(Error::invalid(
            origin,
            "(top level)",
            format!(
                "{} entries exceed the limit of {MAX_IMPORT_ENTRIES} model keys in one import",
                db.len()
            ),
        ));
    }
    for k in keys {
        if !db.contains_key(k) {
            let hint = closest(k, db.keys().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(Error::invalid(
                origin,
                k,
                format!("no such model key{hint}"),
            ));
        }
    }
    let embedded = Catalog::embedded()?;
    // The prices are as the file gives them on the day it is imported.
    let checked = crate::base::date::Day::today().to_string();
    let selected: Vec<(&String, &Value)> = if keys.is_empty() {
        db.iter()
            .filter(|(k, _)| k.as_str() != "sample_spec")
            .collect()
    } else {
        keys.iter().filter_map(|k| db.get_key_value(k)).collect()
    };
    let mut imp = Import::default();
    let mut models = String::new();
    let mut families_used: Vec<&'static str> = Vec::new();
    for (key, entry) in selected {
        let Some(e) = entry.as_object() else {
            imp.skipped
                .push((key.clone(), "entry is not an object".into()));
            continue;
        };
        let mode = e.get("mode").and_then(Value::as_str).unwrap_or("chat");
        if !CHAT_MODES.contains(&mode) {
            imp.skipped
                .push((key.clone(), format!("mode `{mode}` is not a chat model")));
            continue;
        }
        let Some(input) = price(e, "input_cost_per_token").filter(|x| *x > 0.0) else {
            imp.skipped.push((
                key.clone(),
                "no positive input_cost_per_token (pcsim needs a base input price)".into(),
            ));
            continue;
        };
        let Some(output) = price(e, "output_cost_per_token").filter(|x| *x >= 0.0) else {
            imp.skipped
                .push((key.clone(), "no output_cost_per_token".into()));
            continue;
        };
        let provider = e
            .get("litellm_provider")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let family = family_for(provider, key);
        if !families_used.contains(&family) {
            families_used.push(family);
        }
        let src = |field: &str| {
            format!("documented: LiteLLM model_prices_and_context_window.json, key {key}, {field}")
        };
        let ratio = |num_field: &str, n: f64| {
            format!(
                "derived: LiteLLM model_prices_and_context_window.json, key {key}: {num_field} {n:e} / input_cost_per_token {input:e}"
            )
        };
        // Field bookkeeping: mapped, notes-only (long context), ignored, or unmapped.
        let mut long_notes = Vec::new();
        for (k, val) in e {
            if MAPPED.contains(&k.as_str()) {
                continue;
            }
            if let Some((base, threshold)) = long_context(k).filter(|(b, _)| {
                MAPPED.contains(b)
                    && *b != "litellm_provider"
                    && *b != "tool_use_system_prompt_tokens"
            }) {
                if let Some(x) = val.as_f64() {
                    long_notes.push(format!(
                        "{base} above {threshold} tokens: ${} per Mtok",
                        f(x * 1e6)
                    ));
                    *imp.notes_only.entry(k.clone()).or_default() += 1;
                    continue;
                }
            }
            if is_ignored_field(k) {
                *imp.ignored.entry(k.clone()).or_default() += 1;
            } else {
                *imp.unmapped.entry(k.clone()).or_default() += 1;
            }
        }

        let read = price(e, "cache_read_input_token_cost").filter(|r| *r >= 0.0 && *r <= input);
        if price(e, "cache_read_input_token_cost").is_some() && read.is_none() {
            *imp.unmapped
                .entry("cache_read_input_token_cost (above the input price)".into())
                .or_default() += 1;
        }
        // A write price below the read price (LiteLLM writes 0.0 for providers with no write fee, e.g.
        // DeepSeek) is not a write tier: such a cache is automatic, written at the base rate.
        let mut write_price = |field: &str| {
            let w = price(e, field)?;
            if w >= read.unwrap_or(0.0) && w > 0.0 {
                Some(w)
            } else {
                *imp.ignored
                    .entry(format!(
                        "{field} (zero or below the read price: no write surcharge)"
                    ))
                    .or_default() += 1;
                None
            }
        };
        let write5 = write_price("cache_creation_input_token_cost");
        let write1h = write_price("cache_creation_input_token_cost_above_1hr");
        let explicit = read.is_some() && (write5.is_some() || write1h.is_some());
        let default_strategy = if explicit {
            "explicit:tools+system+last"
        } else if read.is_some() {
            "automatic"
        } else {
            "none"
        };

        let m = &mut models;
        let _ = writeln!(m, "[[model]]");
        let _ = writeln!(m, "id = {}", q(key));
        let _ = writeln!(m, "name = {}", q(key));
        let _ = writeln!(m, "provider = {}", q(provider));
        let _ = writeln!(m, "family = {}", q(family));
        num_price(
            m,
            "input_usd_per_mtok",
            f(input * 1e6),
            &src("input_cost_per_token"),
            &checked,
        );
        num_price(
            m,
            "output_usd_per_mtok",
            f(output * 1e6),
            &src("output_cost_per_token"),
            &checked,
        );
        let _ = writeln!(m, "default_strategy = {}", q(default_strategy));
        if !long_notes.is_empty() {
            let _ = writeln!(
                m,
                "notes = {}",
                q(&format!(
                    "LiteLLM long-context prices, not simulated (pcsim bills one price per model): {}",
                    long_notes.join("; ")
                ))
            );
        }
        if let Some(preamble) = e
            .get("tool_use_system_prompt_tokens")
            .and_then(Value::as_f64)
        {
            // The documented tool system prompt replaces the family's preamble; its template and calibration stay.
            let fam = embedded.families.iter().find(|x| x.id == family);
            if let Some(fam) = fam {
                let r = &fam.tool_rendering;
                let _ = writeln!(m, "[model.tool_rendering]");
                num(
                    m,
                    "preamble_tokens",
                    f(preamble),
                    &src("tool_use_system_prompt_tokens"),
                );
                for line in r.overlay_lines() {
                    let _ = writeln!(m, "{line}");
                }
            }
        }
        if let Some(read) = read {
            let mode = if explicit { "explicit" } else { "automatic" };
            let at = format!("model.cache.{mode}");
            let _ = writeln!(m, "[{at}]");
            let min = if family == "gemini" { 2048 } else { 1024 };
            num(
                m,
                "min_tokens",
                min.to_string(),
                &format!("assumed: LiteLLM has no minimum-cacheable-tokens field; {min} is the usual documented minimum of the provider family (providers.md)"),
            );
            num(
                m,
                "granularity",
                "1".into(),
                "assumed: LiteLLM gives no block size; exact prefixes",
            );
            num_price(
                m,
                "read_multiplier",
                f(read / input),
                &ratio("cache_read_input_token_cost", read),
                &checked,
            );
            let _ = writeln!(
                m,
                "refresh_on_hit = {{ value = true, source = {} }}",
                q("assumed: LiteLLM gives no refresh rule; hits refresh the lifetime at every documented provider")
            );
            if explicit {
                num(m, "max_breakpoints", "4".into(), "assumed: LiteLLM gives no breakpoint limit; Anthropic-style explicit caching allows 4 (providers.md 1a)");
                num(m, "lookback_blocks", "20".into(), "assumed: LiteLLM gives no lookback; Anthropic-style 20-block lookback (providers.md 1a)");
            }
            let _ = writeln!(
                m,
                "tool_change = {{ value = \"invalidate\", source = {} }}",
                q("assumed: tool definitions are part of the cached prefix at every documented provider (providers.md)")
            );
            let default_tier = if !explicit {
                "default"
            } else if write5.is_some() {
                "5m"
            } else {
                "1h"
            };
            let _ = writeln!(m, "default_tier = {}", q(default_tier));
            if explicit {
                if let Some(w) = write5 {
                    let _ = writeln!(m, "[{at}.tiers.5m]");
                    num(m, "ttl_seconds", "300.0".into(), "assumed: LiteLLM gives no TTL; cache_creation_input_token_cost is the default 5-minute write (providers.md 1a)");
                    num_price(
                        m,
                        "write_multiplier",
                        f(w / input),
                        &ratio("cache_creation_input_token_cost", w),
                        &checked,
                    );
                }
                if let Some(w) = write1h {
                    let _ = writeln!(m, "[{at}.tiers.1h]");
                    num(m, "ttl_seconds", "3600.0".into(), &format!("documented: LiteLLM model_prices_and_context_window.json, key {key}, field name cache_creation_input_token_cost_above_1hr (1-hour writes)"));
                    num_price(
                        m,
                        "write_multiplier",
                        f(w / input),
                        &ratio("cache_creation_input_token_cost_above_1hr", w),
                        &checked,
                    );
                }
            } else {
                let _ = writeln!(m, "[{at}.tiers.default]");
                num(m, "ttl_seconds", "300.0".into(), "assumed: LiteLLM gives no TTL; about 5 minutes of idle retention, the shortest documented automatic retention (providers.md 2)");
                num_price(m, "write_multiplier", "1.0".into(), &format!("assumed: LiteLLM lists no cache-write price for key {key}: writes billed at the base input rate"), &checked);
            }
        }
        let _ = writeln!(m);
        imp.imported.push(key.clone());
    }
    if imp.imported.is_empty() {
        let why = imp
            .skipped
            .iter()
            .take(5)
            .map(|(k, r)| format!("{k}: {r}"))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(Error::Unsupported(format!(
            "{origin}: no chat model with prices to import ({why})"
        )));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# pcsim catalog imported from {origin} (LiteLLM model_prices_and_context_window.json format)\n# by `pcsim import-litellm`. Rendering families are copied from pcsim's built-in catalog.\n"
    );
    for id in families_used {
        if let Some(fam) = embedded.families.iter().find(|x| x.id == id) {
            write_family(&mut out, fam);
        }
    }
    out.push_str(&models);
    // The output must load: check it here, so a bad import is an error and not a broken file.
    Catalog::from_toml_str(&out, "imported catalog")?;
    imp.toml = out;
    Ok(imp)
}

fn write_family(out: &mut String, fam: &Family) {
    let r = &fam.tool_rendering;
    let _ = writeln!(
        out,
        "[[family]]\nid = {}\n[family.tool_rendering]",
        q(&fam.id)
    );
    num(
        out,
        "preamble_tokens",
        f(r.preamble_tokens.value),
        &r.preamble_tokens.source,
    );
    for line in r.overlay_lines() {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    const DB: &str = r#"{
      "sample_spec": {"input_cost_per_token": 0.0, "mode": "one of: chat, embedding"},
      "claude-x": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
        "cache_creation_input_token_cost": 3.75e-06, "cache_creation_input_token_cost_above_1hr": 6e-06,
        "cache_read_input_token_cost": 3e-07, "input_cost_per_token_above_200k_tokens": 6e-06,
        "litellm_provider": "anthropic", "mode": "chat", "tool_use_system_prompt_tokens": 346,
        "supports_prompt_caching": true, "output_cost_per_reasoning_token": 1.5e-05},
      "gpt-x": {"input_cost_per_token": 2e-06, "output_cost_per_token": 8e-06,
        "cache_read_input_token_cost": 5e-07, "litellm_provider": "openai", "mode": "chat"},
      "plain": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "litellm_provider": "mistral"},
      "embed": {"input_cost_per_token": 2e-08, "output_cost_per_token": 0.0, "mode": "embedding"},
      "free": {"input_cost_per_token": 0, "output_cost_per_token": 0, "mode": "chat"}
    }"#;

    #[test]
    fn maps_prices_tiers_and_reports_the_rest() {
        let imp = import(DB, "db.json", &[]).unwrap();
        assert_eq!(imp.imported, ["claude-x", "gpt-x", "plain"]);
        let skipped: Vec<_> = imp.skipped.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(skipped, ["embed", "free"]);
        let c = Catalog::from_toml_str(&imp.toml, "t").unwrap();
        let m = c.model("claude-x").unwrap();
        assert_eq!(m.input_usd_per_mtok.value, 3.0);
        assert_eq!(m.output_usd_per_mtok.value, 15.0);
        assert!(m
            .input_usd_per_mtok
            .source
            .contains("key claude-x, input_cost_per_token"));
        let ex = m.cache.explicit.as_ref().unwrap();
        assert_eq!(ex.read_multiplier.value, 0.1);
        assert_eq!(ex.tiers["5m"].write_multiplier.value, 1.25);
        assert_eq!(ex.tiers["1h"].write_multiplier.value, 2.0);
        assert_eq!(ex.tiers["1h"].ttl_seconds.value, 3600.0);
        assert_eq!(m.rendering().preamble_tokens.value, 346.0);
        assert!(m
            .notes
            .as_deref()
            .unwrap()
            .contains("input_cost_per_token above 200k tokens: $6.0 per Mtok"));
        let g = c.model("gpt-x").unwrap();
        let auto = g.cache.automatic.as_ref().unwrap();
        assert_eq!(auto.read_multiplier.value, 0.25);
        assert_eq!(auto.tiers["default"].write_multiplier.value, 1.0);
        assert_eq!(g.family, "openai-o200k");
        let p = c.model("plain").unwrap();
        assert!(p.cache.explicit.is_none() && p.cache.automatic.is_none());
        assert_eq!(p.default_strategy, "none");
        assert_eq!(imp.unmapped["output_cost_per_reasoning_token"], 1);
        assert_eq!(imp.notes_only["input_cost_per_token_above_200k_tokens"], 1);
        assert_eq!(imp.ignored["supports_prompt_caching"], 1);
    }

    #[test]
    fn selection_and_errors() {
        let imp = import(DB, "db.json", &["gpt-x".into()]).unwrap();
        assert_eq!(imp.imported, ["gpt-x"]);
        let e = import(DB, "db.json", &["gpt-y".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("db.json") && e.contains("gpt-y") && e.contains("did you mean `gpt-x`"),
            "{e}"
        );
        let e = import(DB, "db.json", &["embed".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("embed: mode `embedding`"), "{e}");
        let e = import("[1]", "db.json", &[]).unwrap_err().to_string();
        assert!(e.contains("db.json"), "{e}");
    }

    #[test]
    fn long_context_names_parse() {
        assert_eq!(
            long_context("input_cost_per_token_above_200k_tokens"),
            Some(("input_cost_per_token", "200k"))
        );
        assert_eq!(
            long_context("cache_creation_input_token_cost_above_1hr"),
            None
        );
    }
}
