//! Issue 16 (decisions): whole-server operations in scenarios and `whatif`, `pcsim diff`, and the
//! flags and conventions shared by run/compare/whatif/advise. Figures are checked against the
//! catalog's rendering and prices applied to the shipped real captures (examples/mcp/).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{json_of, pcsim, root};
use pcsim::input::scenario::Scenario;
use pcsim::input::trim::Trim;
use pcsim::model::catalog::Catalog;
use pcsim::model::tools::{load_tool_file, Tool};

fn example(name: &str) -> PathBuf {
    root().join("examples").join(name)
}

fn capture(stem: &str) -> Vec<Tool> {
    load_tool_file(&example(&format!("mcp/{stem}.tools.json"))).unwrap()
}

fn prefixed(tools: &[Tool], prefix: &str) -> Vec<Tool> {
    tools
        .iter()
        .map(|t| Tool {
            name: format!("{prefix}{}", t.name),
            ..t.clone()
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A scenario text whose `[[tools.server]]` entries point at the shipped captures.
fn servers_scenario(extra: &str) -> String {
    let mcp = example("mcp");
    format!(
        "name = \"s\"\n\
         [[tools.server]]\nname = \"github\"\nfile = \"{g}\"\nprefix = \"mcp__github__\"\n\
         [[tools.server]]\nname = \"gitlab\"\nfile = \"{l}\"\nprefix = \"mcp__gitlab__\"\n\
         [session]\ncalls = 6\nsystem_tokens = 500\nfirst_user_tokens = 100\n\
         tool_result_tokens = 200\noutput_tokens = 50\ngap_seconds = 10\n{extra}",
        g = mcp.join("server-github.tools.json").display(),
        l = mcp.join("server-gitlab.tools.json").display(),
    )
}

#[test]
fn github_and_gitlab_load_together_with_prefixes_that_cost_tokens() {
    let s = Scenario::from_toml_str(&servers_scenario(""), "s.toml", Path::new(".")).unwrap();
    let github = capture("server-github");
    let gitlab = capture("server-gitlab");
    assert_eq!(s.tools.len(), github.len() + gitlab.len());
    assert_eq!(s.tools.len(), 35);
    assert_eq!(s.tools[0].name, format!("mcp__github__{}", github[0].name));
    // Both servers define create_or_update_file: present twice, once per prefix.
    for p in ["mcp__github__", "mcp__gitlab__"] {
        assert!(s
            .tools
            .iter()
            .any(|t| t.name == format!("{p}create_or_update_file")));
    }
    assert_eq!(s.servers.len(), 2);
    assert_eq!(s.servers[1].tools.len(), gitlab.len());
    // The prefix is part of every name the model reads: the block grows with it.
    let catalog = Catalog::embedded().unwrap();
    let m = catalog.model("claude-opus-4.8").unwrap();
    let unprefixed: Vec<Tool> = github.iter().chain(&gitlab).cloned().collect();
    let with = m.rendering().block_tokens(&s.tools);
    let without = m.rendering().block_tokens(&unprefixed);
    assert!(with > without, "{with} vs {without}");

    // Without prefixes the clash is refused, naming the tool, both servers and the fix.
    let text = servers_scenario("").replace("prefix = \"mcp__gitlab__\"\n", "");
    let text = text.replace("prefix = \"mcp__github__\"\n", "");
    let e = Scenario::from_toml_str(&text, "s.toml", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tools.server[1]")
            && e.contains("`create_or_update_file`")
            && e.contains("server `github`")
            && e.contains("mcp__gitlab__"),
        "{e}"
    );
}

#[test]
fn remove_servers_and_trim_in_an_event_change_the_block_as_computed() {
    let text = servers_scenario(
        "[[event]]\nat_call = 4\nremove_servers = [\"gitlab\"]\ntrim = \"required-only\"\n",
    );
    let s = Scenario::from_toml_str(&text, "s.toml", Path::new(".")).unwrap();
    let catalog = Catalog::embedded().unwrap();
    let m = catalog.model("gpt-5.6").unwrap();
    let github = prefixed(&capture("server-github"), "mcp__github__");
    let after = Trim::RequiredOnly.apply(&github);
    let rep =
        pcsim::sim::simulate::run_scenario(&catalog, &s, &["gpt-5.6".into()], &["none".into()])
            .unwrap();
    let calls = &rep.results[0].calls;
    assert_eq!(
        calls[2].tool_block_tokens,
        m.rendering().block_tokens(&s.tools)
    );
    assert_eq!(
        calls[3].tool_block_tokens,
        m.rendering().block_tokens(&after)
    );
    assert!(calls[3].tool_block_tokens < m.rendering().block_tokens(&github));

    // Unknown servers and tools are named with the closest one.
    for (extra, wanted) in [
        (
            "[[event]]\nat_call = 4\nremove_servers = [\"gitlap\"]\n",
            "`gitlab`",
        ),
        (
            "[tools]\ndrop = [\"mcp__github__push_file\"]\n",
            "`mcp__github__push_files`",
        ),
        (
            "[[event]]\nat_call = 3\ntrim = \"required\"\n",
            "`required-only`",
        ),
    ] {
        let text = servers_scenario(extra);
        let e = Scenario::from_toml_str(&text, "s.toml", Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains(wanted), "{e}");
    }
}

#[test]
fn scenario_keep_drop_and_per_server_trim() {
    let mcp = example("mcp");
    let text = format!(
        "[tools]\ndrop = [\"mcp__github__fork_repository\"]\n\
         [[tools.server]]\nname = \"github\"\nfile = \"{g}\"\nprefix = \"mcp__github__\"\n\
         keep = [\"create_issue\", \"fork_repository\", \"get_file_contents\"]\ntrim = \"first-sentence\"\n\
         [session]\ncalls = 2\n",
        g = mcp.join("server-github.tools.json").display()
    );
    let s = Scenario::from_toml_str(&text, "s.toml", Path::new(".")).unwrap();
    let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp__github__get_file_contents",
            "mcp__github__create_issue"
        ]
    );
    let original = capture("server-github");
    let issue = original.iter().find(|t| t.name == "create_issue").unwrap();
    let trimmed = Trim::FirstSentence.apply(std::slice::from_ref(issue));
    assert_eq!(s.tools[1].description, trimmed[0].description);
}

#[test]
fn whatif_at_call_one_removing_a_server_saves_its_block_on_every_call() {
    let catalog = Catalog::embedded().unwrap();
    let m = catalog.model("claude-opus-4.8").unwrap();
    let path = example("github-filesystem.toml");
    let s = Scenario::load(&path).unwrap();
    let v = json_of(&[
        "whatif",
        path.to_str().unwrap(),
        "--at-call",
        "1",
        "--remove-servers",
        "github",
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    let fs = prefixed(&capture("server-filesystem"), "mcp__filesystem__");
    let saved_tokens = m.rendering().block_tokens(&s.tools) - m.rendering().block_tokens(&fs);
    let per_call = m.input_usd(saved_tokens as f64);
    let none = &v["outcomes"][0];
    assert_eq!(none["strategy"], "none");
    let expected = per_call * s.calls as f64;
    assert!(
        (f(&none["extra_usd"]) + expected).abs() < 1e-9,
        "{} vs -{expected}",
        none["extra_usd"]
    );
    assert_eq!(none["breakeven_calls"], 1);
    assert_eq!(v["change"]["tools_after"], 14);
    // No append row before call 1: there is no change mid-session to carry.
    assert!(v["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| !o["strategy"].as_str().unwrap().contains("append")));
    // An unknown server is a user error naming the flag and the servers there are.
    let out = pcsim()
        .args([
            "whatif",
            path.to_str().unwrap(),
            "--at-call",
            "3",
            "--remove-servers",
            "gitlab",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("--remove-servers") && e.contains("github, filesystem"),
        "{e}"
    );
}

#[test]
fn diff_of_two_tool_lists_prices_each_block() {
    let catalog = Catalog::embedded().unwrap();
    let a = example("mcp/server-github.tools.json");
    let b = example("mcp/server-gitlab.tools.json");
    let v = json_of(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--model",
        "kimi-k3",
        "--format",
        "json",
    ]);
    assert_eq!(v["kind"], "tools");
    let m = catalog.model("kimi-k3").unwrap();
    let (ta, tb) = (
        m.rendering().block_tokens(&capture("server-github")),
        m.rendering().block_tokens(&capture("server-gitlab")),
    );
    let row = &v["models"][0];
    assert_eq!(row["tokens_a"], ta);
    assert_eq!(row["tokens_b"], tb);
    let saving = m.input_usd(ta as f64) - m.input_usd(tb as f64);
    assert!((f(&row["saving_usd_per_call"]) - saving).abs() < 1e-15);
    assert!(
        saving > 0.0,
        "GitLab's 9 tools are cheaper than GitHub's 26"
    );
    // Names both servers define but differently are `changed`, not added or removed.
    let changed = v["tools"]["changed"].as_array().unwrap();
    assert!(changed.iter().any(|n| n == "create_or_update_file"));
    // Mixed kinds are a user error.
    let out = pcsim()
        .args([
            "diff",
            a.to_str().unwrap(),
            example("default.toml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn diff_of_two_scenarios_pairs_rows_and_signs_savings() {
    let dir = tempfile::tempdir().unwrap();
    let base = "[tools]\nsynthetic = { count = 20, params = 3 }\n[session]\ncalls = 5\n\
                system_tokens = 800\nfirst_user_tokens = 100\ntool_result_tokens = 300\n\
                output_tokens = 50\ngap_seconds = 10\n";
    let a = write(dir.path(), "a.toml", &format!("name = \"a\"\n{base}"));
    let b = write(
        dir.path(),
        "b.toml",
        &format!("name = \"b\"\n{}", base.replace("count = 20", "count = 10")),
    );
    let v = json_of(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--model",
        "gpt-5.6",
        "--strategy",
        "none",
        "--format",
        "json",
    ]);
    assert_eq!(v["kind"], "scenarios");
    let catalog = Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap(); // priced as the command prices (today)
    let m = catalog.model("gpt-5.6").unwrap();
    let t = |n| {
        m.rendering()
            .block_tokens(&pcsim::model::tools::synthetic_tools(1, n, 3))
    };
    let expected = m.input_usd((t(20) - t(10)) as f64) * 5.0;
    let row = &v["rows"][0];
    assert!((f(&row["saving_usd"]) - expected).abs() < 1e-12, "{row}");
    assert!(
        (f(&row["total_usd_a"]) - f(&row["total_usd_b"]) - f(&row["saving_usd"])).abs() < 1e-15
    );
    assert_eq!(v["tools"]["removed"].as_array().unwrap().len(), 10);
}

#[test]
fn the_github_gitlab_example_drops_gitlab_and_trims_at_call_11() {
    let path = example("github-gitlab.toml");
    let s = Scenario::load(&path).unwrap();
    assert_eq!(s.tools.len(), 35);
    let catalog = Catalog::embedded().unwrap();
    let rep =
        pcsim::sim::simulate::run_scenario(&catalog, &s, &["kimi-k3".into()], &["none".into()])
            .unwrap();
    let m = catalog.model("kimi-k3").unwrap();
    let github = Trim::RequiredOnly.apply(&prefixed(&capture("server-github"), "mcp__github__"));
    let calls = &rep.results[0].calls;
    assert_eq!(calls[10].call, 11);
    assert_eq!(
        calls[10].tool_block_tokens,
        m.rendering().block_tokens(&github)
    );
    assert_eq!(
        calls[9].tool_block_tokens,
        m.rendering().block_tokens(&s.tools)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 1: verdicts with uncertainty; advise searches every placement.

fn candidate<'a>(advice: &'a Value, strategy: &str) -> &'a Value {
    advice["breakpoints"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["strategy"] == strategy)
        .unwrap_or_else(|| panic!("no candidate {strategy}"))
}

/// The issue's case: Gemini allows one breakpoint; on the large tool set the system anchor (tools +
/// system prompt in one cached prefix) is cheaper than the tool anchor, and advise must find it.
#[test]
fn advise_recommends_the_cheapest_one_breakpoint_placement_on_gemini() {
    for file in ["large-toolset.toml", "github-filesystem.toml"] {
        let path = example(file);
        let v = json_of(&[
            "advise",
            path.to_str().unwrap(),
            "--model",
            "gemini-3.6-flash",
            "--format",
            "json",
        ]);
        let a = &v["advice"][0];
        assert_eq!(a["recommended"]["strategy"], "explicit:system", "{file}");
        let system = f(&candidate(a, "explicit:system")["total_usd"]);
        let tools = f(&candidate(a, "explicit:tools")["total_usd"]);
        assert!(system < tools, "{file}: {system} vs {tools}");
        // The recommendation is the cheapest of all candidates, and no candidate has more
        // breakpoints than the model allows (one).
        for c in a["breakpoints"]["candidates"].as_array().unwrap() {
            assert!(f(&c["total_usd"]) >= system, "{file}: {c}");
            let s = c["strategy"].as_str().unwrap();
            if let Some(anchors) = s.strip_prefix("explicit:") {
                assert_eq!(anchors.split('+').count(), 1, "{s}");
            }
        }
        // The figure is that of a plain run of the same strategy.
        let s = Scenario::load(&path).unwrap();
        let catalog = Catalog::embedded().unwrap();
        let rep = pcsim::sim::simulate::run_scenario(
            &catalog,
            &s,
            &["gemini-3.6-flash".into()],
            &["explicit:system".into()],
        )
        .unwrap();
        assert!((rep.results[0].total_usd - system).abs() < 1e-9, "{file}");
    }
}

#[test]
fn placements_cover_every_layout_the_model_allows_and_no_other() {
    let catalog = Catalog::embedded().unwrap();
    let claude = catalog.model("claude-opus-4.8").unwrap();
    let names: Vec<String> = pcsim::analysis::advise::placements(claude)
        .iter()
        .map(|s| s.to_string())
        .collect();
    // 3 anchors, tiers 5m (default) and 1h, up to 4 breakpoints, 1 h never after 5 min:
    // 3 single anchors x 2 tiers + 3 pairs x 3 + 1 triple x 4 = 19.
    assert_eq!(names.len(), 19, "{names:?}");
    for s in [
        "explicit:system",
        "explicit:tools@1h+system+last",
        "explicit:system@1h+last@1h",
    ] {
        assert!(names.iter().any(|n| n == s), "{s} missing from {names:?}");
    }
    assert!(!names.iter().any(|n| n == "explicit:tools+system@1h"));
    let gemini = catalog.model("gemini-3.6-flash").unwrap();
    let g: Vec<String> = pcsim::analysis::advise::placements(gemini)
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(g.contains(&"explicit:system".to_string()) && g.contains(&"implicit".to_string()));
    assert!(g.iter().all(|n| !n.contains('+')), "{g:?}");
}

#[test]
fn compare_runs_agree_with_the_monte_carlo_of_run() {
    let path = example("github-filesystem.toml");
    let p = path.to_str().unwrap();
    let v = json_of(&[
        "compare",
        p,
        "--runs",
        "40",
        "--seed",
        "9",
        "--model",
        "kimi-k3",
        "--strategy",
        "automatic",
        "--format",
        "json",
    ]);
    assert_eq!(v["runs"], 40);
    let r = json_of(&[
        "run",
        p,
        "--runs",
        "40",
        "--seed",
        "9",
        "--model",
        "kimi-k3",
        "--strategy",
        "none",
        "--strategy",
        "automatic",
        "--format",
        "json",
    ]);
    let mc = |strategy: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["strategy"] == strategy)
            .map(|x| f(&x["montecarlo"]["mean_usd"]))
            .unwrap()
    };
    let c = &v["comparisons"][0];
    let auto = c["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["strategy"] == "automatic")
        .unwrap();
    let runs = &auto["runs"];
    assert!((f(&runs["total_usd"]["mean"]) - mc("automatic")).abs() < 1e-9);
    // Savings are paired run by run: their mean is the difference of the means.
    let saving = mc("none") - mc("automatic");
    assert!(
        (f(&runs["saving_usd"]["mean"]) - saving).abs() < 1e-9,
        "{runs}"
    );
    assert!(
        f(&runs["saving_usd"]["p5"]) < f(&runs["saving_usd"]["p95"]),
        "random sizes vary"
    );
    assert_eq!(runs["share_saving"], 1.0);
    assert_eq!(c["cheapest"], "automatic");
    assert_eq!(c["cheapest_share"], 1.0);
    // Without --runs there is no `runs` block and the JSON keys stay as they were.
    let one = json_of(&["compare", p, "--model", "kimi-k3", "--format", "json"]);
    assert!(one["comparisons"][0]["strategies"][1].get("runs").is_none());
    assert!(one["comparisons"][0]["strategies"][1]["saving_usd"].is_number());
}

#[test]
fn whatif_runs_pay_back_varies_and_matches_two_monte_carlos() {
    use pcsim::analysis::whatif::{apply_change, ToolChange};
    let path = example("tool-change.toml");
    let p = path.to_str().unwrap();
    let args = [
        "whatif",
        p,
        "--at-call",
        "25",
        "--remove-tools",
        "web_search,fetch_page,search_code",
        "--model",
        "kimi-k3",
        "--runs",
        "60",
        "--format",
        "json",
    ];
    let v = json_of(&args);
    assert_eq!(v, json_of(&args), "same seed, same report");
    let auto = &v["outcomes"][1];
    assert_eq!(auto["strategy"], "automatic");
    let r = &auto["runs"];
    // One draw said a number of calls; over the runs the pay-back has a spread.
    let b = &r["breakeven_calls_extrapolated"];
    assert!(
        f(&b["p5"]) < f(&b["median"]) && f(&b["median"]) < f(&b["p95"]),
        "{r}"
    );
    let share = f(&r["share_pays_back_extrapolated"]);
    assert!((0.0..=1.0).contains(&share));
    assert_eq!(b["runs"].as_f64().unwrap(), (share * 60.0).round());
    // The mean saving equals the difference of the Monte Carlo means of the two scenarios.
    let catalog = Catalog::embedded().unwrap();
    let mut s = Scenario::load(&path).unwrap();
    s.runs = 60;
    let change = ToolChange {
        remove: vec![
            "web_search".into(),
            "fetch_page".into(),
            "search_code".into(),
        ],
        ..Default::default()
    };
    let (changed, _) = apply_change(&s, 25, &change).unwrap();
    let mean = |sc: &Scenario| {
        let rep = pcsim::sim::simulate::run_scenario(
            &catalog,
            sc,
            &["kimi-k3".into()],
            &["automatic".into()],
        )
        .unwrap();
        rep.results[0].montecarlo.as_ref().unwrap().mean_usd
    };
    let saving = mean(&s) - mean(&changed);
    assert!(
        (f(&r["saving_usd"]["mean"]) - saving).abs() < 1e-9,
        "{r} vs {saving}"
    );
    // The sign convention: a positive saving is a change that saves.
    let none = &v["outcomes"][0];
    assert!(f(&none["saving_usd"]) > 0.0);
    assert!((f(&none["saving_usd"]) + f(&none["extra_usd"])).abs() < 1e-15);
}

#[test]
fn advise_runs_rank_by_mean_and_state_how_often() {
    let v = json_of(&[
        "advise",
        example("github-filesystem.toml").to_str().unwrap(),
        "--model",
        "claude-opus-4.8",
        "--runs",
        "30",
        "--format",
        "json",
    ]);
    assert_eq!(v["runs"], 30);
    let cands = v["advice"][0]["breakpoints"]["candidates"]
        .as_array()
        .unwrap();
    let means: Vec<f64> = cands
        .iter()
        .map(|c| f(&c["runs"]["total_usd"]["mean"]))
        .collect();
    assert!(means.windows(2).all(|w| w[0] <= w[1] + 1e-12), "{means:?}");
    let best = &cands[0]["runs"];
    assert!(f(&best["share_cheapest"]) > 0.5, "{best}");
    assert_eq!(
        v["advice"][0]["recommended"]["strategy"],
        cands[0]["strategy"]
    );
}

#[test]
fn advise_runs_give_drop_tool_and_ttl_rows_over_all_runs() {
    // Random gaps (exponential) and tool results (log-normal): the runs differ.
    let path = example("tool-change.toml");
    let p = path.to_str().unwrap();
    let runs = 30;
    let v = json_of(&[
        "advise",
        p,
        "--model",
        "claude-opus-4.8",
        "--model",
        "gpt-5.2",
        "--runs",
        "30",
        "--format",
        "json",
    ]);
    assert_eq!(v["runs"], runs);
    // The Monte Carlo mean of one (scenario, model, strategy), by `run`'s own path.
    let catalog = Catalog::embedded().unwrap();
    let mut scenario = Scenario::load(&path).unwrap();
    scenario.runs = runs as usize;
    let mean = |s: &Scenario, model: &str, strategy: &str| {
        let rep = pcsim::sim::simulate::run_scenario(
            &catalog,
            s,
            &[model.to_string()],
            &[strategy.to_string()],
        )
        .unwrap();
        rep.results[0].montecarlo.as_ref().unwrap().mean_usd
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let mut varied = false;
    for advice in v["advice"].as_array().unwrap() {
        let model = advice["model"].as_str().unwrap();
        let recommended = advice["recommended"]["strategy"].as_str().unwrap();
        let kept = f(&advice["recommended"]["runs"]["total_usd"]["mean"]);
        assert!(close(kept, mean(&scenario, model, recommended)), "{model}");
        let drops = advice["drop_tools"].as_array().unwrap();
        assert_eq!(drops.len(), 3);
        for d in drops {
            let r = &d["runs"];
            let name = d["name"].as_str().unwrap();
            let without = pcsim::analysis::advise::without_tool(&scenario, name);
            let dropped = mean(&without, model, recommended);
            assert!(
                close(f(&r["total_usd"]["mean"]), dropped),
                "{model} {name}: {r}"
            );
            // Paired run by run: the mean saving is the difference of the two Monte Carlo means.
            assert!(
                close(f(&r["saving_usd"]["mean"]), kept - dropped),
                "{model} {name}: {r}"
            );
            assert_eq!(r["saving_usd"]["runs"], runs);
            let share = f(&r["share_saving"]);
            assert!((0.0..=1.0).contains(&share));
            varied |= f(&r["saving_usd"]["p5"]) < f(&r["saving_usd"]["p95"]);
            // The point figures stay those of the first run.
            assert!(close(
                f(&d["saving_usd"]),
                f(&advice["recommended"]["total_usd"]) - f(&d["total_usd"])
            ));
        }
        let ttl = &advice["ttl"];
        let tiers = ttl["tiers"].as_array().unwrap();
        assert!(tiers.len() >= 2, "{model}: {ttl}");
        let tier_mean = |t: &Value| f(&t["runs"]["total_usd"]["mean"]);
        for t in tiers {
            let strategy = t["strategy"].as_str().unwrap();
            assert!(
                close(tier_mean(t), mean(&scenario, model, strategy)),
                "{model} {strategy}"
            );
        }
        // The recommended tier is the cheapest by mean; its saving is against the dearest, paired.
        let best = tiers
            .iter()
            .find(|t| t["tier"] == ttl["recommended_tier"])
            .unwrap();
        let dearest = tiers.iter().map(tier_mean).fold(f64::MIN, f64::max);
        assert!(tiers
            .iter()
            .all(|t| tier_mean(best) <= tier_mean(t) + 1e-12));
        assert!(close(
            f(&ttl["runs"]["saving_usd"]["mean"]),
            dearest - tier_mean(best)
        ));
        assert_eq!(
            ttl["runs"]["share_cheapest"],
            best["runs"]["share_cheapest"]
        );
    }
    assert!(varied, "random gaps and sizes give savings that vary");
    // The table says so: means with the range of 90% of runs, and how often each verdict holds.
    let out = pcsim()
        .args(["advise", p, "--model", "claude-opus-4.8", "--runs", "30"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("every figure is a mean over the runs"),
        "{text}"
    );
    let drop_line = text.lines().find(|l| l.contains("drop tool")).unwrap();
    assert!(
        drop_line.contains("saves mean $") && drop_line.contains("of runs"),
        "{drop_line}"
    );
    let ttl_line = text.lines().find(|l| l.contains("TTL ")).unwrap();
    assert!(ttl_line.contains("the cheapest tier in"), "{ttl_line}");
    // Without --runs the keys stay as they were: no `runs` objects.
    let one = json_of(&[
        "advise",
        p,
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    assert!(one["advice"][0]["drop_tools"][0].get("runs").is_none());
    assert!(one["advice"][0]["ttl"].get("runs").is_none());
    assert!(one["advice"][0]["ttl"]["tiers"][0].get("runs").is_none());
}

/// stdout as JSON and stderr as text of one successful command.
fn json_and_stderr(args: &[&str]) -> (Value, String) {
    let out = pcsim().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    (
        serde_json::from_slice(&out.stdout).expect("JSON on stdout"),
        err,
    )
}

#[test]
fn context_window_warnings_come_from_every_command_that_prices() {
    let dir = tempfile::tempdir().unwrap();
    // Prompts of 210,000 tokens and more: above Haiku 4.5's window, below Opus 4.8's.
    let session = |first: u64| {
        format!("[session]\ncalls = 3\nfirst_user_tokens = {first}\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\n")
    };
    let over = write(dir.path(), "over.toml", &session(210_000));
    let near = write(dir.path(), "near.toml", &session(197_000));
    let (over, near) = (over.to_str().unwrap(), near.to_str().unwrap());
    let models = ["--model", "claude-haiku-4.5", "--model", "claude-opus-4.8"];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter()
            .chain(&models)
            .chain(tail)
            .map(|s| s.to_string())
            .collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        json_and_stderr(&args)
    };
    // `run`'s own check is the reference (its test is in catalog_flags.rs).
    let (r, _) = run(with(
        &["run", over],
        &["--strategy", "none", "--format", "json"],
    ));
    let expected = r["context_warnings"].clone();
    assert_eq!(expected.as_array().unwrap().len(), 1, "{expected}");
    assert_eq!(expected[0]["model"], "claude-haiku-4.5");
    let first = expected[0]["first_prompt_tokens"].as_u64().unwrap();
    let line =
        format!("warning: claude-haiku-4.5: call 1 of session 1 sends {first} prompt tokens");
    for head in [&["compare", over][..], &["advise", over][..]] {
        let (v, err) = run(with(head, &["--format", "json"]));
        assert_eq!(v["context_warnings"], expected, "{head:?}");
        assert!(err.contains(&line), "{head:?}: {err}");
        assert!(!err.contains("claude-opus-4.8:"), "{err}");
    }
    // Below the window: no warning, and no key.
    let (v, err) = run(with(&["compare", near], &["--format", "json"]));
    assert!(
        v.get("context_warnings").is_none() && !err.contains("context window"),
        "{err}"
    );
    // whatif: the change (the GitHub server before call 2) pushes the prompts over the window;
    // its warning equals `run`'s check of the changed session.
    let github = example("mcp/server-github.tools.json");
    let report = dir.path().join("w.html");
    let (v, err) = run(with(
        &[
            "whatif",
            near,
            "--at-call",
            "2",
            "--add-tools",
            github.to_str().unwrap(),
        ],
        &["--format", "json", "--report", report.to_str().unwrap()],
    ));
    // The report states it as well.
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Warning: claude-haiku-4.5 (with the change): call 2 of session 1"));
    let w = v["context_warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0]["variant"], "with the change");
    let catalog = Catalog::embedded().unwrap();
    let scenario = Scenario::load(Path::new(near)).unwrap();
    let change = pcsim::analysis::whatif::ToolChange {
        add: capture("server-github"),
        ..Default::default()
    };
    let (changed, _) = pcsim::analysis::whatif::apply_change(&scenario, 2, &change).unwrap();
    let direct = pcsim::sim::simulate::run_scenario(
        &catalog,
        &changed,
        &["claude-haiku-4.5".into()],
        &["none".into()],
    )
    .unwrap()
    .context_warnings;
    assert_eq!(direct.len(), 1);
    assert_eq!(w[0]["first_call"], direct[0].first_call);
    assert_eq!(w[0]["first_call"], 2);
    assert_eq!(w[0]["calls_over"], direct[0].calls_over as u64);
    assert_eq!(w[0]["max_prompt_tokens"], direct[0].max_prompt_tokens);
    assert!(
        err.contains("warning: claude-haiku-4.5 (with the change): call 2 of session 1"),
        "{err}"
    );
    // diff: B is over the window, A is not.
    let (v, err) = run(with(&["diff", near, over], &["--format", "json"]));
    let w = &v["context_warnings"];
    assert_eq!(w.as_array().unwrap().len(), 1, "{w}");
    assert_eq!(w[0]["variant"], "B");
    assert_eq!(w[0]["first_prompt_tokens"], first);
    assert!(
        err.contains("warning: claude-haiku-4.5 (B): call 1 of session 1"),
        "{err}"
    );
    // replay: a usage log of those prompts, re-priced on Haiku.
    let log = dir.path().join("over.jsonl");
    pcsim()
        .args([
            "run",
            over,
            "--model",
            "claude-opus-4.8",
            "--strategy",
            "none",
            "--usage-log",
        ])
        .arg(&log)
        .assert()
        .success();
    let out = pcsim()
        .arg("replay")
        .arg(&log)
        .args(["--model", "claude-haiku-4.5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "claude-haiku-4.5 ({}): call 1 of session 1 sends {first} prompt tokens",
            log.display()
        )),
        "{err}"
    );
    // sweep: the first tool count whose block alone exceeds the window is named. A sweep is bounded
    // to 5,000 parameters in all (about 63,000 tokens), so Haiku 4.5 is laid over with a 40,000-token
    // window through `--catalog` (everything else as built in).
    let builtin = std::fs::read_to_string(crate::common::root().join("models.toml")).unwrap();
    let start = builtin
        .find("[[model]]\nid = \"claude-haiku-4.5\"")
        .unwrap();
    let len = builtin[start + 1..].find("[[model]]").unwrap() + 1;
    let haiku = builtin[start..start + len].replacen(
        "context_window = { value = 200000,",
        "context_window = { value = 40000,",
        1,
    );
    assert!(haiku.contains("value = 40000,"), "{haiku}");
    let small = write(dir.path(), "small-window.toml", &haiku);
    let (v, err) = json_and_stderr(&[
        // Large tools (250 parameters each), so that few of them exceed the window.
        "sweep",
        "--max-tools",
        "20",
        "--params",
        "250",
        "--model",
        "claude-haiku-4.5",
        "--catalog",
        small.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let window = 40_000;
    let points = v["points"].as_array().unwrap();
    let at = points
        .iter()
        .find(|p| p["tool_block_tokens"].as_u64().unwrap() > window)
        .unwrap();
    let n = at["tools"].as_u64().unwrap();
    assert!(
        n > 1
            && points[n as usize - 1]["tool_block_tokens"]
                .as_u64()
                .unwrap()
                <= window
    );
    assert!(
        err.contains(&format!(
            "warning: claude-haiku-4.5: from {n} tools on, the tool block alone is {} tokens",
            at["tool_block_tokens"]
        )),
        "{err}"
    );
}

#[test]
fn quiet_leaves_the_report_and_drops_the_wrote_lines() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "whatif",
        "--at-call",
        "5",
        "--remove-tools",
        "synthetic_tool_01",
        "--model",
        "gpt-5.6",
    ];
    let loud = pcsim()
        .args(base)
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(loud.status.success());
    let loud = String::from_utf8_lossy(&loud.stdout).to_string();
    assert!(loud.contains("wrote "), "{loud}");
    let quiet = pcsim()
        .args(base)
        .arg("--out")
        .arg(dir.path())
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(quiet.status.success());
    let quiet = String::from_utf8_lossy(&quiet.stdout).to_string();
    assert!(!quiet.contains("wrote "), "{quiet}");
    // The same report, without the file lines.
    let kept: Vec<&str> = loud.lines().filter(|l| !l.starts_with("wrote ")).collect();
    assert_eq!(kept, quiet.lines().collect::<Vec<_>>());
    assert!(dir.path().join("whatif.json").is_file());
}
