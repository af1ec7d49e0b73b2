//! Import of LiteLLM's price database (`model_prices_and_context_window.json`) into pcsim's catalog
//! form. Each entry is mapped on its own (in the private `litellm_entry` module): prices, cache reads and
//! 5-minute / 1-hour writes, the minimum cacheable prompt, long-context tiers with their cache
//! prices, Batch / Flex / priority service tiers, the regional multiplier and the tool-use system
//! prompt. Every number carries its source; every field with no place in the catalog is reported;
//! an entry with a value that cannot be a price is skipped with the key and the field named, and
//! the rest is imported.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::input::litellm_entry::{f, flatten_tiered, map_entry, q, Skip};
use crate::model::catalog::{Catalog, Family};

/// What an import produced.
#[derive(Debug, Clone, Default)]
pub struct Import {
    /// Catalog TOML (families used, then models), loadable with `Catalog::from_toml_str`.
    pub toml: String,
    /// Keys imported, in order.
    pub imported: Vec<String>,
    /// Keys not imported, with the reason: not a chat model with prices, or (see `bad`) a value
    /// that cannot be a price, named by its LiteLLM field.
    pub skipped: Vec<(String, String)>,
    /// How many of `skipped` are bad rows (a value that cannot be a price), not mere non-chat entries.
    pub bad: usize,
    /// Where LiteLLM's data was read otherwise than as filed: (key, what and why).
    pub corrections: Vec<(String, String)>,
    /// Keys that are ids of built-in models: (key, the built-in model it overlays). Such an entry
    /// keeps the built-in model's caching mechanics, rendering family and strategy, and takes its
    /// prices from the file, so that `--catalog` with the import replaces prices, not behaviour.
    pub replaced: Vec<(String, String)>,
    /// Cost fields pcsim has no place for: field (and why) -> number of imported entries carrying it.
    pub unmapped: BTreeMap<String, usize>,
    /// Capability and limit fields that do not affect cost, and cost fields deliberately not read,
    /// ignored: field -> count.
    pub ignored: BTreeMap<String, usize>,
}

impl Import {
    /// Records `key` as not imported, and why; a bad value also counts in `bad`.
    fn skip(&mut self, key: &str, skip: Skip) {
        let reason = match skip {
            Skip::NotApplicable(why) => why,
            Skip::Bad(b) => {
                self.bad += 1;
                b.to_string()
            }
        };
        self.skipped.push((key.to_string(), reason));
    }
}

fn is_ignored_field(k: &str) -> bool {
    k.starts_with("supports_")
        || k.starts_with("supported_")
        || k.starts_with("max_")
        || matches!(
            k,
            "mode" | "deprecation_date" | "source" | "metadata" | "rpm" | "tpm" | "comment"
        )
}

fn num(out: &mut String, name: &str, value: String, source: &str) {
    let _ = writeln!(
        out,
        "{name} = {{ value = {value}, source = {} }}",
        q(source)
    );
}

/// Upper bound on the keys of a LiteLLM database: four times the file of 2025 (about 2,500 keys).
/// The generated catalog (about 2 KB of sourced TOML per model) is parsed again as a whole, and that
/// parse is most of an import's time: 50,000 keys took 14 s and 2 GB, so the limit is what imports in
/// a few seconds on two shared cores (scripts/limits_at_max.sh).
pub const MAX_IMPORT_ENTRIES: usize = 10_000;

