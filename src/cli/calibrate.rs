//! `pcsim calibrate`: fit a family's tool-token factor and preamble to the user's own measurements,
//! or show how the built-in catalog fits the measured facts (`--facts`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::calibrate::{facts_report, fit, log_sample, Sample};
use crate::analysis::replay::{load_log, match_model, ReplayOptions};
use crate::error::Error;
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::tools::load_tool_file;
use crate::report;

/// Arguments of `calibrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct CalibrateArgs {
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
    /// Write the catalog overlay to this file (atomically; use it with `--catalog FILE`) instead of
    /// printing it. (`--out` is the old spelling: `--out` names a folder in the other commands.)
    #[arg(long = "catalog-out", alias = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Instead: the built-in catalog against the measured facts and on the MCP captures in
    /// `--captures` (Markdown tables, as in docs/tools.md).
    #[arg(long)]
    pub facts: bool,
    /// Folder of `*.tools.json` captures for `--facts`.
    #[arg(long, value_name = "DIR")]
    pub captures: Option<PathBuf>,
    /// Calibrate the `--model` alone: the overlay gives it a family of its own (`FAMILY:MODEL`)
    /// with the fitted factor and preamble, and the other models of its family keep theirs.
    /// Without it the whole family is re-calibrated, and the output lists the models that moves.
    #[arg(long)]
    pub only: bool,
}

/// Runs `pcsim calibrate`.
// Over 120 lines: the calibrate command's steps in the order the user sees their effects (flags,
// samples, fit, overlay, where it is written); orchestration that issue 28 moves into the library,
// as for replay and config.
pub(crate) fn cmd_calibrate(
    catalog: &Catalog,
    a: CalibrateArgs,
    out: &mut dyn Write,
) -> Result<()> {
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
    let own = m.alias_of.as_deref().unwrap_or(&m.id);
    let family = if a.only {
        format!("{}:{own}", m.family)
    } else {
        m.family.clone()
    };
    let f = fit(&family, r, &samples)?;
    let mut overlay = f.overlay(r, "pcsim calibrate");
    // The models the overlay re-calibrates: the model alone (with its aliases), or its family.
    let affected: Vec<&str> = catalog
        .models
        .iter()
        .filter(|x| {
            if a.only {
                x.id == own || x.alias_of.as_deref() == Some(own)
            } else {
                x.family == m.family
            }
        })
        .map(|x| x.id.as_str())
        .collect();
    let affects = format!(
        "affects {} model{}: {}{}\n",
        affected.len(),
        if affected.len() == 1 { "" } else { "s" },
        affected.join(", "),
        if a.only || affected.len() == 1 {
            String::new()
        } else {
            format!(
                " (the whole family `{}`; --only calibrates {} alone)",
                m.family, m.id
            )
        }
    );
    if a.only {
        overlay.push_str(&format!(
            "[[model_family]]\nmodel = {}\nfamily = {}\n",
            toml::Value::String(own.to_string()),
            toml::Value::String(family.clone())
        ));
    }
    overlay.insert_str(
        overlay.find("[[family]]").unwrap_or(0),
        &format!("# This overlay {affects}"),
    );
    match &a.out {
        Some(p) => {
            report::write_atomic(p, overlay.as_bytes())?;
            out.write_all(f.table().as_bytes())?;
            out.write_all(affects.as_bytes())?;
            writeln!(out, "wrote {}", p.display())?;
        }
        None => {
            // The fit to stderr, so that stdout is the overlay alone.
            eprint!("{}{affects}", f.table());
            out.write_all(overlay.as_bytes())?;
        }
    }
    Ok(())
}

/// `pcsim replay --log-tools LOG=TOOLS... [--calibrate-out FILE]`: the calibration a usage log's
/// billed tokens give, fitted as `pcsim calibrate` fits (the same [`fit`]) on one measurement per
/// log ([`log_sample`]). The model is the one `--model` names, else the first log's own. The fit
/// goes to standard error (standard output stays the replay's report); the overlay to `out_file`.
pub(crate) fn calibrate_from_logs(
    catalog: &Catalog,
    pairs: &[String],
    chosen: &[&ModelSpec],
    opts: &ReplayOptions,
    out_file: Option<&std::path::Path>,
) -> Result<()> {
    if pairs.is_empty() {
        return Err(Error::invalid(
            "command line",
            "--calibrate-out",
            "give the tool file each log's sessions used with --log-tools LOG=TOOLS",
        )
        .into());
    }
    if let Some(p) = out_file {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            report::ensure_writable_dir(dir)?;
        }
    }
    let mut samples = Vec::new();
    let mut named: Option<String> = None;
    for pair in pairs {
        let (log, tools) = pair.split_once('=').ok_or_else(|| {
            Error::invalid(
                "command line",
                format!("--log-tools {pair}"),
                "a pair is LOG=TOOLS (a usage log and the tool file its sessions used)",
            )
        })?;
        let log = load_log(std::path::Path::new(log))?;
        let tools = load_tool_file(std::path::Path::new(tools))?;
        if named.is_none() {
            named = log.calls.iter().find_map(|c| c.model.clone());
        }
        samples.push(log_sample(pair, tools, &log.calls, opts, 0.0)?);
    }
    let m: &ModelSpec = match chosen {
        [m] => m,
        [] => match named.as_deref() {
            Some(n) => match_model(catalog, n).ok_or_else(|| {
                Error::invalid(
                    "command line",
                    "--log-tools",
                    format!("the logs' model `{n}` is not in the catalog; name it with --model"),
                )
            })?,
            None => {
                return Err(Error::invalid(
                    "command line",
                    "--log-tools",
                    "the logs name no model; name it with --model",
                )
                .into())
            }
        },
        _ => {
            return Err(Error::invalid(
                "command line",
                "--model",
                "a calibration is of one model's family: name one --model with --log-tools",
            )
            .into())
        }
    };
    let r = m.rendering();
    let f = fit(&m.family, r, &samples)?;
    eprintln_safe!(
        "calibration of family {} ({}) from the logs' billed input tokens (smallest conversation-starting prompt per log; the preamble includes what every first prompt shares, such as the system prompt):",
        m.family,
        m.id
    );
    eprint!("{}", f.table());
    match out_file {
        Some(p) => {
            report::write_atomic(p, f.overlay(r, "pcsim replay --log-tools").as_bytes())?;
            eprintln_safe!("wrote {} (use it with --catalog)", p.display());
        }
        None => eprintln_safe!("note: --calibrate-out FILE writes it as a catalog overlay"),
    }
    Ok(())
}
