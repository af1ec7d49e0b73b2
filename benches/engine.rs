//! Criterion benches of the engine's hot path: one run of the `pcsim bench` workload (100 sessions x
//! 50 calls sharing a cache) per caching mode and on the six models together, and a small Monte
//! Carlo of one session.
//! `cargo bench --bench engine`; throughput is reported in simulated calls.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use pcsim::model::catalog::Catalog;
use pcsim::sim::bench::{measured_setups, workload};
use pcsim::sim::engine::{Prepared, PreparedSet, SimSetup, Workspace};
use pcsim::sim::montecarlo::monte_carlo;

fn engine(c: &mut Criterion) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let pairs = measured_setups(&catalog).expect("measured models");
    let scenario = workload(100).expect("workload");
    let mut g = c.benchmark_group("run_100x50");
    g.throughput(Throughput::Elements(
        (scenario.sessions * scenario.calls) as u64,
    ));
    // One model per mode: explicit breakpoints, automatic blocks, never-hitting implicit.
    for id in ["claude-opus-4.8", "kimi-k3", "gemini-3.6-flash"] {
        let pair = pairs.iter().find(|p| p.model.id == id).expect("model");
        let setup = SimSetup::new(pair.model, &pair.strategy, scenario.first_token_seconds);
        let prepared = Prepared::new(&scenario, &setup);
        let mut ws = Workspace::new();
        let mut run = 0u64;
        g.bench_function(BenchmarkId::from_parameter(id), |b| {
            b.iter(|| {
                run += 1;
                prepared.run(run, &mut ws, |bill| {
                    std::hint::black_box(bill);
                })
            })
        });
    }
    g.finish();

    // The six measured models together, one pass over each run's timeline (what `pcsim bench`
    // times on one thread).
    let mut g = c.benchmark_group("run_100x50_six_models_together");
    g.throughput(Throughput::Elements(
        (scenario.sessions * scenario.calls * pairs.len()) as u64,
    ));
    let setups: Vec<SimSetup> = pairs
        .iter()
        .map(|p| SimSetup::new(p.model, &p.strategy, scenario.first_token_seconds))
        .collect();
    let set = PreparedSet::new(&scenario, &setups);
    let mut ws = Workspace::new();
    let mut run = 0u64;
    g.bench_function("measured_models", |b| {
        b.iter(|| {
            run += 1;
            set.run(run, &mut ws, |_, bill| {
                std::hint::black_box(bill);
            })
        })
    });
    g.finish();

    let single = workload(1).expect("workload");
    let mut g = c.benchmark_group("montecarlo_1_session");
    g.sample_size(10);
    g.throughput(Throughput::Elements(1000 * single.calls as u64));
    let pair = &pairs[0];
    let setup = SimSetup::new(pair.model, &pair.strategy, single.first_token_seconds);
    let prepared = Prepared::new(&single, &setup);
    g.bench_function("1000_runs_claude-opus-4.8", |b| {
        b.iter(|| monte_carlo(&prepared, 1000, &|_| {}).expect("monte carlo"))
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
