//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The `pcsim` binary under test.
pub fn pcsim() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("pcsim")
        .expect("the pcsim binary is built for integration tests")
}

/// What `pcsim ARGS` prints on standard output; the command must succeed (its standard error is
/// shown when it does not).
pub fn stdout_of(args: &[&str]) -> String {
    let out = pcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "pcsim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 on stdout")
}

/// [`stdout_of`], parsed as JSON.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_of(args)).expect("stdout is JSON")
}

/// The project root (where Cargo.toml and models.toml live).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The reference data the tests read: the measured facts, the provider rules and the 15 real MCP
/// `tools/list` captures, copied into the repository from the project's shared reference folder
/// (provenance in `tests/fixtures/reference/README.md`). Always inside the checkout: a clone with
/// nothing beside it passes its tests.
pub fn reference() -> PathBuf {
    root().join("tests/fixtures/reference")
}

/// A real MCP capture by file stem, e.g. `server-github`. The file must exist: a test of real data
/// never passes without it.
pub fn capture(stem: &str) -> PathBuf {
    let p = reference().join("mcp").join(format!("{stem}.tools.json"));
    assert!(p.is_file(), "missing capture {}", p.display());
    p
}

/// Runs `cmd`, asserts that pcsim refused it as bad input (exit 2), and returns its standard error
/// so the caller can check that it names the file, the field and what is wrong.
pub fn refused(cmd: &mut assert_cmd::Command) -> String {
    let a = cmd.assert().code(2);
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// One model of the built-in catalog as `pcsim models --format json` prints it, so a test computes
/// its expected figures from the catalog's own prices rather than from copied numbers.
pub fn catalog_model(id: &str) -> serde_json::Value {
    let a = pcsim()
        .args(["models", "--format", "json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    v["models"]
        .as_array()
        .expect("`models --format json` has a models array")
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("the built-in catalog has no model {id}"))
        .clone()
}

/// `pcsim replay ARGS --format json`, which must succeed: its JSON and its standard error.
pub fn replay_json(args: &[&str]) -> (serde_json::Value, String) {
    let a = pcsim()
        .arg("replay")
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success();
    (
        serde_json::from_slice(&a.get_output().stdout).unwrap(),
        String::from_utf8_lossy(&a.get_output().stderr).into_owned(),
    )
}

/// What a finished `pcsim` run gave: exit code (`None` when a signal ended it), standard output and
/// standard error, for tests that check the exit code themselves (success and refusal alike).
pub struct Outcome {
    /// Exit code.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `cmd` to its end, whatever its exit code.
pub fn outcome(cmd: &mut assert_cmd::Command) -> Outcome {
    let out = cmd.output().expect("pcsim can be started");
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Says on the test process's own standard error that a test did not run, and why. libtest keeps
/// what a passing test prints with `eprintln!` to itself, so a skip said that way is silent; this
/// line is written past the capture and shows in every `cargo test` run.
pub fn say_skipped(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {what}");
}

/// Whether `python3` runs. Tests that start the fake MCP server (a Python script) need it: a
/// missing one fails the test, under CI always, elsewhere unless `PCSIM_ALLOW_MISSING_SHARED=1` asks
/// for the skip (which is then said past the test harness's capture, [`say_skipped`]).
pub fn python3_or_skip(purpose: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let allowed = std::env::var_os("PCSIM_ALLOW_MISSING_SHARED").is_some_and(|v| v == "1");
        assert!(
            allowed && std::env::var_os("CI").is_none(),
            "python3 is needed {purpose} and is not available (install python3; outside CI, \
             PCSIM_ALLOW_MISSING_SHARED=1 skips)"
        );
        say_skipped(&format!("python3 is not available {purpose}"));
    }
    ok
}
