//! `pcsim._pcsim`: the native half of the `pcsim` Python package.
//!
//! A thin layer over the library's request step (`pcsim::Selection` and the analyses), never over
//! the command line: every function here resolves a request exactly as the corresponding `pcsim`
//! command does and returns what the command prints (the library's JSON, text table and CSV), so
//! the Python results carry the same figures. The typed, Pythonic API is in `python/pcsim/`.
//!
//! Simulations run with the GIL released (`Python::detach`), so Python threads run them in
//! parallel. Errors become the exceptions of `pcsim._errors`, carrying the file, the field and the
//! message pcsim produces.

use std::path::PathBuf;
use std::sync::Arc;

use pcsim::analysis::explain::{explain_paths, ExplainOptions};
use pcsim::analysis::replay::ReplayOptions;
use pcsim::analysis::replay_logs::{replay_logs, ReplayRequest};
use pcsim::analysis::whatif::{self as whatif_analysis, ToolChange};
use pcsim::analysis::{advise as advise_analysis, compare as compare_analysis};
use pcsim::base::date::Day;
use pcsim::input::trim::Trim;
use pcsim::model::catalog::{ModelSpec, MEASURED_MODELS};
use pcsim::model::pricing::{PriceOverride, Pricing};
use pcsim::model::render::TemplateKind;
use pcsim::model::tools::{parse_tool_list, Tool, MAX_TOOLS};
use pcsim::report::chart::{self, ChartFile, ChartOptions};
use pcsim::report::document::{DocumentOptions, ReportFormat};
use pcsim::{report, Catalog, Error, Scenario, Selection, Strategy};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Where the bindings' own arguments are said to come from in errors.
const ARGUMENT: &str = "argument";

/// The `pcsim._errors` exception for `e`, carrying the message pcsim prints and its parts.
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    let (class, file, field, problem): (&str, Option<String>, Option<String>, String) = match e {
        Error::Io {
            path,
            action,
            source,
        } => (
            "FileError",
            Some(path.display().to_string()),
            None,
            format!("{action}: {source}"),
        ),
        Error::Parse { file, message } => ("ParseError", Some(file), None, message),
        Error::Invalid {
            file,
            field,
            problem,
        } => ("InvalidValueError", Some(file), Some(field), problem),
        Error::UnknownModel { id, hint } => (
            "UnknownModelError",
            None,
            Some("model".into()),
            format!("unknown model id `{id}`{hint}"),
        ),
        Error::Strategy { strategy, problem } => (
            "StrategyError",
            None,
            Some("strategy".into()),
            format!("`{strategy}`: {problem}"),
        ),
        Error::Server { server, problem } => (
            "ServerError",
            None,
            Some("server".into()),
            format!("`{server}`: {problem}"),
        ),
        Error::Unsupported(m) => ("UnsupportedError", None, None, m),
        Error::Internal(m) => ("InternalError", None, None, m),
        other => ("PcsimError", None, None, other.to_string()),
    };
    let raised = py
        .import("pcsim._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((message, file, field, problem)));
    match raised {
        Ok(exception) => PyErr::from_value(exception),
        Err(import_failed) => import_failed,
    }
}

/// An invalid argument of the bindings, as pcsim words one.
fn invalid(field: &str, problem: impl Into<String>) -> Error {
    Error::Invalid {
        file: ARGUMENT.into(),
        field: field.into(),
        problem: problem.into(),
    }
}

/// Runs `work` with the GIL released and turns its error into the matching exception.
fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> pcsim::Result<T> + Send,
) -> PyResult<T> {
    py.detach(work).map_err(|e| to_py(py, e))
}

/// A model catalog with its prices chosen (day, price sheet, service tier, overrides).
#[pyclass(frozen, module = "pcsim._pcsim", name = "Catalog")]
struct PyCatalog {
    inner: Arc<Catalog>,
}

