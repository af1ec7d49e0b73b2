//! The command line (feature `cli`, on by default): clap definitions and the glue from arguments to
//! library calls. Its one public item is [`main`], which the `pcsim` binary calls; everything else is
//! the program's own and stays inside the crate, so the library's public API is only what the layers
//! export on purpose.

/// `eprintln!` with the text escaped for the terminal ([`crate::report::terminal::escape`]): warnings
/// carry names, ids and server output from untrusted inputs.
macro_rules! eprintln_safe {
    ($($t:tt)*) => {
        eprintln!("{}", crate::report::terminal::escape(&format!($($t)*)))
    };
}

mod advise;
mod bench;
mod calibrate;
mod capture;
mod compare;
mod config;
mod diff;
mod docreport;
mod explain;
mod fit;
mod flags;
mod import_litellm;
mod models;
mod outputs;
mod progress;
mod replay;
mod replay_change;
mod run;
mod sweep;
mod tools;
mod whatif;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::model::pricing::{parse_day, PriceOverride, Pricing};
use crate::report;
use crate::report::chart::{ChartFile, ChartOptions};

/// Prompt-cache cost simulator: what an agent session costs on each model, with and without caching.
#[derive(Debug, Parser)]
#[command(name = "pcsim", version, about, long_about = None)]
pub(crate) struct Cli {
    /// No progress bar and no `wrote FILE` lines (the report itself, warnings and errors stay).
    #[arg(
        long,
        short = 'q',
        global = true,
        help_heading = "Output (every command)"
    )]
    pub quiet: bool,
    /// A catalog file laid on the built-in models.toml: its models, families and price sheets
    /// replace the built-in ones of the same id and add the others.
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)",
        value_name = "FILE",
        conflicts_with = "only_catalog"
    )]
    pub catalog: Option<PathBuf>,
    /// A catalog file to use instead of the built-in models.toml (nothing built-in is kept).
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)",
        value_name = "FILE"
    )]
    pub only_catalog: Option<PathBuf>,
    /// Price at the list prices in force on this day (YYYY-MM-DD) [default: today, UTC].
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)",
        value_name = "DATE"
    )]
    pub on: Option<String>,
    /// Price at a named price sheet of the catalog, e.g. `study-2026-07-31` (the measured study's
    /// gateway rates, on which the measured facts hold).
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)",
        value_name = "SHEET"
    )]
    pub price_sheet: Option<String>,
    /// Service tier: standard, batch, flex, priority or off-peak (each model's own multipliers;
    /// off-peak: DeepSeek's off-peak hours, every call at their rates).
    #[arg(long, global = true, help_heading = "Catalog and pricing (every command)", value_name = "TIER", value_parser = ["standard", "batch", "flex", "priority", "off-peak"])]
    pub service_tier: Option<String>,
    /// Price at regional / data-residency endpoints (each model's regional multiplier, e.g. 1.1x).
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)"
    )]
    pub regional: bool,
    /// A model's prices in USD per million input and output tokens, in place of its list prices
    /// (repeatable), e.g. `--price kimi-k3=2.5,12`. A service tier and --regional still scale them;
    /// cache multipliers apply to them; long-context prices are not changed.
    #[arg(
        long,
        global = true,
        help_heading = "Catalog and pricing (every command)",
        value_name = "MODEL=IN,OUT"
    )]
    pub price: Vec<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The largest token count a flag takes (`--prefix-tokens`, `--tool-tokens-delta`): a thousand times
/// the largest context window, so no real value is refused, and sums of it with logged counts stay far
/// from overflowing (`18446744073709551615` used to wrap to 99).
pub(crate) const MAX_FLAG_TOKENS: i64 = 1_000_000_000;

/// Output formats of tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum Format {
    /// Aligned text for the terminal.
    #[default]
    Table,
    /// Comma-separated values.
    Csv,
    /// JSON.
    Json,
}

