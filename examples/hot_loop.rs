//! The engine's hot loop alone, for instruction-level profiling where wall-clock timing is too
//! noisy (a shared machine): `cargo build --release --example hot_loop` then
//! `valgrind --tool=cachegrind --cache-sim=no target/release/examples/hot_loop [runs] [fixed|random] [model]`
//! and divide the instruction count by the simulated calls it prints (the difference of two run
//! counts cancels the set-up).
//! Runs the `pcsim bench` workload (100 sessions x 50 calls, shared cache) `runs` times on each of
//! the six measured models (or only `model`); `fixed` fixes every amount at its mean.

use pcsim::bench::{measured_setups, workload};
use pcsim::catalog::Catalog;
use pcsim::engine::{Prepared, PreparedSet, SimSetup, Workspace};
use pcsim::quantity::Quantity;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4);
    let mode = args.next().unwrap_or_default();
    let fixed = mode == "fixed";
    let only = args.next();
    let catalog = Catalog::embedded().expect("embedded catalog");
    let pairs = measured_setups(&catalog).expect("measured models");
    let mut scenario = workload(100).expect("workload");
    if fixed {
        for q in [
            &mut scenario.first_user_tokens,
            &mut scenario.user_tokens,
            &mut scenario.tool_result_tokens,
            &mut scenario.output_tokens,
            &mut scenario.gap_seconds,
        ] {
            *q = Quantity::fixed(q.mean());
        }
    }
    if mode == "fixedgap" {
        scenario.gap_seconds = Quantity::fixed(scenario.gap_seconds.mean());
    }
    if mode == "fixedtokens" {
        for q in [
            &mut scenario.first_user_tokens,
            &mut scenario.user_tokens,
            &mut scenario.tool_result_tokens,
            &mut scenario.output_tokens,
        ] {
            *q = Quantity::fixed(q.mean());
        }
    }
    let mut ws = Workspace::new();
    let (mut calls, mut total) = (0u64, 0.0);
    let start = std::time::Instant::now();
    if std::env::var_os("TOGETHER").is_some() {
        let setups: Vec<SimSetup> = pairs
            .iter()
            .map(|p| SimSetup::new(p.model, &p.strategy, scenario.first_token_seconds))
            .collect();
        let set = PreparedSet::new(&scenario, &setups);
        for run in 0..runs {
            total += set
                .run(run, &mut ws, |_, b| {
                    std::hint::black_box(b);
                })
                .iter()
                .sum::<f64>();
            calls += set.calls_per_run() as u64;
        }
    }
    for pair in pairs
        .iter()
        .filter(|_| std::env::var_os("TOGETHER").is_none())
        .filter(|p| only.as_ref().map_or(true, |m| *m == p.model.id))
    {
        let setup = SimSetup::new(pair.model, &pair.strategy, scenario.first_token_seconds);
        let prepared = Prepared::new(&scenario, &setup);
        for run in 0..runs {
            total += prepared.run(run, &mut ws, |b| {
                std::hint::black_box(b);
            });
            calls += prepared.calls_per_run() as u64;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{calls} simulated calls in {secs:.3} s ({:.2} M calls/s), total ${total:.2}",
        calls as f64 / secs / 1e6
    );
}
