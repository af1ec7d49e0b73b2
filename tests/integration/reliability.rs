//! Error quality, exit codes, output safety and limits.

use std::path::Path;

use pcsim::base::quantity::Quantity;
use pcsim::input::scenario::{
    Arrival, Scenario, MAX_CALLS_PER_SESSION, MAX_TOKENS_PER_MESSAGE, MAX_TOOLS,
};
use pcsim::model::catalog::{Catalog, EMBEDDED_CATALOG};
use pcsim::model::strategy::Strategy;
use pcsim::report::{write_atomic, write_atomic_with};
use pcsim::sim::engine::{simulate_collect, SimSetup};

use crate::common::pcsim;

fn scenario_err(text: &str) -> String {
    Scenario::from_toml_str(text, "s.toml", Path::new("."))
        .expect_err("the scenario should be refused")
        .to_string()
}

/// 1-based number of the first line of `text` containing `needle` (computed, not hard-coded, so the
/// tests follow the files).
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("`{needle}` not in text"))
}

// ------------------------------------------------------------------------------------------------
// Error quality

#[test]
fn invalid_value_names_file_line_column_field_and_value() {
    let text = "[tools]\nsynthetic = { count = 2 }\n\n[session]\nsystem_tokens = 100\ncalls = 0\n";
    let e = scenario_err(text);
    assert!(
        e.starts_with(&format!(
            "s.toml:{}:9: field `session.calls`",
            line_of(text, "calls")
        )),
        "{e}"
    );
    assert!(e.contains("value 0"), "{e}");
}

#[test]
fn invalid_inline_value_points_at_the_value() {
    let text = "[session]\ncalls = 3\ngap_seconds = { dist = \"exponential\", mean = -2 }\n";
    let e = scenario_err(text);
    let col = text.lines().nth(2).unwrap().find("{").unwrap() + 1;
    assert!(
        e.starts_with(&format!("s.toml:3:{col}: field `session.gap_seconds`")),
        "{e}"
    );
    assert!(e.contains("-2"), "{e}");
}

#[test]
fn event_errors_name_the_event_in_file_order() {
    // Events are applied in call order, but the message must name the one the user wrote second.
    let text = "[tools]\nsynthetic = { count = 2 }\n[session]\ncalls = 5\n\n[[event]]\nat_call = 4\nremove = [\"synthetic_tool_01\"]\n\n[[event]]\nat_call = 3\nremove = [\"nope\"]\n";
    let e = scenario_err(text);
    let event_line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("[[event]]"))
        .nth(1)
        .map(|(i, _)| i + 1)
        .unwrap();
    assert!(
        e.starts_with(&format!("s.toml:{event_line}:1: field `event[1]`")),
        "{e}"
    );
    assert!(e.contains("`nope`"), "{e}");
}

#[test]
fn unknown_key_gets_line_column_and_closest_field() {
    let e = scenario_err("[session]\ncalls = 3\ncals = 4\n");
    assert!(
        e.starts_with("s.toml: line 3, column 1: unknown field `cals`"),
        "{e}"
    );
    assert!(e.contains("did you mean `calls`?"), "{e}");
    assert!(e.contains("3 | cals = 4"), "{e}");
    let e = Catalog::from_toml_str(
        &EMBEDDED_CATALOG.replacen("granularity = {", "granularty = {", 1),
        "m.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("did you mean `granularity`?"), "{e}");
}

#[test]
fn catalog_errors_point_into_the_right_model() {
    // The fourth model's price, not the first one with the same key.
    let model = "gemini-3.6-flash";
    let start = EMBEDDED_CATALOG.find(&format!("id = \"{model}\"")).unwrap();
    let price = start
        + EMBEDDED_CATALOG[start..]
            .find("input_usd_per_mtok = { value = ")
            .unwrap();
    let value_at = price + "input_usd_per_mtok = { value = ".len();
    let mut text = EMBEDDED_CATALOG.to_string();
    text.insert(value_at, '-');
    let e = Catalog::from_toml_str(&text, "m.toml")
        .unwrap_err()
        .to_string();
    let line = EMBEDDED_CATALOG[..price].matches('\n').count() + 1;
    let column = "input_usd_per_mtok = ".len() + 1;
    assert!(
        e.starts_with(&format!(
            "m.toml:{line}:{column}: field `model `{model}`.input_usd_per_mtok`"
        )),
        "{e}"
    );
    let original: String = EMBEDDED_CATALOG[value_at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    assert!(e.contains(&format!("value -{original}")), "{e}");
}

#[test]
fn unknown_model_in_a_scenario_names_file_field_and_closest_id() {
    let s = Scenario::from_toml_str(
        "models = [\"kimi-k3\", \"claude-opus-48\"]\n[session]\ncalls = 2\n",
        "s.toml",
        Path::new("."),
    )
    .unwrap();
    let catalog = Catalog::embedded().unwrap();
    let e = pcsim::sim::simulate::run_scenario(&catalog, &s, &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml: field `models`: unknown model id `claude-opus-48`; did you mean `claude-opus-4.8`?"),
        "{e}"
    );
}

#[test]
fn tool_file_errors_name_the_tool_file_not_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.json"),
        "[{\"name\": \"a\"},\n {\"name\": 3}]",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "[tools]\nfiles = [\"t.json\"]\n[session]\ncalls = 2\n",
    )
    .unwrap();
    let e = Scenario::load(&dir.path().join("s.toml"))
        .unwrap_err()
        .to_string();
    // The tool file, with the line and column of the bad name.
    assert!(e.contains("t.json:2:11: field `tools[1].name`"), "{e}");
    assert!(!e.contains("s.toml"), "{e}");
    std::fs::write(
        dir.path().join("t.json"),
        "[{\"name\": \"a\"},\n {\"name\" 3}]",
    )
    .unwrap();
    let e = Scenario::load(&dir.path().join("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.json") && e.contains("line 2 column 10"),
        "{e}"
    );
}

