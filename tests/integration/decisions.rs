//! Issue 16 (decisions): whole-server operations in scenarios and `whatif`, `pcsim diff`, and the
//! flags and conventions shared by run/compare/whatif/advise. Figures are checked against the
//! catalog's rendering and prices applied to the shipped real captures (examples/mcp/).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{pcsim, root};
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

fn json_of(args: &[&str]) -> Value {
    let out = pcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
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
    assert_eq!(
        s.tools[1].description,
        pcsim::input::trim::first_sentence(&issue.description)
    );
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
    let catalog = Catalog::embedded().unwrap();
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
