//! What `pcsim models` prints as text: the catalog as a table, and where it disagrees with a price
//! tracker's file (`--check-against`).

use std::path::Path;

use crate::input::litellm_check::CheckReport;
use crate::model::catalog::Catalog;
use crate::report::table::TextTable;

/// `pcsim models`: one row per model (prices, cache modes, the first mode's minimum, multipliers,
/// lifetimes and tool-change rule).
pub(crate) fn catalog_table(catalog: &Catalog) -> String {
    let mut t = TextTable::new(
        &[
            "id",
            "provider",
            "family",
            "in $/Mtok",
            "out $/Mtok",
            "modes",
            "min tok",
            "write x",
            "read x",
            "ttl",
            "tool change",
        ],
        &[
            false, false, false, true, true, false, true, false, true, false, false,
        ],
    );
    for m in &catalog.models {
        let modes: Vec<(&str, &crate::model::catalog::CacheRules)> = [
            ("explicit", &m.cache.explicit),
            ("automatic", &m.cache.automatic),
            ("implicit", &m.cache.implicit),
        ]
        .into_iter()
        .filter_map(|(n, r)| r.as_ref().map(|r| (n, r)))
        .collect();
        let first = modes.first().map(|(_, r)| *r);
        let names: Vec<&str> = modes.iter().map(|(n, _)| *n).collect();
        t.row(vec![
            m.id.clone(),
            m.provider.clone(),
            m.family.clone(),
            format!("{:.3}", m.input_usd_per_mtok.value),
            format!("{:.3}", m.output_usd_per_mtok.value),
            if names.is_empty() {
                "none".into()
            } else {
                names.join("+")
            },
            first.map_or("-".into(), |r| r.min_tokens.value.to_string()),
            first.map_or("-".into(), |r| {
                r.tiers
                    .iter()
                    .map(|(k, v)| format!("{}@{k}", v.write_multiplier.value))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            first.map_or("-".into(), |r| r.read_multiplier.value.to_string()),
            first.map_or("-".into(), |r| {
                r.tiers
                    .values()
                    .map(|v| human_seconds(v.ttl_seconds.value))
                    .collect::<Vec<_>>()
                    .join("/")
            }),
            first.map_or("-".into(), |r| r.tool_change.value.as_str().to_string()),
        ]);
    }
    t.render()
}

/// A lifetime as `5m`, `1h` or `90s`.
fn human_seconds(s: f64) -> String {
    if s >= 3600.0 && (s / 3600.0).fract() == 0.0 {
        format!("{}h", s / 3600.0)
    } else if s >= 60.0 && (s / 60.0).fract() == 0.0 {
        format!("{}m", s / 60.0)
    } else {
        format!("{s}s")
    }
}

/// `pcsim models --check-against FILE` as text: the count of agreeing prices, then each difference.
pub(crate) fn check_text(catalog: &Catalog, file: &Path, rep: &CheckReport) -> String {
    let mut t = TextTable::new(
        &[
            "model",
            "tracker key",
            "field",
            "catalog",
            rep.tracker.as_str(),
        ],
        &[false, false, false, true, true],
    );
    let show = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x}"));
    for d in &rep.disagreements {
        t.row(vec![
            d.model.clone(),
            d.litellm_key.clone(),
            d.field.clone(),
            show(d.catalog),
            show(d.litellm),
        ]);
    }
    let mut text = format!(
        "{} against {}: {} prices agree, {} differ\n",
        catalog.origin,
        file.display(),
        rep.agreeing,
        rep.disagreements.len()
    );
    if !rep.disagreements.is_empty() {
        text.push('\n');
        text.push_str(&t.render());
    }
    for (m, k) in &rep.missing_keys {
        text.push_str(&format!("{m}: the file has no key `{k}`\n"));
    }
    if !rep.not_compared.is_empty() {
        text.push_str(&format!(
            "not compared (no {} key in the catalog): {}\n",
            rep.tracker,
            rep.not_compared.join(", ")
        ));
    }
    text
}
