//! Self-contained reports (`--report FILE.html` / `--report FILE.md`): one document per command, with
//! its tables, charts, the assumptions it rests on, the source of every price it used and where it
//! came from (pcsim version, catalog, scenario, seed, runs, command line).
//!
//! A [`Document`] is plain data, built by [`super::run_document`], [`super::compare_document`],
//! [`super::whatif_document`] and [`super::advise_document`] from a command's report; [`Document::to_html`]
//! renders one HTML file with the charts inline as SVG (no script, no external resource: it opens
//! anywhere, offline), [`Document::to_markdown`] renders Markdown for pull requests with the charts
//! as PNG files to be written beside it, and [`Document::write`] writes either as `pcsim ...
//! --report FILE` does.
//!
//! ```
//! use pcsim::report::document::{DocumentOptions, ReportFormat};
//! use pcsim::report::run_document;
//! use pcsim::{report, run_request, Catalog, Scenario, Selection};
//! let catalog = Catalog::embedded()?;
//! let request = Selection::new(&["kimi-k3".into()], &["none".into(), "cached".into()])
//!     .resolve(&catalog, Scenario::builtin_default()?)?;
//! let rep = run_request(&request, &|_| {})?;
//! let opts = DocumentOptions {
//!     charts: report::chart::ChartOptions { width: 400, height: 250, ..Default::default() },
//!     command_line: "my-notebook: run kimi-k3".into(),
//! };
//! let doc = run_document(&catalog, &request.scenario, &rep, &opts, &report::run_table(&rep, false))?;
//! let html = doc.to_html();
//! assert!(html.contains("<svg") && html.contains("my-notebook: run kimi-k3"));
//! let dir = std::env::temp_dir().join(format!("pcsim-doc-{}", std::process::id()));
//! let files = doc.files(&dir.join("r.md"), ReportFormat::Markdown);
//! assert!(files[0].0.ends_with("r-cumulative-by-call.png"));
//! assert!(files.last().unwrap().0.ends_with("r.md"));
//! # Ok::<(), pcsim::Error>(())
//! ```
//!
//! One concept: the self-contained report document, as data and in its two renderings (HTML with
//! the charts inline, Markdown with the charts as files beside it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::chart::{ChartFile, ChartOptions};
use crate::error::Result;
use crate::model::catalog::{Catalog, ModelSpec};

/// The two report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// One self-contained HTML file (charts inline as SVG).
    Html,
    /// Markdown, with the charts as PNG files beside it.
    Markdown,
}

impl ReportFormat {
    /// The format a report file's name asks for: `.html` or `.htm`, `.md` or `.markdown` (any
    /// case); `None` for any other name.
    pub fn of_path(path: &Path) -> Option<ReportFormat> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "html" | "htm" => Some(ReportFormat::Html),
            "md" | "markdown" => Some(ReportFormat::Markdown),
            _ => None,
        }
    }
}

/// How a report document is drawn and where it says it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentOptions {
    /// Size and scale of the charts (`--chart-size`, `--log-scale`); each chart is drawn both as
    /// SVG (for HTML) and PNG (for Markdown), whatever `svg` says.
    pub charts: ChartOptions,
    /// The command line (or call) that made the report, shown in its provenance table.
    pub command_line: String,
}

/// Where a reader finds the sources the price table names: "providers.md" is a file of the pcsim
/// repository, the other sources are public pages and tracker files named with their version.
const SOURCES_NOTE: &str = "\"providers.md\" in a source is tests/fixtures/reference/providers.md in the pcsim repository (the providers' documentation, each number with its page and date); models.dev, LiteLLM and genai-prices are public price trackers, named with their commit or version.";

/// Where a report's figures came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Provenance {
    /// pcsim's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The catalog the prices came from (`built-in models.toml` or a path).
    pub catalog: String,
    /// Which prices the run used: the pricing day (or sheet, tier), as `Catalog::priced` set it.
    pub pricing: Option<String>,
    /// The scenario file (or `built-in default scenario`), when the command simulates one.
    pub scenario: Option<String>,
    /// Seed of the random draws, when the command simulates.
    pub seed: Option<u64>,
    /// Monte Carlo runs, when the command simulates.
    pub runs: Option<u64>,
    /// The command line as typed (arguments joined with spaces, quoted where needed).
    pub command_line: String,
}

