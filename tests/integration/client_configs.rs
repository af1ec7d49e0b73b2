//! `config` on each MCP client's documented format (tests/fixtures/clients/, one file per client,
//! each starting the fake stdio server), and `capture` keeping the server's key order.

use serde_json::Value;

use crate::common::{pcsim, python3_or_skip, refused, root};

/// Whether the fake MCP server can run (a missing python3 fails the test unless a skip is asked for).
fn python3() -> bool {
    python3_or_skip("to run the fake MCP server")
}

/// `pcsim config FILE --model claude-opus-4.8 --format json ARGS`, run from the repository root.
fn config(rel: &str, args: &[&str]) -> (Value, String) {
    let a = pcsim()
        .current_dir(root())
        .env("PCSIM_TEST_KEY", "k123")
        .env_remove("PCSIM_TEST_UNSET")
        .arg("config")
        .arg(format!("tests/fixtures/clients/{rel}"))
        .args(["--model", "claude-opus-4.8", "--format", "json"])
        .args(["--timeout-seconds", "10"])
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    (
        serde_json::from_slice(&a.get_output().stdout).unwrap(),
        String::from_utf8_lossy(&a.get_output().stderr).to_string(),
    )
}

/// name -> (tools exposed, tools listed, tool names)
fn servers(v: &Value) -> Vec<(String, u64, u64, Vec<String>)> {
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["tools"].as_u64().unwrap_or(0),
                s["tools_listed"].as_u64().unwrap_or(0),
                s["tool_names"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

fn skipped(v: &Value) -> Vec<String> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn gemini_cli_include_exclude_and_cwd_are_honoured() {
    if !python3() {
        return;
    }
    let (v, err) = config("gemini/.gemini/settings.json", &[]);
    assert_eq!(v["client"], "gemini-cli");
    let s = servers(&v);
    // `only-two` starts `fake_mcp_server.py` from its `cwd` and exposes 2 of its 3 tools.
    assert_eq!(
        s,
        [
            (
                "only-two".to_string(),
                2,
                3,
                vec!["echo".to_string(), "add".to_string()]
            ),
            (
                "no-time".to_string(),
                2,
                3,
                vec!["echo".to_string(), "add".to_string()]
            ),
        ],
        "{err}"
    );
    assert_eq!(skipped(&v), ["github", "experimental"]);
    // The whole configuration counts the exposed tools only.
    let total = v["overhead"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server"].is_null())
        .unwrap();
    assert_eq!(total["tools"], 4);
}

#[test]
fn windsurf_remote_entry_is_skipped_not_fatal() {
    if !python3() {
        return;
    }
    let (v, err) = config("windsurf/mcp_config.json", &[]);
    assert_eq!(servers(&v)[0].1, 3);
    assert!(
        err.contains("`remote-docs` not captured: remote server"),
        "{err}"
    );
}

#[test]
fn codex_toml_continue_yaml_zed_and_claude_json_are_captured() {
    if !python3() {
        return;
    }
    let (v, _) = config("codex/config.toml", &[]);
    let s = servers(&v);
    assert_eq!(
        (s[0].0.as_str(), s[0].1, s[0].2),
        ("fake", 2, 3),
        "enabled_tools"
    );
    assert_eq!(
        (s[1].0.as_str(), s[1].1, s[1].2),
        ("paged", 4, 5),
        "disabled_tools"
    );
    let (v, _) = config("continue/config.yaml", &[]);
    assert_eq!(servers(&v)[0].0, "fake");
    assert_eq!(skipped(&v), ["needs-secret", "remote"]);
    let (v, _) = config("zed/settings.json", &[]);
    let s = servers(&v);
    assert_eq!((s[0].1, s[1].1), (3, 5));
    let (v, _) = config("claude-code/.claude.json", &[]);
    let names: Vec<String> = servers(&v).into_iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        ["fake-user", "fake-project (project /home/dev/widget)"]
    );
}

#[test]
fn vscode_inputs_come_from_the_command_line() {
    if !python3() {
        return;
    }
    let (v, _) = config("vscode/.vscode/mcp.json", &["--input", "api-key=x"]);
    assert_eq!(v["client"], "vscode");
    assert_eq!(servers(&v)[0].1, 3);
    // Without it the server cannot start as configured: skipped with the reason, then nothing left.
    let err = refused(
        pcsim()
            .current_dir(root())
            .args(["config", "tests/fixtures/clients/vscode/.vscode/mcp.json"]),
    );
    assert!(err.contains("--input api-key=VALUE"), "{err}");
}

#[test]
fn capture_keeps_the_servers_key_order() {
    if !python3() {
        return;
    }
    let a = pcsim()
        .current_dir(root())
        .args([
            "capture",
            "--",
            "python3",
            "tests/fixtures/fake_mcp_server.py",
            "normal",
        ])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    // The fake server writes name, description, inputSchema, annotations (not alphabetical).
    let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    assert!(
        pos("name") < pos("description")
            && pos("description") < pos("inputSchema")
            && pos("inputSchema") < pos("annotations"),
        "{text}"
    );
    // The same content, indented as before.
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 3);
    assert!(text.starts_with("{\n  \"tools\": [\n    {\n      \"name\": \"echo\","));
}

/// Claude Code sends each MCP tool as `mcp__<server>__<tool>`: `config` prices those names (the
/// prefix is billed on every call), `--save` writes them, and `--scenario-out` writes a scenario
/// that `run` simulates with exactly those tools.
#[test]
fn claude_code_names_are_priced_with_their_prefix_and_become_a_scenario() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("agent.toml");
    let (v, _) = config(
        "claude-code/.claude.json",
        &["--scenario-out", scenario.to_str().unwrap()],
    );
    let s = servers(&v);
    assert!(!s[0].3.is_empty());
    for name in &s[0].3 {
        assert!(name.starts_with("mcp__fake-user__"), "{name}");
    }
    // The project server is prefixed with its key, not with the listing's annotation.
    for name in &s[1].3 {
        assert!(name.starts_with("mcp__fake-project__"), "{name}");
    }
    // The saved capture is what the client sends: prefixed names.
    let plain = crate::common::json_of(&[
        "tools",
        dir.path()
            .join("agent.fake-user.tools.json")
            .to_str()
            .unwrap(),
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    assert!(plain.to_string().contains("mcp__fake-user__"));
    let text = std::fs::read_to_string(&scenario).unwrap();
    assert!(text.contains("[[tools.server]]"), "{text}");
    let run = crate::common::json_of(&[
        "run",
        scenario.to_str().unwrap(),
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    assert_eq!(run["scenario"], "agent");
    assert!(run["results"][0]["total_usd"].as_f64().unwrap() > 0.0);
}

#[test]
fn opencode_mcp_and_goose_extensions_are_captured() {
    if !python3() {
        return;
    }
    // OpenCode: a `local` entry's command array, `{env:...}` values; remote and disabled skipped.
    let (v, err) = config("opencode/opencode.json", &[]);
    assert_eq!(v["client"], "opencode");
    let s = servers(&v);
    assert_eq!((s[0].0.as_str(), s[0].1), ("fake", 3));
    assert_eq!(skipped(&v), ["docs", "off"]);
    assert!(err.contains("`docs` not captured: remote server"), "{err}");
    // Goose: a stdio extension (`cmd`, `args`, `envs`); the builtin one runs inside Goose.
    let (v, err) = config("goose/config.yaml", &[]);
    assert_eq!(v["client"], "goose");
    let s = servers(&v);
    assert_eq!((s[0].0.as_str(), s[0].1), ("fake", 5));
    assert_eq!(skipped(&v), ["developer", "docs", "off"]);
    assert!(err.contains("inside Goose"), "{err}");
}

#[test]
fn cursor_env_files_and_windsurf_disabled_tools_are_honoured() {
    if !python3() {
        return;
    }
    // The server dies without FAKE_ENV_FILE_KEY, which only keys.env gives it.
    let (v, err) = config("cursor-envfile/.cursor/mcp.json", &[]);
    let s = servers(&v);
    assert_eq!((s[0].0.as_str(), s[0].1), ("keyed", 3));
    // An env file that cannot be read: skipped with the file and the field named, not started.
    assert_eq!(skipped(&v), ["lost-keys"]);
    assert!(
        err.contains("missing.env") && err.contains("mcpServers.lost-keys.envFile"),
        "{err}"
    );
    // Windsurf: `disabledTools` hides two of the three tools.
    let (v, _) = config("windsurf-disabled/mcp_config.json", &[]);
    let s = servers(&v);
    assert_eq!((s[0].1, s[0].2), (1, 3));
    assert_eq!(s[0].3, ["echo"]);
}