/// Output formats of reports that have no CSV form (nested or one per server); `--format csv` is
/// refused by the argument parser (exit 2) and `--help` does not offer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum TextFormat {
    /// Aligned text for the terminal.
    #[default]
    Table,
    /// JSON.
    Json,
}

impl From<TextFormat> for Format {
    fn from(f: TextFormat) -> Self {
        match f {
            TextFormat::Table => Format::Table,
            TextFormat::Json => Format::Json,
        }
    }
}

/// Refuses a pricing flag given to a command that prices nothing (it was accepted and ignored):
/// `capture` lists a server's tools, `import-litellm` converts a price file as it is, `bench` times
/// the engine.
fn refuse_unused_pricing(cli: &Cli) -> Result<()> {
    let command = match &cli.command {
        Some(Command::Capture(_)) => "capture",
        Some(Command::ImportLitellm(_)) => "import-litellm",
        Some(Command::Bench(_)) => "bench",
        _ => return Ok(()),
    };
    let given = [
        ("--on", cli.on.is_some()),
        ("--price-sheet", cli.price_sheet.is_some()),
        ("--service-tier", cli.service_tier.is_some()),
        ("--regional", cli.regional),
        ("--price", !cli.price.is_empty()),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
        anyhow::bail!(crate::Error::invalid(
            crate::sim::request::COMMAND_LINE,
            *flag,
            format!("`pcsim {command}` prices nothing, so {flag} would have no effect; the commands that price are run, compare, whatif, advise, diff, tools, sweep, config, replay, explain, fit and models")
        ));
    }
    Ok(())
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Simulate a scenario: per-call bills and totals per model and strategy.
    Run(run::RunArgs),
    /// List the model catalog.
    Models(models::ModelsArgs),
    /// Compare caching strategies on the same session: totals, savings against no caching.
    Compare(compare::CompareArgs),
    /// What a tool-list change at call K costs, and when it pays for itself.
    Whatif(whatif::WhatifArgs),
    /// Recommend breakpoints, TTL and tools to drop, each with its simulated saving.
    Advise(advise::AdviseArgs),
    /// Two scenarios, or two tool configurations, side by side: what B saves against A.
    Diff(diff::DiffArgs),
    /// Tokens and dollars per call of tool definitions (MCP captures), per tool, and trimming savings.
    Tools(tools::ToolsArgs),
    /// Tool-block tokens and dollars per call for 0..N synthetic tools of identical shape.
    Sweep(sweep::SweepArgs),
    /// Start an MCP server over stdio and capture its tool list.
    Capture(capture::CaptureArgs),
    /// Capture every server of an MCP client configuration and report its tool-block overhead.
    Config(config::ConfigArgs),
    /// Convert LiteLLM's model_prices_and_context_window.json into a pcsim catalog.
    ImportLitellm(import_litellm::ImportLitellmArgs),
    /// Replay a usage log: logged against predicted tokens and dollars, per call and in total.
    Replay(replay::ReplayArgs),
    /// Explain a trace of full requests and responses: why each call missed the cache, what it
    /// cost, and what the mechanical fixes would save.
    Explain(explain::ExplainArgs),
    /// Fit a scenario to a usage history (sessions, calls, gaps, message and output sizes, the
    /// stable prefix), with the fit quality of every parameter.
    Fit(fit::FitArgs),
    /// Measure simulator speed on a built-in workload (calls per second, Monte Carlo time).
    Bench(bench::BenchArgs),
    /// Fit a family's tool-token factor and preamble to measured tokens (a catalog overlay), or
    /// show the built-in fit to the measured facts (`--facts`).
    Calibrate(calibrate::CalibrateArgs),
}

