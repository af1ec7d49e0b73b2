//! Issue 26: what a new user meets in the first hour. `cached` means one thing in every command (the
//! cheapest caching the model allows, found by simulation), and `compare` always shows it.

use serde_json::Value;

use crate::common::json_of;

/// Every model's best-caching saving as (strategy, saving in dollars), by command.
fn savings(scenario: &str) -> [Vec<(String, String, f64)>; 3] {
    let run = json_of(&["run", scenario, "--format", "json"]);
    let results = run["results"].as_array().unwrap();
    let none_of = |model: &str| {
        results
            .iter()
            .find(|r| r["model"] == model && r["strategy"] == "none")
            .unwrap()["total_usd"]
            .as_f64()
            .unwrap()
    };
    let from_run: Vec<(String, String, f64)> = results
        .iter()
        .filter(|r| r["strategy_requested"] == "cached")
        .map(|r| {
            let model = r["model"].as_str().unwrap();
            (
                model.to_string(),
                r["strategy"].as_str().unwrap().to_string(),
                none_of(model) - r["total_usd"].as_f64().unwrap(),
            )
        })
        .collect();
    let compare = json_of(&["compare", scenario, "--format", "json"]);
    let from_compare: Vec<(String, String, f64)> = compare["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let row = c["strategies"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["strategy_requested"] == "cached")
                .unwrap_or_else(|| panic!("compare has no `cached` row for {}", c["model"]));
            (
                c["model"].as_str().unwrap().to_string(),
                row["strategy"].as_str().unwrap().to_string(),
                row["saving_usd"].as_f64().unwrap(),
            )
        })
        .collect();
    let advise = json_of(&["advise", scenario, "--format", "json"]);
    let from_advise: Vec<(String, String, f64)> = advise["advice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            // The best caching placement: the first candidate that caches (candidates are ranked
            // cheapest first, ties to the fewest breakpoints).
            let best: &Value = a["breakpoints"]["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["strategy"] != "none")
                .unwrap();
            (
                a["model"].as_str().unwrap().to_string(),
                best["strategy"].as_str().unwrap().to_string(),
                best["saving_usd"].as_f64().unwrap(),
            )
        })
        .collect();
    [from_run, from_compare, from_advise]
}

fn assert_one_answer(scenario: &str) {
    let [run, compare, advise] = savings(scenario);
    assert_eq!(run.len(), 6, "{scenario}: six models in run");
    for ((r, c), a) in run.iter().zip(&compare).zip(&advise) {
        assert_eq!((&r.0, &r.1), (&c.0, &c.1), "{scenario}: run vs compare");
        assert_eq!((&r.0, &r.1), (&a.0, &a.1), "{scenario}: run vs advise");
        for other in [c.2, a.2] {
            assert!(
                (r.2 - other).abs() <= 1e-9 * r.2.abs().max(1.0),
                "{scenario} {}: run saves {} but another command says {other}",
                r.0,
                r.2
            );
        }
        assert!(
            r.2 > 0.0,
            "{scenario} {}: the best caching saves money",
            r.0
        );
    }
}

#[test]
fn run_compare_and_advise_give_one_best_caching_saving_on_the_built_in_scenario() {
    assert_one_answer("examples/default.toml");
}

#[test]
fn run_compare_and_advise_give_one_best_caching_saving_with_real_servers() {
    assert_one_answer("examples/github-filesystem.toml");
}

/// `compare --model gpt-5.6` exited 2 (no default strategy GPT-5.6 allows) and showed it only as
/// `none`: `cached` is in the default set, so every model has its best row.
#[test]
fn compare_on_a_model_that_refuses_tool_breakpoints_shows_its_best_caching() {
    let v = json_of(&["compare", "--model", "gpt-5.6", "--format", "json"]);
    let rows = v["comparisons"][0]["strategies"].as_array().unwrap();
    let cached = rows
        .iter()
        .find(|s| s["strategy_requested"] == "cached")
        .expect("a cached row");
    assert!(cached["saving_usd"].as_f64().unwrap() > 0.0);
    assert_ne!(cached["strategy"], "none");
}