/// A table: a header row and body rows, with the columns whose cells are right-aligned numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows of cells (each as long as the header).
    pub rows: Vec<Vec<String>>,
    /// Right-aligned columns (numbers), by index.
    pub numeric: Vec<bool>,
}

/// A chart in both formats: SVG for HTML (inline), PNG for Markdown (a file beside it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chart {
    /// File stem, e.g. `cumulative-by-call`.
    pub stem: String,
    /// What the chart shows, one line (alt text and caption).
    pub caption: String,
    /// SVG text.
    pub svg: Vec<u8>,
    /// PNG bytes.
    pub png: Vec<u8>,
}

/// One piece of a section.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// A paragraph of plain text.
    Text(String),
    /// A list of plain-text items.
    List(Vec<String>),
    /// A table.
    Table(Table),
    /// A chart.
    Chart(Chart),
    /// Preformatted text (the command's terminal output, a scenario file).
    Pre(String),
}

/// A titled section.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Section {
    /// Heading.
    pub heading: String,
    /// Content in order.
    pub blocks: Vec<Block>,
}

/// The price (or price multiplier) of one model, with its source string from the catalog.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PriceSource {
    /// Model id.
    pub model: String,
    /// What the number is, e.g. `input USD per million tokens`.
    pub item: String,
    /// The number as used.
    pub value: String,
    /// The catalog's source string (`documented: ...`, `measured: ...`).
    pub source: String,
}

/// A whole report document of one command: its sections, the assumptions, the scenario as
/// simulated, the prices used with their sources and the provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Title (also the HTML `<title>`).
    pub(crate) title: String,
    /// One paragraph under the title: what the report answers.
    pub(crate) summary: String,
    /// The command's sections (results, tables, charts).
    pub(crate) sections: Vec<Section>,
    /// What the figures assume (scenario parameters, caching rules, what is not modelled).
    pub(crate) assumptions: Vec<String>,
    /// The scenario as written, shown whole when there is one.
    pub(crate) scenario_text: Option<String>,
    /// Every price used, with its source.
    pub(crate) prices: Vec<PriceSource>,
    /// Where it came from.
    pub(crate) provenance: Provenance,
}

/// Every price and price multiplier of `models` that a simulation can use, with the catalog's source
/// strings: input and output prices, and per caching mode offered the read multiplier, each TTL
/// tier's write multiplier and lifetime, and storage fees.
pub(crate) fn price_sources(models: &[&ModelSpec]) -> Vec<PriceSource> {
    let mut out = Vec::new();
    for m in models {
        let mut push = |item: String, value: String, source: &str| {
            out.push(PriceSource {
                model: m.id.clone(),
                item,
                value,
                source: source.to_string(),
            })
        };
        push(
            "input USD per million tokens".into(),
            format!("{}", m.input_usd_per_mtok.value),
            &m.input_usd_per_mtok.source,
        );
        push(
            "output USD per million tokens".into(),
            format!("{}", m.output_usd_per_mtok.value),
            &m.output_usd_per_mtok.source,
        );
        if let Some(priced) = &m.priced {
            push(
                "prices in force".into(),
                priced.clone(),
                "the catalog's dated price changes (`[[model.price_change]]`) on the pricing day",
            );
        }
        for (mode, rules) in [
            ("explicit", &m.cache.explicit),
            ("automatic", &m.cache.automatic),
            ("implicit", &m.cache.implicit),
        ] {
            let Some(r) = rules else { continue };
            push(
                format!("{mode} cache: read multiplier"),
                format!("{}x", r.read_multiplier.value),
                &r.read_multiplier.source,
            );
            for (tier, t) in &r.tiers {
                push(
                    format!("{mode} cache, tier {tier}: write multiplier"),
                    format!("{}x", t.write_multiplier.value),
                    &t.write_multiplier.source,
                );
                push(
                    format!("{mode} cache, tier {tier}: lifetime"),
                    format!("{} s", t.ttl_seconds.value),
                    &t.ttl_seconds.source,
                );
            }
            push(
                format!("{mode} cache: minimum cacheable prompt"),
                format!("{} tokens", r.min_tokens.value),
                &r.min_tokens.source,
            );
            if let Some(s) = &r.storage_usd_per_mtok_hour {
                push(
                    format!("{mode} cache: storage USD per million tokens per hour"),
                    format!("{}", s.value),
                    &s.source,
                );
            }
            if let Some(p) = &r.hit_probability {
                push(
                    format!("{mode} cache: hit probability"),
                    format!("{}", p.value),
                    &p.source,
                );
            }
        }
    }
    out
}

