//! `pcsim calibrate`: fit a family's tool-token factor and preamble to the user's own measurements,
//! or show how the built-in catalog fits the measured facts (`--facts`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use pcsim::analysis::calibrate::{facts_report, fit, Sample};
use pcsim::error::Error;
use pcsim::model::catalog::Catalog;
use pcsim::model::tools::load_tool_file;
use pcsim::report;

/// Arguments of `calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// Measurements `FILE=TOKENS`: a tool file and the input tokens a request with exactly those
    /// tools was billed (a provider's token-counting endpoint, or a usage log). With `--baseline`,
    /// TOKENS may be the whole request's.
    #[arg(value_name = "FILE=TOKENS")]
    pub samples: Vec<String>,
    /// The model measured; its family is fitted.
    #[arg(long = "model", value_name = "ID")]
    pub model: Option<String>,
    /// Input tokens of the same request without any tool, subtracted from every measurement.
    #[arg(long, default_value_t = 0.0, value_name = "TOKENS")]
    pub baseline: f64,
    /// Write the catalog overlay here (atomically; use it with `--catalog FILE`) instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Instead: the built-in catalog against the measured facts and on the MCP captures in
    /// `--captures` (Markdown tables, as in docs/tools.md).
    #[arg(long)]
    pub facts: bool,
    /// Folder of `*.tools.json` captures for `--facts`.
    #[arg(long, value_name = "DIR")]
    pub captures: Option<PathBuf>,
}

/// Runs `pcsim calibrate`.
pub fn cmd_calibrate(catalog: &Catalog, a: CalibrateArgs, out: &mut dyn Write) -> Result<()> {
    if a.facts {
        let mut captures = Vec::new();
        if let Some(dir) = &a.captures {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| {
                    Error::invalid(dir.display().to_string(), "--captures", e.to_string())
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
                .collect();
            files.sort();
            for f in files {
                let name = f
                    .file_name()
                    .map(|n| {
                        n.to_string_lossy()
                            .trim_end_matches(".tools.json")
                            .to_string()
                    })
                    .unwrap_or_default();
                captures.push((name, load_tool_file(&f)?));
            }
        }
        out.write_all(facts_report(catalog, &captures)?.as_bytes())?;
        return Ok(());
    }
    let Some(model) = &a.model else {
        return Err(Error::invalid(
            "command line",
            "--model",
            "name the model the tokens were measured on",
        )
        .into());
    };
    if let Some(p) = &a.out {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            report::ensure_writable_dir(dir)?;
        }
    }
    let m = catalog.model(model)?;
    let mut samples = Vec::new();
    for s in &a.samples {
        let (file, tokens) = s.rsplit_once('=').ok_or_else(|| {
            Error::invalid("command line", s.as_str(), "a measurement is FILE=TOKENS")
        })?;
        let measured: f64 = tokens
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                Error::invalid(
                    "command line",
                    s.as_str(),
                    format!("`{tokens}` is not a token count"),
                )
            })?;
        let tools = load_tool_file(std::path::Path::new(file))?;
        samples.push(Sample {
            label: file.to_string(),
            tools,
            measured: measured - a.baseline,
        });
    }
    let r = m.rendering();
    let f = fit(&m.family, r, &samples)?;
    let overlay = f.overlay(r, "pcsim calibrate");
    match &a.out {
        Some(p) => {
            report::write_atomic(p, overlay.as_bytes())?;
            out.write_all(f.table().as_bytes())?;
            writeln!(out, "wrote {}", p.display())?;
        }
        None => {
            // The fit to stderr, so that stdout is the overlay alone.
            eprint!("{}", f.table());
            out.write_all(overlay.as_bytes())?;
        }
    }
    Ok(())
}
