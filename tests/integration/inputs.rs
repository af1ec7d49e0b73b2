//! Real inputs: live MCP capture, client configs, LiteLLM price import, usage-log replay.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{pcsim, refused, replay_json, root};

/// The fake stdio MCP server (a Python script: no extra build target, nothing shipped with pcsim).
fn fake_server() -> Option<PathBuf> {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        // A missing tool fails the test unless skipping is asked for.
        assert!(
            std::env::var_os("PCSIM_ALLOW_MISSING_SHARED").is_some_and(|v| v == "1"),
            "python3 is not available to run the fake MCP server (PCSIM_ALLOW_MISSING_SHARED=1 skips)"
        );
        eprintln!("skipped: python3 is not available to run the fake MCP server");
        return None;
    }
    Some(root().join("tests/fixtures/fake_mcp_server.py"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

fn capture_mode(mode: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    let server = fake_server().expect("checked by the caller");
    let mut cmd = pcsim();
    cmd.arg("capture")
        .args(["--timeout-seconds", "2"])
        .args(extra);
    cmd.arg("--").arg("python3").arg(server).arg(mode);
    cmd.timeout(std::time::Duration::from_secs(20)).assert()
}

fn tool_names(json: &[u8]) -> Vec<String> {
    let v: Value = serde_json::from_slice(json).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn capture_lists_tools_and_capabilities_change_the_list() {
    if fake_server().is_none() {
        return;
    }
    let out = capture_mode("normal", &[])
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(tool_names(&out), ["echo", "add", "get_time"]);
    // The capture is a tool file pcsim reads like the stored ones.
    let tools = pcsim::model::tools::parse_tool_list(std::str::from_utf8(&out).unwrap(), "capture")
        .unwrap();
    assert_eq!(tools.len(), 3);
    let full = capture_mode("normal", &["--client-capabilities", "full"])
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(
        tool_names(&full),
        ["echo", "add", "get_time", "sample_llm", "elicit_input"]
    );
}

#[test]
fn capture_follows_pagination_and_writes_file() {
    if fake_server().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("paged.tools.json");
    let a = capture_mode("paginated", &["--out", path.to_str().unwrap()]).success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(
        text.contains("captured 5 tools") && text.contains("3 pages"),
        "{text}"
    );
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        tool_names(&bytes),
        ["echo", "add", "get_time", "search", "fetch"]
    );
}

#[test]
fn capture_skips_noise_and_answers_roots() {
    if fake_server().is_none() {
        return;
    }
    // The noisy server exits with status 4 unless its roots/list request gets an empty root list.
    let a = capture_mode("noisy", &[]).success();
    assert_eq!(tool_names(&a.get_output().stdout).len(), 3);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("skipped 3 non-JSON-RPC lines") && err.contains("answered 1 server requests"),
        "{err}"
    );
}

#[test]
fn capture_bad_servers_fail_clearly_in_bounded_time() {
    if fake_server().is_none() {
        return;
    }
    let cases = [
        ("silent", "no answer within the timeout"),
        ("garbage", "initialize result is not a JSON object"),
        ("crash", "exited: exit status: 3"),
        ("flood", "sent a message longer than"),
        ("chatter", "sent more than 1000000 bytes in total"),
    ];
    for (mode, want) in cases {
        let start = std::time::Instant::now();
        let a = capture_mode(mode, &["--max-bytes", "1000000"]).code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains(want) && err.contains(mode), "{mode}: {err}");
        assert!(
            a.get_output().stdout.is_empty(),
            "{mode}: nothing half-written on stdout"
        );
        // Bounded: the 2 s timeout plus process start-up, with a wide margin for a loaded machine.
        assert!(
            start.elapsed().as_secs() < 15,
            "{mode} took {:?}",
            start.elapsed()
        );
    }
    let a = capture_mode("crash", &[]).code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("missing API_KEY"),
        "stderr tail is reported: {err}"
    );
}