/// Imports `text` (the JSON database); `keys` selects entries (all chat models when empty).
// Over 120 lines: an import in its order: select the entries, map each (keeping the built-in
// mechanics of models pcsim knows), check them loaded together as a catalog, then assemble the
// text; every step records its refusals on the same Import.
pub fn import(text: &str, origin: &str, keys: &[String]) -> Result<Import> {
    crate::base::files::check_json_values(text, origin)?;
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
    let file_keys: std::collections::HashSet<&str> =
        selected.iter().map(|(k, _)| k.as_str()).collect();
    let mut imp = Import::default();
    let mut entries = Vec::new();
    let mut family_text: BTreeMap<&'static str, String> = BTreeMap::new();
    for (key, entry) in selected {
        // An entry priced only by prompt-length ranges is read as its flat equivalent.
        let (flat, tiered) = match flatten_tiered(entry) {
            Ok(Some((v, note))) => (Some(v), Some(note)),
            Ok(None) => (None, None),
            Err(skip) => {
                imp.skip(key, skip);
                continue;
            }
        };
        let entry: std::borrow::Cow<'_, Value> = match flat {
            Some(v) => std::borrow::Cow::Owned(v),
            None => std::borrow::Cow::Borrowed(entry),
        };
        let mut e = match map_entry(key, &entry, &embedded.families, &checked) {
            Ok(e) => e,
            Err(skip) => {
                imp.skip(key, skip);
                continue;
            }
        };
        family_text.entry(e.family).or_insert_with(|| {
            let mut t = String::new();
            if let Some(fam) = embedded.families.iter().find(|x| x.id == e.family) {
                write_family(&mut t, fam);
            }
            t
        });
        e.corrections.extend(tiered);
        if let Some(b) = embedded.models.iter().find(|m| &m.id == key) {
            let own = b.alias_of.as_deref().unwrap_or(&b.id);
            let b = embedded.model(own)?;
            let fam = family_text.get(e.family).cloned().unwrap_or_default();
            match keep_mechanics(b, key, &fam, &e.toml, &file_keys) {
                Ok(toml) => {
                    e.toml = toml;
                    e.family = embedded
                        .families
                        .iter()
                        .find(|f| f.id == b.family)
                        .map_or(e.family, |f| leak_family_id(&f.id));
                    family_text.entry(e.family).or_insert_with(|| {
                        let mut t = String::new();
                        if let Some(fam) = embedded.families.iter().find(|x| x.id == b.family) {
                            write_family(&mut t, fam);
                        }
                        t
                    });
                    imp.replaced.push((key.clone(), b.id.clone()));
                }
                Err(err) => {
                    imp.skip(
                        key,
                        Skip::NotApplicable(format!(
                            "overlays built-in `{}` but its prices cannot be laid on it: {err}",
                            b.id
                        )),
                    );
                    continue;
                }
            }
        }
        entries.push((key.clone(), entry, e));
    }
    // Each entry must load, so that one entry the catalog refuses is skipped rather than failing
    // the import. Loading them all at once is fast; an entry the catalog names in a refusal is
    // dropped and the rest loaded again, and a refusal that names none is traced entry by entry.
    let mut refused: Vec<(String, String)> = Vec::new();
    let mut loaded_together = false;
    for _ in 0..=entries.len() {
        let text = assemble(&family_text, entries.iter().map(|(_, _, e)| e));
        let Err(err) = Catalog::from_toml_str(&text, "imported entry") else {
            loaded_together = true;
            break;
        };
        let why = |err: Error| match err {
            Error::Invalid { field, problem, .. } => {
                format!("the catalog refuses {field}: {problem}")
            }
            other => format!("the catalog refuses it: {other}"),
        };
        let named = match &err {
            Error::Invalid { field, .. } => entries
                .iter()
                .position(|(k, _, _)| field.starts_with(&format!("model `{k}`"))),
            _ => None,
        };
        match named {
            Some(i) => {
                let (k, _, _) = entries.remove(i);
                refused.push((k, why(err)));
            }
            None => {
                let mut kept = Vec::new();
                for (k, v, e) in entries {
                    let fam = &family_text[e.family];
                    match Catalog::from_toml_str(&format!("{fam}{}", e.toml), "imported entry") {
                        Ok(_) => kept.push((k, v, e)),
                        Err(err) => refused.push((k, why(err))),
                    }
                }
                entries = kept;
                break;
            }
        }
    }
    imp.bad += refused.len();
    imp.skipped.extend(refused);
    for (key, entry, e) in &entries {
        if let Some(obj) = entry.as_object() {
            for k in obj.keys() {
                let accounted = e.used.contains(k)
                    || e.unmapped.iter().any(|(f, _)| f == k)
                    || e.ignored.iter().any(|(f, _)| f == k);
                if accounted {
                    continue;
                }
                let to = if is_ignored_field(k) {
                    &mut imp.ignored
                } else {
                    &mut imp.unmapped
                };
                *to.entry(k.clone()).or_default() += 1;
            }
        }
        for (_, label) in &e.unmapped {
            *imp.unmapped.entry(label.clone()).or_default() += 1;
        }
        for (_, label) in &e.ignored {
            *imp.ignored.entry(label.clone()).or_default() += 1;
        }
        for c in &e.corrections {
            imp.corrections.push((key.clone(), c.clone()));
        }
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
    let out = assemble(&family_text, entries.iter().map(|(_, _, e)| e));
    // The output must load (the loop above loaded this very text unless it traced entries one by
    // one), so a bad import is an error and not a broken file.
    if !loaded_together {
        Catalog::from_toml_str(&out, "imported catalog")?;
    }
    let out = format!(
        "# pcsim catalog imported from {origin} (LiteLLM model_prices_and_context_window.json format)\n# by `pcsim import-litellm`. Rendering families are copied from pcsim's built-in catalog.\n\n{out}"
    );
    imp.toml = out;
    Ok(imp)
}

