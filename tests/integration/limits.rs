//! Limits checked before the work they bound (issue 18): tool files and `pcsim tools`, client
//! configurations, LiteLLM imports, sweeps, the bills and Monte Carlo calls of compare, whatif and
//! advise, tool-list events. Each test gives an input whose refusal says which limit it exceeds; on
//! the code before these checks the same input was parsed, started or simulated first (and failed
//! later with another message, or was accepted).

use std::path::Path;

use pcsim::input::litellm::{import, MAX_IMPORT_ENTRIES};
use pcsim::input::mcpconfig::MAX_SERVERS;
use pcsim::input::scenario::{Scenario, MAX_EVENTS, MAX_LISTED_TOOLS, MAX_SYNTHETIC_PARAMS};
use pcsim::model::tools::{MAX_TOOLS, MAX_TOOL_BYTES};
use pcsim::sim::request::{MAX_BILLS_KEPT, MAX_SIMULATED_CALLS};

use crate::common::{outcome, pcsim};

/// Exit code and stderr of `pcsim ARGS` run in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = outcome(pcsim().current_dir(dir).args(args));
    (o.code, o.stderr)
}

/// A tool file of `n` tools named `{prefix}{i}`; the tool at `bad` (if any) has a numeric name.
fn tool_file(n: usize, prefix: &str, bad: Option<usize>) -> String {
    let tools: Vec<String> = (0..n)
        .map(|i| {
            if Some(i) == bad {
                r#"{"name":7,"inputSchema":{"type":"object"}}"#.to_string()
            } else {
                format!(
                    r#"{{"name":"{prefix}{i}","description":"d","inputSchema":{{"type":"object"}}}}"#
                )
            }
        })
        .collect();
    format!("{{\"tools\":[{}]}}", tools.join(","))
}

