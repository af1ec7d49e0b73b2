//! One entry of LiteLLM's price file to one catalog `[[model]]`: every cost field that has a place
//! in the catalog is mapped (prices, cache read and 5-minute / 1-hour writes, the minimum cacheable
//! prompt, long-context tiers with their cache prices, Batch / Flex / priority service tiers, the
//! regional multiplier, the tool-use system prompt), and every field that has none is named. A
//! value that cannot be a price (a string, a negative number, a read dearer than the input) makes
//! the whole entry a [`Bad`] that names the field, so one broken row never fails an import.
//!
//! One concept: one LiteLLM price entry mapped, field by field, to one catalog model.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::model::catalog::Family;
use crate::model::prices::MAX_USD_PER_MTOK;

/// Why an entry was not imported: the LiteLLM field and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bad {
    /// The LiteLLM field (or `(entry)` for the entry as a whole).
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field == "(entry)" {
            write!(f, "the entry {}", self.problem)
        } else {
            write!(f, "field `{}`: {}", self.field, self.problem)
        }
    }
}

/// Why an entry is left out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Skip {
    /// Not something pcsim simulates (an embedding model, a free local model): not an error.
    NotApplicable(String),
    /// A value that cannot be a price.
    Bad(Bad),
}

impl From<Bad> for Skip {
    fn from(b: Bad) -> Self {
        Skip::Bad(b)
    }
}

/// One imported entry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Entry {
    /// The `[[model]]` table.
    pub toml: String,
    /// The rendering family it names.
    pub family: &'static str,
    /// Fields read into the entry (mapped, or checked to agree with what is mapped).
    pub used: BTreeSet<String>,
    /// Cost fields with no place in the catalog: (field, label for the summary).
    pub unmapped: Vec<(String, String)>,
    /// Fields deliberately not read, with the reason, as summary labels: (field, label).
    pub ignored: Vec<(String, String)>,
    /// Where LiteLLM's data was read otherwise than as filed, and why.
    pub corrections: Vec<String>,
}

/// Providers whose OpenAI models cache automatically with no write fee (OpenAI's prompt-caching
/// guide; Azure OpenAI documents the same automatic caching for its OpenAI deployments,
/// providers.md 2). LiteLLM files some of their cached-input prices under the write field.
const AUTOMATIC_OPENAI: [&str; 3] = ["openai", "azure", "text-completion-openai"];

/// The service tiers and the suffix LiteLLM gives their fields.
const TIERS: [(&str, &str); 3] = [
    ("batch", "batches"),
    ("flex", "flex"),
    ("priority", "priority"),
];

/// Base fields that LiteLLM prices again above a prompt length (`<base>_above_<N>k_tokens`).
const LONG_BASES: [&str; 5] = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
];

/// A long-context field such as `input_cost_per_token_above_200k_tokens`: (base field, threshold
/// in tokens). `cache_creation_input_token_cost_above_1hr` is a TTL tier, not a threshold.
pub(crate) fn long_context(k: &str) -> Option<(&'static str, u64)> {
    let i = k.rfind("_above_")?;
    let n = k[i + "_above_".len()..]
        .strip_suffix("k_tokens")?
        .parse::<u64>()
        .ok()?;
    let base = LONG_BASES.iter().find(|b| **b == &k[..i])?;
    n.checked_mul(1000).map(|t| (*base, t))
}

