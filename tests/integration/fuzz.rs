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
    assert!(
        corpus.add_reference_captures() > 0,
        "no MCP capture in tests/fixtures/reference/mcp"
    );
    let stats = fuzz(&corpus, seed, iters, None, HANG_LIMIT);
    eprintln!(
        "fuzz: seed {seed}, {} inputs ({}) in {:.1?}: {} accepted, {} refused, {} failures, slowest {:.1?}",
        stats.executed,
        stats.per_target_summary(),
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
    // Every target is reached, and mutated inputs of each get through their parser sometimes.
    for (i, t) in harness::Target::ALL.iter().enumerate() {
        assert!(
            stats.per_target[i] > iters / 20,
            "{t:?}: {}",
            stats.per_target_summary()
        );
        assert!(
            stats.per_target_accepted[i] > 0,
            "{t:?}: {}",
            stats.per_target_summary()
        );
    }
}

#[test]
fn the_scripted_server_is_captured_from_a_real_process_like_the_script() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !python {
        assert!(
            std::env::var_os("PCSIM_ALLOW_MISSING_SHARED").is_some_and(|v| v == "1"),
            "python3 is not available to run the scripted MCP server (PCSIM_ALLOW_MISSING_SHARED=1 skips)"
        );
        return;
    }
    let corpus = Corpus::load();
    let mut n = 0;
    for (target, name, bytes) in &corpus.entries {
        if *target == harness::Target::Mcp {
            let out = harness::execute_process(bytes, Duration::from_secs(20));
            assert_eq!(out, Outcome::Accepted, "{name}");
            n += 1;
        }
    }
    assert!(n >= 3, "{n} MCP scripts in the corpus");
    // A script that never answers tools/list ends with the server's output, not the timeout.
    let t0 = std::time::Instant::now();
    let out = harness::execute_process(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
        Duration::from_secs(20),
    );
    assert!(matches!(out, Outcome::Refused(_)), "{out:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "ended by the timeout"
    );
}

#[test]
fn every_corpus_input_is_valid() {
    let mut corpus = Corpus::load();
    corpus.add_reference_captures();
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
            Outcome::Ended(m) => panic!("{name}: {m}"),
            Outcome::Accepted | Outcome::Refused(_) => {}
        }
    }
    eprintln!("{} reproducers replayed", inputs.len());
}
