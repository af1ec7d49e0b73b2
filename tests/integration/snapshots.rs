//! Snapshots of the text, CSV and JSON output of each command on the examples: any change of a
//! report, down to a byte, fails here. After an intended change, `PCSIM_UPDATE_SNAPSHOTS=1 cargo test
//! --test integration snapshots` rewrites tests/snapshots/ (review the diff before committing).
//!
//! Every command and each output format it offers has a case, except `bench` (it prints this
//! machine's timings; tests/integration/time.rs runs it). `capture` and `config` start the fake MCP
//! server of tests/fixtures (python3 is needed: without it the test fails, it does not skip).
//! `{tmp}` in the arguments is a fresh temporary folder (for the files `fit` and `import-litellm`
//! must write), and is written `{tmp}` in the snapshot.

use crate::common::{pcsim, root};

/// (snapshot name, arguments); every command run from the project root.
const CASES: &[(&str, &[&str])] = &[
    ("run-table", &["run", "examples/small-toolset.toml"]),
    (
        "run-csv",
        &["run", "examples/small-toolset.toml", "--format", "csv"],
    ),
    (
        "run-json",
        &["run", "examples/small-toolset.toml", "--format", "json"],
    ),
    (
        "run-runs-table",
        &[
            "run",
            "examples/explicit-vs-automatic.toml",
            "--runs",
            "20",
            "--model",
            "gpt-5.2",
        ],
    ),
    (
        "compare-table",
        &["compare", "examples/explicit-vs-automatic.toml"],
    ),
    (
        "compare-csv",
        &[
            "compare",
            "examples/explicit-vs-automatic.toml",
            "--format",
            "csv",
        ],
    ),
    (
        "compare-json",
        &[
            "compare",
            "examples/explicit-vs-automatic.toml",
            "--format",
            "json",
        ],
    ),
    (
        "whatif-table",
        &[
            "whatif",
            "examples/tool-change.toml",
            "--at-call",
            "25",
            "--remove-tools",
            "web_search,fetch_page,search_code",
        ],
    ),
    (
        "whatif-csv",
        &[
            "whatif",
            "examples/tool-change.toml",
            "--at-call",
            "25",
            "--remove-tools",
            "web_search,fetch_page,search_code",
            "--format",
            "csv",
        ],
    ),
    (
        "whatif-json",
        &[
            "whatif",
            "examples/tool-change.toml",
            "--at-call",
            "25",
            "--remove-tools",
            "web_search,fetch_page,search_code",
            "--format",
            "json",
        ],
    ),
    ("advise-table", &["advise", "examples/tool-change.toml"]),
    (
        "advise-json",
        &["advise", "examples/tool-change.toml", "--format", "json"],
    ),
    (
        "sweep-table",
        &["sweep", "--max-tools", "5", "--model", "claude-opus-4.8"],
    ),
    (
        "sweep-csv",
        &[
            "sweep",
            "--max-tools",
            "5",
            "--model",
            "claude-opus-4.8",
            "--format",
            "csv",
        ],
    ),
    (
        "sweep-json",
        &[
            "sweep",
            "--max-tools",
            "5",
            "--model",
            "claude-opus-4.8",
            "--format",
            "json",
        ],
    ),
    // A fixed catalog (tests/fixtures/catalog-imported.toml, written by `import-litellm` from
    // tests/fixtures/litellm_prices.json): the built-in one changes with every price check, and its
    // sources quote prices in the sources' own precision, which the money test would read as ours.
    (
        "models-table",
        &[
            "models",
            "--only-catalog",
            "tests/fixtures/catalog-imported.toml",
        ],
    ),
    (
        "models-json",
        &[
            "models",
            "--only-catalog",
            "tests/fixtures/catalog-imported.toml",
            "--format",
            "json",
        ],
    ),
    (
        "diff-scenarios-table",
        &[
            "diff",
            "examples/small-toolset.toml",
            "examples/github-filesystem.toml",
        ],
    ),
    (
        "diff-scenarios-csv",
        &[
            "diff",
            "examples/small-toolset.toml",
            "examples/github-filesystem.toml",
            "--format",
            "csv",
        ],
    ),
    (
        "diff-scenarios-json",
        &[
            "diff",
            "examples/small-toolset.toml",
            "examples/github-filesystem.toml",
            "--format",
            "json",
        ],
    ),
    (
        "diff-tools-table",
        &[
            "diff",
            "examples/mcp/server-memory.tools.json",
            "examples/mcp/server-filesystem.tools.json",
        ],
    ),
    (
        "diff-tools-csv",
        &[
            "diff",
            "examples/mcp/server-memory.tools.json",
            "examples/mcp/server-filesystem.tools.json",
            "--format",
            "csv",
        ],
    ),
    (
        "diff-tools-json",
        &[
            "diff",
            "examples/mcp/server-memory.tools.json",
            "examples/mcp/server-filesystem.tools.json",
            "--format",
            "json",
        ],
    ),
    (
        "tools-table",
        &["tools", "examples/mcp/server-memory.tools.json"],
    ),
    (
        "tools-json",
        &[
            "tools",
            "examples/mcp/server-memory.tools.json",
            "--format",
            "json",
        ],
    ),
    (
        "capture-json",
        &[
            "capture",
            "--",
            "python3",
            "tests/fixtures/fake_mcp_server.py",
            "paginated",
        ],
    ),
    (
        "config-table",
        &[
            "config",
            "tests/fixtures/mcp-two-servers.json",
            "--model",
            "claude-opus-4.8",
            "--model",
            "gpt-5.6",
        ],
    ),
    (
        "config-json",
        &[
            "config",
            "tests/fixtures/mcp-two-servers.json",
            "--model",
            "claude-opus-4.8",
            "--model",
            "gpt-5.6",
            "--format",
            "json",
        ],
    ),
    (
        "import-litellm-toml",
        &["import-litellm", "tests/fixtures/litellm_prices.json"],
    ),
    (
        "import-litellm-summary",
        &[
            "import-litellm",
            "tests/fixtures/litellm_prices.json",
            "--out",
            "{tmp}/lite.toml",
        ],
    ),
    (
        "calibrate-toml",
        &[
            "calibrate",
            "--model",
            "claude-opus-4.8",
            "examples/mcp/server-memory.tools.json=2500",
            "examples/mcp/server-github.tools.json=7000",
        ],
    ),
    (
        "fit-table",
        &[
            "fit",
            "tests/fixtures/usage/two_sessions.jsonl",
            "--out",
            "{tmp}/fit.toml",
        ],
    ),
    (
        "fit-json",
        &[
            "fit",
            "tests/fixtures/usage/two_sessions.jsonl",
            "--out",
            "{tmp}/fit.toml",
            "--format",
            "json",
        ],
    ),
    (
        "explain-table",
        &["explain", "tests/fixtures/explain/trace.jsonl"],
    ),
    (
        "explain-csv",
        &[
            "explain",
            "tests/fixtures/explain/trace.jsonl",
            "--format",
            "csv",
        ],
    ),
    (
        "explain-json",
        &[
            "explain",
            "tests/fixtures/explain/trace.jsonl",
            "--format",
            "json",
        ],
    ),
    // A HAR (tests/fixtures/explain/har): the snapshots were written by the serde_json streaming
    // reader the entry scanner replaced, so they pin the scanner to its output down to a byte.
    (
        "explain-har-table",
        &["explain", "tests/fixtures/explain/har/session.har"],
    ),
    (
        "explain-har-csv",
        &[
            "explain",
            "tests/fixtures/explain/har/session.har",
            "--format",
            "csv",
        ],
    ),
    (
        "explain-har-json",
        &[
            "explain",
            "tests/fixtures/explain/har/session.har",
            "--format",
            "json",
        ],
    ),
    (
        "replay-table",
        &[
            "replay",
            "tests/fixtures/usage/anthropic_messages.jsonl",
            "--model",
            "claude-opus-4.8",
        ],
    ),
    (
        "replay-json",
        &[
            "replay",
            "tests/fixtures/usage/anthropic_messages.jsonl",
            "--model",
            "claude-opus-4.8",
            "--format",
            "json",
        ],
    ),
];

