//! The command line: clap definitions and the glue from arguments to library calls.

mod models;
mod run;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use pcsim::catalog::Catalog;
use pcsim::report;
use pcsim::scenario::Scenario;

/// Prompt-cache cost simulator: what an agent session costs on each model, with and without caching.
#[derive(Debug, Parser)]
#[command(name = "pcsim", version, about, long_about = None)]
pub struct Cli {
    /// Model catalog to use instead of the built-in models.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Output formats of tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Aligned text for the terminal.
    #[default]
    Table,
    /// Comma-separated values.
    Csv,
    /// JSON.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scenario: per-call bills and totals per model and strategy.
    Run(run::RunArgs),
    /// List the model catalog.
    Models(models::ModelsArgs),
}

/// Runs the parsed command, writing to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    let catalog = match &cli.catalog {
        Some(p) => Catalog::load(p)?,
        None => Catalog::embedded()?,
    };
    match cli.command.unwrap_or(Command::Run(run::RunArgs::default())) {
        Command::Run(a) => run::cmd_run(&catalog, a, out),
        Command::Models(a) => models::cmd_models(&catalog, a, out),
    }
}

/// The scenario at `path`, or the built-in default.
pub fn load_scenario(path: &Option<PathBuf>) -> Result<Scenario> {
    Ok(match path {
        Some(p) => Scenario::load(p)?,
        None => Scenario::builtin_default()?,
    })
}

/// Writes one report file atomically and tells the user where it went.
pub fn write_reported(dir: &Path, name: &str, bytes: &[u8], format: Format) -> Result<()> {
    let path = dir.join(name);
    report::write_atomic(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    // Paths go to stderr when stdout carries machine-readable output.
    // `writeln!`, not `println!`: a closed pipe must not panic (the report is already written).
    let _ = if format == Format::Table {
        writeln!(std::io::stdout(), "wrote {}", path.display())
    } else {
        writeln!(std::io::stderr(), "wrote {}", path.display())
    };
    Ok(())
}
