//! `pcsim models`: list the catalog.

use std::io::Write;

use anyhow::Result;

use super::{Format, TextFormat};
use crate::model::catalog::Catalog;
use crate::report;

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
            out.write_all(report::models::catalog_table(catalog).as_bytes())?;
        }
    }
    Ok(())
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
    out.write_all(report::models::check_text(catalog, file, &rep).as_bytes())?;
    Ok(())
}