#[test]
fn every_command_prints_its_snapshot() {
    const SNAPSHOT_DAY_EPOCH: u64 = 1_796_342_400; // 2026-12-04T00:00:00Z
    let dir = root().join("tests").join("snapshots");
    let update = std::env::var_os("PCSIM_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for (name, args) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_text = tmp.path().to_str().unwrap();
        let args: Vec<String> = args.iter().map(|a| a.replace("{tmp}", tmp_text)).collect();
        // The snapshots were taken on 2026-12-04: outputs that name today (the pricing day, the
        // `checked` date of an import) read it from SOURCE_DATE_EPOCH, so they do not change daily.
        let out = pcsim()
            .current_dir(root())
            .env("SOURCE_DATE_EPOCH", SNAPSHOT_DAY_EPOCH.to_string())
            .args(&args)
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout)
            .replace(tmp_text, "{tmp}")
            .into_bytes();
        let path = dir.join(format!("{name}.out"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &stdout).unwrap();
            continue;
        }
        match std::fs::read(&path) {
            Ok(old) if old == stdout => {}
            Ok(_) => differ.push(format!("{name} (pcsim {})", args.join(" "))),
            Err(e) => differ.push(format!("{name}: {}: {e}", path.display())),
        }
    }
    assert!(
        differ.is_empty(),
        "output differs from tests/snapshots (PCSIM_UPDATE_SNAPSHOTS=1 rewrites them): {differ:#?}"
    );
}

