//! `pcsim models`: list the catalog.

use std::io::Write;

use anyhow::Result;

use super::{Format, TextFormat};
use crate::model::catalog::Catalog;
use crate::report::{self, table::TextTable};

/// Arguments of `models`.
#[derive(Debug, clap::Args)]
pub(crate) struct ModelsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// List where the catalog disagrees with a price tracker's file instead of listing the
    /// catalog: LiteLLM's `model_prices_and_context_window.json`, or genai-prices' data as JSON
    /// (a list of providers; its dated prices are read on the `--on` day, today by default).
    #[arg(long, value_name = "FILE")]
    pub check_against: Option<std::path::PathBuf>,
}

/// Runs `pcsim models`.
pub(crate) fn cmd_models(
    catalog: &Catalog,
    a: ModelsArgs,
    on: Option<crate::base::date::Day>,
    out: &mut dyn Write,
) -> Result<()> {
    let format = Format::from(a.format);
    if let Some(file) = &a.check_against {
        let day = on.unwrap_or_else(crate::base::date::Day::today);
        return check(catalog, file, day, format, out);
    }
    match format {
        Format::Json => {
            let v = serde_json::json!({ "catalog": catalog.origin, "overlaid_on": catalog.overlaid_on, "models": catalog.models });
            out.write_all(report::to_json(&v)?.as_bytes())?;
        }
        Format::Table | Format::Csv => {
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
            out.write_all(t.render().as_bytes())?;
        }
    }
    Ok(())
}

fn human_seconds(s: f64) -> String {
    if s >= 3600.0 && (s / 3600.0).fract() == 0.0 {
        format!("{}h", s / 3600.0)
    } else if s >= 60.0 && (s / 60.0).fract() == 0.0 {
        format!("{}m", s / 60.0)
    } else {
        format!("{s}s")
    }
}

/// `models --check-against FILE`.
fn check(
    catalog: &Catalog,
    file: &std::path::Path,
    day: crate::base::date::Day,
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let text = crate::base::files::read_text(file)?;
    let rep = crate::input::litellm_check::check_against_on(
        catalog,
        &text,
        &file.display().to_string(),
        day,
    )?;
    if format == Format::Json {
        let v = serde_json::json!({ "catalog": catalog.origin, "file": file.display().to_string(), "check": rep });
        out.write_all(report::to_json(&v)?.as_bytes())?;
        return Ok(());
    }
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
    out.write_all(text.as_bytes())?;
    Ok(())
}