#[test]
fn a_broken_real_capture_is_named_by_tool_index_and_name() {
    let Some(path) = crate::common::capture("server-github") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let tools = pcsim::model::tools::parse_tool_list(&text, "github.json").unwrap();
    // Break the third tool's schema; the error must say which tool, by index and name.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["tools"][2]["inputSchema"] = serde_json::json!([1, 2]);
    let broken = serde_json::to_string_pretty(&v).unwrap();
    let e = pcsim::model::tools::parse_tool_list(&broken, "github.json")
        .unwrap_err()
        .to_string();
    // Where the bad schema starts, computed from the text.
    let at = broken.find("\"inputSchema\": [").unwrap() + "\"inputSchema\": ".len();
    let line = broken[..at].matches('\n').count() + 1;
    let column = at - broken[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    assert!(
        e.starts_with(&format!(
            "github.json:{line}:{column}: field `tools[2] (`{}`).inputSchema`",
            tools[2].name
        )),
        "{e}"
    );
}

#[test]
fn not_utf8_and_not_a_file_are_user_errors_with_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(&p, b"[session]\ncalls = 2\n# caf\xe9\n").unwrap();
    let e = Scenario::load(&p).unwrap_err();
    assert!(e.is_user_error());
    let e = e.to_string();
    assert!(
        e.contains("s.toml") && e.contains("line 3, column 6") && e.contains("UTF-8"),
        "{e}"
    );

    let e = Scenario::load(dir.path()).unwrap_err();
    assert!(e.is_user_error() && e.to_string().contains("folder"), "{e}");
}

#[test]
fn devices_and_oversized_files_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    // A sparse file just over the limit: refused from its size, nothing is read.
    let big = dir.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(pcsim::error::MAX_INPUT_BYTES + 1).unwrap();
    let e = pcsim::model::tools::load_tool_file(&big)
        .unwrap_err()
        .to_string();
    assert!(e.contains("big.json") && e.contains("limit"), "{e}");
    if Path::new("/dev/zero").exists() {
        let e = pcsim::model::tools::load_tool_file(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("not a regular file"),
            "{e}"
        );
    }
}

