//! Bounded fuzzing of the three input parsers on every test run, plus the saved crash reproducers.
//! Longer runs: `cargo run --release --example fuzz -- --seconds 60` or `PCSIM_FUZZ_ITERS=100000`.

#[path = "../fuzz/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

use harness::{execute_guarded, fuzz, fuzz_dir, read_dir_inputs, Corpus, Outcome};

/// Inputs per `cargo test` run (a few seconds in a debug build).
const DEFAULT_ITERS: u64 = 1000;
/// Long enough that only a real hang (not a slow shared machine) trips it.
const HANG_LIMIT: Duration = Duration::from_secs(30);

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_inputs_never_panic_or_hang() {
    let iters = env_u64("PCSIM_FUZZ_ITERS", DEFAULT_ITERS);
    let seed = env_u64("PCSIM_FUZZ_SEED", 0x00c0_ffee);
    let mut corpus = Corpus::load();
    if crate::common::shared_reference().is_some() {
        assert!(
            corpus.add_shared_captures() > 0,
            "no MCP capture in shared/reference/mcp"
        );
    }
    let stats = fuzz(&corpus, seed, iters, None, HANG_LIMIT);
    eprintln!(
        "fuzz: seed {seed}, {} inputs (catalog {}, scenario {}, tools {}) in {:.1?}: {} accepted, {} refused, {} failures, slowest {:.1?}",
        stats.executed,
        stats.per_target[0],
        stats.per_target[1],
        stats.per_target[2],
        stats.elapsed,
        stats.accepted,
        stats.refused,
        stats.failures.len(),
        stats.slowest
    );
    let report: Vec<String> = stats
        .failures
        .iter()
        .take(5)
        .map(|f| {
            format!(
                "{:?}: {}\n{}",
                f.target,
                f.what,
                String::from_utf8_lossy(&f.input)
            )
        })
        .collect();
    assert!(stats.failures.is_empty(), "{}", report.join("\n-----\n"));
    assert_eq!(stats.executed, iters);
    // Mutations must both keep inputs valid (reaching validation and simulation) and break them.
    assert!(
        stats.accepted > iters / 20,
        "only {} inputs accepted",
        stats.accepted
    );
    assert!(
        stats.refused > iters / 4,
        "only {} inputs refused",
        stats.refused
    );
}

#[test]
fn every_corpus_input_is_valid() {
    let mut corpus = Corpus::load();
    corpus.add_shared_captures();
    assert!(corpus.entries.len() >= 8, "corpus too small");
    for (target, name, bytes) in &corpus.entries {
        let out = execute_guarded(*target, bytes, &corpus.base, HANG_LIMIT);
        assert_eq!(out, Outcome::Accepted, "{name}");
    }
}

#[test]
fn saved_crash_reproducers_no_longer_fail() {
    let corpus = Corpus::load();
    let inputs = read_dir_inputs(&fuzz_dir().join("regressions"));
    for (target, name, bytes) in &inputs {
        match execute_guarded(*target, bytes, &corpus.base, HANG_LIMIT) {
            Outcome::Panicked(m) => panic!("{name}: panics again: {m}"),
            Outcome::Hung => panic!("{name}: hangs again"),
            Outcome::Accepted | Outcome::Refused(_) => {}
        }
    }
    eprintln!("{} reproducers replayed", inputs.len());
}
