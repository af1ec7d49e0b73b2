//! The built-in speed benchmark behind `pcsim bench` (and the Criterion benches): a realistic
//! workload of 100 concurrent 50-call sessions with 26 tools sharing one account's cache, on the six
//! measured models with their own caching; plus a 10,000-run Monte Carlo of one such session, what
//! loading the embedded tokenizer costs a process, and the machine's load average (the figures move
//! with it). The command adds replay's throughput (`ReplaySpeed`), measured a layer above.

use std::path::Path;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::Result;
use crate::input::scenario::Scenario;
use crate::model::catalog::{Catalog, MEASURED_MODELS};
use crate::model::strategy::{ResolvedStrategy, Strategy};
use crate::sim::engine::{PreparedSet, SimSetup, Workspace};
use crate::sim::montecarlo::monte_carlo_set;

/// The benchmark workload: 100 sessions starting within a minute, 50 calls each, 26 tools, drawn
/// tool-result and output sizes and think times, one shared cache.
pub(crate) const WORKLOAD: &str = r#"
name = "bench-100-sessions"
description = "100 concurrent 50-call sessions, 26 tools, one shared cache"
seed = 1
strategies = ["cached"]
[tools]
synthetic = { count = 26, params = 4 }
[session]
calls = 50
system_tokens = 1800
first_user_tokens = 250
tool_result_tokens = { dist = "log_normal", mu = 6.5, sigma = 0.7 }
output_tokens = { dist = "gamma", shape = 2.0, scale = 110.0 }
gap_seconds = { dist = "exponential", mean = 12 }
first_token_seconds = 1.5
[sessions]
count = 100
every_seconds = 0.6
shared_cache = true
"#;

/// The workload with `sessions` sessions.
pub fn workload(sessions: usize) -> Result<Scenario> {
    let mut s = Scenario::from_toml_str(WORKLOAD, "built-in bench workload", Path::new("."))?;
    s.sessions = sessions;
    Ok(s)
}

/// Each measured model with its own caching (`cached`).
pub fn measured_setups(catalog: &Catalog) -> Result<Vec<ResolvedPair<'_>>> {
    let cached = Strategy::parse("cached")?;
    MEASURED_MODELS
        .iter()
        .map(|id| {
            let model = catalog.model(id)?;
            Ok(ResolvedPair {
                model,
                strategy: cached.resolve(model)?,
            })
        })
        .collect()
}

/// A model with a resolved strategy.
#[derive(Debug, Clone)]
pub struct ResolvedPair<'a> {
    /// The model.
    pub model: &'a crate::model::catalog::ModelSpec,
    /// Its strategy.
    pub strategy: ResolvedStrategy,
}

