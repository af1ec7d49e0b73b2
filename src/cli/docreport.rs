//! `--report FILE.html | FILE.md`: the flag, its check before any work, and the glue from a
//! command's chart flags and command line to the library's report documents
//! ([`crate::report::document`], where every document is built and rendered).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::ChartArgs;
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::report;
use crate::report::chart::{ChartFile, ChartOptions};
pub(crate) use crate::report::document::ReportFormat as Kind;
use crate::report::document::{quote_command_line, Block, Document, DocumentOptions, Provenance};

/// The `--report` flag shared by run, compare, whatif, advise and config.
#[derive(Debug, clap::Args, Default)]
pub(crate) struct ReportArgs {
    /// Also write one report: FILE.html (self-contained: inline SVG charts, tables, assumptions,
    /// price sources, provenance) or FILE.md (Markdown, with the charts as PNG files beside it).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

impl ReportArgs {
    /// The report's format, checked (with its folder) before any simulation work.
    pub(crate) fn check(&self) -> Result<Option<Kind>> {
        let Some(path) = &self.report else {
            return Ok(None);
        };
        let Some(kind) = Kind::of_path(path) else {
            return Err(crate::Error::invalid(
                "command line",
                "--report",
                format!(
                    "`{}`: the file name must end in .html (one self-contained file) or .md (Markdown with PNGs beside it)",
                    path.display()
                ),
            )
            .into());
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        report::ensure_writable_dir(dir)?;
        Ok(Some(kind))
    }
}

/// This process's command line as a shell would take it back, the program as a name (not the
/// path it was started from).
fn command_line() -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if let Some(first) = words.first_mut() {
        *first = Path::new(first)
            .file_name()
            .map_or("pcsim".into(), |n| n.to_string_lossy().into_owned());
    }
    quote_command_line(&words)
}

/// Provenance of a report: version, catalog, scenario, seed and runs, and this process's command
/// line.
pub(crate) fn provenance(catalog: &Catalog, scenario: Option<&Scenario>) -> Provenance {
    report::provenance(catalog, scenario, &command_line())
}

/// The document options of the chart flags: `--chart-size`, `--log-scale`, and this process's
/// command line for the provenance.
fn options(chart_args: &ChartArgs) -> Result<DocumentOptions> {
    Ok(DocumentOptions {
        charts: chart_args.png_options()?,
        command_line: command_line(),
    })
}

/// Renders a command's charts in both formats for a report (SVG inline in HTML, PNG beside
/// Markdown), at the `--chart-size` and with `--log-scale` as given.
pub(crate) fn report_charts(
    chart_args: &ChartArgs,
    caption: impl Fn(&str) -> String,
    make: impl Fn(&ChartOptions) -> crate::Result<Vec<ChartFile>>,
) -> Result<Vec<Block>> {
    Ok(report::report_charts(
        &chart_args.png_options()?,
        caption,
        make,
    )?)
}

/// Writes the report ([`Document::files`]: HTML as one file; Markdown with its PNGs first, beside
/// it), every file atomically, saying `wrote FILE` for each (on standard output when it holds the
/// table, else on standard error; not with `--quiet`).
pub(crate) fn write(path: &Path, kind: Kind, doc: &Document, stdout_is_table: bool) -> Result<()> {
    let written = doc
        .write(path, kind)
        .with_context(|| format!("writing {}", path.display()))?;
    if !super::quiet() {
        for p in &written {
            let _ = if stdout_is_table {
                writeln!(std::io::stdout(), "wrote {}", p.display())
            } else {
                writeln!(std::io::stderr(), "wrote {}", p.display())
            };
        }
    }
    Ok(())
}

/// The `run` report.
pub(crate) fn run_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::sim::simulate::RunReport,
    chart_args: &ChartArgs,
    printed: &str,
) -> Result<Document> {
    let opts = options(chart_args)?;
    Ok(report::run_document(
        catalog, scenario, rep, &opts, printed,
    )?)
}

/// The `compare` report.
pub(crate) fn compare_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::compare::CompareReport,
    chart_args: &ChartArgs,
    printed: &str,
) -> Result<Document> {
    let opts = options(chart_args)?;
    Ok(report::compare_document(
        catalog, scenario, rep, &opts, printed,
    )?)
}

/// The `whatif` report.
pub(crate) fn whatif_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::whatif::WhatifReport,
    chart_args: &ChartArgs,
    printed: &str,
) -> Result<Document> {
    let opts = options(chart_args)?;
    Ok(report::whatif_document(
        catalog, scenario, rep, &opts, printed,
    )?)
}

/// The `advise` report.
pub(crate) fn advise_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::advise::AdviceReport,
    chart_args: &ChartArgs,
    printed: &str,
) -> Result<Document> {
    let opts = options(chart_args)?;
    Ok(report::advise_document(
        catalog, scenario, rep, &opts, printed,
    )?)
}

/// The `diff` report.
pub(crate) fn diff_document(
    catalog: &Catalog,
    scenario_a: Option<&Scenario>,
    rep: &crate::analysis::diff::DiffReport,
    printed: &str,
) -> Document {
    report::diff_document(catalog, scenario_a, rep, printed, &command_line())
}