/// The catalog entries of `ids` that exist (unknown ids are skipped: the command already reported
/// them).
pub(crate) fn models_of<'a>(catalog: &'a Catalog, ids: &[&str]) -> Vec<&'a ModelSpec> {
    let mut out: Vec<&ModelSpec> = Vec::new();
    for id in ids {
        if let Ok(m) = catalog.model(id) {
            if !out.iter().any(|o| o.id == m.id) {
                out.push(m);
            }
        }
    }
    out
}

impl Chart {
    /// A chart from its SVG and PNG renderings (same stem, different extensions).
    pub(crate) fn from_files(caption: &str, svg: &ChartFile, png: &ChartFile) -> Chart {
        let stem = svg
            .name
            .rsplit_once('.')
            .map_or(svg.name.as_str(), |(s, _)| s)
            .to_string();
        Chart {
            stem,
            caption: caption.to_string(),
            svg: svg.bytes.clone(),
            png: png.bytes.clone(),
        }
    }
}

/// Pairs the SVG and PNG renderings of the same charts into [`Chart`]s, captioned by `caption`
/// (from the file stem).
pub(crate) fn charts(
    svg: &[ChartFile],
    png: &[ChartFile],
    caption: impl Fn(&str) -> String,
) -> Vec<Chart> {
    svg.iter()
        .filter_map(|s| {
            let stem = s.name.rsplit_once('.').map_or(s.name.as_str(), |(a, _)| a);
            let p = png.iter().find(|p| p.name == format!("{stem}.png"))?;
            Some(Chart::from_files(&caption(stem), s, p))
        })
        .collect()
}

/// `text` with `& < > " '` escaped for HTML text and attributes.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Terminal control characters never reach the page.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown table cell: pipes and line breaks would end the cell, backticks and markup are
/// escaped so names print as they are.
fn md_cell(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Plain text as a Markdown paragraph (markup characters escaped).
fn md_text(text: &str) -> String {
    md_cell(text)
}

/// A fenced block whose fence is longer than any backtick run inside.
fn md_fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", text.trim_end_matches('\n'))
}

/// The SVG of a chart ready to inline: the XML declaration (if any) dropped, and the fixed size
/// turned into a `viewBox` so it scales to the page width.
fn inline_svg(svg: &[u8]) -> String {
    let text = String::from_utf8_lossy(svg);
    let text = match text.find("<svg") {
        Some(i) => &text[i..],
        None => &text,
    };
    let open_end = text.find('>').unwrap_or(0);
    let (open, rest) = text.split_at(open_end);
    let attr = |name: &str| -> Option<String> {
        let key = format!(" {name}=\"");
        let i = open.find(&key)? + key.len();
        let j = open[i..].find('"')? + i;
        Some(open[i..j].to_string())
    };
    let mut head = open.to_string();
    if let (Some(w), Some(h)) = (attr("width"), attr("height")) {
        if !head.contains("viewBox") {
            head.push_str(&format!(" viewBox=\"0 0 {w} {h}\""));
        }
        head = head.replacen(&format!(" width=\"{w}\""), " width=\"100%\"", 1);
        head = head.replacen(&format!(" height=\"{h}\""), "", 1);
    }
    head.push_str(" role=\"img\"");
    format!("{head}{rest}")
}