/// What `pcsim bench` measured.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub(crate) struct BenchReport {
    /// Workload name.
    pub workload: String,
    /// Simulated calls per second on one thread: each run simulated on the six models together
    /// (one pass over its timeline, see [`PreparedSet`]); a call billed on six models counts six.
    pub calls_per_second_1_thread: f64,
    /// Simulated calls per second on one thread with each model simulated alone, in turn (the
    /// timeline redone for every model; the mean over [`BenchReport::per_model_1_thread`]).
    pub calls_per_second_1_thread_models_apart: f64,
    /// Simulated calls per second on all threads of the rayon pool (runs spread over the threads,
    /// each on the six models together).
    pub calls_per_second_all_threads: f64,
    /// Threads used for the "all threads" figures.
    pub threads: usize,
    /// Seconds of a Monte Carlo of one session on the six models at [`BenchOptions::montecarlo_runs`]
    /// runs each, scaled linearly to 10,000 runs when fewer were asked for.
    pub montecarlo_10k_seconds: f64,
    /// Runs per model of the Monte Carlo actually timed.
    pub montecarlo_runs: u64,
    /// Seconds the timed Monte Carlo took.
    pub montecarlo_seconds: f64,
    /// Simulated calls of the Monte Carlo per second.
    pub montecarlo_calls_per_second: f64,
    /// Calls per second of CPU time on one thread (per core, whatever else the machine runs);
    /// `null` where the OS does not report thread CPU time (Linux `/proc` is used).
    pub calls_per_cpu_second_1_thread: Option<f64>,
    /// Calls per second of CPU time of all threads together (per core).
    pub calls_per_cpu_second_all_threads: Option<f64>,
    /// Calls per CPU-second on one thread of the same workload with every amount fixed at its mean
    /// (no random draws): what the draws cost.
    pub calls_per_cpu_second_1_thread_fixed_amounts: f64,
    /// Share of the wall time the single thread was on a CPU (below 1 when other work competes).
    pub cpu_share_1_thread: Option<f64>,
    /// Calls per second on one thread, per model simulated alone.
    pub per_model_1_thread: Vec<ModelSpeed>,
    /// Milliseconds of CPU (of the measuring thread) that loading o200k_base costs a process before
    /// its first count: its tables are compiled into the binary, so this is building the
    /// pre-tokenizer's automaton and counting one tool's text with it (a fresh copy, whatever this
    /// process loaded before). `null` without the `tokenizers` feature or thread CPU time.
    pub tokenizer_load_cpu_ms: Option<f64>,
    /// The same in wall-clock milliseconds (`null` without the `tokenizers` feature).
    pub tokenizer_load_ms: Option<f64>,
    /// The machine's load average over 1, 5 and 15 minutes when the bench started (Linux
    /// `/proc/loadavg`; `null` elsewhere): jobs running or waiting for a CPU. Above the number of
    /// cores, every figure here is slowed by sharing (the per-CPU-second ones less).
    pub load_average_before: Option<[f64; 3]>,
    /// The same when the bench ended.
    pub load_average_after: Option<[f64; 3]>,
    /// Replay's throughput on generated Claude Code transcripts, one thread (set by the command).
    pub replay: Option<ReplaySpeed>,
    /// The same on generated logs of pcsim's own compact form (`run --usage-log`).
    pub replay_compact: Option<ReplaySpeed>,
}

/// Replay's throughput: usage-log text parsed and replayed on one model per second, beside a typed
/// `serde_json` parse of the same lines (the floor a JSON Lines reader can reach).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReplaySpeed {
    /// What was replayed.
    pub input: String,
    /// Files per pass.
    pub files: usize,
    /// Bytes per pass.
    pub bytes: u64,
    /// Logged calls per pass.
    pub calls: u64,
    /// Passes timed.
    pub passes: u64,
    /// Megabytes (10^6 bytes) of log parsed and replayed per CPU-second of the thread; `null`
    /// without thread CPU time.
    pub mb_per_cpu_second: Option<f64>,
    /// The same per wall-clock second.
    pub mb_per_second: f64,
    /// Megabytes per CPU-second of a typed `serde_json` parse of the same lines (structs with the
    /// fields replay reads, every other field skipped); `null` without thread CPU time.
    pub typed_parse_mb_per_cpu_second: Option<f64>,
    /// The same per wall-clock second.
    pub typed_parse_mb_per_second: f64,
    /// Replay's time over the typed parse's on the same bytes (CPU time where known).
    pub times_typed_parse: f64,
}

/// The load average over 1, 5 and 15 minutes (Linux `/proc/loadavg`).
pub(crate) fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// CPU time of the calling thread in nanoseconds, to the nanosecond (`CLOCK_THREAD_CPUTIME_ID`):
/// `/proc`'s figure is updated at scheduler ticks (4 ms here), too coarse for a few milliseconds.
#[cfg(unix)]
fn precise_thread_cpu_ns() -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

#[cfg(not(unix))]
fn precise_thread_cpu_ns() -> Option<u64> {
    thread_cpu_ns()
}

/// CPU and wall seconds of `f` on the calling thread (CPU `None` where the OS does not say).
pub(crate) fn timed<R>(f: impl FnOnce() -> R) -> (R, Option<f64>, f64) {
    let (start, cpu0) = (Instant::now(), precise_thread_cpu_ns());
    let r = f();
    let wall = start.elapsed().as_secs_f64();
    let cpu = precise_thread_cpu_ns()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a) as f64 / 1e9);
    (r, cpu, wall)
}

