//! Issue 15: one resolved request for every command, and the bugs that came from resolving it three
//! times (each test here fails on the code before the request existed).

use std::time::Duration;

use serde_json::Value;

use crate::common::pcsim;

fn json_of(args: &[&str]) -> Value {
    let out = pcsim()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

#[test]
fn runs_on_the_command_line_meet_the_scenarios_work_limit() {
    // large-toolset is 20 sessions x 40 calls: 2,000,000 runs are 1.6e9 calls, over the 1e9-call
    // limit that `runs = 2000000` in the file is refused for. The flag used to start the
    // work (minutes to hours); the timeout makes that a failure rather than a hang.
    let out = pcsim()
        .current_dir(crate::common::root())
        .args(["run", "examples/large-toolset.toml", "--runs", "2000000"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("command line: field `--runs`") && err.contains("calls per scenario"),
        "{err}"
    );
    // Within the limit the flag still works.
    let v = json_of(&[
        "run", "--runs", "3", "--model", "kimi-k3", "--format", "json",
    ]);
    assert_eq!(v["results"][0]["montecarlo"]["runs"], 3);
}

#[test]
fn repeated_model_ids_are_simulated_once() {
    let v = json_of(&[
        "run", "--model", "gpt-5.6", "--model", "gpt-5.6", "--format", "json",
    ]);
    // The default scenario's strategies, none and cached, once each.
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    let v = json_of(&[
        "compare", "--model", "kimi-k3", "--model", "kimi-k3", "--format", "json",
    ]);
    assert_eq!(v["comparisons"].as_array().unwrap().len(), 1);
}

#[test]
fn a_strategy_that_repeats_another_is_a_stated_skip_in_run_as_in_compare() {
    // On Claude `cached` is explicit:tools+system+last: `run` used to drop the second silently.
    let args = [
        "--model",
        "claude-opus-4.8",
        "--strategy",
        "cached",
        "--strategy",
        "explicit:tools+system+last",
        "--format",
        "json",
    ];
    for cmd in ["run", "compare"] {
        let mut all = vec![cmd];
        all.extend(args);
        let v = json_of(&all);
        let skipped = v["skipped"].as_array().unwrap();
        assert!(
            skipped
                .iter()
                .any(|s| s["strategy"] == "explicit:tools+system+last"
                    && s["reason"]
                        .as_str()
                        .unwrap()
                        .contains("the same strategy as `cached`")),
            "{cmd}: {skipped:?}"
        );
    }
}

#[test]
fn a_bad_strategy_flag_is_named_as_the_flag_not_the_scenario_field() {
    let out = pcsim()
        .args(["run", "--strategy", "explicit:often"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("command line: field `--strategy`"), "{err}");
}
