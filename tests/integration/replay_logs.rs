//! `replay` on the log formats of issue 17: each fixture is written from its source's documentation
//! (see tests/fixtures/usage/README.md), and each test states the figure the log itself implies.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{catalog_model, pcsim, refused, replay_json, root};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/usage").join(name)
}

/// `pcsim replay ARGS --format json`: the JSON and the stderr.
fn replay(args: &[&str]) -> (Value, String) {
    replay_json(args)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

fn calls(v: &Value) -> &Vec<Value> {
    v["results"][0]["calls"].as_array().unwrap()
}

fn logged(c: &Value, k: &str) -> u64 {
    c["logged"][k].as_u64().unwrap()
}

#[test]
fn anthropic_response_with_output_tokens_details_keeps_cache_buckets() {
    let (v, _) = replay(&[path(&fixture("anthropic_output_details.json"))]);
    let c = &calls(&v)[0];
    // 6 uncached + 2,017 written + 19,000 read: a 21,023-token prompt, not OpenAI's 6.
    assert_eq!(c["prompt_tokens"], 21_023);
    assert_eq!(logged(c, "uncached_tokens"), 6);
    assert_eq!(logged(c, "cache_write_tokens"), 2017);
    assert_eq!(logged(c, "cache_read_tokens"), 19_000);
    assert_eq!(v["results"][0]["model"], "claude-opus-5");
}

#[test]
fn litellm_standard_logging_payload_keeps_cache_counts_times_and_trace() {
    let (v, err) = replay(&[path(&fixture("litellm_standard_logging.jsonl"))]);
    assert_eq!(v["calls_logged"], 3);
    assert_eq!(v["failed_calls"], 1);
    assert!(err.contains("1 call logged as failed"), "{err}");
    let cs = calls(&v);
    // LiteLLM's prompt_tokens counts writes and reads; the writes stay writes.
    let w: Vec<u64> = cs.iter().map(|c| logged(c, "cache_write_tokens")).collect();
    let r: Vec<u64> = cs.iter().map(|c| logged(c, "cache_read_tokens")).collect();
    let u: Vec<u64> = cs.iter().map(|c| logged(c, "uncached_tokens")).collect();
    assert_eq!(w, [5200, 900, 1100]);
    assert_eq!(r, [0, 5200, 6100]);
    assert_eq!(u, [3, 4, 5]);
    // startTime is honoured (20 s apart), and trace_id is the session.
    let t: Vec<f64> = cs.iter().map(|c| c["time_s"].as_f64().unwrap()).collect();
    assert_eq!(t, [0.0, 20.0, 40.0]);
    let sessions = v["results"][0]["totals_by"]["session"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["key"], "5b7e0c1a-trace-0001");
}

#[test]
fn litellm_normalised_anthropic_usage_bills_writes_as_writes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lite.jsonl");
    // LiteLLM's chat-completions shape of an Anthropic response: prompt_tokens = 4 + 900 + 5200.
    std::fs::write(
        &p,
        r#"{"id":"chatcmpl-1","object":"chat.completion","model":"claude-opus-4-8","usage":{"prompt_tokens":6104,"completion_tokens":50,"total_tokens":6154,"prompt_tokens_details":{"cached_tokens":5200,"cache_creation_tokens":900},"cache_creation_input_tokens":900,"cache_read_input_tokens":5200}}
"#,
    )
    .unwrap();
    let (v, err) = replay(&[p.to_str().unwrap()]);
    assert!(!err.contains("unknown"), "{err}");
    let c = &calls(&v)[0];
    assert_eq!(logged(c, "uncached_tokens"), 4);
    assert_eq!(logged(c, "cache_write_tokens"), 900);
    assert_eq!(logged(c, "cache_read_tokens"), 5200);
}