const CSS: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#202020;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.8em}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
pre{background:#f7f7f7;border:1px solid #e2e2e2;padding:.8em;overflow-x:auto;font-size:.82em}\
figure{margin:1.2em 0}figcaption{color:#555;font-size:.9em}svg{max-width:100%;height:auto;border:1px solid #eee}\
tbody td:first-child{white-space:nowrap}.prov td:first-child{font-weight:bold;white-space:nowrap}";

impl Document {
    /// One self-contained HTML file: inline CSS, charts as inline SVG, no script and no external
    /// resource, every text escaped.
    pub fn to_html(&self) -> String {
        let e = escape_html;
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"generator\" content=\"pcsim {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
            e(&self.provenance.version),
            e(&self.title)
        );
        let _ = writeln!(
            h,
            "<h1>{}</h1>\n<p>{}</p>",
            e(&self.title),
            e(&self.summary)
        );
        for s in &self.sections {
            let _ = writeln!(h, "<h2>{}</h2>", e(&s.heading));
            for b in &s.blocks {
                match b {
                    Block::Text(t) => {
                        let _ = writeln!(h, "<p>{}</p>", e(t));
                    }
                    Block::List(items) => {
                        h.push_str("<ul>\n");
                        for i in items {
                            let _ = writeln!(h, "<li>{}</li>", e(i));
                        }
                        h.push_str("</ul>\n");
                    }
                    Block::Table(t) => html_table(&mut h, t),
                    Block::Chart(c) => {
                        let _ = writeln!(
                            h,
                            "<figure id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>",
                            e(&c.stem),
                            inline_svg(&c.svg),
                            e(&c.caption)
                        );
                    }
                    Block::Pre(t) => {
                        let _ = writeln!(h, "<pre>{}</pre>", e(t));
                    }
                }
            }
        }
        h.push_str("<h2>Assumptions</h2>\n<ul>\n");
        for a in &self.assumptions {
            let _ = writeln!(h, "<li>{}</li>", e(a));
        }
        h.push_str("</ul>\n");
        if let Some(text) = &self.scenario_text {
            let _ = writeln!(
                h,
                "<p>The scenario as simulated:</p>\n<pre>{}</pre>",
                e(text)
            );
        }
        h.push_str("<h2>Prices used and their sources</h2>\n");
        let _ = writeln!(h, "<p>{}</p>", e(SOURCES_NOTE));
        html_table(&mut h, &self.price_table());
        h.push_str("<h2>Provenance</h2>\n");
        let mut prov = self.provenance_table();
        prov.header.clear();
        h.push_str("<table class=\"prov\">\n");
        for r in &prov.rows {
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", e(&r[0]), e(&r[1]));
        }
        h.push_str("</table>\n</body>\n</html>\n");
        h
    }

    /// Markdown for a pull request, with `image(stem)` giving the relative path of each chart's PNG
    /// (the caller writes [`Document::png_files`] there). Tables are pipe tables; text is escaped.
    pub fn to_markdown(&self, image: impl Fn(&str) -> String) -> String {
        let mut m = String::new();
        let _ = writeln!(
            m,
            "# {}\n\n{}\n",
            md_text(&self.title),
            md_text(&self.summary)
        );
        for s in &self.sections {
            let _ = writeln!(m, "## {}\n", md_text(&s.heading));
            for b in &s.blocks {
                match b {
                    Block::Text(t) => {
                        let _ = writeln!(m, "{}\n", md_text(t));
                    }
                    Block::List(items) => {
                        for i in items {
                            let _ = writeln!(m, "- {}", md_text(i));
                        }
                        m.push('\n');
                    }
                    Block::Table(t) => md_table(&mut m, t),
                    Block::Chart(c) => {
                        let _ = writeln!(
                            m,
                            "![{}]({})\n",
                            md_cell(&c.caption),
                            image(&c.stem).replace(' ', "%20")
                        );
                    }
                    Block::Pre(t) => {
                        let _ = writeln!(m, "{}", md_fence(t));
                    }
                }
            }
        }
        m.push_str("## Assumptions\n\n");
        for a in &self.assumptions {
            let _ = writeln!(m, "- {}", md_text(a));
        }
        m.push('\n');
        if let Some(text) = &self.scenario_text {
            let _ = writeln!(m, "The scenario as simulated:\n\n{}", md_fence(text));
        }
        m.push_str("## Prices used and their sources\n\n");
        let _ = writeln!(m, "{SOURCES_NOTE}\n");
        md_table(&mut m, &self.price_table());
        m.push_str("## Provenance\n\n");
        md_table(&mut m, &self.provenance_table());
        m
    }

    /// The PNG of every chart, named `prefix` + stem + `.png`.
    pub fn png_files(&self, prefix: &str) -> Vec<ChartFile> {
        self.charts()
            .map(|c| ChartFile {
                name: format!("{prefix}{}.png", c.stem),
                bytes: c.png.clone(),
            })
            .collect()
    }

    /// The title (also the HTML `<title>`).
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The files of the report at `path` in `format`, in the order they are to be written: HTML
    /// is one file; Markdown is its PNGs first (named after the report: `r.md` →
    /// `r-cumulative-by-call.png`, in the same folder), then the Markdown that links them.
    pub fn files(&self, path: &Path, format: ReportFormat) -> Vec<(PathBuf, Vec<u8>)> {
        match format {
            ReportFormat::Html => vec![(path.to_path_buf(), self.to_html().into_bytes())],
            ReportFormat::Markdown => {
                let stem = path
                    .file_stem()
                    .map_or("report".into(), |s| s.to_string_lossy().into_owned());
                let prefix = format!("{}-", super::chart::sanitize_file_stem(&stem));
                let dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let mut files: Vec<(PathBuf, Vec<u8>)> = self
                    .png_files(&prefix)
                    .into_iter()
                    .map(|f| (dir.join(&f.name), f.bytes))
                    .collect();
                let text = self.to_markdown(|s| format!("{prefix}{s}.png"));
                files.push((path.to_path_buf(), text.into_bytes()));
                files
            }
        }
    }

    /// Writes the report as `--report path` does: HTML atomically ([`super::write_atomic`]: a
    /// reader never sees a half-written file, and only a regular file is replaced); Markdown and
    /// its PNGs as one set (every file complete before any is renamed into
    /// place), so the Markdown never links a missing picture and a failure (a full disk) leaves
    /// the old set whole. Returns the paths written.
    pub fn write(&self, path: &Path, format: ReportFormat) -> Result<Vec<PathBuf>> {
        let files = self.files(path, format);
        if let [(p, bytes)] = files.as_slice() {
            super::write_atomic(p, bytes)?;
            return Ok(vec![p.clone()]);
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let names: Vec<(String, &[u8])> = files
            .iter()
            .map(|(p, bytes)| {
                let name = p
                    .file_name()
                    .map_or("report.md".into(), |n| n.to_string_lossy().into_owned());
                (name, bytes.as_slice())
            })
            .collect();
        let set: Vec<(&str, &[u8])> = names.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        super::write_set(dir, &set)
    }

    /// Every chart of the document, in order.
    pub(crate) fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.sections.iter().flat_map(|s| {
            s.blocks.iter().filter_map(|b| match b {
                Block::Chart(c) => Some(c),
                _ => None,
            })
        })
    }

    fn price_table(&self) -> Table {
        Table {
            header: ["model", "price or rule", "value", "source"]
                .map(String::from)
                .to_vec(),
            rows: self
                .prices
                .iter()
                .map(|p| {
                    vec![
                        p.model.clone(),
                        p.item.clone(),
                        p.value.clone(),
                        p.source.clone(),
                    ]
                })
                .collect(),
            numeric: vec![false, false, true, false],
        }
    }

    fn provenance_table(&self) -> Table {
        let p = &self.provenance;
        let mut rows = vec![
            vec!["pcsim version".to_string(), p.version.clone()],
            vec!["catalog".to_string(), p.catalog.clone()],
        ];
        if let Some(s) = &p.pricing {
            rows.push(vec!["pricing".into(), s.clone()]);
        }
        if let Some(s) = &p.scenario {
            rows.push(vec!["scenario".into(), s.clone()]);
        }
        if let Some(s) = p.seed {
            rows.push(vec!["seed".into(), s.to_string()]);
        }
        if let Some(r) = p.runs {
            rows.push(vec!["runs".into(), r.to_string()]);
        }
        rows.push(vec!["command line".into(), p.command_line.clone()]);
        Table {
            header: vec!["".into(), "".into()],
            rows,
            numeric: vec![false, false],
        }
    }
}

fn html_table(h: &mut String, t: &Table) {
    let e = escape_html;
    h.push_str("<table>\n<thead><tr>");
    for c in &t.header {
        let _ = write!(h, "<th>{}</th>", e(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        h.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            if t.numeric.get(i).copied().unwrap_or(false) {
                let _ = write!(h, "<td class=\"n\">{}</td>", e(c));
            } else {
                let _ = write!(h, "<td>{}</td>", e(c));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
}

fn md_table(m: &mut String, t: &Table) {
    let cols = t.header.len().max(t.rows.first().map_or(0, Vec::len));
    let header: Vec<String> = (0..cols)
        .map(|i| t.header.get(i).map_or(String::new(), |h| md_cell(h)))
        .collect();
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let align: Vec<&str> = (0..cols)
        .map(|i| {
            if t.numeric.get(i).copied().unwrap_or(false) {
                "--:"
            } else {
                "---"
            }
        })
        .collect();
    let _ = writeln!(m, "|{}|", align.join("|"));
    for r in &t.rows {
        let cells: Vec<String> = (0..cols)
            .map(|i| r.get(i).map_or(String::new(), |c| md_cell(c)))
            .collect();
        let _ = writeln!(m, "| {} |", cells.join(" | "));
    }
    m.push('\n');
}

/// The command line as a shell would take it back: arguments with spaces or shell characters
/// single-quoted.
pub(crate) fn quote_command_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document {
            title: "t <&> \"q\"".into(),
            summary: "s".into(),
            sections: vec![Section {
                heading: "Results".into(),
                blocks: vec![
                    Block::Text("a | b".into()),
                    Block::Table(Table {
                        header: vec!["model".into(), "USD".into()],
                        rows: vec![vec!["m|x".into(), "$1.00".into()]],
                        numeric: vec![false, true],
                    }),
                    Block::Chart(Chart {
                        stem: "c".into(),
                        caption: "cap".into(),
                        svg: b"<svg width=\"800\" height=\"500\" xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>".to_vec(),
                        png: vec![1, 2, 3],
                    }),
                    Block::Pre("```\ninside\n```".into()),
                ],
            }],
            assumptions: vec!["one".into()],
            scenario_text: Some("calls = 3".into()),
            prices: vec![PriceSource {
                model: "m".into(),
                item: "input".into(),
                value: "5".into(),
                source: "documented: x".into(),
            }],
            provenance: Provenance {
                version: "0.1.0".into(),
                catalog: "built-in models.toml".into(),
                pricing: Some("list prices on 2026-12-05".into()),
                scenario: Some("s.toml".into()),
                seed: Some(7),
                runs: Some(1),
                command_line: "pcsim run s.toml --report r.html".into(),
            },
        }
    }

    #[test]
    fn html_is_escaped_self_contained_and_scales_its_svg() {
        let h = doc().to_html();
        assert!(
            h.contains("<title>t &lt;&amp;&gt; &quot;q&quot;</title>"),
            "{h}"
        );
        assert!(h.contains("viewBox=\"0 0 800 500\"") && h.contains("width=\"100%\""));
        assert!(!h.contains("<script"));
        assert!(h.contains("<td class=\"n\">$1.00</td>"));
        assert!(h.contains("documented: x") && h.contains("pcsim run s.toml --report r.html"));
        assert!(h.contains("<td>seed</td><td>7</td>"));
    }

    #[test]
    fn markdown_escapes_cells_and_fences_and_links_pngs() {
        let d = doc();
        let m = d.to_markdown(|stem| format!("r-{stem}.png"));
        assert!(m.contains("| m\\|x | $1.00 |"), "{m}");
        assert!(m.contains("![cap](r-c.png)"));
        assert!(m.contains("````text\n```\ninside\n```\n````"), "{m}");
        assert_eq!(d.png_files("r-")[0].name, "r-c.png");
    }

    #[test]
    fn command_lines_are_quoted_for_the_shell() {
        let args: Vec<String> = ["pcsim", "run", "my file.toml", "it's", "--model=a"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            quote_command_line(&args),
            "pcsim run 'my file.toml' 'it'\\''s' --model=a"
        );
    }

    #[test]
    fn every_price_of_a_model_carries_its_catalog_source() {
        let catalog = Catalog::embedded().unwrap();
        let models = models_of(&catalog, &["claude-opus-4.8", "kimi-k3", "nope"]);
        assert_eq!(models.len(), 2);
        let p = price_sources(&models);
        assert!(p
            .iter()
            .any(|x| x.model == "kimi-k3" && x.item.starts_with("automatic")));
        assert!(p.iter().any(|x| x.item.contains("write multiplier")));
        for x in &p {
            assert!(
                ["measured:", "documented:", "derived:", "assumed:"]
                    .iter()
                    .any(|k| x.source.starts_with(k)),
                "{x:?}"
            );
        }
    }
}