/// LiteLLM prices some entries (DashScope's Qwen models) only by prompt length, as
/// `tiered_pricing`: a list of ranges `{"range": [from, to], <prices>}`. The catalog holds a base
/// price and one long-context tier, so an entry with no top-level input price and two ranges (the
/// first from 0, the second from where the first ends, a whole number of thousands of tokens)
/// reads as the flat fields the rest of the import knows: the first range's prices as the base
/// ones, the second's as `<field>_above_<N>k_tokens`. A price field of a range the catalog has no
/// place for keeps its place in the report as `tiered_pricing[i].<field>`. Returns the flat entry
/// and a note of what was read, or `None` when there is nothing to flatten (no `tiered_pricing`,
/// or a top-level input price beside it: `tiered_pricing` is then a field with no place).
/// Three or more ranges cannot be held by one tier: the entry is left out, saying so, rather than
/// imported with prompts past the second range mispriced.
pub(crate) fn flatten_tiered(entry: &Value) -> Result<Option<(Value, String)>, Skip> {
    let Some(e) = entry.as_object() else {
        return Ok(None);
    };
    let Some(tiers) = e.get("tiered_pricing") else {
        return Ok(None);
    };
    if e.contains_key("input_cost_per_token") {
        return Ok(None);
    }
    let field = "tiered_pricing";
    let Value::Array(ranges) = tiers else {
        return Err(bad(
            field,
            format!("expected a list of ranges, found {}", describe(tiers)),
        )
        .into());
    };
    if ranges.len() > 2 {
        return Err(Skip::NotApplicable(format!(
            "tiered_pricing has {} prompt-length ranges; the catalog holds a base price and one long-context tier, so prompts past the second range would be mispriced",
            ranges.len()
        )));
    }
    let mut bounds = Vec::new();
    for (i, r) in ranges.iter().enumerate() {
        let at = format!("{field}[{i}].range");
        let b = r
            .get("range")
            .and_then(Value::as_array)
            .filter(|b| b.len() == 2)
            .and_then(|b| Some((b[0].as_f64()?, b[1].as_f64()?)))
            .filter(|(from, to)| from.is_finite() && to.is_finite() && *from >= 0.0 && to > from)
            .ok_or_else(|| bad(&at, "expected [from, to] token counts with from < to"))?;
        if !r.is_object() {
            return Err(bad(&format!("{field}[{i}]"), "expected an object").into());
        }
        bounds.push(b);
    }
    let mut flat: Map<String, Value> = e
        .iter()
        .filter(|(k, _)| k.as_str() != field)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let copy = |flat: &mut Map<String, Value>, i: usize, suffix: &str| {
        for (k, v) in ranges[i].as_object().into_iter().flatten() {
            if k == "range" {
                continue;
            }
            let name = if LONG_BASES.contains(&k.as_str()) {
                format!("{k}{suffix}")
            } else {
                format!("{field}[{i}].{k}")
            };
            flat.insert(name, v.clone());
        }
    };
    if bounds[0].0 != 0.0 {
        return Err(bad(
            &format!("{field}[0].range"),
            "the first range must start at 0",
        )
        .into());
    }
    copy(&mut flat, 0, "");
    let note = match bounds.get(1) {
        None => "read its one tiered_pricing range as the base prices".to_string(),
        Some(&(from, _)) => {
            if from != bounds[0].1 || from % 1000.0 != 0.0 {
                return Err(bad(
                    &format!("{field}[1].range"),
                    "the second range must start where the first ends, at a whole number of thousands of tokens",
                )
                .into());
            }
            let k = (from / 1000.0) as u64;
            copy(&mut flat, 1, &format!("_above_{k}k_tokens"));
            format!(
                "read tiered_pricing as the base prices up to {} prompt tokens and a long-context tier above (the *_above_{k}k_tokens prices)",
                from as u64
            )
        }
    };
    Ok(Some((Value::Object(flat), note)))
}

pub(crate) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A float as TOML, rounded to 12 significant digits so 3.75e-6 / 3e-6 prints as 1.25.
pub(crate) fn f(x: f64) -> String {
    let rounded: f64 = format!("{x:.12e}").parse().unwrap_or(x);
    format!("{rounded:?}")
}

/// Equal within 0.05% (LiteLLM rounds some derived prices, e.g. 1.38e-06 for $1.375).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 5e-4 * a.abs().max(b.abs()).max(1e-15)
}

fn describe(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("the string {}", Value::String(s.clone())),
        Value::Bool(b) => format!("`{b}`"),
        Value::Null => "null".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
        Value::Number(n) => n.to_string(),
    };
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

fn bad(field: &str, problem: impl Into<String>) -> Bad {
    Bad {
        field: field.to_string(),
        problem: problem.into(),
    }
}

/// Lines of one `[[model]]` table, each number with its source.
struct Out<'a> {
    text: String,
    checked: &'a str,
}