#[pymethods]
impl PyCatalog {
    /// Loads the built-in catalog, an overlay on it (`overlay`, a path, or `overlay_text`), or a
    /// whole catalog instead of it (`only`), then prices it as `--on`, `--price-sheet`,
    /// `--service-tier`, `--regional` and `--price` do.
    #[new]
    #[pyo3(signature = (overlay=None, only=None, overlay_text=None, on=None, price_sheet=None,
        service_tier=None, regional=false, prices=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        overlay: Option<PathBuf>,
        only: Option<PathBuf>,
        overlay_text: Option<String>,
        on: Option<String>,
        price_sheet: Option<String>,
        service_tier: Option<String>,
        regional: bool,
        prices: Vec<String>,
    ) -> PyResult<Self> {
        let catalog = detached(py, move || {
            let catalog = match (&overlay, &only, &overlay_text) {
                (Some(p), None, None) => Catalog::load_overlay(p)?,
                (None, Some(p), None) => Catalog::load(p)?,
                (None, None, Some(text)) => Catalog::overlay_toml_str(text, "overlay_text")?,
                (None, None, None) => Catalog::embedded()?,
                _ => {
                    return Err(invalid(
                        "overlay",
                        "give at most one of overlay, only and overlay_text",
                    ))
                }
            };
            let on = on
                .map(|d| d.parse::<Day>().map_err(|problem| invalid("on", problem)))
                .transpose()?;
            let pricing = Pricing {
                sheet: price_sheet,
                on,
                service_tier,
                regional,
                overrides: prices
                    .iter()
                    .map(|p| PriceOverride::parse(p))
                    .collect::<pcsim::Result<_>>()?,
            };
            catalog.priced(&pricing)
        })?;
        Ok(PyCatalog {
            inner: Arc::new(catalog),
        })
    }

    /// Ids of every model of the catalog, in catalog order.
    fn model_ids(&self) -> Vec<String> {
        self.inner.models.iter().map(|m| m.id.clone()).collect()
    }

    /// The catalog's origin (`built-in models.toml` or the file it was read from).
    #[getter]
    fn origin(&self) -> String {
        self.inner.origin.clone()
    }
}

/// A validated scenario.
#[pyclass(frozen, module = "pcsim._pcsim", name = "Scenario")]
struct PyScenario {
    inner: Arc<Scenario>,
}

#[pymethods]
impl PyScenario {
    /// Parses scenario TOML text; `origin` names it in errors, tool files are relative to `base_dir`.
    #[staticmethod]
    fn from_toml(
        py: Python<'_>,
        text: String,
        origin: String,
        base_dir: PathBuf,
    ) -> PyResult<Self> {
        let s = detached(py, move || {
            Scenario::from_toml_str(&text, &origin, &base_dir)
        })?;
        Ok(Self::wrap(s))
    }

    /// Parses a scenario given as JSON text of the TOML document's structure (a Python dict).
    #[staticmethod]
    fn from_json(
        py: Python<'_>,
        json: String,
        origin: String,
        base_dir: PathBuf,
    ) -> PyResult<Self> {
        let s = detached(py, move || {
            let value: serde_json::Value =
                serde_json::from_str(&json).map_err(|e| Error::Parse {
                    file: origin.clone(),
                    message: format!("not a scenario document: {e}"),
                })?;
            let text = toml::to_string(&value).map_err(|e| Error::Parse {
                file: origin.clone(),
                message: format!("not a scenario document (it must be a table of TOML values, without None): {e}"),
            })?;
            Scenario::from_toml_str(&text, &origin, &base_dir)
        })?;
        Ok(Self::wrap(s))
    }