/// What a process pays to load o200k_base before its first count: CPU and wall milliseconds
/// (`None` without the `tokenizers` feature).
fn tokenizer_load() -> Result<(Option<f64>, Option<f64>)> {
    if !crate::model::tokenizer::EMBEDDED {
        return Ok((None, None));
    }
    let tool = crate::model::tools::synthetic_tools(1, 1, 4);
    let text = tool
        .first()
        .map(|t| t.api_json().to_string())
        .unwrap_or_default();
    let (count, cpu, wall) = timed(|| crate::model::tokenizer::count_with_fresh_o200k(&text));
    std::hint::black_box(count?);
    Ok((cpu.map(|c| c * 1e3), Some(wall * 1e3)))
}

/// CPU time of the calling thread in nanoseconds (Linux `/proc/thread-self/schedstat`).
pub(crate) fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// CPU time of every thread of this process in nanoseconds (Linux `/proc/self/task/*/schedstat`).
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        if let Ok(text) = std::fs::read_to_string(path) {
            total += text.split_whitespace().next()?.parse::<u64>().ok()?;
        }
    }
    Some(total)
}

/// Speed on one model.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ModelSpeed {
    /// Model id.
    pub model: String,
    /// Simulated calls per second.
    pub calls_per_second: f64,
}

/// Knobs of the benchmark.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BenchOptions {
    /// Least wall time of each calls-per-second measurement.
    pub min_seconds: f64,
    /// Runs per model of the Monte Carlo.
    pub montecarlo_runs: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            min_seconds: 2.0,
            montecarlo_runs: 10_000,
        }
    }
}