/// Runs the parsed command, writing to `out`.
pub(crate) fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    refuse_unused_pricing(&cli)?;
    let catalog = match (&cli.catalog, &cli.only_catalog) {
        (Some(p), _) => Catalog::load_overlay(p)?,
        (None, Some(p)) => Catalog::load(p)?,
        (None, None) => Catalog::embedded()?,
    };
    let pricing = Pricing {
        sheet: cli.price_sheet.clone(),
        on: cli
            .on
            .as_deref()
            .map(|d| parse_day("--on", d, d))
            .transpose()?,
        service_tier: cli.service_tier.clone(),
        regional: cli.regional,
        overrides: cli
            .price
            .iter()
            .map(|p| PriceOverride::parse(p))
            .collect::<std::result::Result<_, _>>()?,
    };
    let catalog = catalog.priced(&pricing)?;
    match cli.command.unwrap_or(Command::Run(run::RunArgs::default())) {
        Command::Run(a) => run::cmd_run(&catalog, a, out),
        Command::Models(a) => models::cmd_models(&catalog, a, pricing.on, out),
        Command::Compare(a) => compare::cmd_compare(&catalog, a, out),
        Command::Whatif(a) => whatif::cmd_whatif(&catalog, a, out),
        Command::Advise(a) => advise::cmd_advise(&catalog, a, out),
        Command::Diff(a) => diff::cmd_diff(&catalog, a, out),
        Command::Tools(a) => tools::cmd_tools(&catalog, a, out),
        Command::Sweep(a) => sweep::cmd_sweep(&catalog, a, out),
        Command::Capture(a) => capture::cmd_capture(a, out),
        Command::Config(a) => config::cmd_config(&catalog, a, out),
        Command::ImportLitellm(a) => import_litellm::cmd_import_litellm(a, out),
        Command::Replay(a) => replay::cmd_replay(&catalog, a, out),
        Command::Explain(a) => explain::cmd_explain(&catalog, a, out),
        Command::Fit(a) => fit::cmd_fit(&catalog, a, out),
        Command::Bench(a) => bench::cmd_bench(&catalog, a, out),
        Command::Calibrate(a) => calibrate::cmd_calibrate(&catalog, a, out),
    }
}

/// The scenario at `path`, or the built-in default.
pub(crate) fn load_scenario(path: &Option<PathBuf>) -> Result<Scenario> {
    Ok(match path {
        Some(p) => Scenario::load(p)?,
        None => Scenario::builtin_default()?,
    })
}

/// `--quiet`: set once from the command line before any command runs.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `--quiet` was given (no progress bar, no `wrote FILE` lines).
pub(crate) fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes one report file atomically and tells the user where it went (a set of one, see
/// [`write_report_set`]).
#[allow(dead_code)] // kept for commands that write a single file
pub(crate) fn write_reported(dir: &Path, name: &str, bytes: &[u8], format: Format) -> Result<()> {
    write_report_set(dir, &[(name, bytes)], format)
}

/// Writes a whole report set into `dir` ([`report::write_set`]: all members or none) and tells the
/// user where each file went.
pub(crate) fn write_report_set(dir: &Path, files: &[(&str, &[u8])], format: Format) -> Result<()> {
    // A file already there (a report of an earlier run, or a file of the user's own) is replaced
    // whole, and said so: never silently.
    let existed: Vec<bool> = files
        .iter()
        .map(|(n, _)| std::fs::symlink_metadata(dir.join(n)).is_ok())
        .collect();
    let paths = report::write_set(dir, files)
        .with_context(|| format!("writing the reports into {}", dir.display()))?;
    for (path, existed) in paths.into_iter().zip(existed) {
        let shown = crate::report::terminal::escape(&path.display().to_string()).into_owned();
        let verb = if existed { "replaced" } else { "wrote" };
        let _ = if quiet() {
            Ok(())
        } else if format == Format::Table {
            writeln!(std::io::stdout(), "{verb} {shown}")
        } else {
            writeln!(std::io::stderr(), "{verb} {shown}")
        };
    }
    Ok(())
}

/// The report files and the rendered charts as one set for [`write_report_set`].
pub(crate) fn with_charts<'a>(
    files: &[(&'a str, &'a [u8])],
    charts: &'a [ChartFile],
) -> Vec<(&'a str, &'a [u8])> {
    let mut all = files.to_vec();
    all.extend(charts.iter().map(|c| (c.name.as_str(), c.bytes.as_slice())));
    all
}