    /// Loads a scenario file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let s = detached(py, move || Scenario::load(&path))?;
        Ok(Self::wrap(s))
    }

    /// The built-in default scenario (what `pcsim run` simulates without a file).
    #[staticmethod]
    fn builtin_default(py: Python<'_>) -> PyResult<Self> {
        let s = detached(py, Scenario::builtin_default)?;
        Ok(Self::wrap(s))
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// The scenario's one-line description.
    #[getter]
    fn description(&self) -> String {
        self.inner.description.clone()
    }
    /// Where it was read from.
    #[getter]
    fn origin(&self) -> String {
        self.inner.origin.clone()
    }
    /// Calls per session.
    #[getter]
    fn calls(&self) -> usize {
        self.inner.calls
    }
    /// Sessions.
    #[getter]
    fn sessions(&self) -> usize {
        self.inner.sessions
    }
    /// Monte Carlo runs.
    #[getter]
    fn runs(&self) -> usize {
        self.inner.runs
    }
    /// Seed of the random draws.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }
    /// The scenario's model ids (empty: the six measured models).
    #[getter]
    fn models(&self) -> Vec<String> {
        self.inner.models.clone()
    }
    /// The scenario's strategies.
    #[getter]
    fn strategies(&self) -> Vec<String> {
        self.inner.strategies.clone()
    }
    /// Names of the scenario's tools at the start.
    fn tool_names(&self) -> Vec<String> {
        self.inner.tools.iter().map(|t| t.name.clone()).collect()
    }
}

impl PyScenario {
    fn wrap(s: Scenario) -> Self {
        PyScenario { inner: Arc::new(s) }
    }
}

/// A finished report kept in memory, for its charts.
enum Kept {
    Run(pcsim::RunReport),
    Compare(pcsim::CompareReport),
    Whatif(pcsim::analysis::whatif::WhatifReport),
    Advise(pcsim::analysis::advise::AdviceReport),
}

/// A report of `run`, `compare`, `whatif` or `advise`, for its charts and its report document
/// (not picklable: the Python result re-runs its request when unpickled and asked for either).
#[pyclass(frozen, module = "pcsim._pcsim", name = "Report")]
struct PyReport {
    kept: Kept,
    /// The catalog it was priced with and the scenario as resolved (runs and seed overridden),
    /// for the document's prices, assumptions and provenance.
    catalog: Arc<Catalog>,
    scenario: Scenario,
    /// The text table the command prints (the document's "As printed by pcsim").
    table: String,
}

#[pymethods]
impl PyReport {
    /// The report's charts as `(file name, PNG or SVG bytes)`, as `--out DIR` writes them.
    #[pyo3(signature = (width=1600, height=1000, svg=false, log_scale=false))]
    fn charts<'py>(
        &self,
        py: Python<'py>,
        width: u32,
        height: u32,
        svg: bool,
        log_scale: bool,
    ) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let opts = ChartOptions {
            width,
            height,
            svg,
            log_scale,
        };
        let files: Vec<ChartFile> = detached(py, || match &self.kept {
            Kept::Run(r) => chart::run_charts(r, &opts),
            Kept::Compare(r) => chart::compare_charts(r, &opts),
            Kept::Whatif(r) => chart::whatif_charts(r, &opts),
            Kept::Advise(r) => chart::advise_charts(r, &opts),
        })?;
        Ok(files
            .into_iter()
            .map(|f| (f.name, PyBytes::new(py, &f.bytes)))
            .collect())
    }

    /// The files of the report document at `path` (`.html`: one file; `.md`: its PNGs, then the
    /// Markdown), as `--report path` writes them, as `(path, bytes)` in writing order; with
    /// `write`, written atomically too. `command_line` is shown in its provenance.
    #[pyo3(signature = (path, command_line, width=1600, height=1000, log_scale=false, write=false))]
    #[allow(clippy::too_many_arguments)]
    fn report_files<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        command_line: String,
        width: u32,
        height: u32,
        log_scale: bool,
        write: bool,
    ) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let files = detached(py, || {
            let format = ReportFormat::of_path(&path).ok_or_else(|| {
                invalid(
                    "path",
                    format!(
                        "`{}`: the file name must end in .html (one self-contained file) or .md (Markdown with PNGs beside it)",
                        path.display()
                    ),
                )
            })?;
            let opts = DocumentOptions {
                charts: ChartOptions {
                    width,
                    height,
                    svg: false,
                    log_scale,
                },
                command_line,
            };
            let (c, s, t) = (&*self.catalog, &self.scenario, self.table.as_str());
            let doc = match &self.kept {
                Kept::Run(r) => report::run_document(c, s, r, &opts, t),
                Kept::Compare(r) => report::compare_document(c, s, r, &opts, t),
                Kept::Whatif(r) => report::whatif_document(c, s, r, &opts, t),
                Kept::Advise(r) => report::advise_document(c, s, r, &opts, t),
            }?;
            if write {
                doc.write(&path, format)?;
            }
            Ok(doc.files(&path, format))
        })?;
        Ok(files
            .into_iter()
            .map(|(p, b)| (p.display().to_string(), PyBytes::new(py, &b)))
            .collect())
    }
}