impl Out<'_> {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }
    fn num(&mut self, name: &str, value: &str, source: &str) {
        let _ = writeln!(
            self.text,
            "{name} = {{ value = {value}, source = {} }}",
            q(source)
        );
    }
    /// A price: a sourced number with the day it was read (`checked`), the day of the import.
    fn price(&mut self, name: &str, value: f64, source: &str) {
        let _ = writeln!(
            self.text,
            "{name} = {{ value = {}, source = {}, checked = {} }}",
            f(value),
            q(source),
            q(self.checked)
        );
    }
    fn flag(&mut self, name: &str, value: bool, source: &str) {
        let _ = writeln!(
            self.text,
            "{name} = {{ value = {value}, source = {} }}",
            q(source)
        );
    }
}

/// The entry being read: its key and fields, and which fields the mapping has used.
struct Row<'a> {
    key: &'a str,
    e: &'a Map<String, Value>,
    entry: Entry,
}

impl Row<'_> {
    /// A cost in USD per token: absent (or null) is `None`; anything but a number from 0 to
    /// pcsim's price limit is bad.
    fn cost(&mut self, field: &str) -> Result<Option<f64>, Bad> {
        let Some(v) = self.e.get(field).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let x = v.as_f64().ok_or_else(|| {
            bad(
                field,
                format!("expected a price per token, found {}", describe(v)),
            )
        })?;
        if x < 0.0 {
            return Err(bad(field, format!("{x} is negative")));
        }
        if x * 1e6 > MAX_USD_PER_MTOK {
            return Err(bad(
                field,
                format!(
                    "{x} per token is above pcsim's limit of ${} per million tokens",
                    MAX_USD_PER_MTOK
                ),
            ));
        }
        self.entry.used.insert(field.to_string());
        Ok(Some(x))
    }

    /// A whole number of tokens from 0 to `max`.
    fn tokens(&mut self, field: &str, max: f64) -> Result<Option<u64>, Bad> {
        let Some(v) = self.e.get(field).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        match v.as_f64() {
            Some(x) if x >= 0.0 && x <= max && x.fract() == 0.0 => {
                self.entry.used.insert(field.to_string());
                Ok(Some(x as u64))
            }
            _ => Err(bad(
                field,
                format!(
                    "expected a whole number of tokens from 0 to {max}, found {}",
                    describe(v)
                ),
            )),
        }
    }

    /// A multiplier above 0 and at most 100 (the catalog's range for tier and regional factors).
    fn factor(&self, field: &str, x: f64, what: &str) -> Result<f64, Bad> {
        if x > 0.0 && x <= 100.0 {
            Ok(x)
        } else {
            Err(bad(
                field,
                format!(
                    "{what} {} is outside pcsim's range (above 0, at most 100)",
                    f(x)
                ),
            ))
        }
    }

    /// A field that was read but has no place in the catalog.
    fn no_place(&mut self, field: &str, why: &str) {
        self.entry.used.remove(field);
        self.entry
            .unmapped
            .push((field.to_string(), format!("{field} ({why})")));
    }

    fn ignore(&mut self, field: &str, why: &str) {
        self.entry.used.insert(field.to_string());
        self.entry
            .ignored
            .push((field.to_string(), format!("{field} ({why})")));
    }

    fn src(&self, field: &str) -> String {
        format!(
            "documented: LiteLLM model_prices_and_context_window.json, key {}, {field}",
            self.key
        )
    }

    fn ratio(&self, num: &str, n: f64, den: &str, d: f64) -> String {
        format!(
            "derived: LiteLLM model_prices_and_context_window.json, key {}: {num} {n:e} / {den} {d:e}",
            self.key
        )
    }
}

/// The pcsim rendering family for a LiteLLM provider / key.
pub(crate) fn family_for(provider: &str, key: &str) -> &'static str {
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

/// A long-context tier as read: threshold and the prices above it.
struct Long {
    above: u64,
    input: f64,
    output: Option<f64>,
    read: Option<f64>,
    write5: Option<f64>,
    write1h: Option<f64>,
}