/// Chart size when `--chart-size` is not given.
pub(crate) const DEFAULT_CHART_SIZE: &str = "1600x1000";

/// Chart flags shared by the commands that write charts into their `--out` folder.
#[derive(Debug, clap::Args, Default)]
pub(crate) struct ChartArgs {
    /// With --out: also write every chart as SVG.
    #[arg(long, requires = "out")]
    pub svg: bool,
    /// Size of the charts in pixels [default: 1600x1000].
    #[arg(long, value_name = "WxH")]
    pub chart_size: Option<String>,
    /// Cost axes of the line charts on a logarithmic scale.
    #[arg(long)]
    pub log_scale: bool,
}

impl ChartArgs {
    /// The PNG options; call before any simulation work so a bad size is reported first.
    pub(crate) fn png_options(&self) -> Result<ChartOptions> {
        let (width, height) = ChartOptions::parse_size(
            self.chart_size.as_deref().unwrap_or(DEFAULT_CHART_SIZE),
            "--chart-size",
        )?;
        Ok(ChartOptions {
            width,
            height,
            svg: false,
            log_scale: self.log_scale,
        })
    }

    /// Renders the charts with `make` as PNG, and also as SVG with `--svg`. Everything is rendered
    /// before anything is written, so a chart that cannot be drawn leaves no partial set of files.
    pub(crate) fn render(
        &self,
        png: ChartOptions,
        make: impl Fn(&ChartOptions) -> crate::Result<Vec<ChartFile>>,
    ) -> Result<Vec<ChartFile>> {
        let mut files = make(&png)?;
        if self.svg {
            files.extend(make(&ChartOptions { svg: true, ..png })?);
        }
        Ok(files)
    }
}

/// Prints warnings that a prompt (or a tool block alone) exceeds a model's context window on
/// standard error, one `warning:` line each: every command that prices prompts states them through
/// this one place, from the library's one check ([`crate::sim::simulate::context_warning`]).
pub(crate) fn warn_context(lines: impl IntoIterator<Item = String>) {
    for line in lines {
        eprintln_safe!("warning: {line}");
    }
}

/// The tool-block warnings of `models`: `block` gives each model's block as (tokens, how the
/// warning names it), `None` for no block.
pub(crate) fn tool_block_warnings<'a>(
    models: impl IntoIterator<Item = &'a crate::model::catalog::ModelSpec>,
    block: impl Fn(&crate::model::catalog::ModelSpec) -> Option<(u64, String)>,
) -> Vec<String> {
    models
        .into_iter()
        .filter_map(|m| {
            let (tokens, what) = block(m)?;
            crate::sim::simulate::tool_block_warning(m, tokens, &what)
        })
        .collect()
}

/// Prints a report on standard output in `format`: the table, the CSV or the JSON. The table and
/// the JSON state the skipped pairs themselves; CSV has no room for them, so with CSV they go to
/// standard error and an unsupported pair is never dropped silently.
pub(crate) fn print_report(
    out: &mut dyn Write,
    format: Format,
    table: &str,
    csv: &str,
    json: &str,
    skipped: &[crate::analysis::Skip],
) -> Result<()> {
    use crate::report::terminal::escape_inline as e;
    match format {
        Format::Table => out.write_all(table.as_bytes())?,
        Format::Json => out.write_all(json.as_bytes())?,
        Format::Csv => {
            out.write_all(csv.as_bytes())?;
            for s in skipped {
                eprintln!(
                    "skipped {} / {}: {}",
                    e(&s.model),
                    e(&s.strategy),
                    e(&s.reason)
                );
            }
        }
    }
    Ok(())
}