/// What a command prints: its report kept for charts, the JSON, the text table and the CSV.
type Printed = (PyReport, String, String, String);

fn printed(
    kept: Kept,
    catalog: Arc<Catalog>,
    scenario: Scenario,
    json: String,
    table: String,
    csv: String,
) -> Printed {
    let report = PyReport {
        kept,
        catalog,
        scenario,
        table: table.clone(),
    };
    (report, json, table, csv)
}

/// `pcsim run`: the scenario on the selected models and strategies.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (catalog, scenario, models, strategies, runs=None, seed=None, per_call=false))]
fn run(
    py: Python<'_>,
    catalog: &PyCatalog,
    scenario: &PyScenario,
    models: Vec<String>,
    strategies: Vec<String>,
    runs: Option<u64>,
    seed: Option<u64>,
    per_call: bool,
) -> PyResult<Printed> {
    let (catalog, scenario) = (catalog.inner.clone(), scenario.inner.clone());
    detached(py, move || {
        let request = Selection::new(&models, &strategies)
            .overrides(runs, seed)
            .resolve(&catalog, (*scenario).clone())?;
        let rep = pcsim::run_request(&request, &|_| {})?;
        let json = report::to_json(&rep)?;
        let table = report::run_table(&rep, per_call);
        let csv = report::run_csv(&rep);
        Ok(printed(
            Kept::Run(rep),
            catalog.clone(),
            request.scenario,
            json,
            table,
            csv,
        ))
    })
}

/// `pcsim compare`: the scenario under several strategies, `none` as the baseline.
#[pyfunction]
#[pyo3(signature = (catalog, scenario, models, strategies, runs=None, seed=None))]
fn compare(
    py: Python<'_>,
    catalog: &PyCatalog,
    scenario: &PyScenario,
    models: Vec<String>,
    strategies: Vec<String>,
    runs: Option<u64>,
    seed: Option<u64>,
) -> PyResult<Printed> {
    let (catalog, scenario) = (catalog.inner.clone(), scenario.inner.clone());
    detached(py, move || {
        let request = compare_analysis::selection(&models, &strategies)
            .overrides(runs, seed)
            .resolve(&catalog, (*scenario).clone())?;
        let rep = compare_analysis::compare_request(&request)?;
        let (json, table, csv) = (report::to_json(&rep)?, rep.table(), rep.csv());
        Ok(printed(
            Kept::Compare(rep),
            catalog.clone(),
            request.scenario,
            json,
            table,
            csv,
        ))
    })
}

/// `pcsim advise`: breakpoints, TTL tier and tools to drop per model.
#[pyfunction]
#[pyo3(signature = (catalog, scenario, models, runs=None, seed=None))]
fn advise(
    py: Python<'_>,
    catalog: &PyCatalog,
    scenario: &PyScenario,
    models: Vec<String>,
    runs: Option<u64>,
    seed: Option<u64>,
) -> PyResult<Printed> {
    let (catalog, scenario) = (catalog.inner.clone(), scenario.inner.clone());
    detached(py, move || {
        let request = advise_analysis::selection(&models)
            .overrides(runs, seed)
            .resolve(&catalog, (*scenario).clone())?;
        let rep = advise_analysis::advise_request(&request)?;
        let (json, table) = (report::to_json(&rep)?, rep.table());
        Ok(printed(
            Kept::Advise(rep),
            catalog.clone(),
            request.scenario,
            json,
            table,
            String::new(),
        ))
    })
}

