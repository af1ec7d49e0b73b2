//! `pcsim bench`: simulator speed on the built-in workload.

use std::io::Write;

use anyhow::Result;

use super::Format;
use crate::model::catalog::Catalog;
use crate::report::{self, table::TextTable};
use crate::sim::bench::{run_bench, BenchOptions};

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
    let r = run_bench(
        catalog,
        BenchOptions {
            min_seconds: a.seconds,
            montecarlo_runs: a.montecarlo_runs,
        },
    )?;
    match a.format {
        Format::Json => out.write_all(report::to_json(&r)?.as_bytes())?,
        Format::Table | Format::Csv => {
            let mut t = TextTable::new(&["measure", "value"], &[false, true]);
            let m = |x: f64| format!("{:.2} M", x / 1e6);
            t.row(vec![
                "simulated calls/s, 1 thread (6 models per pass)".into(),
                m(r.calls_per_second_1_thread),
            ]);
            t.row(vec![
                "  same, each model alone in turn".into(),
                m(r.calls_per_second_1_thread_models_apart),
            ]);
            if let Some(x) = r.calls_per_cpu_second_1_thread {
                t.row(vec![
                    "simulated calls per CPU-second, 1 thread".into(),
                    m(x),
                ]);
            }
            t.row(vec![
                "  same, every amount fixed at its mean (no draws)".into(),
                m(r.calls_per_cpu_second_1_thread_fixed_amounts),
            ]);
            t.row(vec![
                format!("simulated calls/s, {} threads", r.threads),
                m(r.calls_per_second_all_threads),
            ]);
            if let Some(x) = r.calls_per_cpu_second_all_threads {
                t.row(vec![
                    "simulated calls per CPU-second, all threads".into(),
                    m(x),
                ]);
            }
            if let Some(x) = r.cpu_share_1_thread {
                t.row(vec![
                    "CPU share of the 1-thread run".into(),
                    format!("{:.0}%", x * 100.0),
                ]);
            }
            t.row(vec![
                format!(
                    "Monte Carlo, 1 session x 6 models x {} runs",
                    r.montecarlo_runs
                ),
                format!("{:.3} s", r.montecarlo_seconds),
            ]);
            t.row(vec![
                "Monte Carlo, scaled to 10,000 runs".into(),
                format!("{:.3} s", r.montecarlo_10k_seconds),
            ]);
            for s in &r.per_model_1_thread {
                t.row(vec![
                    format!("  {} alone, calls/s, 1 thread", s.model),
                    m(s.calls_per_second),
                ]);
            }
            writeln!(
                out,
                "workload: {} (release build figures only mean something)",
                r.workload
            )?;
            out.write_all(t.render().as_bytes())?;
        }
    }
    Ok(())
}
