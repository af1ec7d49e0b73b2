//! Snapshots of the text, CSV and JSON output of each command on the examples: any change of a
//! report, down to a byte, fails here. After an intended change, `PCSIM_UPDATE_SNAPSHOTS=1 cargo test
//! --test integration snapshots` rewrites tests/snapshots/ (review the diff before committing).

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
    let dir = root().join("tests").join("snapshots");
    let update = std::env::var_os("PCSIM_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for (name, args) in CASES {
        let out = pcsim().current_dir(root()).args(*args).assert().success();
        let stdout = out.get_output().stdout.clone();
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
