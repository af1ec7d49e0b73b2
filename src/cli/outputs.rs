//! The files a command writes besides standard output, in one place for run, compare, whatif,
//! advise and diff: `--out DIR` (a report set, with the charts) and `--report FILE` (one document).
//! Everything a bad flag or an unwritable folder would refuse is checked before any simulation work
//! ([`Outputs::check`]); afterwards [`Outputs::write`] writes the set, then the document.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use super::docreport::{self, Kind, ReportArgs};
use super::{with_charts, write_report_set, ChartArgs, Format};
use crate::report;
use crate::report::chart::{ChartFile, ChartOptions};
use crate::report::document::Document;

/// `--out`, the chart flags and `--report` of one command, checked.
pub(crate) struct Outputs<'a> {
    dir: Option<&'a Path>,
    charts: Option<(&'a ChartArgs, ChartOptions)>,
    report: Option<(&'a Path, Kind)>,
}

/// A command's charts at given options (`None`: the command draws none).
pub(crate) type MakeCharts<'m> = Option<&'m dyn Fn(&ChartOptions) -> crate::Result<Vec<ChartFile>>>;

impl<'a> Outputs<'a> {
    /// Checks, before any simulation work and in this order: the chart size, the report's name and
    /// folder, the `--out` folder.
    pub(crate) fn check(
        dir: Option<&'a Path>,
        charts: Option<&'a ChartArgs>,
        doc: &'a ReportArgs,
    ) -> Result<Self> {
        let charts = match charts {
            Some(c) => Some((c, c.png_options()?)),
            None => None,
        };
        let kind = doc.check()?;
        if let Some(dir) = dir {
            report::ensure_writable_dir(dir)?;
        }
        Ok(Outputs {
            dir,
            charts,
            report: doc.report.as_deref().zip(kind),
        })
    }

    /// Writes the `--out` set (`files` and the charts `make_charts` draws, all or none) and then
    /// the `--report` document that `document` builds (only when asked for). Standard output is
    /// flushed first, so the report comes before the paths of the files written.
    pub(crate) fn write(
        &self,
        out: &mut dyn Write,
        format: Format,
        files: &[(&str, &[u8])],
        make_charts: MakeCharts<'_>,
        document: impl FnOnce() -> Result<Document>,
    ) -> Result<()> {
        if let Some(dir) = self.dir {
            let charts = match (self.charts, make_charts) {
                (Some((args, png)), Some(make)) => args.render(png, make)?,
                _ => Vec::new(),
            };
            out.flush()?;
            write_report_set(dir, &with_charts(files, &charts), format)?;
        }
        if let Some((path, kind)) = self.report {
            let doc = document()?;
            out.flush()?;
            docreport::write(path, kind, &doc, format == Format::Table)?;
        }
        Ok(())
    }
}
