//! `--report FILE.html | FILE.md`: the flag, its check before any work, the document options of a
//! command's chart flags and command line, and the writing of the files with `wrote FILE`. Every
//! document is built and rendered by the library ([`crate::report::document`]); the commands call
//! it directly with [`options`].

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::ChartArgs;
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::report;
pub(crate) use crate::report::document::ReportFormat as Kind;
use crate::report::document::{quote_command_line, Document, DocumentOptions, Provenance};

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
pub(crate) fn command_line() -> String {
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
pub(crate) fn options(chart_args: &ChartArgs) -> Result<DocumentOptions> {
    Ok(DocumentOptions {
        charts: chart_args.png_options()?,
        command_line: command_line(),
    })
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
