//! `pcsim fit` on a history pcsim generated from a known scenario (`run --usage-log`): every
//! recovered parameter within its stated interval around the true value, and a what-if on the
//! fitted scenario within the Monte Carlo interval of the same what-if on the known one. Every
//! tolerance is an interval the commands print; none is chosen here.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{pcsim, refused, root};

/// The known scenario: one distribution of each family `fit` can choose, Poisson arrivals, a real
/// MCP capture as the tool list (copied beside the scenario, so paths stay relative).
const KNOWN: &str = r#"
name = "known"
models = ["claude-opus-4.8"]
strategies = ["cached"]
seed = 5
[tools]
files = ["tools/memory.json"]
[session]
calls = 12
system_tokens = 2000
first_user_tokens = { dist = "uniform", min = 100, max = 900 }
tool_result_tokens = { dist = "log_normal", mu = 6.3, sigma = 0.5 }
output_tokens = { dist = "gamma", shape = 4.0, scale = 60.0 }
gap_seconds = { dist = "exponential", mean = 30 }
[sessions]
count = 40
poisson_per_hour = 20
"#;

/// A folder with the known scenario, its tool file and the history `run --usage-log` wrote.
fn history() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    std::fs::copy(
        root().join("examples/mcp/server-memory.tools.json"),
        dir.path().join("tools/memory.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("known.toml"), KNOWN).unwrap();
    pcsim()
        .current_dir(dir.path())
        .args(["-q", "run", "known.toml", "--usage-log", "history.jsonl"])
        .assert()
        .success();
    let log = dir.path().join("history.jsonl");
    (dir, log)
}

fn fit_json(dir: &Path, confidence: f64, out: &str) -> Value {
    let a = pcsim()
        .current_dir(dir)
        .args(["-q", "fit", "history.jsonl", "--tools", "tools/memory.json"])
        .args(["--out", out, "--format", "json"])
        .args(["--confidence", &confidence.to_string()])
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

/// The true value of `field.param` in the known scenario, read from its TOML.
fn truth(known: &toml::Table, field: &str, param: &str) -> f64 {
    let (table, key) = field.split_once('.').unwrap();
    let v = &known[table][key];
    let x = match v {
        toml::Value::Table(t) => &t[param],
        other => other,
    };
    x.as_float().or(x.as_integer().map(|i| i as f64)).unwrap()
}

#[test]
fn fit_recovers_a_known_scenario_within_its_stated_intervals() {
    let (dir, _) = history();
    let known: toml::Table = toml::from_str(KNOWN).unwrap();
    // Eight random parameters are checked together: each at the Bonferroni level 1 - 0.05/8, so
    // the whole check holds with at least 95% for a random history (the intervals `fit` states at
    // that level, not a tolerance chosen here).
    let fields: Vec<&str> = [
        "session.first_user_tokens",
        "session.tool_result_tokens",
        "session.output_tokens",
        "session.gap_seconds",
    ]
    .to_vec();
    let random_params = 2 + 2 + 2 + 1 + 1;
    let fit = fit_json(dir.path(), 1.0 - 0.05 / random_params as f64, "fitted.toml");
    let mut checked = 0;
    for f in fit["fields"].as_array().unwrap() {
        let name = f["field"].as_str().unwrap();
        assert!(fields.contains(&name), "{name}");
        let q = &f["fit"];
        let (table, key) = name.split_once('.').unwrap();
        assert_eq!(
            q["family"].as_str(),
            known[table][key]["dist"].as_str(),
            "{name}: the family of the known scenario"
        );
        for p in q["params"].as_array().unwrap() {
            let t = truth(&known, name, p["name"].as_str().unwrap());
            let (lo, hi) = (p["low"].as_f64().unwrap(), p["high"].as_f64().unwrap());
            assert!(lo <= t && t <= hi, "{name}: true {t} outside {p}");
            assert!(lo < hi, "{name}: an interval of no width says nothing: {p}");
            checked += 1;
        }
    }
    let rate = &fit["arrivals"]["per_hour"];
    let (lo, hi) = (
        rate["low"].as_f64().unwrap(),
        rate["high"].as_f64().unwrap(),
    );
    assert!(lo <= 20.0 && 20.0 <= hi, "arrivals: {rate}");
    checked += 1;
    assert_eq!(checked, random_params);
    // Exact figures: the log shows them without noise.
    assert_eq!(fit["system_tokens"], 2000, "prefix minus the tool block");
    assert_eq!(fit["prefix_source"], "inferred_from_cache_reads");
    assert_eq!(fit["calls"]["calls"], 12);
    assert_eq!(fit["calls"]["sessions"], 40);
    assert_eq!(fit["model"], "claude-opus-4.8");

    // The scenario written loads, and every command works on it, with Monte Carlo.
    let d = dir.path();
    let ok = |args: &[&str]| {
        pcsim()
            .current_dir(d)
            .arg("-q")
            .args(args)
            .assert()
            .success();
    };
    ok(&["run", "fitted.toml", "--runs", "3"]);
    ok(&["compare", "fitted.toml", "--runs", "3"]);
    ok(&["advise", "fitted.toml", "--runs", "3"]);
    ok(&[
        "whatif",
        "fitted.toml",
        "--at-call",
        "3",
        "--remove-tools",
        "read_graph",
        "--runs",
        "3",
    ]);
    ok(&["diff", "known.toml", "fitted.toml", "--runs", "3"]);
    let text = std::fs::read_to_string(d.join("fitted.toml")).unwrap();
    assert!(text.contains("files = [\"tools/memory.json\"]"), "{text}");
}

/// The saving rows of `whatif --runs 40 --format json` on `scenario`.
fn whatif_rows(dir: &Path, scenario: &str) -> Vec<Value> {
    let a = pcsim()
        .current_dir(dir)
        .args(["-q", "whatif", scenario, "--at-call", "4"])
        .args(["--remove-tools", "read_graph,search_nodes"])
        .args(["--model", "claude-opus-4.8", "--strategy", "cached"])
        .args(["--runs", "40", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    v["outcomes"].as_array().unwrap().clone()
}

#[test]
fn a_whatif_on_the_fitted_scenario_agrees_with_the_known_one_within_the_monte_carlo_interval() {
    let (dir, _) = history();
    fit_json(dir.path(), 0.95, "fitted.toml");
    let known = whatif_rows(dir.path(), "known.toml");
    let fitted = whatif_rows(dir.path(), "fitted.toml");
    assert_eq!(known.len(), 2, "the cached row and its append row");
    assert_eq!(known.len(), fitted.len());
    for (k, f) in known.iter().zip(&fitted) {
        assert_eq!(k["strategy_requested"], f["strategy_requested"]);
        assert!(
            agrees(k, f),
            "{}: the means are not each within the other's Monte Carlo interval: known {}, fitted {}",
            k["strategy_requested"],
            k["runs"]["saving_usd"],
            f["runs"]["saving_usd"]
        );
        // The figure compared is not zero: removing tools mid-session costs a re-write.
        assert!(
            k["runs"]["saving_usd"]["p95"].as_f64().unwrap() < 0.0,
            "{k}"
        );
    }
    // The check can fail: the fitted scenario with every tool result twice as large (log-normal
    // mu + ln 2) re-writes more at call 4, and its saving leaves the known interval.
    let text = std::fs::read_to_string(dir.path().join("fitted.toml")).unwrap();
    let mut misfit: toml::Table = toml::from_str(&text).unwrap();
    let mu = &mut misfit["session"]["tool_result_tokens"]["mu"];
    *mu = toml::Value::Float(mu.as_float().unwrap() + std::f64::consts::LN_2);
    std::fs::write(
        dir.path().join("misfit.toml"),
        toml::to_string(&misfit).unwrap(),
    )
    .unwrap();
    let wrong = whatif_rows(dir.path(), "misfit.toml");
    assert!(
        !agrees(&known[0], &wrong[0]),
        "{} vs {}",
        known[0],
        wrong[0]
    );
}

/// Whether each row's mean saving lies within the other's Monte Carlo interval (the range of 90%
/// of runs that `whatif --runs` prints).
fn agrees(k: &Value, f: &Value) -> bool {
    let (ks, fs) = (&k["runs"]["saving_usd"], &f["runs"]["saving_usd"]);
    let x = |v: &Value, key: &str| v[key].as_f64().unwrap();
    x(ks, "p5") <= x(fs, "mean")
        && x(fs, "mean") <= x(ks, "p95")
        && x(fs, "p5") <= x(ks, "mean")
        && x(ks, "mean") <= x(fs, "p95")
}

#[test]
fn fit_refuses_bad_input_with_the_file_and_field() {
    let (dir, log) = history();
    let d = dir.path();
    let before = std::fs::read(&log).unwrap();
    // Over its own input.
    let err =
        refused(
            pcsim()
                .current_dir(d)
                .args(["fit", "history.jsonl", "--out", "history.jsonl"]),
        );
    assert!(
        err.contains("history.jsonl") && err.contains("output path"),
        "{err}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
    // A tool list larger than the logged prefix.
    let err = refused(
        pcsim()
            .current_dir(d)
            .args([
                "fit",
                "history.jsonl",
                "--out",
                "f.toml",
                "--prefix-tokens",
                "100",
            ])
            .args(["--tools", "tools/memory.json"]),
    );
    assert!(err.contains("prefix") && err.contains("100-token"), "{err}");
    assert!(!d.join("f.toml").exists());
    // A prefix larger than every first prompt.
    let err = refused(pcsim().current_dir(d).args([
        "fit",
        "history.jsonl",
        "--out",
        "f.toml",
        "--prefix-tokens",
        "999999",
    ]));
    assert!(
        err.contains("--prefix-tokens") && err.contains("999999-token"),
        "{err}"
    );
    assert!(!d.join("f.toml").exists());
    // A confidence level that is not one.
    let err = refused(pcsim().current_dir(d).args([
        "fit",
        "history.jsonl",
        "--out",
        "f.toml",
        "--confidence",
        "1.5",
    ]));
    assert!(err.contains("--confidence") && err.contains("1.5"), "{err}");
    // A log that names no model.
    std::fs::write(
        d.join("nomodel.jsonl"),
        "{\"usage\": {\"input_tokens\": 10, \"output_tokens\": 5}}\n",
    )
    .unwrap();
    let err = refused(
        pcsim()
            .current_dir(d)
            .args(["fit", "nomodel.jsonl", "--out", "f.toml"]),
    );
    assert!(
        err.contains("nomodel.jsonl") && err.contains("model"),
        "{err}"
    );
    // A usage log of several (model, strategy) pairs would mix histories.
    let err = refused(
        pcsim()
            .current_dir(d)
            .args([
                "run",
                "known.toml",
                "--strategy",
                "none",
                "--strategy",
                "cached",
            ])
            .args(["--usage-log", "two.jsonl"]),
    );
    assert!(
        err.contains("--usage-log") && err.contains("2 (model, strategy)"),
        "{err}"
    );
    assert!(!d.join("two.jsonl").exists());
}

#[test]
fn a_fit_without_timestamps_or_cache_reads_says_what_it_could_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    // Two calls of one conversation, no times, no cache: 1,000 then 1,500 prompt tokens, 100 out.
    std::fs::write(
        dir.path().join("plain.jsonl"),
        "{\"model\": \"claude-opus-4.8\", \"usage\": {\"input_tokens\": 1000, \"output_tokens\": 100}}\n\
         {\"model\": \"claude-opus-4.8\", \"usage\": {\"input_tokens\": 1500, \"output_tokens\": 100}}\n",
    )
    .unwrap();
    let a = pcsim()
        .current_dir(dir.path())
        .args(["fit", "plain.jsonl", "--out", "s.toml"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(out.contains("cannot be inferred"), "{out}");
    assert!(out.contains("no timestamps"), "{out}");
    let text = std::fs::read_to_string(dir.path().join("s.toml")).unwrap();
    // No tools and no readable prefix: the first prompt is the first message; the growth is
    // 1,500 - 1,000 - 100 = 400.
    assert!(text.contains("first_user_tokens = 1000"), "{text}");
    assert!(text.contains("tool_result_tokens = 400"), "{text}");
    assert!(text.contains("calls = 2"), "{text}");
}

#[test]
fn two_sessions_of_different_lengths_are_fitted_to_their_mean_and_spacing() {
    // tests/fixtures/usage/two_sessions.jsonl: session a starts at 09:00:00 with 4 + 7,996 prompt
    // tokens and has 5 calls; session b starts 15 s later with 4 + 11,996 and has 4. No start reads
    // the cache, so the whole first prompt is the first message.
    let dir = tempfile::tempdir().unwrap();
    let log = root().join("tests/fixtures/usage/two_sessions.jsonl");
    let a = pcsim()
        .current_dir(dir.path())
        .args([
            "fit",
            log.to_str().unwrap(),
            "--out",
            "s.toml",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["calls"]["min"], 4);
    assert_eq!(v["calls"]["max"], 5);
    // Each scenario session draws its length from the history's two.
    assert_eq!(v["calls"]["lengths"], serde_json::json!([5, 4]));
    assert_eq!(v["calls"]["calls"], 5, "the longest");
    let first = &v["fields"][0]["fit"];
    assert_eq!(first["family"], "fixed", "two values give no shape");
    assert_eq!(first["params"][0]["estimate"], 10_000.0);
    assert_eq!(first["params"][0]["low"], 8_000.0);
    assert_eq!(first["params"][0]["high"], 12_000.0);
    assert_eq!(v["arrivals"]["kind"], "every");
    assert_eq!(v["arrivals"]["every_seconds"], 15.0);
    let text = std::fs::read_to_string(dir.path().join("s.toml")).unwrap();
    assert!(text.contains("every_seconds = 15.0"), "{text}");
    assert!(
        text.contains("calls = { dist = \"empirical\", values = [5, 4] }"),
        "{text}"
    );
    // The fit before session lengths were drawn: the mean, rounded.
    let a = pcsim()
        .current_dir(dir.path())
        .args(["fit", log.to_str().unwrap(), "--out", "m.toml"])
        .args(["--format", "json", "--session-lengths", "mean"])
        .assert()
        .success();
    let m: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(m["calls"]["calls"], 5, "4.5 rounded");
    assert!(m["calls"]["lengths"].is_null());
    // The scenario runs.
    pcsim()
        .current_dir(dir.path())
        .args(["-q", "run", "s.toml", "--runs", "3"])
        .assert()
        .success();
}

/// The known scenario for a history on two models: the stable prefix (system prompt 5,000 + the
/// memory server's tool block) above Haiku 4.5's 4,096-token cache minimum, so both models cache.
fn mixed_scenario(model: &str, sessions: usize, seed: u64) -> String {
    KNOWN
        .replace("claude-opus-4.8", model)
        .replace("system_tokens = 2000", "system_tokens = 5000")
        .replace("count = 40", &format!("count = {sessions}"))
        .replace("seed = 5", &format!("seed = {seed}"))
}

/// A folder `logs/` holding the history of `sessions` sessions on each model (`run --usage-log`,
/// each model's sessions with their own ids and on their own day), and the total `run` bills
/// for each.
fn mixed_history(dir: &Path, mix: &[(&str, usize)]) -> Vec<f64> {
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::copy(
        root().join("examples/mcp/server-memory.tools.json"),
        dir.join("tools/memory.json"),
    )
    .unwrap();
    let mut totals = Vec::new();
    for (i, (model, sessions)) in mix.iter().enumerate() {
        let scen = format!("known-{i}.toml");
        std::fs::write(
            dir.join(&scen),
            mixed_scenario(model, *sessions, 5 + i as u64),
        )
        .unwrap();
        let log = format!("gen-{i}.jsonl");
        let a = pcsim()
            .current_dir(dir)
            .args(["-q", "run", &scen, "--usage-log", &log, "--format", "json"])
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
        totals.push(v["results"][0]["total_usd"].as_f64().unwrap());
        // Distinct session ids and times: model i's sessions run on day i + 1.
        let text = std::fs::read_to_string(dir.join(&log)).unwrap();
        assert!(text.contains("\"session-1\"") && text.contains("2026-01-01T"));
        let text = text
            .replace("\"session-", &format!("\"m{i}-session-"))
            .replace("2026-01-01T", &format!("2026-01-0{}T", i + 1));
        std::fs::write(dir.join("logs").join(&log), text).unwrap();
    }
    totals
}

#[test]
fn a_history_on_two_models_is_checked_on_its_mix_where_one_model_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mix = [("claude-opus-4.8", 30), ("claude-haiku-4.5", 15)];
    let totals = mixed_history(d, &mix);
    let fit = |out: &str, extra: &[&str]| -> (Value, String) {
        let a = pcsim()
            .current_dir(d)
            .args(["-q", "fit", "logs", "--tools", "tools/memory.json"])
            .args(["--out", out, "--format", "json"])
            .args(extra)
            .assert()
            .success();
        (
            serde_json::from_slice(&a.get_output().stdout).unwrap(),
            String::from_utf8_lossy(&a.get_output().stderr).into_owned(),
        )
    };
    let (v, err) = fit("fitted.toml", &[]);
    // Every session remembers its model: the mix as generated, 12 calls a session.
    let calls = truth(&toml::from_str(KNOWN).unwrap(), "session.calls", "") as usize;
    let want: Vec<Value> = mix
        .iter()
        .map(|(m, k)| serde_json::json!({"model": m, "sessions": k, "calls": k * calls}))
        .collect();
    assert_eq!(v["session_models"], Value::Array(want));
    assert_eq!(
        v["model"], "claude-opus-4.8",
        "the scenario's model: the majority"
    );
    // The logged total bills each call at its own model: the sum of what `run` billed each.
    let logged = v["logged_usd"].as_f64().unwrap();
    let truth_usd: f64 = totals.iter().sum();
    assert!(
        (logged - truth_usd).abs() <= 1e-9 * truth_usd,
        "logged {logged} vs the runs' {truth_usd}"
    );
    // The check simulates the mix: its p5-p95 holds the history's total.
    let check = &v["check"];
    let (p5, p95) = (
        check["p5_usd"].as_f64().unwrap(),
        check["p95_usd"].as_f64().unwrap(),
    );
    assert_eq!(check["reproduces"], true, "{check}; {err}");
    assert!(p5 <= logged && logged <= p95 && p5 < p95, "{check}");

    // `--model` forcing the majority model (every session simulated on Opus, the fit before
    // per-session models): the same history's total falls outside, and a FAIL line says so.
    let (one, err) = fit("one.toml", &["--model", "claude-opus-4.8"]);
    assert_eq!(
        one["logged_usd"], v["logged_usd"],
        "the same history's bill"
    );
    let c1 = &one["check"];
    assert_eq!(c1["reproduces"], false, "{c1}");
    assert!(
        c1["p5_usd"].as_f64().unwrap() > logged,
        "Haiku's sessions simulated at Opus's prices overstate the history: {c1}"
    );
    assert!(err.contains("FAIL: the history's logged total"), "{err}");
    // The same distributions were fitted: only the check's models differ.
    assert_eq!(one["fields"], v["fields"]);

    // The text says the mix, and the scenario lists it in a comment block and still loads.
    let a = pcsim()
        .current_dir(d)
        .args([
            "fit",
            "logs",
            "--tools",
            "tools/memory.json",
            "--out",
            "t.toml",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        text.contains("45 sessions on 2 models")
            && text.contains(
                "session models: claude-opus-4.8 30 sessions (360 calls), claude-haiku-4.5 15 sessions (180 calls); the check simulates this mix"
            )
            && text.contains("\ncheck: "),
        "{text}"
    );
    let scenario = std::fs::read_to_string(d.join("fitted.toml")).unwrap();
    assert!(
        scenario.contains("#   claude-opus-4.8: 30 sessions, 360 calls\n#   claude-haiku-4.5: 15 sessions, 180 calls\n")
            && scenario.contains("simulated the mix (30 on claude-opus-4.8, 15 on claude-haiku-4.5)"),
        "{scenario}"
    );
    let forced = std::fs::read_to_string(d.join("one.toml")).unwrap();
    assert!(
        forced.contains("# --model claude-opus-4.8: every session was fitted and checked on it"),
        "{forced}"
    );
    pcsim()
        .current_dir(d)
        .args(["-q", "run", "fitted.toml", "--runs", "3"])
        .assert()
        .success();
}