#[test]
fn capture_missing_command_names_it() {
    let err = refused(pcsim().args([
        "capture",
        "--timeout-seconds",
        "2",
        "--",
        "pcsim-no-such-command-xyz",
        "--flag",
    ]));
    assert!(
        err.contains("cannot start `pcsim-no-such-command-xyz`"),
        "{err}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn capture_ends_a_server_that_ignores_sigterm() {
    let Some(server) = fake_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let opts = pcsim::input::capture::CaptureOptions {
        timeout: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    let env = [(
        "FAKE_MCP_PIDFILE".to_string(),
        pidfile.display().to_string(),
    )]
    .into_iter()
    .collect();
    let e = pcsim::input::capture::capture_command(
        "silent",
        "python3",
        &[server.display().to_string(), "silent".into()],
        &env,
        &opts,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("no answer within the timeout"),
        "{e}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    // The child was killed and reaped before capture_command returned: no process, not even a zombie.
    assert!(
        !PathBuf::from(format!("/proc/{}", pid.trim())).exists(),
        "server process {pid} is still there"
    );
}

#[test]
fn capture_timeout_bounds_a_server_that_floods_requests_before_reading() {
    if fake_server().is_none() {
        return;
    }
    // 20,000 requests and no reading: answering them fills the server's input pipe. Before the
    // writer thread, the send blocked there for ever and --timeout-seconds was never looked at.
    let start = std::time::Instant::now();
    let server = fake_server().expect("checked above");
    let out = pcsim()
        .args(["capture", "--timeout-seconds", "2", "--", "python3"])
        .arg(server)
        .arg("request-flood")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("request-flood")
            && (err.contains("within the timeout") || err.contains("does not read its input")),
        "{err}"
    );
    // A hang turned into a failure; 2 s plus start-up, with a wide margin for a loaded machine.
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
}

#[cfg(target_os = "linux")]
#[test]
fn capture_ends_a_helper_that_left_the_process_group_and_session() {
    let Some(server) = fake_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("helper");
    let env = [(
        "FAKE_MCP_HELPER_PIDFILE".to_string(),
        pidfile.display().to_string(),
    )]
    .into_iter()
    .collect();
    let opts = pcsim::input::capture::CaptureOptions {
        timeout: std::time::Duration::from_secs(10),
        ..Default::default()
    };
    let cap = pcsim::input::capture::capture_command(
        "setsid",
        "python3",
        &[server.display().to_string(), "setsid".into()],
        &env,
        &opts,
    )
    .unwrap();
    assert_eq!(cap.tools.len(), 3);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    // Killed (double-forked, setsid(), SIGTERM ignored) and reaped before capture_command returned.
    let alive = proc_dir.exists();
    if alive {
        // Leave no sleeper behind when the test fails.
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    assert!(!alive, "helper {} outlived the capture", pid.trim());
}

/// Against a real official server. Ignored by default: it needs npm and network access to fetch the
/// package. Run with `cargo test --test integration inputs::capture_real -- --ignored`. The stored
/// captures are of @modelcontextprotocol/server-everything 2026.8.31; a newer release may differ.
#[test]
#[ignore = "needs npx and network access to fetch @modelcontextprotocol/server-everything"]
fn capture_real_server_everything_matches_reference() {
    for (caps, stem) in [
        ("minimal", "server-everything"),
        ("full", "server-everything.fullcaps"),
    ] {
        let a = pcsim()
            .args([
                "capture",
                "--timeout-seconds",
                "120",
                "--client-capabilities",
                caps,
            ])
            .args(["--", "npx", "-y", "@modelcontextprotocol/server-everything"])
            .timeout(std::time::Duration::from_secs(180))
            .assert()
            .success();
        let live: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
        let reference = crate::common::capture(stem);
        let stored: Value = serde_json::from_slice(&std::fs::read(reference).unwrap()).unwrap();
        assert_eq!(
            tool_names(&serde_json::to_vec(&live).unwrap()),
            tool_names(&serde_json::to_vec(&stored).unwrap()),
            "{caps}"
        );
    }
}

#[test]
fn config_captures_each_server_and_totals_the_overhead() {
    if fake_server().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let a = pcsim()
        .current_dir(root())
        .args([
            "config",
            "tests/fixtures/mcp.json",
            "--model",
            "claude-opus-4.8",
            "--model",
            "gpt-5.6",
        ])
        // 5 s, not 2: a loaded machine can take over 2 s to start python for the servers that do
        // answer, which then count as silent; the silent one still shows the timeout is honoured.
        .args(["--timeout-seconds", "5", "--format", "json", "--save"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(40))
        .assert()
        .success();
    assert!(start.elapsed().as_secs() < 30);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("MCP server `missing`: cannot start `pcsim-no-such-mcp-server`"),
        "{err}"
    );
    assert!(err.contains("`remote-docs` not captured"), "{err}");
    assert!(
        err.contains("more than one server: echo, add, get_time"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let servers = v["servers"].as_array().unwrap();
    let counts: Vec<_> = servers
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["tools"].as_u64()))
        .collect();
    assert_eq!(
        counts,
        [
            ("fake-normal", Some(3)),
            ("fake-paged", Some(5)),
            ("fake-silent", None),
            ("missing", None)
        ]
    );
    assert!(
        err.contains("MCP server `fake-silent`: no answer within the timeout"),
        "{err}"
    );

    // The figures are the library's rendering of the saved captures, per model.
    let catalog = pcsim::model::catalog::Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap(); // priced as the command prices (today)
    let normal =
        pcsim::model::tools::load_tool_file(&dir.path().join("fake-normal.tools.json")).unwrap();
    let paged =
        pcsim::model::tools::load_tool_file(&dir.path().join("fake-paged.tools.json")).unwrap();
    let all: Vec<_> = normal.iter().chain(&paged).cloned().collect();
    let rows = v["overhead"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for row in rows {
        let m = catalog.model(row["model"].as_str().unwrap()).unwrap();
        let tools = match row["server"].as_str() {
            Some("fake-normal") => &normal,
            Some("fake-paged") => &paged,
            None => &all,
            other => panic!("unexpected server {other:?}"),
        };
        let block = m.rendering().block_tokens(tools);
        assert_eq!(row["block_tokens"].as_u64(), Some(block), "{row}");
        let usd = row["usd_per_call"].as_f64().unwrap();
        assert!((usd - m.input_usd(block as f64)).abs() < 1e-12, "{row}");
    }
    // The whole configuration renders the preamble once, so it is less than the servers' sum.
    let opus: Vec<u64> = rows
        .iter()
        .filter(|r| r["model"] == "claude-opus-4.8")
        .map(|r| r["block_tokens"].as_u64().unwrap())
        .collect();
    assert!(opus[2] < opus[0] + opus[1]);
}

#[test]
fn config_with_only_missing_commands_fails_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.json");
    std::fs::write(
        &cfg,
        r#"{"mcpServers":{"ghost":{"command":"pcsim-ghost-server"}}}"#,
    )
    .unwrap();
    let err = refused(
        pcsim()
            .arg("config")
            .arg(&cfg)
            .args(["--timeout-seconds", "2"]),
    );
    assert!(
        err.contains("`ghost`") && err.contains("no server of the configuration could be captured"),
        "{err}"
    );
}

#[test]
fn import_litellm_output_loads_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lite.toml");
    let a = pcsim()
        .arg("import-litellm")
        .arg(fixture("litellm_prices.json"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(text.contains("imported 7 models, skipped 2"), "{text}");
    assert!(
        text.contains("output_cost_per_reasoning_token (1)"),
        "{text}"
    );
    assert!(
        text.contains("skipped text-embedding-3-small: mode `embedding`"),
        "{text}"
    );
    // The file is a catalog the CLI accepts, with the imported prices.
    let a = pcsim()
        .arg("--catalog")
        .arg(&out)
        .args(["models", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let sonnet = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "claude-sonnet-4-5")
        .unwrap();
    assert_eq!(sonnet["input_usd_per_mtok"]["value"], 3.0);
    assert_eq!(
        sonnet["cache"]["explicit"]["tiers"]["1h"]["write_multiplier"]["value"],
        2.0
    );
    // And it simulates: caching is cheaper than none on the default scenario for the imported model.
    let a = pcsim()
        .arg("--catalog")
        .arg(&out)
        .args(["run", "--model", "claude-sonnet-4-5", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let totals: Vec<f64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_usd"].as_f64().unwrap())
        .collect();
    assert_eq!(totals.len(), 2);
    assert!(totals[1] < totals[0], "{totals:?}");
}

#[test]
fn import_litellm_unknown_key_is_a_clear_error() {
    let err = refused(
        pcsim()
            .arg("import-litellm")
            .arg(fixture("litellm_prices.json"))
            .args(["--model", "gpt-4.2"]),
    );
    assert!(
        err.contains("litellm_prices.json")
            && err.contains("`gpt-4.2`")
            && err.contains("did you mean `gpt-4.1`"),
        "{err}"
    );
}

#[test]
fn replay_claude_code_transcript_matches_the_log() {
    let log = fixture("usage/claude_code_session.jsonl");
    // The model comes from the transcript (`claude-opus-4-8-20260501` is the catalog's claude-opus-4.8).
    let (v, err) = replay_json(&[log.to_str().unwrap()]);
    assert!(
        err.contains("inference_geo (10)"),
        "unknown fields are counted: {err}"
    );
    // The sub-agent's call is its own conversation, and in the totals.
    assert!(
        err.contains("1 sub-agent (sidechain) call replayed as its own conversation"),
        "{err}"
    );
    assert_eq!(v["calls_logged"], 8);
    assert_eq!(v["sidechain_calls"], 1);
    assert_eq!(v["results"][0]["conversations"], 2);
    assert_eq!(v["duplicates_merged"], 3);
    let r = &v["results"][0];
    // Each call on its own model: the main agent on Opus 4.8, the sub-agent on Haiku 4.5.
    assert_eq!(r["model"], "claude-opus-4.8+claude-haiku-4.5");
    let calls = r["calls"].as_array().unwrap();
    // The merged response keeps the final output count of its last transcript line.
    assert_eq!(calls[0]["output_tokens"], 187);
    // Logged dollars: the logged buckets at the catalog's prices of the call's own model (5m writes
    // 1.25x, reads 0.1x).
    let catalog = pcsim::model::catalog::Catalog::embedded().unwrap();
    for c in calls {
        let id = if c["conversation"] == 2 {
            "claude-haiku-4.5"
        } else {
            "claude-opus-4.8"
        };
        let m = catalog.model(id).unwrap();
        let rules = m.cache.explicit.as_ref().unwrap();
        let (w5, rd) = (
            rules.tiers["5m"].write_multiplier.value,
            rules.read_multiplier.value,
        );
        let l = &c["logged"];
        let tok = |k: &str| l[k].as_u64().unwrap() as f64;
        let want = m.input_usd(
            tok("uncached_tokens") + w5 * tok("cache_write_tokens") + rd * tok("cache_read_tokens"),
        ) + m.output_usd(c["output_tokens"].as_u64().unwrap() as f64);
        assert!(
            (l["cost_usd"].as_f64().unwrap() - want).abs() < 1e-12,
            "{c}"
        );
    }
    // The 9.6-minute pause outlived the 5-minute cache in the log and in the prediction alike.
    assert_eq!(calls[4]["logged"]["cache_read_tokens"], 0);
    assert_eq!(calls[4]["predicted"]["cache_read_tokens"], 0);
    assert_eq!(calls[4]["time_s"].as_f64().unwrap().round(), 634.0);
    let side: Vec<_> = calls.iter().filter(|c| c["conversation"] == 2).collect();
    assert_eq!(side.len(), 1);
    assert_eq!(side[0]["prompt_tokens"], 9120);
    let sum: f64 = calls
        .iter()
        .map(|c| c["logged"]["cost_usd"].as_f64().unwrap())
        .sum();
    assert!((sum - r["logged"]["cost_usd"].as_f64().unwrap()).abs() < 1e-12);
    // pcsim's rules reproduce the main conversation: every call within 1% and its total within
    // 0.1%. (The sub-agent's call used no caching; pcsim's `cached` strategy writes its prompt.)
    let calls: Vec<&Value> = calls.iter().filter(|c| c["conversation"] == 1).collect();
    for c in &calls {
        let (l, p) = (
            c["logged"]["cost_usd"].as_f64().unwrap(),
            c["predicted"]["cost_usd"].as_f64().unwrap(),
        );
        assert!(
            (p / l - 1.0).abs() < 0.01,
            "call {}: logged {l} predicted {p}",
            c["call"]
        );
    }
    let total = |k: &str| -> f64 {
        calls
            .iter()
            .map(|c| c[k]["cost_usd"].as_f64().unwrap())
            .sum()
    };
    let (l, p) = (total("logged"), total("predicted"));
    assert!(
        (p / l - 1.0).abs() < 0.001,
        "total: logged {l} predicted {p}"
    );
}

#[test]
fn replay_asks_what_the_session_costs_elsewhere() {
    let log = fixture("usage/claude_code_session.jsonl");
    let (v, _) = replay_json(&[
        log.to_str().unwrap(),
        "--model",
        "claude-opus-4.8",
        "--model",
        "gpt-5.6",
        "--strategy",
        "none",
        "--strategy",
        "cached",
    ]);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let catalog = pcsim::model::catalog::Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap(); // priced as the command prices (today)
    let total = |i: usize| results[i]["predicted"]["cost_usd"].as_f64().unwrap();
    // `none` bills every prompt token at the base rate: the plain prices times the logged tokens.
    let calls = results[0]["calls"].as_array().unwrap();
    let prompt: u64 = calls
        .iter()
        .map(|c| c["prompt_tokens"].as_u64().unwrap())
        .sum();
    let output: u64 = calls
        .iter()
        .map(|c| c["output_tokens"].as_u64().unwrap())
        .sum();
    for (i, id) in [(0, "claude-opus-4.8"), (2, "gpt-5.6")] {
        let m = catalog.model(id).unwrap();
        assert_eq!(results[i]["strategy"], "none");
        let want = m.input_usd(prompt as f64) + m.output_usd(output as f64);
        assert!(
            (total(i) - want).abs() < 1e-9,
            "{id}: {} vs {want}",
            total(i)
        );
        assert!(total(i + 1) < total(i), "caching saves on {id}");
    }
    // GPT-5.6 keeps writes 30 minutes, so the 9.6-minute pause still hits there.
    let gpt_cached = results[3]["calls"].as_array().unwrap();
    assert!(
        gpt_cached[4]["predicted"]["cache_read_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn replay_reads_anthropic_and_openai_logs() {
    let (v, err) = replay_json(&[
        fixture("usage/anthropic_messages.jsonl").to_str().unwrap(),
        "--gap-seconds",
        "20",
    ]);
    assert!(!err.contains("unknown"), "{err}");
    let calls = v["results"][0]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 4);
    // No timestamps: calls every --gap-seconds.
    let times: Vec<f64> = calls
        .iter()
        .map(|c| c["time_s"].as_f64().unwrap())
        .collect();
    assert_eq!(times, [0.0, 20.0, 40.0, 60.0]);
    // The first call wrote its prompt with a 1-hour lifetime: billed at the 1h tier (2x).
    let m = pcsim::model::catalog::Catalog::embedded().unwrap();
    let m = m.model("claude-opus-4.8").unwrap();
    let want = m.input_usd(12.0 + 6200.0 * 2.0) + m.output_usd(350.0);
    assert!((calls[0]["logged"]["cost_usd"].as_f64().unwrap() - want).abs() < 1e-12);

    let (v, err) = replay_json(&[fixture("usage/openai_chat.json").to_str().unwrap()]);
    assert!(!err.contains("unknown"), "{err}");
    let r = &v["results"][0];
    assert_eq!(r["model"], "gpt-5.6");
    let calls = r["calls"].as_array().unwrap();
    let times: Vec<f64> = calls
        .iter()
        .map(|c| c["time_s"].as_f64().unwrap())
        .collect();
    assert_eq!(times, [0.0, 20.0, 41.0, 90.0]);
    assert_eq!(calls[1]["logged"]["cache_read_tokens"], 2944);
    assert_eq!(calls[1]["logged"]["uncached_tokens"], 3512 - 2944);
    // pcsim's GPT-5.6 rule is exact (no 128-token rounding): it predicts the whole previous prompt.
    assert_eq!(calls[1]["predicted"]["cache_read_tokens"], 3020);
}

#[test]
fn replay_bad_logs_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    std::fs::write(
        &p,
        "{\"usage\":{\"input_tokens\":10}}\n{\"usage\":{\"input_tokens\":\"ten\"}}\n",
    )
    .unwrap();
    // A bad row is counted and named, never fatal: the other rows are replayed.
    let a = pcsim()
        .arg("replay")
        .arg(&p)
        .args(["--model", "claude-opus-4.8", "--format", "json"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("1 record could not be read")
            && err.contains("bad.jsonl")
            && err.contains("line 2: usage.input_tokens")
            && err.contains("\"ten\""),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["calls_logged"], 1);
    assert_eq!(v["unreadable_records"], 1);
    // Only bad rows: an error naming them (exit 2).
    std::fs::write(&p, "{\"usage\":{\"input_tokens\":\"ten\"}}\n").unwrap();
    let err = refused(
        pcsim()
            .arg("replay")
            .arg(&p)
            .args(["--model", "claude-opus-4.8"]),
    );
    assert!(
        err.contains("bad.jsonl") && err.contains("line 1: usage.input_tokens"),
        "{err}"
    );
    // A model the catalog does not know, with no --model: ask for one.
    std::fs::write(
        &p,
        "{\"model\":\"llama-4\",\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}\n",
    )
    .unwrap();
    let err = refused(pcsim().arg("replay").arg(&p));
    assert!(
        err.contains("`llama-4` (1 call, 10 prompt tokens, 1 output tokens)")
            && err.contains("not in the catalog")
            && err.contains("--catalog")
            && err.contains("--model"),
        "{err}"
    );
    std::fs::write(&p, "{\"type\":\"user\"}\n").unwrap();
    let err = refused(pcsim().arg("replay").arg(&p).args(["--model", "gpt-5.6"]));
    assert!(err.contains("no usage record found"), "{err}");
}

#[test]
fn replay_mixed_models_bill_each_call_at_its_own_model() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mix.jsonl");
    let line = |m: &str| {
        format!("{{\"model\":\"{m}\",\"usage\":{{\"input_tokens\":5000,\"output_tokens\":3}}}}\n")
    };
    std::fs::write(
        &p,
        line("claude-opus-4-8") + &line("claude-haiku-4-5") + &line("claude-haiku-4-5"),
    )
    .unwrap();
    let (v, err) = replay_json(&[p.to_str().unwrap()]);
    assert!(
        err.contains("mixes models: claude-opus-4-8 (1 call), claude-haiku-4-5 (2 calls)")
            && err.contains("its own model"),
        "{err}"
    );
    // No majority-model billing: one call at Opus 4.8's prices, two at Haiku 4.5's.
    let catalog = pcsim::model::catalog::Catalog::embedded().unwrap();
    let (opus, haiku) = (
        catalog.model("claude-opus-4.8").unwrap(),
        catalog.model("claude-haiku-4.5").unwrap(),
    );
    let want = opus.input_usd(5000.0)
        + opus.output_usd(3.0)
        + 2.0 * (haiku.input_usd(5000.0) + haiku.output_usd(3.0));
    let r = &v["results"][0];
    assert_eq!(r["model"], "claude-opus-4.8+claude-haiku-4.5");
    let got = r["logged"]["cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    assert!((v["logged_own_models_usd"].as_f64().unwrap() - want).abs() < 1e-12);
    // The by-model table covers every call.
    let by: Vec<u64> = r["totals_by"]["model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["calls"].as_u64().unwrap())
        .collect();
    assert_eq!(by.iter().sum::<u64>(), 3);
}
