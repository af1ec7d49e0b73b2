//! The library's public API, used the way a program that depends on pcsim would: each entry point
//! gives exactly what the command built on it prints (the CLI is one client of the library), and
//! the library builds without the CLI's dependencies.

use std::path::PathBuf;

use pcsim::analysis::{advise, compare, whatif};
use pcsim::{report, run_request, Catalog, Scenario, Selection};

use crate::common::{root, stdout_of};

fn example(name: &str) -> PathBuf {
    root().join("examples").join(name)
}

/// Each `(format, text)` is what `pcsim ARGS --format FORMAT` prints.
fn printed_in_each_format(args: &[&str], texts: [(&str, String); 3]) {
    for (format, text) in texts {
        let cli = stdout_of(&[args, &["--format", format]].concat());
        assert_eq!(text, cli, "{args:?} --format {format}");
    }
}

#[test]
fn a_run_through_the_library_is_what_pcsim_run_prints() {
    // The command prices at today's list prices (dated changes in force); so does the library.
    let catalog = Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap();
    for (name, runs) in [("default.toml", None), ("tool-change.toml", Some(30))] {
        let path = example(name);
        let p = path.to_str().unwrap();
        let request = Selection::new(&[], &[])
            .overrides(runs, Some(11))
            .resolve(&catalog, Scenario::load(&path).unwrap())
            .unwrap();
        let rep = run_request(&request, &|_| {}).unwrap();
        assert_eq!(rep.results.len(), request.pairs.len(), "{name}");
        let mut args = vec!["run", p, "--seed", "11"];
        let runs_text = runs.map(|r| r.to_string());
        if let Some(r) = &runs_text {
            args.extend(["--runs", r]);
        }
        for (format, text) in [
            ("table", report::run_table(&rep, false)),
            ("csv", report::run_csv(&rep)),
            ("json", report::to_json(&rep).unwrap()),
        ] {
            let mut a = args.clone();
            a.extend(["--format", format]);
            assert_eq!(text, stdout_of(&a), "{name} --format {format}");
        }
        let mut a = args.clone();
        a.push("--calls");
        assert_eq!(
            report::run_table(&rep, true),
            stdout_of(&a),
            "{name} --calls"
        );
        // The Monte Carlo is there when asked for, and only then.
        assert_eq!(
            rep.results[0].montecarlo.is_some(),
            runs.is_some(),
            "{name}"
        );
    }
}