/// The built-in families' ids as `'static` (the import names families by the ids of
/// `litellm_entry::family_for`; an overlaid model keeps its built-in family).
fn leak_family_id(id: &str) -> &'static str {
    const KNOWN: [&str; 7] = [
        "claude-4.8",
        "claude-5",
        "openai-o200k",
        "gemini",
        "glm",
        "kimi",
        "generic",
    ];
    KNOWN
        .iter()
        .find(|k| **k == id)
        .copied()
        .unwrap_or("generic")
}

/// A file entry whose key is a built-in model's id, laid on that model: the built-in caching modes
/// (minimums, granularity, TTLs, breakpoints, lookback, hit chances, anchors, invalidation),
/// rendering family and default strategy stay; the prices come from the file (input, output,
/// cache reads, writes of the tiers the file prices, long context, service tiers, regional
/// multiplier, context window), and the built-in dated changes are dropped (the file's prices are
/// as of the import). Returns the `[[model]]` TOML.
fn keep_mechanics(
    builtin: &crate::model::catalog::ModelSpec,
    key: &str,
    family_toml: &str,
    entry_toml: &str,
    file_keys: &std::collections::HashSet<&str>,
) -> Result<String> {
    let file = Catalog::from_toml_str(&format!("{family_toml}{entry_toml}"), key)?;
    let file = file
        .models
        .first()
        .ok_or_else(|| Error::invalid(key, "model", "the entry made no model"))?;
    let mut m = builtin.clone();
    m.id = key.to_string();
    m.alias_of = None;
    // The built-in model's other names follow it (`gpt-5.6` for Sol), but not the key itself.
    // An alias the file has as a key of its own is that entry's id instead.
    m.aliases
        .retain(|a| a != key && !file_keys.contains(a.as_str()));
    m.tool_rendering = None;
    m.priced = None;
    m.price_change.clear();
    m.litellm = Some(key.to_string());
    m.input_usd_per_mtok = file.input_usd_per_mtok.clone();
    m.output_usd_per_mtok = file.output_usd_per_mtok.clone();
    if file.context_window.is_some() {
        m.context_window = file.context_window.clone();
    }
    let file_rules = [
        &file.cache.explicit,
        &file.cache.automatic,
        &file.cache.implicit,
    ]
    .into_iter()
    .flatten()
    .next();
    if let Some(fr) = file_rules {
        let default_write = fr
            .tiers
            .get("5m")
            .or_else(|| fr.tier(None).map(|(_, t)| t))
            .map(|t| t.write_multiplier.clone());
        for rules in [
            &mut m.cache.explicit,
            &mut m.cache.automatic,
            &mut m.cache.implicit,
        ]
        .into_iter()
        .flatten()
        {
            rules.read_multiplier = fr.read_multiplier.clone();
            // Writes: only where the file prices a write (an explicit mode).
            if file.cache.explicit.is_some() {
                for (name, tier) in rules.tiers.iter_mut() {
                    // A tier the file prices by name (1h, 12h); any other from its default write.
                    let from = match fr.tiers.get(name.as_str()) {
                        Some(t) if name != "5m" || fr.tiers.contains_key("5m") => {
                            Some(t.write_multiplier.clone())
                        }
                        _ if name == "1h" || name == "12h" => None,
                        _ => default_write.clone(),
                    };
                    if let Some(w) = from {
                        tier.write_multiplier = w;
                    }
                }
            }
        }
    }
    if file.long_context.is_some() {
        m.long_context = file.long_context.clone();
    }
    for (name, t) in &file.service_tier {
        m.service_tier.insert(name.clone(), t.clone());
    }
    if file.regional_multiplier.is_some() {
        m.regional_multiplier = file.regional_multiplier.clone();
    }
    let note = format!(
        "Prices from LiteLLM key {key} (import-litellm); caching mechanics, rendering family and strategy of the built-in model `{}`.",
        builtin.id
    );
    // The built-in notes explain the built-in prices, which the file's replace.
    m.notes = Some(note);
    #[derive(serde::Serialize)]
    struct One<'a> {
        model: [&'a crate::model::catalog::ModelSpec; 1],
    }
    toml::to_string(&One { model: [&m] })
        .map_err(|e| Error::invalid(key, "model", format!("cannot be written as TOML: {e}")))
}

