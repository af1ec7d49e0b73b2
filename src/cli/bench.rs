//! `pcsim bench`: simulator speed on the built-in workload, the tokenizer's load, replay's
//! throughput, and the load average they were measured under.

use std::io::Write;

use anyhow::Result;

use super::Format;
use crate::model::catalog::Catalog;
use crate::report;
use crate::sim::bench::{load_average, run_bench, BenchOptions};

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// Output format (csv prints the table).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Least seconds of each calls-per-second measurement.
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    pub seconds: f64,
    /// Runs per model of the timed Monte Carlo (the figure is scaled to 10,000 runs).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub montecarlo_runs: u64,
}

/// Runs `pcsim bench`.
pub(crate) fn cmd_bench(catalog: &Catalog, a: BenchArgs, out: &mut dyn Write) -> Result<()> {
    if !a.seconds.is_finite() || a.seconds < 0.0 || a.seconds > 3600.0 {
        return Err(crate::Error::invalid(
            "command line",
            "--seconds",
            format!("value {} must be between 0 and 3600", a.seconds),
        )
        .into());
    }
    if a.montecarlo_runs == 0 || a.montecarlo_runs > crate::sim::montecarlo::MAX_RUNS {
        return Err(crate::Error::invalid(
            "command line",
            "--montecarlo-runs",
            format!(
                "value {} must be between 1 and {}",
                a.montecarlo_runs,
                crate::sim::montecarlo::MAX_RUNS
            ),
        )
        .into());
    }
    let mut r = run_bench(
        catalog,
        BenchOptions {
            min_seconds: a.seconds,
            montecarlo_runs: a.montecarlo_runs,
        },
    )?;
    r.replay = Some(crate::analysis::bench::replay_speed(
        catalog,
        a.seconds / 2.0,
    )?);
    r.replay_compact = Some(crate::analysis::bench::compact_replay_speed(
        catalog,
        a.seconds / 2.0,
    )?);
    r.load_average_after = load_average();
    match a.format {
        Format::Json => out.write_all(report::to_json(&r)?.as_bytes())?,
        Format::Table | Format::Csv => out.write_all(report::bench::bench_text(&r).as_bytes())?,
    }
    Ok(())
}
