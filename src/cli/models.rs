//! `pcsim models`: list the catalog.

use std::io::Write;

use anyhow::Result;

use super::{Format, TextFormat};
use pcsim::model::catalog::Catalog;
use pcsim::report::{self, table::TextTable};

/// Arguments of `models`.
#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
}

/// Runs `pcsim models`.
pub fn cmd_models(catalog: &Catalog, a: ModelsArgs, out: &mut dyn Write) -> Result<()> {
    let format = Format::from(a.format);
    match format {
        Format::Json => {
            let v = serde_json::json!({ "catalog": catalog.origin, "models": catalog.models });
            out.write_all(report::json::to_json(&v)?.as_bytes())?;
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
                let modes: Vec<(&str, &pcsim::model::catalog::CacheRules)> = [
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
