//! The engine's hot loop alone, for instruction-level profiling where wall-clock timing is too
//! noisy (a shared machine): `cargo build --release --example hot_loop` then
//! `valgrind --tool=cachegrind --cache-sim=no target/release/examples/hot_loop [runs] [amounts] [which]`
//! and divide the instruction count by the simulated calls it prints (the difference of two run
//! counts cancels the set-up).
//!
//! Runs the `pcsim bench` workload (100 sessions x 50 calls, shared cache) `runs` times (default 4)
//! on the six measured models.
//! - `amounts`: `random` (default, as the bench); `fixed` fixes every amount at its mean,
//!   `fixed-gaps` only the gaps, `fixed-tokens` only the token amounts.
//! - `which`: `together` (default) runs the six models on one timeline per run, as `pcsim bench`
//!   does on one thread ([`PreparedSet`]); `apart` runs each model alone in turn; a model id runs
//!   that model alone.

use pcsim::base::quantity::Quantity;
use pcsim::model::catalog::Catalog;
use pcsim::sim::bench::{measured_setups, workload};
use pcsim::sim::engine::{Prepared, PreparedSet, SimSetup, Workspace};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4);
    let amounts = args.next().unwrap_or_else(|| "random".into());
    let which = args.next().unwrap_or_else(|| "together".into());
    let catalog = Catalog::embedded().expect("embedded catalog");
    let pairs = measured_setups(&catalog).expect("measured models");
    let mut scenario = workload(100).expect("workload");
    let fix_gaps = amounts == "fixed" || amounts == "fixed-gaps";
    let fix_tokens = amounts == "fixed" || amounts == "fixed-tokens";
    if !fix_gaps && !fix_tokens && amounts != "random" {
        eprintln!("amounts: random, fixed, fixed-gaps or fixed-tokens");
        std::process::exit(2);
    }
    if fix_gaps {
        scenario.gap_seconds = Quantity::fixed(scenario.gap_seconds.mean());
    }
    if fix_tokens {
        for q in [
            &mut scenario.first_user_tokens,
            &mut scenario.user_tokens,
            &mut scenario.tool_result_tokens,
            &mut scenario.output_tokens,
        ] {
            *q = Quantity::fixed(q.mean());
        }
    }
    let setups: Vec<SimSetup> = pairs
        .iter()
        .filter(|p| which == "together" || which == "apart" || p.model.id == which)
        .map(|p| SimSetup::new(p.model, &p.strategy, scenario.first_token_seconds))
        .collect();
    if setups.is_empty() {
        eprintln!("which: together, apart or a measured model id");
        std::process::exit(2);
    }
    let mut ws = Workspace::new();
    let (mut calls, mut total) = (0u64, 0.0);
    let start = std::time::Instant::now();
    if which == "together" {
        let set = PreparedSet::new(&scenario, &setups);
        for run in 0..runs {
            let totals = set.run(run, &mut ws, |_, b| {
                std::hint::black_box(b);
            });
            total += totals.iter().sum::<f64>();
            calls += set.calls_per_run() as u64;
        }
    } else {
        for setup in &setups {
            let prepared = Prepared::new(&scenario, setup);
            for run in 0..runs {
                total += prepared.run(run, &mut ws, |b| {
                    std::hint::black_box(b);
                });
                calls += prepared.calls_per_run() as u64;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{calls} simulated calls in {secs:.3} s ({:.2} M calls/s), total ${total:.2}",
        calls as f64 / secs / 1e6
    );
}