#[test]
fn a_tool_file_over_the_limit_is_refused_before_its_tools_are_parsed() {
    let dir = tempfile::tempdir().unwrap();
    // A broken tool in the middle: read first, it would be the error; the count comes first.
    std::fs::write(
        dir.path().join("big.json"),
        tool_file(MAX_TOOLS + 1, "t", Some(MAX_TOOLS / 2)),
    )
    .unwrap();
    let (code, err) = run_in(dir.path(), &["tools", "big.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("big.json")
            && err.contains(&format!("{} tools", MAX_TOOLS + 1))
            && err.contains(&format!("limit of {MAX_TOOLS}")),
        "{err}"
    );
    // Every tool named alike: the limit, not the duplicate check, answers.
    std::fs::write(
        dir.path().join("same.json"),
        format!(
            "[{}]",
            vec![r#"{"name":"a","inputSchema":{"type":"object"}}"#; MAX_TOOLS + 1].join(",")
        ),
    )
    .unwrap();
    let (code, err) = run_in(dir.path(), &["tools", "same.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("limit of {MAX_TOOLS}")) && !err.contains("duplicate"),
        "{err}"
    );
}

#[test]
fn tool_files_together_are_one_list_under_the_same_limit() {
    let dir = tempfile::tempdir().unwrap();
    let half = MAX_TOOLS / 2 + 1;
    std::fs::write(dir.path().join("a.json"), tool_file(half, "a", None)).unwrap();
    // The second file's tools are all valid and distinct: only the total is wrong.
    std::fs::write(dir.path().join("b.json"), tool_file(half, "b", None)).unwrap();
    let (code, err) = run_in(dir.path(), &["tools", "a.json", "b.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("b.json")
            && err.contains(&format!("{half} tools in this file and {half}"))
            && err.contains(&format!("limit of {MAX_TOOLS}")),
        "{err}"
    );
    // Duplicates across files are still found (one hash lookup per tool), naming both files.
    std::fs::write(dir.path().join("c.json"), tool_file(3, "a", None)).unwrap();
    std::fs::write(dir.path().join("d.json"), tool_file(1, "z", None)).unwrap();
    let (code, err) = run_in(dir.path(), &["tools", "d.json", "c.json", "a.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a.json") && err.contains("also defined in c.json") && err.contains("`a0`"),
        "{err}"
    );
}

/// A tool file of exactly `bytes` bytes (a long description); with `broken`, a second tool with a
/// numeric name makes it an error once parsed.
fn padded_tool_file(bytes: u64, broken: bool) -> String {
    let head = r#"{"tools":[{"name":"a","description":""#;
    let tail = if broken {
        r#""},{"name":7,"inputSchema":{"type":"object"}}]}"#
    } else {
        r#"","inputSchema":{"type":"object"}}]}"#
    };
    let pad = usize::try_from(bytes).unwrap() - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(pad))
}

#[test]
fn tool_definitions_over_the_byte_limit_are_refused_before_they_are_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("at.json"), padded_tool_file(MAX_TOOL_BYTES, true)).unwrap();
    std::fs::write(
        d.join("over.json"),
        padded_tool_file(MAX_TOOL_BYTES + 1, true),
    )
    .unwrap();
    // At the limit the file is read and parsed: its broken tool is the error.
    let (code, err) = run_in(d, &["tools", "at.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("at.json") && err.contains("name") && !err.contains("byte limit"),
        "{err}"
    );
    // One byte over: refused from its size, naming the file, the size and the limit; the broken
    // tool is never reached.
    let limit = format!("{MAX_TOOL_BYTES}-byte limit");
    for args in [
        &["tools", "over.json"][..],
        &["tools", "over.json", "--model", "claude-opus-4.8"],
    ] {
        let (code, err) = run_in(d, args);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("over.json")
                && err.contains(&format!("{} bytes", MAX_TOOL_BYTES + 1))
                && err.contains(&limit)
                && !err.contains("name"),
            "{err}"
        );
    }
    // Files loaded together: the second one takes the total one byte over, and is refused before
    // it is parsed.
    std::fs::write(
        d.join("a.json"),
        padded_tool_file(MAX_TOOL_BYTES / 2, false),
    )
    .unwrap();
    std::fs::write(
        d.join("b.json"),
        padded_tool_file(MAX_TOOL_BYTES / 2 + 1, true),
    )
    .unwrap();
    let (code, err) = run_in(d, &["tools", "a.json", "b.json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("b.json")
            && err.contains(&format!(
                "{} in the tool files loaded before",
                MAX_TOOL_BYTES / 2
            ))
            && err.contains(&limit)
            && !err.contains("name"),
        "{err}"
    );
    // Over a scenario's loaded tools: the initial list and an event's added file together.
    std::fs::write(
        d.join("s.toml"),
        "[tools]\nfiles = [\"a.json\"]\n[session]\ncalls = 3\n[[event]]\nat_call = 2\nadd_files = [\"b.json\"]\n",
    )
    .unwrap();
    let e = Scenario::load(&d.join("s.toml")).unwrap_err();
    assert!(e.is_user_error());
    let e = e.to_string();
    assert!(
        e.contains("b.json") && e.contains(&limit) && !e.contains("name"),
        "{e}"
    );
    let (code, err) = run_in(d, &["run", "s.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("b.json") && err.contains(&limit), "{err}");
}

#[test]
fn servers_whose_tool_lists_are_over_the_byte_limit_are_refused_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A server that answers initialize and tools/list with one tool whose description takes its
    // list one byte over the limit (the list's JSON as pcsim keeps it is the tool array).
    let script = |desc_len: usize| {
        let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}"#;
        let list = format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{{"name":"a","description":"{}","inputSchema":{{"type":"object"}}}}]}}}}"#,
            "x".repeat(desc_len)
        );
        format!("{init}\n{list}\n")
    };
    let config = |file: &str| {
        format!(
            r#"{{"mcpServers":{{"big":{{"command":"sh","args":["-c","cat \"$0\"; exec 1>&-; cat >/dev/null","{}"]}}}}}}"#,
            d.join(file).display()
        )
    };
    std::fs::write(d.join("over.jsonl"), script(MAX_TOOL_BYTES as usize + 1)).unwrap();
    std::fs::write(d.join("over.json"), config("over.jsonl")).unwrap();
    let (code, err) = run_in(d, &["config", "over.json", "--timeout-seconds", "20"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("over.json")
            && err.contains(&format!("{MAX_TOOL_BYTES}-byte limit"))
            && !err.contains("context window"),
        "{err}"
    );
    // A short one is captured and reported.
    std::fs::write(d.join("small.jsonl"), script(10)).unwrap();
    std::fs::write(d.join("small.json"), config("small.jsonl")).unwrap();
    let (code, err) = run_in(d, &["config", "small.json", "--timeout-seconds", "20"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_configuration_with_too_many_servers_starts_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    // Each server would leave a mark if it were started.
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let servers: Vec<String> = (0..=MAX_SERVERS)
        .map(|i| {
            format!(
                r#""s{i}":{{"command":"sh","args":["-c","touch {}/s{i}"]}}"#,
                marks.display()
            )
        })
        .collect();
    std::fs::write(
        dir.path().join("mcp.json"),
        format!("{{\"mcpServers\":{{{}}}}}", servers.join(",")),
    )
    .unwrap();
    let (code, err) = run_in(
        dir.path(),
        &["config", "mcp.json", "--timeout-seconds", "1"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("mcp.json")
            && err.contains("mcpServers")
            && err.contains(&format!("limit of {MAX_SERVERS} servers")),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&marks).unwrap().count(), 0);
}

#[test]
fn a_litellm_file_over_the_entry_limit_is_refused_before_any_entry_is_read() {
    let mut text = String::from("{");
    for i in 0..=MAX_IMPORT_ENTRIES {
        if i > 0 {
            text.push(',');
        }
        // Valid chat entries: read one by one, they would all be imported.
        text.push_str(&format!(
            r#""m{i}":{{"input_cost_per_token":1e-6,"output_cost_per_token":2e-6,"litellm_provider":"openai","mode":"chat"}}"#
        ));
    }
    text.push('}');
    let e = import(&text, "prices.json", &[]).unwrap_err().to_string();
    assert!(
        e.contains("prices.json")
            && e.contains(&format!("{} entries", MAX_IMPORT_ENTRIES + 1))
            && e.contains(&format!("limit of {MAX_IMPORT_ENTRIES}")),
        "{e}"
    );
}

#[test]
fn a_sweep_is_bounded_on_tools_times_parameters() {
    let dir = tempfile::tempdir().unwrap();
    // Each flag within its own limit, the product 1,000,000 parameters: gigabytes before the fix.
    let (code, err) = run_in(
        dir.path(),
        &["sweep", "--max-tools", "1000", "--params", "1000"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--max-tools")
            && err.contains("1000 tools x 1000 parameters")
            && err.contains("limit of 5000"),
        "{err}"
    );
    // One past each sweep limit: refused before a tool is generated.
    let (code, err) = run_in(
        dir.path(),
        &["sweep", "--max-tools", "1001", "--params", "1"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--max-tools") && err.contains("limit of 1000 tools"),
        "{err}"
    );
    let (code, err) = run_in(
        dir.path(),
        &["sweep", "--max-tools", "1000", "--params", "6"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("1000 tools x 6 parameters"), "{err}");
    let (code, err) = run_in(dir.path(), &["sweep", "--params", "1001"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--params") && err.contains("1000"), "{err}");
}

/// A scenario file in `dir` of `sessions` sessions of `calls` calls with `runs` runs.
fn scenario_file(dir: &Path, sessions: usize, calls: usize, runs: u64) -> String {
    let text = format!(
        "name = \"big\"\nmodels = [\"claude-opus-4.8\"]\nruns = {runs}\n[tools]\nsynthetic = {{ count = 2, params = 1 }}\n[session]\ncalls = {calls}\ntool_result_tokens = 10\noutput_tokens = 10\nfirst_user_tokens = 10\nsystem_tokens = 10\n[sessions]\ncount = {sessions}\nevery_seconds = 1\n"
    );
    std::fs::write(dir.join("big.toml"), text).unwrap();
    "big.toml".into()
}

#[test]
fn compare_whatif_and_advise_refuse_bills_that_would_not_fit_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    // One model, one strategy: MAX_BILLS_KEPT + 100 bills already; more with every pair.
    let calls = 100;
    let sessions = (MAX_BILLS_KEPT as usize) / calls + 1;
    let f = scenario_file(dir.path(), sessions, calls, 1);
    for args in [
        vec!["compare", f.as_str(), "--strategy", "none"],
        vec![
            "whatif",
            f.as_str(),
            "--remove-tools",
            "synthetic_tool_01",
            "--at-call",
            "2",
            "--model",
            "claude-opus-4.8",
        ],
        vec!["advise", f.as_str()],
        vec!["run", f.as_str(), "--strategy", "none"],
    ] {
        let (code, err) = run_in(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("big.toml")
                && err.contains("per-call bills")
                && err.contains(&MAX_BILLS_KEPT.to_string()),
            "{args:?}: {err}"
        );
    }
}

/// Three models (two strategies each by default: six pairs).
const THREE_MODELS: [&str; 6] = [
    "--model",
    "claude-opus-4.8",
    "--model",
    "gpt-5.6",
    "--model",
    "kimi-k3",
];

#[test]
fn monte_carlo_limits_count_every_model_and_strategy() {
    let dir = tempfile::tempdir().unwrap();
    // 20,000 runs x 1 x 1,000 calls = 2e7 calls: under the scenario's own limit, but x 8 pairs of
    // several pairs it is more than MAX_SIMULATED_CALLS.
    let f = scenario_file(dir.path(), 1, 1000, 20_000);
    let probe = Scenario::from_toml_str(
        &std::fs::read_to_string(dir.path().join(&f)).unwrap(),
        "big.toml",
        Path::new("."),
    );
    assert!(probe.is_ok(), "the scenario alone is within its limits");
    for args in [
        vec!["compare", f.as_str()],
        [&["run", f.as_str()][..], &THREE_MODELS[..]].concat(),
        vec!["advise", f.as_str()],
        [
            &[
                "whatif",
                f.as_str(),
                "--remove-tools",
                "synthetic_tool_01",
                "--at-call",
                "2",
                "--model",
                "claude-opus-4.8",
            ][..],
            &THREE_MODELS[..],
        ]
        .concat(),
    ] {
        let (code, err) = run_in(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("big.toml")
                && err.contains("runs")
                && err.contains(&format!("limit of {MAX_SIMULATED_CALLS}")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn tool_list_events_are_bounded_in_number_and_in_listed_tools() {
    let base = "[tools]\nsynthetic = { count = 9000, params = 0 }\n[session]\ncalls = 100000\n";
    let mut text = String::from(base);
    for i in 0..=MAX_EVENTS {
        text.push_str(&format!(
            "[[event]]\nat_call = {}\ndrop = [\"synthetic_tool_01\"]\n",
            2 + i
        ));
    }
    let e = Scenario::from_toml_str(&text, "ev.toml", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ev.toml") && e.contains(&format!("limit of {MAX_EVENTS}")),
        "{e}"
    );
    // 200 events each re-listing about 9,000 tools: 1.8 million list entries to prepare per model.
    let mut text = String::from(base);
    for i in 0..200 {
        text.push_str(&format!(
            "[[event]]\nat_call = {}\ndrop = [\"synthetic_tool_{:02}\"]\n",
            2 + i,
            i + 1
        ));
    }
    let e = Scenario::from_toml_str(&text, "ev.toml", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ev.toml") && e.contains(&MAX_LISTED_TOOLS.to_string()),
        "{e}"
    );
}

#[test]
fn synthetic_parameters_are_bounded_over_the_whole_scenario() {
    // Within the limit entry by entry (10,000 parameters each), but not together: the events' tools
    // are counted with the initial list's before any is made. Before, each entry was checked alone,
    // so 40 such events made 400,000 parameters (6.6 s and 320 MB in `run`).
    let entries = MAX_SYNTHETIC_PARAMS / 10_000 + 1;
    let mut text =
        String::from("[tools]\nsynthetic = { count = 5, params = 0 }\n[session]\ncalls = 100\n");
    for i in 0..entries {
        text.push_str(&format!(
            "[[event]]\nat_call = {}\nadd_synthetic = {{ count = 10, params = 1000 }}\nkeep = [\"synthetic_tool_01\"]\n",
            2 + i
        ));
    }
    let e = Scenario::from_toml_str(&text, "syn.toml", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("syn.toml")
            && e.contains(&format!("event[{}].add_synthetic", entries - 1))
            && e.contains(&format!(
                "limit of {MAX_SYNTHETIC_PARAMS} parameters in all"
            )),
        "{e}"
    );
    // One entry fewer fits: the limit is the sum, not a smaller bound on each entry.
    let fits: String = text
        .split("[[event]]")
        .take(entries)
        .collect::<Vec<_>>()
        .join("[[event]]");
    assert!(Scenario::from_toml_str(&fits, "syn.toml", Path::new(".")).is_ok());
}

/// Token counts on the command line are bounded (a thousand times the largest context window):
/// `--prefix-tokens 18446744073709551615` used to wrap and print 99; now it is refused, naming the
/// flag and the range, before any log is read.
#[test]
fn token_flags_beyond_the_limit_are_refused_not_wrapped() {
    for args in [
        &[
            "replay",
            "tests/fixtures/usage/anthropic_messages.jsonl",
            "--prefix-tokens",
            "18446744073709551615",
        ][..],
        &[
            "replay",
            "tests/fixtures/usage/anthropic_messages.jsonl",
            "--tool-tokens-delta",
            "-9223372036854775808",
        ][..],
        &[
            "fit",
            "tests/fixtures/usage/anthropic_messages.jsonl",
            "--prefix-tokens",
            "1000000001",
        ][..],
    ] {
        let err = crate::common::refused(
            crate::common::pcsim()
                .current_dir(crate::common::root())
                .args(args),
        );
        assert!(
            err.contains(args[2]) && err.contains("1000000000"),
            "{args:?}: {err}"
        );
    }
}

/// Variable expansion is bounded before it is built: a 120 KB configuration repeating a 100 KB
/// `${BIG}` 2,000 times asked for 200 MB per argument (3 GiB over the formats tried); now the server
/// is skipped with the limit named (one argument cannot exceed Linux's MAX_ARG_STRLEN anyway).
#[test]
fn a_configuration_whose_variables_expand_past_the_argument_limit_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    let arg = "${BIG}".repeat(20_000);
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"huge": {{"command": "cat", "args": ["{arg}"]}}}}}}"#),
    )
    .unwrap();
    let out = crate::common::pcsim()
        .env("BIG", "x".repeat(100_000))
        .args(["config", config.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("huge")
            && err.contains(&pcsim::input::mcpconfig::MAX_EXPANDED_BYTES.to_string()),
        "{err}"
    );
}
