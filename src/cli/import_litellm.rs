//! `pcsim import-litellm FILE`: LiteLLM's price database to pcsim catalog TOML.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::base::files::read_text;
use crate::input::litellm::import;
use crate::report;

/// Arguments of `import-litellm`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when at least one model was imported, even if some entries \
were skipped (each skipped entry is listed with its key, and a value that cannot be a price with its \
LiteLLM field); 2 when the file is not LiteLLM JSON, a --model key is not in it, or no entry could be \
imported."
)]
pub(crate) struct ImportLitellmArgs {
    /// LiteLLM's `model_prices_and_context_window.json` (or a file in its format).
    pub file: PathBuf,
    /// Model key to import (repeatable); default: every chat model with prices.
    #[arg(long = "model", value_name = "KEY")]
    pub models: Vec<String>,
    /// Write the catalog to this file (atomically) instead of standard output. (`--out` is the old
    /// spelling: `--out` names a folder in the other commands.)
    #[arg(long = "catalog-out", alias = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `pcsim import-litellm`. Exit status: 0 when at least one model was imported, even if
/// some entries were skipped (each is listed with its key, and a bad value with its field); 2 when
/// the file is not LiteLLM JSON, a `--model` key is not in it, or no entry could be imported.
pub(crate) fn cmd_import_litellm(a: ImportLitellmArgs, out: &mut dyn Write) -> Result<()> {
    let text = read_text(&a.file)?;
    // Refused before the import's work: a device, a link, a folder, or the input itself.
    if let Some(path) = &a.out {
        report::check_output_path(path)?;
    }
    let imp = import(&text, &a.file.display().to_string(), &a.models)?;
    let mut report = format!(
        "imported {} model{}, skipped {}{}\n",
        imp.imported.len(),
        if imp.imported.len() == 1 { "" } else { "s" },
        imp.skipped.len(),
        if imp.bad > 0 {
            format!(" ({} with a value that cannot be a price)", imp.bad)
        } else {
            String::new()
        }
    );
    for (k, why) in &imp.skipped {
        report.push_str(&format!("  skipped {k}: {why}\n"));
    }
    for (k, builtin) in &imp.replaced {
        report.push_str(&format!(
            "  overlays built-in {builtin} with {k}: the file's prices on the built-in caching mechanics\n"
        ));
    }
    for (k, what) in &imp.corrections {
        report.push_str(&format!("  corrected {k}: {what}\n"));
    }
    let list = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{k} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !imp.unmapped.is_empty() {
        report.push_str(&format!(
            "fields not mapped (no place in pcsim's catalog): {}\n",
            list(&imp.unmapped)
        ));
    }
    if !imp.ignored.is_empty() {
        report.push_str(&format!(
            "ignored (capabilities and limits, no cost): {}\n",
            list(&imp.ignored)
        ));
    }
    match &a.out {
        Some(path) => {
            report::write_atomic(path, imp.toml.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            out.write_all(report.as_bytes())?;
            writeln!(out, "wrote {}", path.display())?;
        }
        None => {
            out.write_all(imp.toml.as_bytes())?;
            eprint!("{}", crate::report::terminal::escape(&report));
        }
    }
    Ok(())
}
