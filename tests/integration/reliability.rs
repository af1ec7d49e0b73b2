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

use crate::common::{outcome, pcsim};

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
    let path = crate::common::capture("server-github");
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
    f.set_len(pcsim::base::files::MAX_INPUT_BYTES + 1).unwrap();
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
    let out = outcome(pcsim().arg("run").arg(&p));
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr
            .contains(&format!("{}:2:9: field `session.calls`", p.display())),
        "{}",
        out.stderr
    );

    let out = outcome(pcsim().args(["run", "--model", "claude-opus-48"]));
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("did you mean `claude-opus-4.8`"));

    let out = outcome(pcsim().args(["run", "--model", "kimi-k3"]));
    assert_eq!(out.code, Some(0));
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
        .filter(|n| {
            n.contains(".tmp-") || n.contains(".old-") || n.starts_with(".pcsim-write-test")
        })
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

// ------------------------------------------------------------------------------------------------
// Under attack (issue 18): special files, planted links, inputs under report names, whole report
// sets, interruption, races, exit codes, long and hostile names.

/// Exit code, stdout and stderr of the binary.
fn run_pcsim(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let o = outcome(pcsim().args(args));
    (o.code, o.stdout, o.stderr)
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

fn litellm_fixture() -> std::path::PathBuf {
    crate::common::root().join("tests/fixtures/litellm_prices.json")
}

#[cfg(unix)]
fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[cfg(unix)]
#[test]
fn pipes_and_links_at_the_output_path_are_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let to_fifo = dir.path().join("to-fifo.toml");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let victim = dir.path().join("victim.toml");
    std::fs::write(&victim, "keep me").unwrap();
    let to_file = dir.path().join("to-file.toml");
    std::os::unix::fs::symlink(&victim, &to_file).unwrap();
    for target in [&fifo, &to_fifo, &to_file] {
        let (code, _, stderr) = run_pcsim(&[
            os("import-litellm"),
            litellm_fixture().as_os_str(),
            os("--out"),
            target.as_os_str(),
        ]);
        assert_eq!(code, Some(2), "{}: {stderr}", target.display());
        assert!(stderr.contains(&target.display().to_string()), "{stderr}");
    }
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&to_fifo)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(&to_file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    // A report set with one member in the way of a pipe: refused whole.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    mkfifo(&out.join("calls.csv"));
    let (code, _, stderr) = run_pcsim(&[
        os("run"),
        os("--model"),
        os("kimi-k3"),
        os("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!out.join("results.json").exists());
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
}

#[cfg(unix)]
#[test]
fn the_write_probe_never_follows_a_planted_link() {
    // Links planted under every name the probe of this process could use (its pid, plus a counter).
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("shared");
    std::fs::create_dir(&out).unwrap();
    let pid = std::process::id();
    let mut names = vec![format!(".pcsim-write-test-{pid}")];
    names.extend((0..4).map(|i| format!(".pcsim-write-test-{pid}-{i}")));
    for n in &names {
        std::os::unix::fs::symlink(&victim, out.join(n)).unwrap();
    }
    pcsim::report::ensure_writable_dir(&out).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for n in &names {
        assert!(std::fs::symlink_metadata(out.join(n))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn inputs_named_like_reports_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A tool file named tools.json, the report name of `pcsim tools`.
    let tools =
        "[{\"name\": \"a\", \"description\": \"x\", \"inputSchema\": {\"type\": \"object\"}}]";
    std::fs::write(d.join("tools.json"), tools).unwrap();
    let (code, _, stderr) = run_pcsim(&[
        os("tools"),
        d.join("tools.json").as_os_str(),
        os("--model"),
        os("kimi-k3"),
        os("--out"),
        d.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("tools.json") && stderr.contains("input"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("tools.json")).unwrap(),
        tools
    );
    // A scenario named summary.txt, a report name of `pcsim run`.
    let scenario = "[session]\ncalls = 3\n";
    std::fs::write(d.join("summary.txt"), scenario).unwrap();
    let (code, _, stderr) = run_pcsim(&[
        os("run"),
        d.join("summary.txt").as_os_str(),
        os("--model"),
        os("kimi-k3"),
        os("--out"),
        d.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("summary.txt"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(d.join("summary.txt")).unwrap(),
        scenario
    );
    assert!(
        !d.join("results.json").exists(),
        "a partial set was written"
    );
    // The catalog under another name (a hard link called results.json).
    let catalog = d.join("models.toml");
    std::fs::write(&catalog, EMBEDDED_CATALOG).unwrap();
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::hard_link(&catalog, out.join("results.json")).unwrap();
    let (code, _, stderr) = run_pcsim(&[
        os("--catalog"),
        catalog.as_os_str(),
        os("run"),
        os("--model"),
        os("kimi-k3"),
        os("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(std::fs::read_to_string(&catalog).unwrap(), EMBEDDED_CATALOG);
    // A LiteLLM file given as its own output.
    let lit = d.join("prices.json");
    std::fs::copy(litellm_fixture(), &lit).unwrap();
    let before = std::fs::read(&lit).unwrap();
    let (code, _, stderr) = run_pcsim(&[
        os("import-litellm"),
        lit.as_os_str(),
        os("--out"),
        lit.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("prices.json"), "{stderr}");
    assert_eq!(std::fs::read(&lit).unwrap(), before);
}

/// The files of a folder with their contents (hidden side files excluded).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_report_set_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let run = |model: &str| {
        run_pcsim(&[
            os("run"),
            os("--model"),
            os(model),
            os("--out"),
            out.as_os_str(),
        ])
    };
    assert_eq!(run("kimi-k3").0, Some(0));
    let old = snapshot(out);
    assert!(old.iter().any(|(n, _)| n == "results.json"));
    // A member that cannot be replaced (a folder where calls.csv goes): no member changes.
    std::fs::remove_file(out.join("calls.csv")).unwrap();
    std::fs::create_dir(out.join("calls.csv")).unwrap();
    let (code, _, stderr) = run("glm-5.2");
    assert_eq!(code, Some(2), "{stderr}");
    let old_without_csv: Vec<_> = old
        .iter()
        .filter(|(n, _)| n != "calls.csv")
        .cloned()
        .collect();
    assert_eq!(snapshot(out), old_without_csv, "a member changed");
    assert!(leftovers(out).is_empty(), "{:?}", leftovers(out));
}

#[cfg(unix)]
#[test]
fn a_rename_failing_midway_puts_the_old_set_back_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_path_buf();
    let run = |model: &str| {
        run_pcsim(&[
            os("run"),
            os("--model"),
            os(model),
            os("--out"),
            out.as_os_str(),
        ])
    };
    assert_eq!(run("kimi-k3").0, Some(0));
    let old = snapshot(&out);
    // The second run pauses with every temporary file complete; meanwhile calls.csv becomes a
    // folder that is not empty, so its rename fails after results.json was already renamed.
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"))
        .args(["run", "--model", "glm-5.2", "--out"])
        .arg(&out)
        .env("PCSIM_TEST_PAUSE_BEFORE_RENAME_MS", "3000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while leftovers(&out)
        .iter()
        .filter(|n| n.contains(".tmp-"))
        .count()
        < 3
    {
        assert!(start.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::remove_file(out.join("calls.csv")).unwrap();
    std::fs::create_dir(out.join("calls.csv")).unwrap();
    std::fs::write(out.join("calls.csv").join("x"), "x").unwrap();
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_ne!(result.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no file of the set"), "{stderr}");
    let old_without_csv: Vec<_> = old
        .iter()
        .filter(|(n, _)| n != "calls.csv")
        .cloned()
        .collect();
    assert_eq!(snapshot(&out), old_without_csv, "a member was left new");
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
}

#[cfg(target_os = "linux")]
#[test]
fn an_immutable_member_leaves_the_whole_old_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let run = |model: &str| {
        run_pcsim(&[
            os("run"),
            os("--model"),
            os(model),
            os("--out"),
            out.as_os_str(),
        ])
    };
    assert_eq!(run("kimi-k3").0, Some(0));
    let old = snapshot(out);
    let csv = out.join("calls.csv");
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&csv)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        eprintln!("skipped: chattr +i is not available here (needs root and a file system with attributes)");
        return;
    }
    let (code, _, stderr) = run("glm-5.2");
    chattr("-i");
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("calls.csv") && stderr.contains("unchanged")
            || stderr.contains("no file of the set"),
        "{stderr}"
    );
    assert_eq!(snapshot(out), old, "the set is mixed");
    assert!(leftovers(out).is_empty(), "{:?}", leftovers(out));
}

#[cfg(unix)]
#[test]
fn an_interrupted_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_path_buf();
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"));
    command
        .args(["run", "--model", "kimi-k3", "--out"])
        .arg(&out)
        .env("PCSIM_TEST_PAUSE_BEFORE_RENAME_MS", "20000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // A test run started as a background job of a non-interactive shell inherits SIGINT ignored, and
    // pcsim rightly keeps an ignored SIGINT ignored: the child gets the default disposition back.
    // SAFETY: signal(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    // Wait until the run says every temporary file is complete (it pauses there), then interrupt it.
    // The reader thread keeps the pipe open to the end, so what the run says later cannot fail.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = String::new();
    while !said.contains("pausing before the renames") {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(line) => said.push_str(&(line + "\n")),
            Err(_) => panic!("the run never reached its renames: {said}"),
        }
    }
    assert!(
        leftovers(&out).len() >= 3,
        "the reports' temporary files exist during the pause: {:?}",
        leftovers(&out)
    );
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
    assert!(!out.join("results.json").exists());
}

#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_pipe_never_hangs_a_read() {
    // A file renamed back and forth with a pipe while it is read: every read gives the text or a
    // clear refusal, never blocks on the pipe.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    let file = dir.path().join("file");
    let fifo = dir.path().join("fifo");
    std::fs::write(&file, "[session]\ncalls = 2\n").unwrap();
    mkfifo(&fifo);
    std::fs::copy(&file, &path).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, path, file, fifo) = (stop.clone(), path.clone(), file.clone(), fifo.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Swap the pipe in and the file back, by hard links renamed over the path.
                let src = if i.is_multiple_of(2) { &fifo } else { &file };
                let tmp = path.with_extension(format!("swap{i}"));
                if std::fs::hard_link(src, &tmp).is_ok() {
                    let _ = std::fs::rename(&tmp, &path);
                }
                i += 1;
            }
        })
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = {
        let path = path.clone();
        std::thread::spawn(move || {
            // Many reads: the check-then-open code this guards against (stat, then open by path)
            // blocked within 1,123 to 56,445 reads in 8 of 8 runs of a copy of it under this swapper
            // (scripts/fifo_race.rs); a few thousand reads, as before, missed the window 4 times in 5.
            let start = std::time::Instant::now();
            for _ in 0..200_000 {
                let r = pcsim::base::files::read_text(&path);
                if let Err(e) = &r {
                    assert!(e.is_user_error(), "{e}");
                }
                // Bounded for a slow machine: not a timing assertion, the count just stops early.
                if start.elapsed() > std::time::Duration::from_secs(5) {
                    break;
                }
            }
            let _ = tx.send(());
        })
    };
    let done = rx.recv_timeout(std::time::Duration::from_secs(60));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    if done.is_err() {
        // Unblock the stuck reader so the test process can end, then fail.
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        panic!("a read blocked on a pipe swapped in after the check");
    }
    reader.join().unwrap();
}

#[cfg(unix)]
#[test]
fn user_caused_io_errors_exit_with_2() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.toml");
    let b = dir.path().join("b.toml");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let (code, _, stderr) = run_pcsim(&[os("run"), a.as_os_str()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("a.toml"), "{stderr}");
    // A /proc file that refuses to be read.
    if Path::new("/proc/self/mem").exists() {
        for cmd in ["run", "tools", "replay"] {
            let (code, _, stderr) = run_pcsim(&[os(cmd), os("/proc/self/mem")]);
            assert_eq!(code, Some(2), "{cmd}: {stderr}");
            assert!(stderr.contains("/proc/self/mem"), "{stderr}");
        }
    }
}

#[test]
fn a_byte_order_mark_is_accepted_in_json_as_in_toml() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("bom.json");
    std::fs::write(
        &tools,
        b"\xef\xbb\xbf[{\"name\": \"a\", \"description\": \"x\", \"inputSchema\": {\"type\": \"object\"}}]",
    )
    .unwrap();
    let (code, stdout, stderr) = run_pcsim(&[
        os("tools"),
        tools.as_os_str(),
        os("--model"),
        os("kimi-k3"),
        os("--format"),
        os("json"),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(stdout.contains("\"a\""), "{v}");
    let scenario = dir.path().join("bom.toml");
    std::fs::write(&scenario, b"\xef\xbb\xbf[session]\ncalls = 2\n").unwrap();
    assert_eq!(
        run_pcsim(&[
            os("run"),
            scenario.as_os_str(),
            os("--model"),
            os("kimi-k3")
        ])
        .0,
        Some(0)
    );
}

#[test]
fn names_of_any_length_never_panic_and_file_names_stay_valid() {
    let dir = tempfile::tempdir().unwrap();
    // A tool name of 70,000 characters in a table.
    let name = "t".repeat(70_000);
    let tools = dir.path().join("long.json");
    std::fs::write(
        &tools,
        format!("[{{\"name\": \"{name}\", \"description\": \"x\", \"inputSchema\": {{\"type\": \"object\"}}}}]"),
    )
    .unwrap();
    let (code, stdout, stderr) =
        run_pcsim(&[os("tools"), tools.as_os_str(), os("--model"), os("kimi-k3")]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&name));
    // A model id of 5,000 characters and a provider of 70,000: tables and file names of a run.
    let id = "m".repeat(5_000);
    let provider = "p".repeat(70_000);
    // Every mention of the model (its entry, price sheets) takes the long id.
    let mut catalog = EMBEDDED_CATALOG.replace("\"kimi-k3\"", &format!("\"{id}\""));
    let start = catalog.find(&format!("id = \"{id}\"")).unwrap();
    let provider_at =
        start + catalog[start..].find("provider = \"").unwrap() + "provider = \"".len();
    let provider_end = provider_at + catalog[provider_at..].find('"').unwrap();
    catalog.replace_range(provider_at..provider_end, &provider);
    let catalog_path = dir.path().join("models.toml");
    std::fs::write(&catalog_path, &catalog).unwrap();
    let (code, _, stderr) = run_pcsim(&[os("--catalog"), catalog_path.as_os_str(), os("models")]);
    assert_eq!(code, Some(0), "{stderr}");
    let out = dir.path().join("out");
    let (code, _, stderr) = run_pcsim(&[
        os("--catalog"),
        catalog_path.as_os_str(),
        os("run"),
        os("--model"),
        os(&id),
        os("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let names: Vec<String> = snapshot(&out).into_iter().map(|(n, _)| n).collect();
    let per_call: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("per-call-"))
        .collect();
    assert_eq!(per_call.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.len() <= 255), "{names:?}");
    assert_ne!(per_call[0], per_call[1]);
}

#[test]
fn escape_sequences_from_inputs_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("evil.json");
    std::fs::write(
        &tools,
        "[{\"name\": \"evil\\u001b]0;owned\\u0007\\u001b[2J\", \"description\": \"x\", \"inputSchema\": {\"type\": \"object\"}}]",
    )
    .unwrap();
    let (code, stdout, stderr) =
        run_pcsim(&[os("tools"), tools.as_os_str(), os("--model"), os("kimi-k3")]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stdout}"
    );
    assert!(
        stdout.contains("evil\\u{1b}]0;owned\\u{7}\\u{1b}[2J"),
        "{stdout}"
    );
    // A scenario name, in the summary and in an error message.
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        "name = \"x\\u001b[31mred\"\n[session]\ncalls = 2\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run_pcsim(&[
        os("run"),
        scenario.as_os_str(),
        os("--model"),
        os("kimi-k3"),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("x\\u{1b}[31mred"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'));
    let (code, _, stderr) = run_pcsim(&[os("run"), os("--model"), os("bad\u{1b}[2Jid")]);
    assert_eq!(code, Some(2));
    assert!(
        !stderr.contains('\u{1b}') && stderr.contains("\\u{1b}"),
        "{stderr}"
    );
}

#[test]
fn replayed_token_counts_cannot_overflow() {
    // Two calls of 9e18 tokens each: their sum does not fit in 64 bits. Refused with the field, not
    // summed into trillions of dollars (release) or a panic (debug).
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    let line = "{\"model\":\"claude-opus-4.8\",\"usage\":{\"input_tokens\":9000000000000000000,\"output_tokens\":1}}\n";
    std::fs::write(&log, line.repeat(2)).unwrap();
    let (code, stdout, stderr) = run_pcsim(&[os("replay"), log.as_os_str()]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("usage.input_tokens") && stderr.contains("9000000000000000000"),
        "{stderr}"
    );
}