/// Maps one entry. `families` are the built-in families (for the tool-use system prompt's rates).
// Over 120 lines: one LiteLLM entry field by field (mode, prices, cache reads and writes, limits,
// long context, regions), each field recorded as used on the same row.
pub(crate) fn map_entry(
    key: &str,
    entry: &Value,
    families: &[Family],
    checked: &str,
) -> Result<Entry, Skip> {
    let e = entry.as_object().ok_or_else(|| {
        bad(
            "(entry)",
            format!("is not an object but {}", describe(entry)),
        )
    })?;
    let mut row = Row {
        key,
        e,
        entry: Entry::default(),
    };
    let mode = match e.get("mode") {
        None => "chat",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(bad("mode", format!("expected a string, found {}", describe(v))).into())
        }
    };
    if !["chat", "responses", "completion"].contains(&mode) {
        return Err(Skip::NotApplicable(format!(
            "mode `{mode}` is not a chat model"
        )));
    }
    let input = match row.cost("input_cost_per_token")? {
        Some(x) if x > 0.0 => x,
        _ => {
            return Err(Skip::NotApplicable(
                "no positive input_cost_per_token (pcsim needs a base input price)".into(),
            ))
        }
    };
    let Some(output) = row.cost("output_cost_per_token")? else {
        return Err(Skip::NotApplicable("no output_cost_per_token".into()));
    };
    let provider = match e.get("litellm_provider") {
        None => "unknown",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(bad(
                "litellm_provider",
                format!("expected a string, found {}", describe(v)),
            )
            .into())
        }
    };
    row.entry.used.insert("litellm_provider".into());
    let family = family_for(provider, key);
    row.entry.family = family;

    // Cache read: `cache_read_input_token_cost`, or DeepSeek's `input_cost_per_token_cache_hit`.
    let mut read = row
        .cost("cache_read_input_token_cost")?
        .map(|r| (r, "cache_read_input_token_cost"));
    if let Some(hit) = row.cost("input_cost_per_token_cache_hit")? {
        match read {
            None => read = Some((hit, "input_cost_per_token_cache_hit")),
            Some((r, _)) if same(r, hit) => {}
            Some(_) => row.no_place(
                "input_cost_per_token_cache_hit",
                "differs from cache_read_input_token_cost",
            ),
        }
    }
    // Writes: a write tier costs at least the input price at every provider that prices writes; a
    // write field below it is no surcharge (LiteLLM writes 0.0 for DeepSeek), or, at OpenAI's
    // automatic caching, the cached-input price filed under the write field.
    let mut writes = Vec::new();
    for (field, tier) in [
        ("cache_creation_input_token_cost", "5m"),
        ("cache_creation_input_token_cost_above_1hr", "1h"),
        ("cache_creation_input_token_cost_above_12hr", "12h"),
    ] {
        let Some(w) = row.cost(field)? else { continue };
        if w >= input {
            writes.push((tier, field, w));
        } else if w > 0.0
            && read.is_none()
            && tier == "5m"
            && AUTOMATIC_OPENAI.contains(&provider.to_ascii_lowercase().as_str())
        {
            read = Some((w, field));
            row.entry.corrections.push(format!(
                "{field} {w:e} is below the input price and there is no cache_read_input_token_cost: \
                 {provider} caches automatically with no write fee, so it is read as the cached-input price"
            ));
        } else {
            row.ignore(field, "zero or below the input price: no write surcharge");
        }
    }
    if let Some((r, field)) = read {
        if r > input {
            return Err(bad(
                field,
                format!("{r:e} is above input_cost_per_token {input:e}: a cache read cannot cost more than uncached input"),
            )
            .into());
        }
    }
    let explicit = read.is_some() && !writes.is_empty();
    let min_tokens = row.tokens("prompt_cache_min_tokens", 1e9)?;
    let preamble = row.tokens("tool_use_system_prompt_tokens", 1e6)?;
    let long = read_long_context(&mut row, input, read.map(|r| r.0), &writes)?;
    let regional = read_regional(&mut row)?;

    let mut o = Out {
        text: String::new(),
        checked,
    };
    o.line("[[model]]");
    o.line(&format!("id = {}", q(key)));
    o.line(&format!("name = {}", q(key)));
    o.line(&format!("provider = {}", q(provider)));
    o.line(&format!("family = {}", q(family)));
    o.line(&format!("litellm = {}", q(key)));
    // The context window is not a price, so a value the catalog cannot hold is left out, not refused.
    if let Some(w) = row
        .e
        .get("max_input_tokens")
        .and_then(Value::as_f64)
        .filter(|w| *w >= 1.0 && *w <= 1e9 && w.fract() == 0.0)
    {
        o.num(
            "context_window",
            &format!("{}", w as u64),
            &row.src("max_input_tokens"),
        );
    }
    o.price(
        "input_usd_per_mtok",
        input * 1e6,
        &row.src("input_cost_per_token"),
    );
    o.price(
        "output_usd_per_mtok",
        output * 1e6,
        &row.src("output_cost_per_token"),
    );
    let strategy = match (explicit, read.is_some()) {
        (true, _) => "explicit:tools+system+last",
        (false, true) => "automatic",
        _ => "none",
    };
    o.line(&format!("default_strategy = {}", q(strategy)));
    if !row.entry.corrections.is_empty() {
        o.line(&format!(
            "notes = {}",
            q(&format!(
                "Imported from LiteLLM with a correction: {}",
                row.entry.corrections.join("; ")
            ))
        ));
    }
    if let Some((x, field)) = regional {
        o.price("regional_multiplier", x, &row.src(field));
    }
    if let Some(l) = &long {
        write_long_context(&mut o, &row, l, output);
    }
    write_service_tiers(&mut o, &mut row, input, output, read.map(|r| r.0), &writes)?;
    write_off_peak(&mut o, &mut row, input, output, read.map(|r| r.0))?;
    if let Some(p) = preamble {
        // The documented tool system prompt replaces the family's preamble; template and rates stay.
        if let Some(fam) = families.iter().find(|x| x.id == family) {
            o.line("[model.tool_rendering]");
            o.num(
                "preamble_tokens",
                &p.to_string(),
                &row.src("tool_use_system_prompt_tokens"),
            );
            for line in fam.tool_rendering.overlay_lines() {
                o.line(&line);
            }
        }
    }
    match read {
        Some((r, read_field)) => write_cache(
            &mut o,
            &row,
            input,
            (r, read_field),
            &writes,
            min_tokens,
            family,
        ),
        None if min_tokens.is_some() => row.no_place("prompt_cache_min_tokens", "no cache prices"),
        None => {}
    }
    o.line("");
    let mut entry = row.entry;
    entry.toml = o.text;
    Ok(entry)
}