#[test]
fn exit_codes_are_0_for_success_and_2_for_user_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "[session]\ncalls = 0\n").unwrap();
    let out = pcsim().arg("run").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:2:9: field `session.calls`", p.display())),
        "{stderr}"
    );

    let out = pcsim()
        .args(["run", "--model", "claude-opus-48"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `claude-opus-4.8`"));

    let out = pcsim()
        .args(["run", "--model", "kimi-k3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exit_code_is_1_for_an_internal_failure() {
    // A full disk on standard output is not the user's input error.
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"))
        .args(["run", "--model", "kimi-k3"])
        .stdout(full)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

// ------------------------------------------------------------------------------------------------
// Output safety

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

#[test]
fn a_failed_or_panicking_write_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.json");
    write_atomic(&p, b"old report").unwrap();
    let e = write_atomic_with(&p, |f| {
        use std::io::Write;
        f.write_all(&[b'x'; 100_000])?;
        Err(std::io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert!(e.to_string().contains("disk on fire"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"old report");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    let r = std::panic::catch_unwind(|| {
        let _ = write_atomic_with(&p, |f| {
            use std::io::Write;
            f.write_all(b"half")?;
            panic!("writer bug");
        });
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&p).unwrap(), b"old report");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    // A folder in the way is refused and left alone.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("keep"), "k").unwrap();
    assert!(write_atomic(&sub, b"x").is_err());
    assert_eq!(std::fs::read_to_string(sub.join("keep")).unwrap(), "k");
}

#[test]
fn readers_see_the_old_or_the_new_file_never_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("calls.csv");
    const SIZE: usize = 256 * 1024;
    write_atomic(&p, &vec![b'a'; SIZE]).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let reads = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0u32;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = std::fs::read(&p).unwrap();
                assert_eq!(bytes.len(), SIZE, "a partial file was visible");
                assert!(
                    bytes.iter().all(|b| *b == bytes[0]),
                    "a mix of two versions was visible"
                );
                reads += 1;
            }
            reads
        });
        for i in 0..40 {
            let fill = if i % 2 == 0 { b'b' } else { b'a' };
            write_atomic(&p, &vec![fill; SIZE]).unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(reads > 0);
    assert!(leftovers(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn replacing_a_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("summary.txt");
    std::fs::write(&p, "old").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic(&p, b"new").unwrap();
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
}

#[test]
fn a_run_never_modifies_its_input_files() {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        "[{\"name\": \"a\", \"description\": \"x\", \"input_schema\": {\"type\": \"object\"}}]";
    let scenario =
        "[tools]\nfiles = [\"t.json\"]\nsynthetic = { count = 3 }\n[session]\ncalls = 4\n";
    let catalog = EMBEDDED_CATALOG;
    std::fs::write(dir.path().join("t.json"), tools).unwrap();
    std::fs::write(dir.path().join("s.toml"), scenario).unwrap();
    std::fs::write(dir.path().join("models.toml"), catalog).unwrap();
    let stamp = |name: &str| {
        let m = std::fs::metadata(dir.path().join(name)).unwrap();
        (m.len(), m.modified().unwrap())
    };
    let before: Vec<_> = ["t.json", "s.toml", "models.toml"]
        .iter()
        .map(|n| stamp(n))
        .collect();
    for _ in 0..2 {
        // Reports go into the folder of the inputs, twice (the second run replaces them).
        pcsim()
            .arg("--catalog")
            .arg(dir.path().join("models.toml"))
            .args(["run", "--model", "kimi-k3", "--out"])
            .arg(dir.path())
            .arg(dir.path().join("s.toml"))
            .assert()
            .success();
    }
    let after: Vec<_> = ["t.json", "s.toml", "models.toml"]
        .iter()
        .map(|n| stamp(n))
        .collect();
    assert_eq!(before, after);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t.json")).unwrap(),
        tools
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.toml")).unwrap(),
        scenario
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("models.toml")).unwrap(),
        catalog
    );
    let json = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
    assert!(json.contains("\"kimi-k3\""));
    assert!(leftovers(dir.path()).is_empty());

    // The repository's own example, run from its place.
    let example = crate::common::root().join("examples").join("default.toml");
    let before = std::fs::read(&example).unwrap();
    pcsim()
        .args(["run", "--model", "glm-5.2", "--out"])
        .arg(dir.path().join("ex"))
        .arg(&example)
        .assert()
        .success();
    assert_eq!(std::fs::read(&example).unwrap(), before);
}

// ------------------------------------------------------------------------------------------------
// Limits

#[test]
fn unbounded_work_is_refused_up_front() {
    let e = scenario_err("[session]\ncalls = 1000000000000\n");
    assert!(
        e.contains("session.calls") && e.contains(&MAX_CALLS_PER_SESSION.to_string()),
        "{e}"
    );
    let e = scenario_err("[session]\ncalls = 100000\n[sessions]\ncount = 1000000\n");
    assert!(e.contains("calls per run"), "{e}");
    let e = scenario_err("runs = 10000000\n[session]\ncalls = 1000\n");
    assert!(
        e.contains("field `runs`") && e.contains("calls per scenario"),
        "{e}"
    );
    // Conversation growth: 100,000 calls of 20,000 tokens each would reach two billion tokens.
    let e = scenario_err("[session]\ncalls = 100000\ntool_result_tokens = 20000\n");
    assert!(
        e.contains("grow to about") && e.contains("session.calls"),
        "{e}"
    );
}

#[test]
fn huge_tool_counts_are_refused() {
    let e = scenario_err("[tools]\nsynthetic = { count = 1000000000 }\n[session]\ncalls = 2\n");
    assert!(e.contains("tools.synthetic.count"), "{e}");
    let e = scenario_err(
        "[tools]\nsynthetic = { count = 10000, params = 1000 }\n[session]\ncalls = 2\n",
    );
    assert!(e.contains("parameters"), "{e}");
    // Events that keep adding tools: the list may not outgrow MAX_TOOLS.
    let mut text =
        String::from("[tools]\nsynthetic = { count = 9000, params = 0 }\n[session]\ncalls = 5\n");
    for at in 2..=3 {
        text.push_str(&format!(
            "[[event]]\nat_call = {at}\nadd_synthetic = {{ count = 800, params = 0 }}\n"
        ));
    }
    let e = scenario_err(&text);
    assert!(
        e.contains("event[1]") && e.contains(&MAX_TOOLS.to_string()),
        "{e}"
    );
}

#[test]
fn huge_numbers_are_refused_with_the_field_and_value() {
    for (field, line, value) in [
        (
            "session.system_tokens",
            "system_tokens = 9000000000000000000",
            "9000000000000000000",
        ),
        (
            "session.first_user_tokens",
            "first_user_tokens = 1e300",
            "1e300",
        ),
        (
            "session.output_tokens",
            "output_tokens = { dist = \"exponential\", mean = 1e15 }",
            "mean 1e15",
        ),
        (
            "session.tool_result_tokens",
            "tool_result_tokens = { dist = \"log_normal\", mu = 700.0, sigma = 1.0 }",
            "mean",
        ),
        ("session.gap_seconds", "gap_seconds = 1e300", "1e300"),
        (
            "session.first_token_seconds",
            "first_token_seconds = 1e9",
            "value 1000000000",
        ),
    ] {
        let e = scenario_err(&format!("[session]\ncalls = 3\n{line}\n"));
        assert!(e.contains(field) && e.contains(value), "{line}: {e}");
        assert!(e.starts_with("s.toml:3:"), "{line}: {e}");
    }
    for (line, field) in [
        ("every_seconds = 1e300", "sessions.every_seconds"),
        ("poisson_per_hour = 1e-300", "sessions.poisson_per_hour"),
    ] {
        let e = scenario_err(&format!(
            "[session]\ncalls = 3\n[sessions]\ncount = 2\n{line}\n"
        ));
        assert!(e.contains(field), "{line}: {e}");
    }
}

#[test]
fn the_engine_cannot_overflow_even_on_unvalidated_input() {
    // Built directly, bypassing the loader's limits: draws are clamped, times saturate.
    let mut s = Scenario::builtin_default().unwrap();
    s.calls = 5;
    s.sessions = 2;
    s.system_tokens = u64::MAX / 2;
    s.tool_result_tokens = Quantity::Exponential { mean: 1e300 };
    s.output_tokens = Quantity::fixed(1e300);
    s.gap_seconds = Quantity::fixed(1e300);
    s.arrival = Arrival::Every(1e300);
    let catalog = Catalog::embedded().unwrap();
    for id in ["claude-opus-4.8", "glm-5.2", "gemini-3.6-flash"] {
        let model = catalog.model(id).unwrap();
        for strategy in ["none", "cached"] {
            let r = Strategy::parse(strategy).unwrap().resolve(model).unwrap();
            let bills = simulate_collect(&s, &SimSetup::new(model, &r, 1e300), 0);
            assert_eq!(bills.len(), 10);
            for b in &bills {
                assert_eq!(b.output_tokens, MAX_TOKENS_PER_MESSAGE);
                assert_eq!(
                    b.uncached_tokens + b.cache_write_tokens + b.cache_read_tokens,
                    b.prompt_tokens
                );
                assert!(b.cost_usd.is_finite());
            }
        }
    }
}

#[test]
fn reports_too_large_for_memory_are_refused_before_simulating() {
    let catalog = Catalog::embedded().unwrap();
    let s = Scenario::from_toml_str(
        "[session]\ncalls = 100000\ntool_result_tokens = 10\noutput_tokens = 10\n[sessions]\ncount = 100\n",
        "big.toml",
        Path::new("."),
    )
    .unwrap();
    // Refused, not simulated: 10^7 calls x 12 pairs would take minutes and gigabytes.
    let e = pcsim::sim::simulate::run_scenario(&catalog, &s, &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("big.toml") && e.contains("per-call bills"),
        "{e}"
    );
}