#[test]
fn compare_whatif_and_advise_through_the_library_are_what_their_commands_print() {
    let catalog = Catalog::embedded().unwrap();
    let path = example("tool-change.toml");
    let p = path.to_str().unwrap();
    let scenario = Scenario::load(&path).unwrap();
    let models = ["claude-sonnet-4.5".to_string(), "gpt-5.2".to_string()];

    let request = compare::selection(&models, &[])
        .overrides(Some(20), Some(5))
        .resolve(&catalog, scenario.clone())
        .unwrap();
    let rep = compare::compare_request(&request).unwrap();
    let args = [
        "compare", p, "--model", &models[0], "--model", &models[1], "--runs", "20", "--seed", "5",
    ];
    printed_in_each_format(
        &args,
        [
            ("table", rep.table()),
            ("csv", rep.csv()),
            ("json", report::to_json(&rep).unwrap()),
        ],
    );

    // A what-if with overrides: the changed session is simulated in the request's runs from its
    // seed, though the changed scenario handed in still carries the file's.
    let change = whatif::ToolChange {
        remove: vec!["web_search".into(), "fetch_page".into()],
        ..Default::default()
    };
    let (changed, summary) = whatif::apply_change(&scenario, 25, &change).unwrap();
    assert_ne!(
        changed.runs, 20,
        "the example's own runs differ from the override"
    );
    let request = whatif::selection_at(&models, &[], 25)
        .overrides(Some(20), Some(5))
        .resolve(&catalog, scenario.clone())
        .unwrap();
    let rep = whatif::whatif_request(&request, &changed, 25, summary.clone()).unwrap();
    let mut aligned = changed.clone();
    (aligned.seed, aligned.runs) = (5, 20);
    let by_hand = whatif::whatif_request(&request, &aligned, 25, summary).unwrap();
    assert_eq!(
        rep.table(),
        by_hand.table(),
        "the changed session in the request's runs and seed"
    );
    let args = [
        "whatif",
        p,
        "--model",
        &models[0],
        "--model",
        &models[1],
        "--at-call",
        "25",
        "--remove-tools",
        "web_search,fetch_page",
        "--runs",
        "20",
        "--seed",
        "5",
    ];
    printed_in_each_format(
        &args,
        [
            ("table", rep.table()),
            ("csv", rep.csv()),
            ("json", report::to_json(&rep).unwrap()),
        ],
    );

    let request = advise::selection(&models)
        .overrides(None, Some(5))
        .resolve(&catalog, scenario)
        .unwrap();
    let rep = advise::advise_request(&request).unwrap();
    let args = [
        "advise", p, "--model", &models[0], "--model", &models[1], "--seed", "5",
    ];
    assert_eq!(rep.table(), stdout_of(&args), "advise");
    let cli = stdout_of(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(report::to_json(&rep).unwrap(), cli, "advise --format json");
}

/// A library user who only simulates (`default-features = false`) gets none of the command line's
/// dependencies: pcsim's direct dependencies without the `cli` feature, from the lock file
/// (for this host: other platforms' manifests need not be downloaded).
#[test]
fn the_library_without_the_cli_feature_does_not_depend_on_the_cli_crates() {
    let tree = |features: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.current_dir(root()).args([
            "tree",
            "--locked",
            "--offline",
            "--edges",
            "normal",
            "--depth",
            "1",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ]);
        cmd.args(features);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "cargo tree: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let cli_crates = ["clap", "anyhow", "indicatif"];
    let with = tree(&[]);
    let without = tree(&["--no-default-features", "--features", "tokenizers"]);
    for c in cli_crates {
        assert!(
            with.contains(c),
            "{c} is a direct dependency of the default build"
        );
        assert!(!without.contains(c), "{c} without the cli feature");
    }
    // The tokenizers feature's run-time dependency (o200k_base itself is compiled in by build.rs
    // from tiktoken-rs, a build-dependency, which no normal edge reaches).
    assert!(without.contains("regex-automata") && without.contains("serde"));
    assert!(!without.contains("tiktoken-rs"));
}

static HOST_SIGNALS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(unix)]
extern "C" fn host_handler(_sig: libc::c_int) {
    HOST_SIGNALS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// A program that embeds the library and handles SIGINT itself keeps its handler: writing reports
/// installs none (the `pcsim` program installs its temporary-file cleanup in `cli::main`).
#[cfg(unix)]
#[test]
fn a_program_embedding_the_library_keeps_its_own_sigint_handler() {
    // SAFETY: sigaction with valid pointers; the handler only touches an atomic.
    let old = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = host_handler as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGINT, &action, &mut old), 0);
        old
    };
    let dir = tempfile::tempdir().unwrap();
    pcsim::report::write_atomic(&dir.path().join("a.txt"), b"report").unwrap();
    let catalog = pcsim::Catalog::embedded().unwrap();
    let scenario = pcsim::Scenario::builtin_default().unwrap();
    pcsim::run_scenario(&catalog, &scenario, &["gpt-5.6".into()], &[]).unwrap();
    // SAFETY: reads the current action into a valid struct, then restores the test's old one.
    let now = unsafe {
        let mut now: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGINT, std::ptr::null(), &mut now), 0);
        libc::sigaction(libc::SIGINT, &old, std::ptr::null_mut());
        now
    };
    assert_eq!(
        now.sa_sigaction, host_handler as *const () as libc::sighandler_t,
        "the library replaced the host program's SIGINT handler"
    );
}