/// The families used, then the entries.
fn assemble<'a>(
    families: &BTreeMap<&'static str, String>,
    entries: impl Iterator<Item = &'a crate::input::litellm_entry::Entry>,
) -> String {
    let mut out: String = families.values().map(String::as_str).collect();
    for e in entries {
        out.push_str(&e.toml);
    }
    out
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
        "cache_read_input_token_cost_above_200k_tokens": 6e-07,
        "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06,
        "cache_creation_input_token_cost_above_1hr_above_200k_tokens": 1.5e-05,
        "prompt_cache_min_tokens": 4096, "provider_specific_entry": {"us": 1.1, "fast": 6.0},
        "litellm_provider": "anthropic", "mode": "chat", "tool_use_system_prompt_tokens": 346,
        "supports_prompt_caching": true, "output_cost_per_reasoning_token": 1.5e-05},
      "gpt-x": {"input_cost_per_token": 2e-06, "output_cost_per_token": 8e-06,
        "cache_read_input_token_cost": 5e-07, "litellm_provider": "openai", "mode": "chat",
        "input_cost_per_token_batches": 1e-06, "output_cost_per_token_batches": 4e-06,
        "input_cost_per_token_priority": 3.5e-06, "output_cost_per_token_priority": 1.4e-05,
        "cache_read_input_token_cost_priority": 8.75e-07,
        "input_cost_per_token_flex": 1e-06},
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
        assert_eq!(imp.bad, 0);
        let c = Catalog::from_toml_str(&imp.toml, "t").unwrap();
        let m = c.model("claude-x").unwrap();
        assert_eq!(m.input_usd_per_mtok.value, 3.0);
        assert_eq!(m.output_usd_per_mtok.value, 15.0);
        assert_eq!(m.litellm.as_deref(), Some("claude-x"));
        assert!(m
            .input_usd_per_mtok
            .source
            .contains("key claude-x, input_cost_per_token"));
        let ex = m.cache.explicit.as_ref().unwrap();
        assert_eq!(ex.read_multiplier.value, 0.1);
        assert_eq!(ex.min_tokens.value, 4096);
        assert!(ex.min_tokens.source.starts_with("documented: "));
        assert_eq!(ex.tiers["5m"].write_multiplier.value, 1.25);
        assert_eq!(ex.tiers["1h"].write_multiplier.value, 2.0);
        assert_eq!(ex.tiers["1h"].ttl_seconds.value, 3600.0);
        assert_eq!(m.rendering().preamble_tokens.value, 346.0);
        // Long context: 6e-06 above 200K; no long output price, so the base one (assumed); reads
        // 6e-07 / 6e-06 = 0.1; the writes above 200K are 1.25x and 2.5x of 6e-06, which are not
        // the model's 1.25x and 2x for the 1-hour one: that one has no place.
        let lc = m.long_context.as_ref().unwrap();
        assert_eq!(lc.above_tokens.value, 200_000);
        assert_eq!(lc.input_usd_per_mtok.value, 6.0);
        assert_eq!(lc.output_usd_per_mtok.value, 15.0);
        assert!(lc.output_usd_per_mtok.source.starts_with("assumed: "));
        assert_eq!(lc.read_multiplier.as_ref().unwrap().value, 0.1);
        assert_eq!(
            imp.unmapped
                ["cache_creation_input_token_cost_above_1hr_above_200k_tokens (not the model's write multiplier of the long-context input price)"],
            1
        );
        assert!(!imp
            .unmapped
            .keys()
            .any(|k| k.starts_with("cache_creation_input_token_cost_above_200k_tokens")));
        assert_eq!(m.regional_multiplier.as_ref().unwrap().value, 1.1);
        assert_eq!(imp.unmapped["provider_specific_entry.fast"], 1);
        let g = c.model("gpt-x").unwrap();
        let auto = g.cache.automatic.as_ref().unwrap();
        assert_eq!(auto.read_multiplier.value, 0.25);
        assert_eq!(auto.tiers["default"].write_multiplier.value, 1.0);
        assert!(auto.min_tokens.source.starts_with("assumed: "));
        assert_eq!(g.family, "openai-o200k");
        // Batch: 1e-06 / 2e-06 and 4e-06 / 8e-06; no batch cache price, so no caching assumed.
        let b = &g.service_tier["batch"];
        assert_eq!(
            (b.input_multiplier.value, b.output_multiplier.value),
            (0.5, 0.5)
        );
        assert!(!b.caching.value);
        // Priority: 3.5e-06 / 2e-06 = 1.75, reads 8.75e-07 / 5e-07 = 1.75 too: caching stacks.
        let p = &g.service_tier["priority"];
        assert_eq!(
            (p.input_multiplier.value, p.output_multiplier.value),
            (1.75, 1.75)
        );
        assert!(p.caching.value);
        // Flex with an input price only has no place.
        assert!(!g.service_tier.contains_key("flex"));
        assert_eq!(
            imp.unmapped
                ["input_cost_per_token_flex (a service tier needs both its input and its output price)"],
            1
        );
        let p = c.model("plain").unwrap();
        assert!(p.cache.explicit.is_none() && p.cache.automatic.is_none());
        assert_eq!(p.default_strategy, "none");
        assert_eq!(imp.unmapped["output_cost_per_reasoning_token"], 1);
        assert_eq!(imp.ignored["supports_prompt_caching"], 1);
    }

    /// LiteLLM files Azure OpenAI's cached-input price of gpt-4o-2024-11-20 under the write field
    /// (verbatim entry); OpenAI models cache automatically with no write fee. Claude on Azure AI
    /// keeps explicit caching.
    #[test]
    fn azure_openai_caches_automatically() {
        let db = r#"{
          "azure/eu/gpt-4o-2024-11-20": {"deprecation_date": "2026-03-01", "cache_creation_input_token_cost": 1.38e-06, "input_cost_per_token": 2.75e-06, "litellm_provider": "azure", "max_input_tokens": 128000, "max_output_tokens": 16384, "max_tokens": 16384, "mode": "chat", "output_cost_per_token": 1.1e-05, "supports_function_calling": true},
          "azure_ai/claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05, "cache_creation_input_token_cost": 3.75e-06, "cache_read_input_token_cost": 3e-07, "litellm_provider": "azure_ai", "mode": "chat"}
        }"#;
        let imp = import(db, "db.json", &[]).unwrap();
        let c = Catalog::from_toml_str(&imp.toml, "t").unwrap();
        let m = c.model("azure/eu/gpt-4o-2024-11-20").unwrap();
        assert!(m.cache.explicit.is_none());
        assert_eq!(m.default_strategy, "automatic");
        let a = m.cache.automatic.as_ref().unwrap();
        // 1.38e-06 / 2.75e-06, Azure's $1.375 cached input rounded by LiteLLM.
        assert!((a.read_multiplier.value - 1.38 / 2.75).abs() < 1e-12);
        assert_eq!(a.tiers["default"].write_multiplier.value, 1.0);
        assert_eq!(imp.corrections.len(), 1);
        assert_eq!(imp.corrections[0].0, "azure/eu/gpt-4o-2024-11-20");
        assert!(m.notes.as_deref().unwrap().contains("cached-input price"));
        let cl = c.model("azure_ai/claude-sonnet-4-5").unwrap();
        assert_eq!(
            cl.cache.explicit.as_ref().unwrap().tiers["5m"]
                .write_multiplier
                .value,
            1.25
        );
    }

    /// One bad row never fails the import: each is skipped with its key and the LiteLLM field.
    #[test]
    fn a_bad_row_is_skipped_with_its_key_and_field() {
        let db = r#"{
          "good": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "mode": "chat"},
          "string-price": {"input_cost_per_token": "0.000003", "output_cost_per_token": 1e-05},
          "negative": {"input_cost_per_token": 1e-06, "output_cost_per_token": -2e-06},
          "dear-read": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "cache_read_input_token_cost": 5e-06},
          "half-token": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "cache_read_input_token_cost": 1e-07, "prompt_cache_min_tokens": 1024.5},
          "too-dear": {"input_cost_per_token": 5.0, "output_cost_per_token": 2e-06},
          "wild-tier": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "input_cost_per_token_batches": 1e-03, "output_cost_per_token_batches": 1e-06},
          "bad-preamble": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "tool_use_system_prompt_tokens": -3},
          "bad-mode": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "mode": 7},
          "bad-long": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "input_cost_per_token_above_128k_tokens": true},
          "not-an-entry": 42
        }"#;
        let imp = import(db, "db.json", &[]).unwrap();
        assert_eq!(imp.imported, ["good"]);
        assert_eq!(imp.bad, 10);
        let why = |k: &str| {
            imp.skipped
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, w)| w.clone())
                .unwrap_or_else(|| panic!("{k} not skipped: {:?}", imp.skipped))
        };
        for (key, field, problem) in [
            (
                "string-price",
                "input_cost_per_token",
                "found the string \"0.000003\"",
            ),
            ("negative", "output_cost_per_token", "is negative"),
            (
                "dear-read",
                "cache_read_input_token_cost",
                "cannot cost more than uncached input",
            ),
            (
                "half-token",
                "prompt_cache_min_tokens",
                "whole number of tokens",
            ),
            ("too-dear", "input_cost_per_token", "above pcsim's limit"),
            (
                "wild-tier",
                "input_cost_per_token_batches",
                "1000.0 is outside pcsim's range",
            ),
            ("bad-preamble", "tool_use_system_prompt_tokens", "found -3"),
            ("bad-mode", "mode", "expected a string, found 7"),
            (
                "bad-long",
                "input_cost_per_token_above_128k_tokens",
                "found `true`",
            ),
        ] {
            let w = why(key);
            assert!(
                w.contains(&format!("field `{field}`")) && w.contains(problem),
                "{key}: {w}"
            );
        }
        assert!(why("not-an-entry").contains("not an object but 42"));
        // The good row is a catalog that loads.
        let c = Catalog::from_toml_str(&imp.toml, "t").unwrap();
        assert_eq!(c.model("good").unwrap().input_usd_per_mtok.value, 1.0);
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
        use crate::input::litellm_entry::long_context;
        assert_eq!(
            long_context("input_cost_per_token_above_200k_tokens"),
            Some(("input_cost_per_token", 200_000))
        );
        assert_eq!(
            long_context("cache_creation_input_token_cost_above_1hr_above_200k_tokens"),
            Some(("cache_creation_input_token_cost_above_1hr", 200_000))
        );
        assert_eq!(
            long_context("cache_creation_input_token_cost_above_1hr"),
            None
        );
        assert_eq!(
            long_context("input_cost_per_token_above_200k_tokens_priority"),
            None
        );
    }

    /// DashScope's Qwen entries are priced only by prompt-length ranges (`tiered_pricing`, as in
    /// LiteLLM's `dashscope/qwen-flash`): two ranges read as base prices and one long-context
    /// tier; three are left out saying why; a broken range is a bad row naming the field.
    #[test]
    fn tiered_pricing_reads_as_base_and_long_context_prices() {
        let db = r#"{
          "two": {"litellm_provider": "dashscope", "mode": "chat", "max_input_tokens": 997952,
            "tiered_pricing": [
              {"input_cost_per_token": 5e-08, "output_cost_per_token": 4e-07,
               "cache_read_input_token_cost": 1e-08, "range": [0, 256000.0]},
              {"input_cost_per_token": 2.5e-07, "output_cost_per_token": 2e-06,
               "cache_read_input_token_cost": 5e-08, "output_cost_per_reasoning_token": 3e-06,
               "range": [256000.0, 1000000.0]}]},
          "three": {"litellm_provider": "dashscope", "mode": "chat", "tiered_pricing": [
              {"input_cost_per_token": 1.2e-06, "output_cost_per_token": 6e-06, "range": [0, 32000.0]},
              {"input_cost_per_token": 2.4e-06, "output_cost_per_token": 1.2e-05, "range": [32000.0, 128000.0]},
              {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05, "range": [128000.0, 252000.0]}]},
          "gap": {"litellm_provider": "dashscope", "mode": "chat", "tiered_pricing": [
              {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "range": [0, 1000.0]},
              {"input_cost_per_token": 2e-06, "output_cost_per_token": 4e-06, "range": [2000.0, 9000.0]}]}
        }"#;
        let imp = import(db, "db.json", &[]).unwrap();
        assert_eq!(imp.imported, ["two"]);
        let skipped: std::collections::HashMap<_, _> = imp
            .skipped
            .iter()
            .map(|(k, w)| (k.as_str(), w.as_str()))
            .collect();
        assert!(
            skipped["three"].contains("3 prompt-length ranges"),
            "{skipped:?}"
        );
        assert!(
            skipped["gap"].contains("field `tiered_pricing[1].range`"),
            "{skipped:?}"
        );
        assert_eq!(imp.bad, 1);
        let c = Catalog::from_toml_str(&imp.toml, "t").unwrap();
        let m = c.model("two").unwrap();
        // $0.05 / $0.40 up to 256,000 prompt tokens; $0.25 / $2.00 above; reads 0.2x in both.
        assert_eq!(
            (m.input_usd_per_mtok.value, m.output_usd_per_mtok.value),
            (0.05, 0.4)
        );
        let lc = m.long_context.as_ref().unwrap();
        assert_eq!(
            (
                lc.above_tokens.value,
                lc.input_usd_per_mtok.value,
                lc.output_usd_per_mtok.value
            ),
            (256_000, 0.25, 2.0)
        );
        assert_eq!(lc.read_multiplier.as_ref().unwrap().value, 0.2);
        let auto = m.cache.automatic.as_ref().or(m.cache.explicit.as_ref());
        assert_eq!(auto.unwrap().read_multiplier.value, 0.2);
        // What was done is said; the range's field with no place is reported by its path.
        assert!(imp
            .corrections
            .iter()
            .any(|(k, c)| k == "two" && c.contains("up to 256000 prompt tokens")));
        assert_eq!(
            imp.unmapped["tiered_pricing[1].output_cost_per_reasoning_token"],
            1
        );
        assert!(!imp.unmapped.contains_key("tiered_pricing"));
        // `models --check-against` compares the catalog with the same reading.
        let r = crate::input::litellm_check::check_against(&c, db, "db.json").unwrap();
        assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
        assert!(r.agreeing >= 7, "{}", r.agreeing);
    }
}
