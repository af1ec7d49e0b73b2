//! Long fuzzing runs of pcsim's inputs (the same harness as the `fuzz` integration test).
//!
//! ```text
//! cargo run --release --example fuzz -- --seconds 60 [--seed N] [--save]
//! ```
//! `--save` writes every crashing input to tests/fuzz/regressions/<target>/ so it becomes a regression
//! test. Exit code 1 when any input panicked or hung.

#[path = "../tests/fuzz/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

fn main() {
    let mut seconds = 60u64;
    let mut seed = 1u64;
    let mut iters = u64::MAX;
    let mut save = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{name} needs a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--seconds" => seconds = value("--seconds"),
            "--seed" => seed = value("--seed"),
            "--iters" => iters = value("--iters"),
            "--save" => save = true,
            _ => {
                eprintln!("usage: fuzz [--seconds N] [--seed N] [--iters N] [--save]");
                std::process::exit(2);
            }
        }
    }
    harness::install_panic_recorder();
    let mut corpus = harness::Corpus::load();
    let captures = corpus.add_shared_captures();
    println!(
        "corpus: {} inputs ({captures} real MCP captures from shared/reference)",
        corpus.entries.len()
    );
    let stats = harness::fuzz(
        &corpus,
        seed,
        iters,
        Some(Duration::from_secs(seconds)),
        Duration::from_secs(10),
    );
    println!(
        "seed {seed}: {} inputs in {:.1?} ({:.0}/s): {}; MCP scripts also run as a process: {} ({} accepted); {} accepted, {} refused, {} failures; slowest input {:.1?}",
        stats.executed,
        stats.elapsed,
        stats.executed as f64 / stats.elapsed.as_secs_f64().max(1e-9),
        stats.per_target_summary(),
        stats.process_runs.0,
        stats.process_runs.1,
        stats.accepted,
        stats.refused,
        stats.failures.len(),
        stats.slowest
    );
    println!(
        "time per target (catalog, scenario, tools, replay, litellm, config, mcp): {:.1?}",
        stats.per_target_time
    );
    let mut seen = std::collections::HashSet::new();
    // Prints and saves the first input of each distinct failure.
    for f in &stats.failures {
        // One line per distinct panic site/message.
        let key = format!("{:?} {}", f.target, f.what.lines().next().unwrap_or(""));
        if seen.insert(key.clone()) {
            println!("FAILURE {key}");
        } else {
            continue;
        }
        if save {
            match f.save(&harness::fuzz_dir().join("regressions")) {
                Ok(p) => println!("  saved {}", p.display()),
                Err(e) => println!("  cannot save: {e}"),
            }
        }
    }
    if !stats.failures.is_empty() {
        std::process::exit(1);
    }
}