#[test]
fn sessions_are_split_by_id_and_timed_by_sent_at() {
    let (v, _) = replay(&[path(&fixture("two_sessions.jsonl"))]);
    let r = &v["results"][0];
    assert_eq!(r["conversations"], 2);
    let cs = calls(&v);
    // sent_at: the second record (session b) was sent 15 s after the first.
    assert_eq!(cs[1]["time_s"], 15.0);
    assert_eq!(cs[1]["conversation"], 2);
    // Each session reads its own previous prompt: the prediction matches the log within 0.1%.
    let (l, p) = (
        r["logged"]["cost_usd"].as_f64().unwrap(),
        r["predicted"]["cost_usd"].as_f64().unwrap(),
    );
    assert!((p / l - 1.0).abs() < 0.001, "logged {l} predicted {p}");
    let by: Vec<(String, u64)> = r["totals_by"]["session"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_string(),
                g["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by, [("sess-a".to_string(), 5), ("sess-b".to_string(), 4)]);
}

#[test]
fn a_long_pause_splits_a_session_when_asked() {
    let (v, _) = replay(&[
        path(&fixture("claude_code_session.jsonl")),
        "--session-gap-minutes",
        "5",
    ]);
    // The 9.6-minute pause starts a third conversation (main before, main after, the sub-agent).
    assert_eq!(v["results"][0]["conversations"], 3);
    let (v, _) = replay(&[path(&fixture("claude_code_session.jsonl"))]);
    assert_eq!(v["results"][0]["conversations"], 2);
}

/// Two sessions on one prefix: the second session's first call reads the 5,000-token prefix.
fn two_sessions_sharing_a_prefix(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("prefix.jsonl");
    let line = |s: &str, t: u32, u: u64, w: u64, r: u64| {
        format!(
            "{{\"session_id\":\"{s}\",\"timestamp\":\"2026-11-30T10:{t:02}:00Z\",\"model\":\"claude-opus-4.8\",\"usage\":{{\"input_tokens\":{u},\"cache_creation_input_tokens\":{w},\"cache_read_input_tokens\":{r},\"output_tokens\":100}}}}\n"
        )
    };
    let text = line("s1", 0, 0, 7000, 0)
        + &line("s1", 1, 0, 600, 7000)
        + &line("s2", 20, 0, 2500, 5000)
        + &line("s2", 21, 0, 400, 7500);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn one_hour_ttl_on_the_prefix_works_without_prefix_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let p = two_sessions_sharing_a_prefix(dir.path());
    let (v, err) = replay(&[p.to_str().unwrap(), "--strategy", "explicit:tools@1h+last"]);
    assert!(
        err.contains("inferred") && err.contains("5000 tokens"),
        "{err}"
    );
    let r = &v["results"][0];
    assert_eq!(r["predicted_write_tokens_by_tier"]["1h"], 5000);
    // 20 minutes later the 1-hour prefix is still there for session 2.
    assert_eq!(calls(&v)[2]["predicted"]["cache_read_tokens"], 5000);
    // Given explicitly, the same.
    let (v2, _) = replay(&[
        p.to_str().unwrap(),
        "--strategy",
        "explicit:tools@1h+last",
        "--prefix-tokens",
        "5000",
    ]);
    assert_eq!(v2["results"][0]["predicted"], r["predicted"]);
}

#[test]
fn prefix_breakpoints_without_a_known_prefix_warn() {
    let (_, err) = replay(&[
        path(&fixture("anthropic_messages.jsonl")),
        "--strategy",
        "explicit:tools@1h+last",
    ]);
    assert!(
        err.contains("have no effect") && err.contains("--prefix-tokens"),
        "{err}"
    );
}

#[test]
fn gemini_usage_metadata_is_read() {
    let (v, _) = replay(&[path(&fixture("gemini_generate_content.jsonl"))]);
    assert_eq!(v["results"][0]["model"], "gemini-2.5-pro");
    let cs = calls(&v);
    assert_eq!(cs.len(), 3);
    // promptTokenCount includes the cached tokens; thoughts are output.
    assert_eq!(cs[1]["prompt_tokens"], 5900);
    assert_eq!(logged(&cs[1], "cache_read_tokens"), 4096);
    assert_eq!(logged(&cs[1], "uncached_tokens"), 5900 - 4096);
    assert_eq!(cs[0]["output_tokens"], 210 + 90);
}

#[test]
fn bedrock_converse_and_invocation_logs_are_read() {
    let (v, _) = replay(&[path(&fixture("bedrock_converse.jsonl"))]);
    // The invocation log names `us.anthropic.claude-sonnet-4-6-v1:0`.
    assert_eq!(v["results"][0]["model"], "claude-sonnet-4.6");
    let cs = calls(&v);
    let got: Vec<(u64, u64, u64)> = cs
        .iter()
        .map(|c| {
            (
                logged(c, "uncached_tokens"),
                logged(c, "cache_write_tokens"),
                logged(c, "cache_read_tokens"),
            )
        })
        .collect();
    assert_eq!(got, [(12, 5000, 0), (9, 800, 5000), (7, 650, 5800)]);
}

#[test]
fn cohere_billed_units_are_read() {
    let (v, _) = replay(&[path(&fixture("cohere_chat.jsonl")), "--model", "gpt-5.6"]);
    let p: Vec<u64> = calls(&v)
        .iter()
        .map(|c| c["prompt_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(p, [1800, 2300, 2500]);
    let o: Vec<u64> = calls(&v)
        .iter()
        .map(|c| c["output_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(o, [120, 95, 80]);
}

#[test]
fn codex_cli_rollouts_are_read() {
    let (v, _) = replay(&[path(&fixture("codex_rollout.jsonl"))]);
    assert_eq!(v["results"][0]["model"], "gpt-5.6");
    // Each turn's token_count appears twice; the repeat is merged.
    assert_eq!(v["calls_logged"], 3);
    assert_eq!(v["duplicates_merged"], 3);
    let cs = calls(&v);
    assert_eq!(cs[1]["prompt_tokens"], 9800);
    assert_eq!(logged(&cs[1], "cache_read_tokens"), 8960);
    let g = &v["results"][0]["totals_by"];
    assert_eq!(g["project"][0]["key"], "/home/dev/widget");
    assert_eq!(
        g["session"][0]["key"],
        "0199a7f2-3c5d-7e10-9b2a-4c6d8e0f1a23"
    );
}

#[test]
fn sidechain_calls_are_in_the_totals_at_their_own_model() {
    let (v, _) = replay(&[path(&fixture("claude_code_session.jsonl"))]);
    let catalog = pcsim::model::catalog::Catalog::embedded().unwrap();
    let haiku = catalog.model("claude-haiku-4.5").unwrap();
    let cs = calls(&v);
    // The sub-agent's call (9,120 uncached, 88 out) ran on Haiku; the rest on Opus.
    let side = cs.iter().find(|c| c["conversation"] == 2).unwrap();
    let main: f64 = cs
        .iter()
        .filter(|c| c["conversation"] == 1)
        .map(|c| c["logged"]["cost_usd"].as_f64().unwrap())
        .sum();
    assert_eq!(side["prompt_tokens"], 9120);
    let want = main + haiku.input_usd(9120.0) + haiku.output_usd(88.0);
    let got = v["logged_own_models_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    assert!(got > main);
}

#[test]
fn a_folder_totals_the_sum_of_its_files_replayed_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("projects/widget");
    std::fs::create_dir_all(&sub).unwrap();
    let files = [
        "claude_code_session.jsonl",
        "two_sessions.jsonl",
        "anthropic_messages.jsonl",
    ];
    for f in files {
        std::fs::copy(fixture(f), sub.join(f)).unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not a log").unwrap();
    let m = ["--model", "claude-opus-4.8", "--strategy", "cached"];
    let mut args = vec![dir.path().to_str().unwrap()];
    args.extend(m);
    let (all, _) = replay(&args);
    assert_eq!(all["files"], 3);
    let r = &all["results"][0];
    let (mut calls, mut logged, mut predicted, mut conv) = (0u64, 0.0, 0.0, 0u64);
    for f in files {
        let p = sub.join(f);
        let mut args = vec![p.to_str().unwrap()];
        args.extend(m);
        let (one, _) = replay(&args);
        let o = &one["results"][0];
        calls += o["calls_total"].as_u64().unwrap();
        conv += o["conversations"].as_u64().unwrap();
        logged += o["logged"]["cost_usd"].as_f64().unwrap();
        predicted += o["predicted"]["cost_usd"].as_f64().unwrap();
    }
    assert_eq!(r["calls_total"].as_u64().unwrap(), calls);
    assert_eq!(r["conversations"].as_u64().unwrap(), conv);
    assert!((r["logged"]["cost_usd"].as_f64().unwrap() - logged).abs() < 1e-9);
    assert!((r["predicted"]["cost_usd"].as_f64().unwrap() - predicted).abs() < 1e-9);
    // Per-call rows are kept for a single log only (memory follows the largest file).
    assert!(r.get("calls").is_none());
}

/// One session of three calls 10 s apart on claude-opus-4.8: prompts of 20,000, 21,000 and 22,000
/// tokens, 100 output tokens each.
fn three_calls(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("three.jsonl");
    let mut text = String::new();
    for (i, prompt) in [20_000u64, 21_000, 22_000].iter().enumerate() {
        text.push_str(&format!(
            "{{\"sent_at\": \"2026-11-30T09:00:{:02}.000Z\", \"session_id\": \"s\", \"model\": \"claude-opus-4-8\", \"usage\": {{\"input_tokens\": {prompt}, \"output_tokens\": 100}}}}\n",
            i * 10
        ));
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// The catalog's base input price and 5-minute write / read multipliers of claude-opus-4.8.
fn opus_rates() -> (f64, f64, f64) {
    let m = catalog_model("claude-opus-4.8");
    let e = &m["cache"]["explicit"];
    (
        m["input_usd_per_mtok"]["value"].as_f64().unwrap(),
        e["tiers"]["5m"]["write_multiplier"]["value"]
            .as_f64()
            .unwrap(),
        e["read_multiplier"]["value"].as_f64().unwrap(),
    )
}

#[test]
fn a_tool_tokens_delta_rebills_the_logged_calls_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let log = three_calls(dir.path());
    let (v, _) = replay(&[
        path(&log),
        "--prefix-tokens",
        "10000",
        "--tool-tokens-delta",
        "-3000",
    ]);
    let cf = &v["counterfactual"]["results"][0];
    assert_eq!(cf["tool_tokens_delta"], -3000);
    assert_eq!(cf["changed_prefix_tokens"], 7000);
    // tools+system+last: call 1 writes its whole prompt, each later call reads the previous prompt
    // and writes the rest. 3,000 fewer tokens in every prompt: 3,000 fewer written over the
    // session (the first write) and 3,000 fewer read by each of calls 2 and 3.
    let (price, write, read) = opus_rates();
    let by_hand = 3000.0 * (write + 2.0 * read) * price / 1e6;
    let saving = cf["saving_usd"].as_f64().unwrap();
    assert!((saving - by_hand).abs() < 1e-9, "{saving} vs {by_hand}");
    assert_eq!(
        cf["changed"]["cache_write_tokens"],
        v["results"][0]["predicted"]["cache_write_tokens"]
            .as_u64()
            .unwrap()
            - 3000
    );
    assert_eq!(
        cf["changed"]["cache_read_tokens"],
        v["results"][0]["predicted"]["cache_read_tokens"]
            .as_u64()
            .unwrap()
            - 6000
    );
}

#[test]
fn removing_tools_from_a_log_moves_every_prompt_by_their_block_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let log = three_calls(dir.path());
    let tools = root().join("examples/mcp/server-memory.tools.json");
    let block = |drop: &[&str]| {
        let mut c = pcsim();
        c.args([
            "tools",
            path(&tools),
            "--model",
            "claude-opus-4.8",
            "--format",
            "json",
        ]);
        if !drop.is_empty() {
            c.args(["--drop", &drop.join(",")]);
        }
        let a = c.assert().success();
        let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
        v["models"][0]["tool_block_tokens"].as_i64().unwrap()
    };
    let (v, _) = replay(&[
        path(&log),
        "--prefix-tokens",
        "10000",
        "--tools",
        path(&tools),
        "--remove-tools",
        "read_graph,search_nodes",
    ]);
    let cf = &v["counterfactual"]["results"][0];
    let delta = block(&["read_graph", "search_nodes"]) - block(&[]);
    assert!(delta < 0);
    assert_eq!(cf["tool_tokens_delta"], delta);
    let (price, write, read) = opus_rates();
    let by_hand = -delta as f64 * (write + 2.0 * read) * price / 1e6;
    let saving = cf["saving_usd"].as_f64().unwrap();
    assert!((saving - by_hand).abs() < 1e-9, "{saving} vs {by_hand}");
    assert!(v["counterfactual"]["change"]
        .as_str()
        .unwrap()
        .contains("read_graph, search_nodes"));
}

#[test]
fn a_tool_change_refuses_unknown_names_and_an_unknown_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let log = three_calls(dir.path());
    let tools = root().join("examples/mcp/server-memory.tools.json");
    let err = refused(
        pcsim()
            .args([
                "replay",
                path(&log),
                "--prefix-tokens",
                "10000",
                "--tools",
                path(&tools),
            ])
            .args(["--remove-tools", "read_grapf"]),
    );
    assert!(
        err.contains("--remove-tools") && err.contains("read_grapf") && err.contains("read_graph"),
        "{err}"
    );
    let err = refused(pcsim().args(["replay", path(&log), "--remove-tools", "read_graph"]));
    assert!(err.contains("--tools"), "{err}");
    // No cache read at a conversation start and no --prefix-tokens: the prefix is unknown.
    let err = refused(pcsim().args(["replay", path(&log), "--tool-tokens-delta", "-100"]));
    assert!(
        err.contains("three.jsonl") && err.contains("--prefix-tokens"),
        "{err}"
    );
}

#[test]
fn an_invoice_is_reconciled_with_the_logged_total() {
    let dir = tempfile::tempdir().unwrap();
    let log = three_calls(dir.path());
    let (v, _) = replay(&[path(&log), "--invoice-usd", "1"]);
    // By hand: 63,000 uncached input tokens and 300 output tokens at the catalog's prices.
    let m = catalog_model("claude-opus-4.8");
    let inp = m["input_usd_per_mtok"]["value"].as_f64().unwrap();
    let outp = m["output_usd_per_mtok"]["value"].as_f64().unwrap();
    let logged = (63_000.0 * inp + 300.0 * outp) / 1e6;
    let inv = &v["invoice"];
    assert!((inv["logged_usd"].as_f64().unwrap() - logged).abs() < 1e-12);
    let diff = 1.0 - logged;
    assert!((inv["difference_usd"].as_f64().unwrap() - diff).abs() < 1e-12);
    assert!((inv["difference_percent_of_invoice"].as_f64().unwrap() - diff * 100.0).abs() < 1e-9);
    assert!(
        (inv["difference_in_mean_calls"].as_f64().unwrap() - diff / (logged / 3.0)).abs() < 1e-9
    );
    // The regional explanation, where the catalog has a multiplier: the logged total times it.
    if let Some(r) = m["regional_multiplier"]["value"].as_f64() {
        let e = inv["explanations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["cause"].as_str().unwrap().contains("regional"))
            .unwrap();
        assert!((e["total_usd"].as_f64().unwrap() - logged * r).abs() < 1e-12);
    }
    let err = refused(pcsim().args(["replay", path(&log), "--invoice-usd", "-3"]));
    assert!(err.contains("--invoice-usd") && err.contains("-3"), "{err}");
}