/// Runs the benchmark.
// Over 120 lines: the benchmark's measurements in order (tokenizer load, all models, each model
// apart, the fixed-size variants), reading the clocks around each; split, the timing code would be
// repeated.
pub(crate) fn run_bench(catalog: &Catalog, opts: BenchOptions) -> Result<BenchReport> {
    let load_average_before = load_average();
    let (tokenizer_load_cpu_ms, tokenizer_load_ms) = tokenizer_load()?;
    let scenario = workload(100)?;
    let pairs = measured_setups(catalog)?;
    let setups: Vec<SimSetup> = pairs
        .iter()
        .map(|p| SimSetup::new(p.model, &p.strategy, scenario.first_token_seconds))
        .collect();
    let set = PreparedSet::new(&scenario, &setups);
    let min = Duration::from_secs_f64(opts.min_seconds.max(0.0));
    let per_run = set.calls_per_run() as f64;
    let mut ws = Workspace::new();

    // One thread: the six models together (one pass over each run's timeline), runs 0, 1, 2, ...
    // until half the time is up.
    let start = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut runs = 0u64;
    while runs == 0 || start.elapsed() < min / 2 {
        std::hint::black_box(set.run(runs, &mut ws, |_, b| {
            std::hint::black_box(b);
        }));
        runs += 1;
    }
    let busy = start.elapsed().as_secs_f64();
    let cpu1 = thread_cpu_ns()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a) as f64 / 1e9);
    let calls = runs as f64 * per_run;
    let one_thread = calls / busy;

    // The other half: each model alone, in turn.
    let mut per_model = Vec::new();
    let (mut apart_calls, mut apart_secs) = (0.0, 0.0);
    let share = min / (2 * set.members().len() as u32);
    let per_model_run = per_run / set.members().len() as f64;
    for (pair, p) in pairs.iter().zip(set.members()) {
        let start = Instant::now();
        let mut runs = 0u64;
        while runs == 0 || start.elapsed() < share {
            std::hint::black_box(p.run(runs, &mut ws, |b| {
                std::hint::black_box(b);
            }));
            runs += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        per_model.push(ModelSpeed {
            model: pair.model.id.clone(),
            calls_per_second: runs as f64 * per_model_run / secs,
        });
        apart_calls += runs as f64 * per_model_run;
        apart_secs += secs;
    }

    // The same on one thread with every amount fixed at its mean: the cost of the random draws.
    let mut fixed = scenario.clone();
    for q in [
        &mut fixed.first_user_tokens,
        &mut fixed.user_tokens,
        &mut fixed.tool_result_tokens,
        &mut fixed.output_tokens,
        &mut fixed.gap_seconds,
    ] {
        *q = crate::base::quantity::Quantity::fixed(q.mean());
    }
    let fixed_setups: Vec<SimSetup> = pairs
        .iter()
        .map(|p| SimSetup::new(p.model, &p.strategy, fixed.first_token_seconds))
        .collect();
    let fixed_set = PreparedSet::new(&fixed, &fixed_setups);
    let (start, c0) = (Instant::now(), thread_cpu_ns());
    let mut fixed_runs = 0u64;
    while fixed_runs == 0 || start.elapsed() < min / 4 {
        std::hint::black_box(fixed_set.run(fixed_runs, &mut ws, |_, b| {
            std::hint::black_box(b);
        }));
        fixed_runs += 1;
    }
    let fixed_calls = fixed_runs as f64 * per_run;
    let fixed_cpu = match (thread_cpu_ns(), c0) {
        (Some(b), Some(a)) => b.saturating_sub(a) as f64 / 1e9,
        _ => start.elapsed().as_secs_f64(),
    };

    // All threads: batches of runs (each on the six models together) spread by rayon.
    let threads = rayon::current_num_threads();
    // Start the pool's threads before reading their CPU time.
    rayon::broadcast(|_| ());
    let pcpu0 = process_cpu_ns();
    let start = Instant::now();
    let mut next_run = 0u64;
    let mut all_calls = 0.0;
    while next_run == 0 || start.elapsed() < min {
        let batch = 8 * threads as u64;
        (next_run..next_run + batch).into_par_iter().for_each(|r| {
            Workspace::with_thread_local(|ws| {
                std::hint::black_box(set.run(r, ws, |_, b| {
                    std::hint::black_box(b);
                }));
            })
        });
        all_calls += batch as f64 * per_run;
        next_run += batch;
    }
    let all_threads = all_calls / start.elapsed().as_secs_f64();
    let pcpu = process_cpu_ns()
        .zip(pcpu0)
        .map(|(b, a)| b.saturating_sub(a) as f64 / 1e9);

    // Monte Carlo of one session on the six models.
    let single = workload(1)?;
    let mc_setups: Vec<SimSetup> = pairs
        .iter()
        .map(|p| SimSetup::new(p.model, &p.strategy, single.first_token_seconds))
        .collect();
    let runs = opts.montecarlo_runs.max(1);
    let start = Instant::now();
    let mc_set = PreparedSet::new(&single, &mc_setups);
    std::hint::black_box(monte_carlo_set(&mc_set, runs, &|_| {})?);
    let mc_seconds = start.elapsed().as_secs_f64();
    let mc_calls = (runs * single.calls as u64 * mc_setups.len() as u64) as f64;

    Ok(BenchReport {
        workload: scenario.name.clone(),
        calls_per_second_1_thread: one_thread,
        calls_per_second_all_threads: all_threads,
        threads,
        montecarlo_10k_seconds: mc_seconds * 10_000.0 / runs as f64,
        montecarlo_runs: runs,
        montecarlo_seconds: mc_seconds,
        montecarlo_calls_per_second: mc_calls / mc_seconds,
        calls_per_cpu_second_1_thread: cpu1.filter(|&c| c > 0.0).map(|c| calls / c),
        calls_per_cpu_second_all_threads: pcpu.filter(|&c| c > 0.0).map(|c| all_calls / c),
        // At most 1: the CPU clock and the wall clock tick apart by a few microseconds.
        cpu_share_1_thread: cpu1.map(|c| (c / busy).min(1.0)),
        calls_per_cpu_second_1_thread_fixed_amounts: fixed_calls / fixed_cpu.max(1e-9),
        calls_per_second_1_thread_models_apart: apart_calls / apart_secs,
        per_model_1_thread: per_model,
        tokenizer_load_cpu_ms,
        tokenizer_load_ms,
        load_average_before,
        load_average_after: load_average(),
        replay: None,
        replay_compact: None,
    })
}