/// `pcsim explain TRACE...`: why each call of a trace missed the cache, what it cost, and what the
/// mechanical fixes would save; the JSON `--format json` prints. A trace with no explainable call
/// is refused as the command refuses it.
#[pyfunction]
#[pyo3(signature = (catalog, paths, model=None, session_gap_minutes=0.0, redact=false))]
fn explain(
    py: Python<'_>,
    catalog: &PyCatalog,
    paths: Vec<PathBuf>,
    model: Option<String>,
    session_gap_minutes: f64,
    redact: bool,
) -> PyResult<(String, String, String)> {
    let catalog = catalog.inner.clone();
    detached(py, move || {
        let Some(first) = paths.first() else {
            return Err(invalid("paths", "give at least one trace file or folder"));
        };
        let opts = ExplainOptions {
            session_gap_seconds: session_gap_minutes * 60.0,
            redact,
            model,
        };
        let e = explain_paths(&catalog, &paths, opts)?;
        if e.calls.is_empty() {
            return Err(Error::Invalid {
                file: first.display().to_string(),
                field: "trace".into(),
                problem: format!(
                    "no call could be explained ({} records skipped{})",
                    e.skipped_count,
                    e.skipped.first().map_or(String::new(), |s| format!(
                        "; first: {}: {}",
                        s.at, s.reason
                    ))
                ),
            });
        }
        Ok((
            report::to_json(&e)?,
            report::explain_table(&e),
            report::explain_csv(&e),
        ))
    })
}

/// Tool lists given to the bindings: JSON texts with the names that identify them in errors.
type ToolTexts = Vec<(String, String)>;

/// The tools of several lists together, as `pcsim tools FILE...` loads several files: in order,
/// names unique over all of them, at most [`MAX_TOOLS`].
fn tools_of(lists: &ToolTexts, field: &str) -> pcsim::Result<Vec<Tool>> {
    let mut all: Vec<Tool> = Vec::new();
    for (text, origin) in lists {
        for tool in parse_tool_list(text, origin)? {
            if all.iter().any(|t| t.name == tool.name) {
                return Err(Error::Invalid {
                    file: origin.clone(),
                    field: field.into(),
                    problem: format!(
                        "tool `{}` is defined twice in the given lists; a request cannot carry two tools of one name",
                        tool.name
                    ),
                });
            }
            all.push(tool);
        }
        if all.len() > MAX_TOOLS {
            return Err(invalid(
                field,
                format!("{} tools, more than the limit of {MAX_TOOLS}", all.len()),
            ));
        }
    }
    Ok(all)
}

fn trim_named(name: &str) -> pcsim::Result<Trim> {
    Ok(match name {
        "first-sentence" => Trim::FirstSentence,
        "no-param-descriptions" => Trim::NoParamDescriptions,
        "required-only" => Trim::RequiredOnly,
        "all" => Trim::All,
        _ => {
            return Err(invalid(
                "trim",
                format!("unknown trim `{name}` (one of first-sentence, no-param-descriptions, required-only, all)"),
            ))
        }
    })
}

/// `pcsim whatif`: the scenario against the same scenario with a tool-list change before `at_call`.
#[pyfunction]
#[pyo3(signature = (catalog, scenario, at_call, add, remove, keep, remove_servers, trim, replace,
    models, strategies, runs=None, seed=None))]