/// Most worker threads of pcsim's parallel work, per core and in all (`RAYON_NUM_THREADS` above
/// is capped): the work is split per core, and 600 threads under a memory limit made rayon panic
/// (issue 29).
const MAX_THREADS_PER_CORE: usize = 4;
/// See [`MAX_THREADS_PER_CORE`].
const MAX_THREADS: usize = 64;

/// Builds rayon's global pool with the threads asked for (`RAYON_NUM_THREADS`, else one per core),
/// capped by [`MAX_THREADS_PER_CORE`] and [`MAX_THREADS`], and by what can be started now. Rayon
/// builds its global pool once, leaks the threads of a failed build and panics on first use, so
/// the threads are first tried as plain threads (all alive at once, each with an allocation, as a
/// worker has its own memory arena); when not all start, half of those that did are used, leaving
/// memory for the work. With not even one thread, the failure is the error.
fn init_thread_pool() -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(cores)
        .min(cores.saturating_mul(MAX_THREADS_PER_CORE))
        .min(MAX_THREADS);
    let done = Arc::new(AtomicBool::new(false));
    let started: Vec<_> = (0..wanted)
        .map_while(|_| {
            let done = Arc::clone(&done);
            std::thread::Builder::new()
                .spawn(move || {
                    let held = std::hint::black_box(vec![0u8; 4096]);
                    while !done.load(Ordering::SeqCst) {
                        std::thread::park_timeout(std::time::Duration::from_millis(5));
                    }
                    drop(held);
                })
                .ok()
        })
        .collect();
    let n = match started.len() {
        k if k == wanted => wanted,
        k => (k / 2).max(1),
    };
    done.store(true, Ordering::SeqCst);
    for t in started {
        t.thread().unpark();
        let _ = t.join();
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| anyhow::anyhow!("cannot start {n} worker thread(s): {e}"))?;
    if n < wanted {
        eprintln_safe!(
            "note: {n} worker threads instead of {wanted}: no more could be started (memory or process limits)"
        );
    }
    Ok(())
}

/// The `pcsim` program: parses the process arguments, runs the command and maps errors to exit
/// codes (0 ok, 2 user error, 1 internal error). The binary is this one call.
pub fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Err(e) = init_thread_pool() {
        let _ = writeln!(std::io::stderr(), "error: {e:#}");
        return std::process::ExitCode::from(1);
    }
    // Every input file read from here on is remembered, so no report can be written over one.
    crate::base::files::protect_inputs();
    // An interruption removes the temporary files of reports being written (the program's own
    // choice: the library installs no signal handler).
    crate::base::signals::install_interrupt_cleanup();
    let stdout = std::io::stdout();
    use std::io::IsTerminal;
    // Names and descriptions from inputs may hold escape sequences: a terminal gets them escaped
    // (`\u{1b}`); a pipe or file gets the bytes as they are (CSV and JSON stay exact).
    let raw = std::io::BufWriter::new(stdout.lock());
    let mut out: Box<dyn Write> = if std::io::stdout().is_terminal() {
        Box::new(crate::report::terminal::EscapingWriter::new(raw))
    } else {
        Box::new(raw)
    };
    // A panic is a bug, never the user's fault: report it with the documented internal-error code 1
    // (the default would be 101). The panic message itself is printed by the default hook.
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(cli, &mut out).and_then(|()| out.flush().map_err(Into::into))
    })) {
        Ok(r) => r,
        Err(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: internal error (a bug in pcsim); please report it with the command line"
            );
            return std::process::ExitCode::from(1);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`pcsim ... | head`) is not a failure.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return std::process::ExitCode::SUCCESS;
            }
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                crate::report::terminal::escape(&message(&e))
            );
            let user = e.chain().any(|c| {
                c.downcast_ref::<crate::Error>()
                    .is_some_and(crate::Error::is_user_error)
            });
            std::process::ExitCode::from(if user { 2 } else { 1 })
        }
    }
}

/// The error and its causes on one line, skipping a cause whose text the message already holds (a
/// library error that prints its I/O cause would otherwise show it twice).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