/// Every command `pcsim --help` lists, in every `--format` its help offers, has a snapshot case:
/// a command or format added later without one fails here. (`bench` prints timings: see above.)
#[test]
fn every_command_and_format_has_a_snapshot_case() {
    let help = |args: &[&str]| -> String {
        let out = pcsim().args(args).arg("--help").assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let top = help(&[]);
    let commands: Vec<String> = top
        .split_once("Commands:")
        .and_then(|(_, rest)| rest.split_once("Options:"))
        .map(|(block, _)| block)
        .expect("`pcsim --help` lists its commands")
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help" && c != "bench")
        .collect();
    assert!(commands.len() >= 14, "{commands:?}");
    let mut missing = Vec::new();
    for command in &commands {
        let text = help(&[command]);
        // The `--format` option's "Possible values:" list (`- NAME: ...` lines, up to the first other line).
        let formats: Vec<String> = match text.split_once("--format <FORMAT>") {
            Some((_, rest)) => rest
                .lines()
                .skip_while(|l| l.trim() != "Possible values:")
                .skip(1)
                .map_while(|l| l.trim().strip_prefix("- "))
                .filter_map(|l| l.split(':').next().map(|f| f.trim().to_string()))
                .collect(),
            None => vec![String::new()],
        };
        assert!(
            !formats.is_empty(),
            "no format read from `pcsim {command} --help`"
        );
        for format in formats {
            let covered = CASES.iter().any(|(_, args)| {
                let given = args
                    .iter()
                    .position(|a| *a == "--format")
                    .and_then(|i| args.get(i + 1))
                    .copied();
                args[0] == command.as_str()
                    && (given == Some(format.as_str())
                        || (given.is_none() && (format.is_empty() || format == "table")))
            });
            if !covered {
                missing.push(format!("{command} --format {format}"));
            }
        }
    }
    assert!(missing.is_empty(), "no snapshot case for: {missing:?}");
}