#[allow(clippy::too_many_arguments)]
fn whatif(
    py: Python<'_>,
    catalog: &PyCatalog,
    scenario: &PyScenario,
    at_call: usize,
    add: ToolTexts,
    remove: Vec<String>,
    keep: Option<Vec<String>>,
    remove_servers: Vec<String>,
    trim: Option<String>,
    replace: Option<ToolTexts>,
    models: Vec<String>,
    strategies: Vec<String>,
    runs: Option<u64>,
    seed: Option<u64>,
) -> PyResult<Printed> {
    let (catalog, scenario) = (catalog.inner.clone(), scenario.inner.clone());
    detached(py, move || {
        let change = ToolChange {
            add: tools_of(&add, "add_tools")?,
            remove,
            keep,
            replace: replace.map(|r| tools_of(&r, "replace_tools")).transpose()?,
            remove_servers,
            trim: trim.as_deref().map(trim_named).transpose()?,
        };
        let (changed, summary) = whatif_analysis::apply_change(&scenario, at_call, &change)?;
        let request = whatif_analysis::selection_at(&models, &strategies, at_call)
            .overrides(runs, seed)
            .resolve(&catalog, (*scenario).clone())?;
        let rep = whatif_analysis::whatif_request(&request, &changed, at_call, summary)?;
        let (json, table, csv) = (report::to_json(&rep)?, rep.table(), rep.csv());
        Ok(printed(
            Kept::Whatif(rep),
            catalog.clone(),
            request.scenario,
            json,
            table,
            csv,
        ))
    })
}

/// Models for a list of ids (each once, in the order first named), or the measured six when empty:
/// what `pcsim tools` and `pcsim replay --model` price.
fn select<'c>(catalog: &'c Catalog, ids: &[String]) -> pcsim::Result<Vec<&'c ModelSpec>> {
    if ids.is_empty() {
        return MEASURED_MODELS.iter().map(|id| catalog.model(id)).collect();
    }
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .filter(|id| seen.insert(id.as_str()))
        .map(|id| catalog.model(id))
        .collect()
}

/// The tool block of `tools` on `model` (preamble included) and each tool's tokens, as `pcsim tools`
/// counts them.
fn block(model: &ModelSpec, tools: &[Tool]) -> (u64, Vec<u64>) {
    let r = model.rendering();
    if r.template == TemplateKind::Linear {
        let per: Vec<u64> = tools.iter().map(|t| r.tool_tokens(t)).collect();
        let sum: u64 = per.iter().sum();
        return (r.preamble_for(tools, sum) + sum, per);
    }
    let (block, per) = r.block_and_tool_tokens(tools);
    let sum: u64 = per.iter().sum();
    (block.max(sum), per)
}

/// `pcsim tools --format json`: what the tool lists cost per call on each model, per tool, and what
/// each trim would save (the same keys).
#[pyfunction]
fn tools_cost(
    py: Python<'_>,
    catalog: &PyCatalog,
    lists: ToolTexts,
    models: Vec<String>,
) -> PyResult<String> {
    let catalog = catalog.inner.clone();
    detached(py, move || {
        let models = select(&catalog, &models)?;
        let tools = tools_of(&lists, "tools")?;
        let trims = [
            Trim::FirstSentence,
            Trim::NoParamDescriptions,
            Trim::RequiredOnly,
            Trim::All,
        ];
        let trimmed: Vec<(Trim, Vec<Tool>)> = trims.iter().map(|t| (*t, t.apply(&tools))).collect();
        let mut rows = Vec::new();
        for m in models {
            let (total, per) = block(m, &tools);
            let share = |x: u64| {
                if total == 0 {
                    0.0
                } else {
                    x as f64 / total as f64
                }
            };
            let mut costs: Vec<(&str, u64)> = tools
                .iter()
                .zip(&per)
                .map(|(t, &n)| (t.name.as_str(), n))
                .collect();
            costs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let trims: Vec<serde_json::Value> = trimmed
                .iter()
                .map(|(trim, ts)| {
                    let after = block(m, ts).0;
                    let saved = total as i64 - after as i64;
                    serde_json::json!({
                        "trim": trim,
                        "tool_block_tokens": after,
                        "saved_tokens": saved,
                        "saved_percent": if total == 0 { 0.0 } else { 100.0 * saved as f64 / total as f64 },
                        "saved_usd_per_call": m.input_usd(saved as f64),
                    })
                })
                .collect();
            let usd_per_call = m.input_usd(total as f64);
            rows.push(serde_json::json!({
                "model": m.id,
                "model_name": m.name,
                "family": m.family,
                "input_usd_per_mtok": m.input_usd_per_mtok.value,
                "tool_block_tokens": total,
                "preamble_tokens": total - per.iter().sum::<u64>(),
                "usd_per_call": usd_per_call,
                "usd_per_10_calls": usd_per_call * 10.0,
                "tools": costs.iter().map(|(name, tokens)| serde_json::json!({
                    "name": name, "tokens": tokens, "share": share(*tokens),
                })).collect::<Vec<_>>(),
                "trims": trims,
            }));
        }
        report::to_json(&serde_json::json!({"tool_count": tools.len(), "models": rows}))
    })
}