fn read_long_context(
    row: &mut Row<'_>,
    input: f64,
    read: Option<f64>,
    writes: &[(&str, &str, f64)],
) -> Result<Option<Long>, Bad> {
    let fields: Vec<(String, &'static str, u64)> = row
        .e
        .keys()
        .filter_map(|k| long_context(k).map(|(b, t)| (k.clone(), b, t)))
        .collect();
    // The catalog holds one tier: the lowest threshold that prices the input.
    let Some(above) = fields
        .iter()
        .filter(|(_, b, _)| *b == "input_cost_per_token")
        .map(|(_, _, t)| *t)
        .min()
    else {
        for (k, _, _) in &fields {
            row.no_place(k, "a long-context price without a long-context input price");
        }
        return Ok(None);
    };
    let field = |base: &str| format!("{base}_above_{}k_tokens", above / 1000);
    for (k, _, t) in &fields {
        if *t != above {
            row.no_place(k, "a second long-context threshold");
        }
    }
    let in_f = field("input_cost_per_token");
    let Some(long_input) = row.cost(&in_f)?.filter(|x| *x > 0.0) else {
        return Err(bad(&in_f, "a long-context input price must be above zero"));
    };
    let mut l = Long {
        above,
        input: long_input,
        output: row.cost(&field("output_cost_per_token"))?,
        read: None,
        write5: None,
        write1h: None,
    };
    let read_f = field("cache_read_input_token_cost");
    if let Some(r) = row.cost(&read_f)? {
        if read.is_none() {
            row.no_place(&read_f, "no base cache price");
        } else if r > long_input {
            return Err(bad(&read_f, "above the long-context input price: a cache read cannot cost more than uncached input"));
        } else {
            l.read = Some(r);
        }
    }
    // Above the threshold the catalog bills writes at the model's write multipliers of the long
    // input price; a LiteLLM write price that agrees is mapped, one that does not has no place.
    for (base, tier) in [
        ("cache_creation_input_token_cost", "5m"),
        ("cache_creation_input_token_cost_above_1hr", "1h"),
    ] {
        let wf = field(base);
        let Some(w) = row.cost(&wf)? else { continue };
        let base_w = writes
            .iter()
            .find(|(t, _, _)| *t == tier)
            .map(|(_, _, w)| *w);
        match base_w {
            Some(bw) if same(w / long_input, bw / input) => {
                if tier == "5m" {
                    l.write5 = Some(w);
                } else {
                    l.write1h = Some(w);
                }
            }
            _ => row.no_place(
                &wf,
                "not the model's write multiplier of the long-context input price",
            ),
        }
    }
    Ok(Some(l))
}

fn write_long_context(o: &mut Out<'_>, row: &Row<'_>, l: &Long, output: f64) {
    let k = l.above / 1000;
    let in_f = format!("input_cost_per_token_above_{k}k_tokens");
    o.line("[model.long_context]");
    o.num(
        "above_tokens",
        &l.above.to_string(),
        &format!("documented: LiteLLM model_prices_and_context_window.json, key {}, the *_above_{k}k_tokens prices", row.key),
    );
    let mut input_src = row.src(&in_f);
    for (w, name) in [
        (l.write5, "cache_creation_input_token_cost"),
        (l.write1h, "cache_creation_input_token_cost_above_1hr"),
    ] {
        if let Some(w) = w {
            let _ = write!(
                input_src,
                "; {name}_above_{k}k_tokens {w:e} is the model's write multiplier of it"
            );
        }
    }
    o.price("input_usd_per_mtok", l.input * 1e6, &input_src);
    match l.output {
        Some(x) => o.price("output_usd_per_mtok", x * 1e6, &row.src(&format!("output_cost_per_token_above_{k}k_tokens"))),
        None => o.price(
            "output_usd_per_mtok",
            output * 1e6,
            &format!("assumed: LiteLLM key {} lists no output_cost_per_token_above_{k}k_tokens; LiteLLM bills the output of long prompts at output_cost_per_token", row.key),
        ),
    }
    if let Some(r) = l.read {
        let rf = format!("cache_read_input_token_cost_above_{k}k_tokens");
        o.price(
            "read_multiplier",
            r / l.input,
            &row.ratio(&rf, r, &in_f, l.input),
        );
    }
}

fn read_regional(row: &mut Row<'_>) -> Result<Option<(f64, &'static str)>, Bad> {
    let mut found: Vec<(f64, &'static str)> = Vec::new();
    for field in [
        "regional_processing_uplift_multiplier_eu",
        "regional_processing_uplift_multiplier_us",
    ] {
        if let Some(v) = row.e.get(field) {
            let x = v.as_f64().ok_or_else(|| {
                bad(
                    field,
                    format!("expected a multiplier, found {}", describe(v)),
                )
            })?;
            found.push((row.factor(field, x, "multiplier")?, field));
            row.entry.used.insert(field.into());
        }
    }
    // Anthropic's entries give the US data-residency factor as `provider_specific_entry.us`.
    if let Some(Value::Object(p)) = row.e.get("provider_specific_entry") {
        row.entry.used.insert("provider_specific_entry".into());
        for (k, v) in p {
            match (k.as_str(), v.as_f64()) {
                ("us", Some(x)) if found.is_empty() => {
                    found.push((
                        row.factor("provider_specific_entry.us", x, "multiplier")?,
                        "provider_specific_entry.us",
                    ));
                }
                _ => {
                    let label = format!("provider_specific_entry.{k}");
                    row.entry.unmapped.push((label.clone(), label));
                }
            }
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        [a, b] if same(a.0, b.0) => Ok(Some(*a)),
        _ => {
            for (_, field) in found {
                row.no_place(
                    field,
                    "the EU and US multipliers differ; the catalog has one",
                );
            }
            Ok(None)
        }
    }
}

/// LiteLLM's `off_peak_pricing` (DeepSeek: `{ input_cost_per_token, output_cost_per_token,
/// cache_read_input_token_cost, windows }`) as the `off-peak` service tier: its multipliers of the
/// list (peak) prices. The hours (`windows`) are not read: `--service-tier off-peak` prices every
/// call at the off-peak rates (docs/prices.md, "Time of day").
fn write_off_peak(
    o: &mut Out<'_>,
    row: &mut Row<'_>,
    input: f64,
    output: f64,
    read: Option<f64>,
) -> Result<(), Bad> {
    const FIELD: &str = "off_peak_pricing";
    let Some(v) = row.e.get(FIELD).filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let price = |k: &str| -> Result<Option<f64>, Bad> {
        match v.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => match x.as_f64() {
                Some(p) if p >= 0.0 && p * 1e6 <= MAX_USD_PER_MTOK => Ok(Some(p)),
                _ => Err(bad(
                    &format!("{FIELD}.{k}"),
                    format!("expected a price per token, found {}", describe(x)),
                )),
            },
        }
    };
    let (Some(oi), Some(oo)) = (
        price("input_cost_per_token")?,
        price("output_cost_per_token")?,
    ) else {
        row.no_place(
            FIELD,
            "off-peak prices need both an input and an output price",
        );
        return Ok(());
    };
    row.entry.used.insert(FIELD.to_string());
    let m_in = row.factor(FIELD, oi / input, "the off-peak input multiplier")?;
    let m_out = if output > 0.0 {
        row.factor(FIELD, oo / output, "the off-peak output multiplier")?
    } else {
        1.0
    };
    let src = |what: &str, p: f64, base: f64| {
        format!(
            "documented: LiteLLM model_prices_and_context_window.json, key {}, {FIELD}.{what} {p:e} / {base:e} (its hours, `windows`, not modelled: every call off-peak)",
            row.key
        )
    };
    o.line("[model.service_tier.off-peak]");
    o.price(
        "input_multiplier",
        m_in,
        &src("input_cost_per_token", oi, input),
    );
    o.price(
        "output_multiplier",
        m_out,
        &src("output_cost_per_token", oo, output),
    );
    let off_read = price("cache_read_input_token_cost")?;
    match (read, off_read) {
        (Some(r), Some(t)) if r > 0.0 && same(t / r, m_in) => {
            o.flag("caching", true, &src("cache_read_input_token_cost", t, r))
        }
        (Some(_), Some(_)) => {
            row.no_place(
                &format!("{FIELD}.cache_read_input_token_cost"),
                "not the off-peak input multiplier of the read price",
            );
            o.flag(
                "caching",
                true,
                "assumed: the off-peak input multiplier applies to cache reads as well",
            );
        }
        _ => o.flag(
            "caching",
            read.is_some(),
            "assumed: LiteLLM lists no off-peak cache price; caching as at peak",
        ),
    }
    Ok(())
}

fn write_service_tiers(
    o: &mut Out<'_>,
    row: &mut Row<'_>,
    input: f64,
    output: f64,
    read: Option<f64>,
    writes: &[(&str, &str, f64)],
) -> Result<(), Bad> {
    for (tier, suffix) in TIERS {
        let (in_f, out_f) = (
            format!("input_cost_per_token_{suffix}"),
            format!("output_cost_per_token_{suffix}"),
        );
        let (read_f, write_f) = (
            format!("cache_read_input_token_cost_{suffix}"),
            format!("cache_creation_input_token_cost_{suffix}"),
        );
        let (ti, to) = (row.cost(&in_f)?, row.cost(&out_f)?);
        let (tr, tw) = (row.cost(&read_f)?, row.cost(&write_f)?);
        let (Some(ti), Some(to)) = (ti, to) else {
            for fl in [&in_f, &out_f, &read_f, &write_f] {
                if row.e.contains_key(fl.as_str()) {
                    row.no_place(
                        fl,
                        "a service tier needs both its input and its output price",
                    );
                }
            }
            continue;
        };
        let m_in = row.factor(&in_f, ti / input, "the tier's input multiplier")?;
        let m_out = if output > 0.0 {
            row.factor(&out_f, to / output, "the tier's output multiplier")?
        } else if to == 0.0 {
            1.0
        } else {
            return Err(bad(
                &out_f,
                "a tier price on an output that is free at the standard tier",
            ));
        };
        o.line(&format!("[model.service_tier.{tier}]"));
        o.price(
            "input_multiplier",
            m_in,
            &row.ratio(&in_f, ti, "input_cost_per_token", input),
        );
        let out_src = if output > 0.0 {
            row.ratio(&out_f, to, "output_cost_per_token", output)
        } else {
            row.src(&out_f)
        };
        o.price("output_multiplier", m_out, &out_src);
        // The catalog applies the tier's input multiplier to cache reads and writes alike.
        let caching = match (read, tr) {
            (None, _) => {
                o.flag(
                    "caching",
                    false,
                    &format!("assumed: LiteLLM key {} lists no cache prices", row.key),
                );
                false
            }
            (Some(r), Some(t)) => {
                if !same(t / r, m_in) {
                    row.no_place(&read_f, "not the tier's input multiplier of the read price");
                }
                o.flag("caching", true, &row.src(&read_f));
                true
            }
            (Some(_), None) => {
                o.flag(
                    "caching",
                    false,
                    &format!("assumed: LiteLLM key {} lists no {read_f}; no cache discount taken in this tier", row.key),
                );
                false
            }
        };
        if let Some(t) = tw {
            let base = writes
                .iter()
                .find(|(n, _, _)| *n == "5m")
                .map(|(_, _, w)| *w);
            match base {
                Some(bw) if caching && same(t / bw, m_in) => {}
                _ => row.no_place(
                    &write_f,
                    "not the tier's input multiplier of the write price",
                ),
            }
        }
    }
    Ok(())
}

fn write_cache(
    o: &mut Out<'_>,
    row: &Row<'_>,
    input: f64,
    (read, read_field): (f64, &str),
    writes: &[(&str, &str, f64)],
    min_tokens: Option<u64>,
    family: &str,
) {
    let explicit = !writes.is_empty();
    let at = if explicit {
        "model.cache.explicit"
    } else {
        "model.cache.automatic"
    };
    o.line(&format!("[{at}]"));
    match min_tokens {
        Some(n) => o.num(
            "min_tokens",
            &n.to_string(),
            &row.src("prompt_cache_min_tokens"),
        ),
        None => {
            let min = if family == "gemini" { 2048 } else { 1024 };
            o.num(
                "min_tokens",
                &min.to_string(),
                &format!("assumed: LiteLLM key {} has no prompt_cache_min_tokens; {min} is the usual documented minimum of the provider family (providers.md)", row.key),
            );
        }
    }
    o.num(
        "granularity",
        "1",
        "assumed: LiteLLM gives no block size; exact prefixes",
    );
    o.price(
        "read_multiplier",
        read / input,
        &row.ratio(read_field, read, "input_cost_per_token", input),
    );
    o.flag(
        "refresh_on_hit",
        true,
        "assumed: LiteLLM gives no refresh rule; hits refresh the lifetime at every documented provider",
    );
    if explicit {
        o.num("max_breakpoints", "4", "assumed: LiteLLM gives no breakpoint limit; Anthropic-style explicit caching allows 4 (providers.md 1a)");
        o.num("lookback_blocks", "20", "assumed: LiteLLM gives no lookback; Anthropic-style 20-block lookback (providers.md 1a)");
    }
    o.line(&format!(
        "tool_change = {{ value = \"invalidate\", source = {} }}",
        q("assumed: tool definitions are part of the cached prefix at every documented provider (providers.md)")
    ));
    if !explicit {
        o.line("default_tier = \"default\"");
        o.line(&format!("[{at}.tiers.default]"));
        o.num("ttl_seconds", "300.0", "assumed: LiteLLM gives no TTL; about 5 minutes of idle retention, the shortest documented automatic retention (providers.md 2)");
        o.price(
            "write_multiplier",
            1.0,
            &format!("assumed: LiteLLM lists no cache-write surcharge for key {}: writes billed at the base input rate", row.key),
        );
        return;
    }
    let default = if writes.iter().any(|(t, _, _)| *t == "5m") {
        "5m"
    } else {
        writes.first().map_or("1h", |(t, _, _)| *t)
    };
    o.line(&format!("default_tier = {}", q(default)));
    for (tier, field, w) in writes {
        o.line(&format!("[{at}.tiers.{tier}]"));
        if *tier == "5m" {
            o.num("ttl_seconds", "300.0", "assumed: LiteLLM gives no TTL; cache_creation_input_token_cost is the default 5-minute write (providers.md 1a)");
        } else if *tier == "12h" {
            o.num("ttl_seconds", "43200.0", &format!("documented: LiteLLM model_prices_and_context_window.json, key {}, field name cache_creation_input_token_cost_above_12hr (12-hour writes)", row.key));
        } else {
            o.num("ttl_seconds", "3600.0", &format!("documented: LiteLLM model_prices_and_context_window.json, key {}, field name cache_creation_input_token_cost_above_1hr (1-hour writes)", row.key));
        }
        o.price(
            "write_multiplier",
            w / input,
            &row.ratio(field, *w, "input_cost_per_token", input),
        );
    }
}