/// `pcsim replay LOG...` over log files, by the library's replay of logs (`replay_logs`, the one
/// the command calls): JSON `{"files": [...], "files_skipped": [...], "models_named": bool}`, one entry per replayed file
/// with its counters and one result per (model, strategy), each call on its own logged model (calls
/// of models outside the catalog left out) unless `models` names some; the stable prefix is inferred
/// from each log when a strategy needs one and `prefix_tokens` is 0. With `skip_bad`, a file that
/// cannot be read is listed in `files_skipped` with the reason (the command's behaviour with several
/// files); without it, its error is raised. No call priced at all is an error, as in the command.
#[pyfunction]
#[pyo3(signature = (catalog, paths, models, strategies, gap_seconds=30.0, prefix_tokens=0,
    session_gap_minutes=0.0, seed=None, keep_calls=false, skip_bad=false))]
#[allow(clippy::too_many_arguments)]
fn replay_files(
    py: Python<'_>,
    catalog: &PyCatalog,
    paths: Vec<PathBuf>,
    models: Vec<String>,
    strategies: Vec<String>,
    gap_seconds: f64,
    prefix_tokens: u64,
    session_gap_minutes: f64,
    seed: Option<u64>,
    keep_calls: bool,
    skip_bad: bool,
) -> PyResult<String> {
    let catalog = catalog.inner.clone();
    detached(py, move || {
        if !(session_gap_minutes.is_finite() && session_gap_minutes >= 0.0) {
            return Err(invalid(
                "session_gap_minutes",
                format!("value {session_gap_minutes} must be a non-negative number"),
            ));
        }
        let mut request = ReplayRequest::new(paths);
        request.strategies = strategies
            .iter()
            .map(|s| Strategy::parse(s))
            .collect::<pcsim::Result<_>>()?;
        let models_named = !models.is_empty();
        request.models = models;
        request.options = ReplayOptions {
            gap_seconds,
            prefix_tokens,
            session_gap_seconds: session_gap_minutes * 60.0,
            seed,
            ..ReplayOptions::default()
        };
        request.keep_calls = keep_calls;
        request.skip_bad = skip_bad;
        let outcome = replay_logs(&catalog, &request)?;
        report::to_json(&serde_json::json!({
            "files": outcome.files,
            "files_skipped": outcome.files_skipped,
            "models_named": models_named,
        }))
    })
}

/// Dollars as pcsim prints them (`$0.000388`: six decimals).
#[pyfunction]
fn usd(x: f64) -> String {
    report::usd(x)
}

/// The native module.
#[pymodule]
fn _pcsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCatalog>()?;
    m.add_class::<PyScenario>()?;
    m.add_class::<PyReport>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(advise, m)?)?;
    m.add_function(wrap_pyfunction!(whatif, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(tools_cost, m)?)?;
    m.add_function(wrap_pyfunction!(replay_files, m)?)?;
    m.add_function(wrap_pyfunction!(usd, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
