//! `pcsim explain` on traces pcsim writes itself (`run --trace-out`), each with one known cause of
//! a cache miss (injected with `--trace-inject` or set up in a scenario of tests/fixtures/explain):
//! every miss gets its cause, no call is unexplained, and the dollars are checked by hand. Bad
//! records are skipped with a reason each.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{catalog_model, json_of, pcsim, root, stdout_of};

pub(crate) fn fixture(name: &str) -> String {
    let p = root().join("tests/fixtures/explain").join(name);
    assert!(p.is_file(), "missing fixture {}", p.display());
    p.display().to_string()
}

/// `run [SCENARIO] --model MODEL --strategy cached --trace-out DIR/trace.jsonl [--trace-inject ..]`:
/// the trace's path and the run's JSON.
pub(crate) fn trace(
    dir: &Path,
    scenario: Option<&str>,
    model: &str,
    inject: &[&str],
) -> (PathBuf, Value) {
    let path = dir.join(format!(
        "trace-{}.jsonl",
        inject.join("-").replace(['@', '='], "_")
    ));
    let p = path.display().to_string();
    let mut args: Vec<&str> = vec!["run"];
    if let Some(s) = scenario {
        args.push(s);
    }
    args.extend([
        "--model",
        model,
        "--strategy",
        "cached",
        "--format",
        "json",
        "-q",
    ]);
    args.extend(["--trace-out", p.as_str()]);
    for i in inject {
        args.extend(["--trace-inject", i]);
    }
    let run = json_of(&args);
    assert!(path.is_file());
    (path, run)
}

fn explain(path: &Path, extra: &[&str]) -> Value {
    let p = path.display().to_string();
    let mut args = vec!["explain", p.as_str(), "--format", "json"];
    args.extend(extra);
    json_of(&args)
}

/// The causes of call `n` (1-based) as (cause, tokens, detail).
fn causes(e: &Value, n: usize) -> Vec<(String, u64, String)> {
    e["calls"][n - 1]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cause"].as_str().unwrap().to_string(),
                c["tokens"].as_u64().unwrap(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// No call unexplained, every prediction equal to its bill, call 1 a cold start (or the cause
/// given), and every other call that missed anything missed it for `cause` only.
fn only_cause(e: &Value, cause: &str, first: &str) -> Vec<usize> {
    assert_eq!(e["unexplained_calls"], 0, "{}", e["summary"]);
    assert_eq!(e["disagreeing_calls"], 0, "{}", e["summary"]);
    let calls = e["calls"].as_array().unwrap();
    assert!(!calls.is_empty());
    let c1 = causes(e, 1);
    assert!(c1.iter().all(|c| c.0 == first), "call 1: {c1:?}");
    let mut hit = Vec::new();
    for n in 2..=calls.len() {
        let c = causes(e, n);
        assert!(c.iter().all(|c| c.0 == cause), "call {n}: {c:?}");
        if !c.is_empty() {
            hit.push(n);
        }
    }
    assert!(!hit.is_empty(), "no call missed for {cause}");
    hit
}

/// A plain run's trace is explained back to the run's own bill, call by call, on every measured
/// model (Anthropic, OpenAI, Gemini and automatic-caching APIs alike), with one cold start.
#[test]
fn a_plain_runs_trace_is_explained_as_the_run_billed_it() {
    let dir = tempfile::tempdir().unwrap();
    for model in [
        "claude-opus-4.8",
        "claude-opus-5",
        "gpt-5.6",
        "gemini-3.6-flash",
        "glm-5.2",
        "kimi-k3",
    ] {
        let (path, run) = trace(dir.path(), None, model, &[]);
        let e = explain(&path, &[]);
        let run_calls = run["results"][0]["calls"].as_array().unwrap();
        let calls = e["calls"].as_array().unwrap();
        assert_eq!(calls.len(), run_calls.len(), "{model}");
        for (c, r) in calls.iter().zip(run_calls) {
            assert_eq!(c["prompt_tokens"], r["prompt_tokens"], "{model}");
            for (b, k) in [
                ("cache_read_tokens", "cache_read_tokens"),
                ("cache_write_tokens", "cache_write_tokens"),
                ("uncached_tokens", "uncached_tokens"),
            ] {
                assert_eq!(
                    c["billed"][b], r[k],
                    "{model} call {}: billed {b}",
                    c["call"]
                );
                assert_eq!(
                    c["predicted"][b], r[k],
                    "{model} call {}: predicted {b}",
                    c["call"]
                );
            }
            assert_eq!(c["agrees"], true);
        }
        let run_total = run["results"][0]["total_usd"].as_f64().unwrap();
        let billed = e["billed_usd"].as_f64().unwrap();
        assert!(
            (billed - run_total).abs() < 1e-9,
            "{model}: {billed} vs {run_total}"
        );
        assert_eq!(e["unexplained_calls"], 0, "{model}");
        assert_eq!(causes(&e, 1)[0].0, "cold_start", "{model}");
        // Gemini 3.6 Flash's best-effort cache never hit in the measurements: its misses are the
        // provider's, on a stable prefix, labelled so.
        let rest = if model == "gemini-3.6-flash" {
            "provider_miss"
        } else {
            ""
        };
        for n in 2..=calls.len() {
            assert!(
                causes(&e, n).iter().all(|c| c.0 == rest),
                "{model} call {n}: {:?}",
                causes(&e, n)
            );
        }
    }
}

/// A timestamp at the start of the system prompt: every later call re-writes the system prompt and
/// the conversation, named `system_changed`, with the block, the byte and a time-like span; the
/// tools stay read. Moving the volatile block after the last breakpoint saves most of it.
#[test]
fn a_timestamp_in_the_system_prompt_is_system_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(dir.path(), None, "claude-opus-4.8", &["timestamp"]);
    let e = explain(&path, &[]);
    let hit = only_cause(&e, "system_changed", "cold_start");
    assert_eq!(hit.len(), 19);
    for n in hit {
        let c = &causes(&e, n)[0];
        assert!(
            c.2.starts_with("system block 1 differs at byte "),
            "{}",
            c.2
        );
        assert!(c.2.contains("time-like span"), "{}", c.2);
        assert!(c.2.contains(": 2026-01-01 00:0"), "{}", c.2);
        // Read: the tool block (its breakpoint is before the system prompt).
        assert!(
            e["calls"][n - 1]["billed"]["cache_read_tokens"]
                .as_u64()
                .unwrap()
                > 1024
        );
    }
    assert!(e["summary"]
        .as_str()
        .unwrap()
        .contains("a time in system block 1 on 19 of 20 calls"));
    let fix = e["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fix"] == "move_volatile_system")
        .unwrap();
    let lost: f64 = e["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cause"] == "system_changed")
        .map(|c| c["usd"].as_f64().unwrap())
        .sum();
    let saving = fix["saving_usd"].as_f64().unwrap();
    assert!(
        saving > 0.5 * lost && saving < lost,
        "saving {saving} of {lost} lost"
    );
    // --redact: the same explanation without a byte of prompt text.
    let redacted = explain(&path, &["--redact"]);
    let text = redacted.to_string();
    assert!(
        !text.contains("Current time"),
        "redacted output shows prompt text"
    );
    assert!(causes(&redacted, 2)[0].2.contains("time-like span"));
}

/// The same tools in another order before call 6: `tools_changed`, re-ordered, and freezing the
/// order saves it.
#[test]
fn a_reordered_tool_list_is_tools_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("reorder.toml")),
        "claude-opus-4.8",
        &[],
    );
    let e = explain(&path, &[]);
    assert_eq!(only_cause(&e, "tools_changed", "cold_start"), [6]);
    let c = &causes(&e, 6)[0];
    assert!(c.2.starts_with("re-ordered ("), "{}", c.2);
    // The tool-list change invalidates everything: call 5's whole prompt was lost.
    assert_eq!(c.1, e["calls"][4]["prompt_tokens"].as_u64().unwrap());
    let fix = e["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fix"] == "freeze_tool_order")
        .unwrap();
    assert!(fix["saving_usd"].as_f64().unwrap() > 0.0);
}

/// A tool added before call 6: `tools_changed`, naming the tool.
#[test]
fn a_tool_added_mid_session_is_tools_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("tool-added.toml")),
        "claude-opus-4.8",
        &[],
    );
    let e = explain(&path, &[]);
    assert_eq!(only_cause(&e, "tools_changed", "cold_start"), [6]);
    assert_eq!(causes(&e, 6)[0].2, "added synthetic_tool_1004");
}

/// 6 minutes between calls on a 5-minute cache: every later call is `ttl_expired`, gap and TTL
/// shown; the 1-hour TTL saves.
#[test]
fn a_pause_past_the_ttl_is_ttl_expired() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("pause.toml")),
        "claude-opus-4.8",
        &[],
    );
    let e = explain(&path, &[]);
    let hit = only_cause(&e, "ttl_expired", "cold_start");
    assert_eq!(hit.len(), 11);
    for n in hit {
        assert_eq!(causes(&e, n)[0].2, "gap 360.0 s >= TTL 5 min");
        // Everything the previous call sent was lost.
        assert_eq!(
            causes(&e, n)[0].1,
            e["calls"][n - 2]["prompt_tokens"].as_u64().unwrap()
        );
    }
    let fix = e["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fix"] == "ttl_1h")
        .unwrap();
    assert!(fix["saving_usd"].as_f64().unwrap() > 0.0);
}

/// The first user message edited before call 5: `messages_changed` on call 5 only, naming the
/// message; its dollars checked by hand from the catalog's prices.
#[test]
fn an_edited_message_is_messages_changed_at_hand_checked_dollars() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("base.toml")),
        "claude-opus-4.8",
        &["edit@5"],
    );
    let e = explain(&path, &[]);
    assert_eq!(only_cause(&e, "messages_changed", "cold_start"), [5]);
    let (_, tokens, detail) = &causes(&e, 5)[0];
    assert_eq!(detail, "message 1 (user) edited");
    // Read: everything before message 1 (tools and system prompt, as call 1 wrote them);
    // lost: the rest of call 4's prompt.
    let c5 = &e["calls"][4];
    let read = c5["billed"]["cache_read_tokens"].as_u64().unwrap();
    assert_eq!(
        read,
        655 + 1500,
        "the 4 tools' block (655 tokens) and the system prompt"
    );
    assert_eq!(
        *tokens,
        e["calls"][3]["prompt_tokens"].as_u64().unwrap() - read
    );
    // By hand: each lost token was written at 1.25x instead of read at 0.1x.
    let m = catalog_model("claude-opus-4.8");
    let input = m["input_usd_per_mtok"]["value"].as_f64().unwrap() / 1e6;
    let rules = &m["cache"]["explicit"];
    let write = rules["tiers"]["5m"]["write_multiplier"]["value"]
        .as_f64()
        .unwrap();
    let read_m = rules["read_multiplier"]["value"].as_f64().unwrap();
    let usd = e["calls"][4]["causes"][0]["usd"].as_f64().unwrap();
    let by_hand = *tokens as f64 * input * (write - read_m);
    assert!((usd - by_hand).abs() < 1e-12, "{usd} vs {by_hand}");
    // The scenario's numbers: the task (300) and three turns of an answer (150) and a tool result
    // (600) after message 1's start; $5 per million at 1.25x written instead of 0.1x read.
    assert_eq!(*tokens, 300 + 3 * (150 + 600));
    assert!((usd - 2550.0 * 5e-6 * 1.15).abs() < 1e-12, "{usd}");
}

/// A prefix below the 1,024-token minimum: `below_minimum` on every call until the conversation
/// grows past it.
#[test]
fn a_prefix_below_the_minimum_is_below_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("small.toml")),
        "claude-opus-4.8",
        &[],
    );
    let e = explain(&path, &[]);
    let hit = only_cause(&e, "below_minimum", "below_minimum");
    for &n in &hit {
        assert!(
            e["calls"][n - 2]["prompt_tokens"].as_u64().unwrap() < 1024,
            "call {n}"
        );
    }
    // From the call after the first prompt above the minimum on, everything is read.
    let first_big = e["calls"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["prompt_tokens"].as_u64().unwrap() >= 1024)
        .unwrap();
    assert_eq!(hit.last().copied(), Some(first_big + 1));
}

/// The turn before call 5 sent as 25 content parts: the breakpoint at its end looks back only 20
/// blocks, past the previous entry: `lookback_exceeded`.
#[test]
fn a_prefix_past_the_lookback_is_lookback_exceeded() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("base.toml")),
        "claude-opus-4.8",
        &["parts@5=25"],
    );
    let e = explain(&path, &[]);
    assert_eq!(only_cause(&e, "lookback_exceeded", "cold_start"), [5]);
    assert_eq!(
        causes(&e, 5)[0].2,
        "the previous entry is 26 blocks before the nearest breakpoint (lookback 20 blocks)"
    );
}

/// tool_choice changed before call 6: `settings_changed` (Anthropic: the messages miss, tools and
/// system stay read).
#[test]
fn a_changed_setting_is_settings_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("setting.toml")),
        "claude-opus-4.8",
        &[],
    );
    let e = explain(&path, &[]);
    assert_eq!(only_cause(&e, "settings_changed", "cold_start"), [6]);
    assert_eq!(causes(&e, 6)[0].2, "tool_choice changed");
    assert_eq!(e["calls"][5]["billed"]["cache_read_tokens"], 655 + 1500);
}

/// Bad records are skipped, each with its place and reason, and the good ones explained.
#[test]
fn bad_records_are_skipped_with_a_reason_each() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("base.toml")),
        "claude-opus-4.8",
        &[],
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut bad: Vec<u8> = Vec::new();
    bad.extend(lines[0].as_bytes());
    bad.push(b'\n');
    bad.extend(&lines[1].as_bytes()[..lines[1].len() / 2]);
    bad.push(b'\n');
    bad.extend(lines[1].replace("\"usage\"", "\"nothing\"").as_bytes());
    bad.push(b'\n');
    bad.extend(
        lines[1]
            .replace("/v1/messages", "/v1/embeddings")
            .as_bytes(),
    );
    bad.push(b'\n');
    bad.extend(b"{\"request\": \"\xff\xfe\x00\x01\"}\n");
    bad.extend(lines[2].as_bytes());
    bad.push(b'\n');
    let p = dir.path().join("bad.jsonl");
    std::fs::write(&p, &bad).unwrap();
    let e = explain(&p, &[]);
    assert_eq!(e["calls"].as_array().unwrap().len(), 2);
    assert_eq!(e["skipped_count"], 4);
    let reasons: Vec<String> = e["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap().to_string())
        .collect();
    assert!(reasons[0].starts_with("truncated JSON"), "{reasons:?}");
    assert!(reasons[1].starts_with("missing usage"), "{reasons:?}");
    assert!(reasons[2].starts_with("unknown endpoint"), "{reasons:?}");
    assert!(reasons[3].starts_with("binary body"), "{reasons:?}");
    let at: Vec<&str> = e["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["at"].as_str().unwrap())
        .collect();
    assert!(at[0].ends_with("bad.jsonl: line 2"), "{at:?}");
    // A file with nothing to explain is bad input (exit 2), naming the file.
    let empty = dir.path().join("none.jsonl");
    std::fs::write(&empty, "{\"request\": {}}\n").unwrap();
    let err = crate::common::refused(pcsim().args(["explain", empty.to_str().unwrap()]));
    assert!(
        err.contains("none.jsonl") && err.contains("no call could be explained"),
        "{err}"
    );
}

/// The table, CSV and report forms: every call once, the causes by name, the report with its
/// chart and escaped excerpts.
#[test]
fn table_csv_and_report_forms() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("base.toml")),
        "claude-opus-4.8",
        &["edit@5"],
    );
    let p = path.display().to_string();
    let table = stdout_of(&["explain", &p]);
    assert!(table.contains("messages_changed=2550"), "{table}");
    assert!(table.contains("summary: $"), "{table}");
    let csv = stdout_of(&["explain", &p, "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 13);
    assert!(rows[0].starts_with("call,conversation,time_s,model,api,prompt_tokens,"));
    assert!(rows[5].contains("messages_changed=2550"), "{}", rows[5]);
    let html = dir.path().join("r.html");
    stdout_of(&["explain", &p, "--report", html.to_str().unwrap(), "-q"]);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<svg"), "the per-call chart is inline");
    assert!(text.contains("messages_changed"));
    let md = dir.path().join("r.md");
    stdout_of(&["explain", &p, "--report", md.to_str().unwrap(), "-q"]);
    assert!(dir.path().join("r-explain-per-call.png").is_file());
}

/// `--calibrate-out`: two tool lists in one trace give a calibration overlay that `--catalog`
/// reads, fitted to the trace's billed tool blocks.
#[test]
fn calibrate_out_writes_an_overlay_from_billed_tool_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = trace(
        dir.path(),
        Some(&fixture("tool-added.toml")),
        "claude-opus-4.8",
        &[],
    );
    let out = dir.path().join("cal.toml");
    let e = explain(&path, &["--calibrate-out", out.to_str().unwrap(), "-q"]);
    let blocks = e["tool_blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    for b in blocks {
        // pcsim's own trace: the billed block is pcsim's.
        assert_eq!(
            b["measured_tokens"].as_f64().unwrap(),
            b["modelled_tokens"].as_f64().unwrap()
        );
    }
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("[[family]]") && text.contains("id = \"claude-4.8\""),
        "{text}"
    );
    stdout_of(&["--catalog", out.to_str().unwrap(), "models"]);
}

/// A provider bills tokens pcsim's token model does not see (message framing): 12 more uncached
/// tokens on every call. The regions are scaled to each bill, prediction and bill still agree,
/// and the only causes named are the real ones (the edit before call 4), within the framing.
#[test]
fn framing_tokens_are_scaled_away() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/fixtures/explain/trace.jsonl")).unwrap();
    let mut framed = String::new();
    for line in text.lines() {
        let mut r: Value = serde_json::from_str(line).unwrap();
        let u = &mut r["response"]["usage"]["input_tokens"];
        *u = Value::from(u.as_u64().unwrap() + 12);
        framed.push_str(&r.to_string());
        framed.push('\n');
    }
    let p = dir.path().join("framed.jsonl");
    std::fs::write(&p, framed).unwrap();
    let e = explain(&p, &[]);
    assert_eq!(only_cause(&e, "messages_changed", "cold_start"), [4]);
    let (_, tokens, detail) = &causes(&e, 4)[0];
    assert_eq!(detail, "message 1 (user) edited");
    // Exactly 1,800 without the framing (the task and two turns); the framing moves it by less
    // than the 12 tokens added.
    assert!(tokens.abs_diff(1_800) < 12, "{tokens}");
}

/// (billed, predicted) of `bucket` of call `n` (1-based).
fn buckets(e: &Value, n: usize, bucket: &str) -> (u64, u64) {
    let c = &e["calls"][n - 1];
    (
        c["billed"][bucket].as_u64().unwrap(),
        c["predicted"][bucket].as_u64().unwrap(),
    )
}

/// The real-shaped Anthropic session of tests/fixtures/explain (make_real_shaped.py), calls `first`
/// and `first + 1`: a streamed cold call that writes its 2,335-token prompt, then a call that reads
/// it and writes its new turn (69 tokens). The bill's 3 uncached tokens a call are framing the
/// regions do not hold: predicted read and write are the bill's to within them.
fn assert_the_anthropic_session(e: &Value, first: usize) {
    assert_eq!(buckets(e, first, "cache_write_tokens").0, 2335);
    assert_eq!(buckets(e, first, "cache_read_tokens"), (0, 0));
    assert_eq!(buckets(e, first + 1, "cache_read_tokens").0, 2335);
    assert_eq!(buckets(e, first + 1, "cache_write_tokens"), (69, 69));
    for n in [first, first + 1] {
        let framing = buckets(e, n, "uncached_tokens").0;
        assert_eq!(framing, 3);
        for b in ["cache_read_tokens", "cache_write_tokens"] {
            let (billed, predicted) = buckets(e, n, b);
            assert!(billed.abs_diff(predicted) <= framing, "call {n} {b}");
        }
        assert_eq!(e["calls"][n - 1]["agrees"], true);
        assert_eq!(e["calls"][n - 1]["model"], "claude-opus-4.8");
        assert_eq!(e["calls"][n - 1]["api"], "anthropic-messages");
    }
    assert_eq!(causes(e, first)[0].0, "cold_start");
    assert!(
        causes(e, first + 1).is_empty(),
        "{:?}",
        causes(e, first + 1)
    );
}

/// A HAR as a proxy saves it: the streamed Anthropic call reassembled from its events, the
/// base64-encoded one decoded, the OpenAI chat call (its own conversation by its
/// `prompt_cache_key`) a cold start whose read is the bill's; the GET and the cut-off body skipped
/// with their places and reasons.
#[test]
fn a_har_is_explained_to_its_bill_with_skipped_entries_counted() {
    let e = explain(Path::new(&fixture("har/session.har")), &[]);
    assert_eq!(e["calls"].as_array().unwrap().len(), 3);
    assert_eq!(e["conversations"], 2);
    assert_eq!(e["unexplained_calls"], 0);
    assert_eq!(e["disagreeing_calls"], 0);
    assert_the_anthropic_session(&e, 1);
    assert!(e["calls"][1]["at"]
        .as_str()
        .unwrap()
        .ends_with("session.har: entry 3"));
    let openai = &e["calls"][2];
    assert_eq!(openai["api"], "openai-chat");
    assert_eq!(openai["model"], "gpt-5.4");
    assert_eq!(openai["prompt_tokens"], 2215);
    assert_eq!(buckets(&e, 3, "cache_read_tokens"), (0, 0));
    assert_eq!(openai["agrees"], true);
    assert_eq!(causes(&e, 3)[0].0, "cold_start");
    // 41.25 s between the Anthropic calls, from `startedDateTime`.
    assert_eq!(e["calls"][1]["time_s"], 41.25);
    assert_eq!(e["skipped_count"], 2);
    let skipped: Vec<(String, String)> = e["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["at"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        skipped[0].0.ends_with("session.har: entry 2"),
        "{skipped:?}"
    );
    assert!(
        skipped[0].1.starts_with("not an API call: GET https://"),
        "{skipped:?}"
    );
    assert!(
        skipped[1].0.ends_with("session.har: entry 5"),
        "{skipped:?}"
    );
    assert!(
        skipped[1].1.starts_with("truncated JSON")
            && skipped[1].1.ends_with("in the response body"),
        "{skipped:?}"
    );
}

/// claude-tap's export: a record with claude-tap's reassembled body, one whose body was lost and
/// is reassembled from its `sse_events`, and an error response skipped; the two records copied
/// from claude-tap's own tests (a Responses call and a WebSocket record of three turns, whose last
/// response goes with its request body) billed as recorded.
#[test]
fn claude_taps_export_is_explained_to_its_bill() {
    let e = explain(Path::new(&fixture("claude-tap/session.jsonl")), &[]);
    assert_eq!(e["calls"].as_array().unwrap().len(), 2);
    assert_the_anthropic_session(&e, 1);
    assert_eq!(e["skipped_count"], 1);
    assert_eq!(
        e["skipped"][0]["reason"],
        "HTTP 529 response: no usage billed"
    );
    for (file, model, prompt) in [
        ("claude-tap/openai_responses_trace.jsonl", "gpt-5.4", 500),
        (
            "claude-tap/codex_ws_multi_response_trace.jsonl",
            "gpt-5.5",
            30,
        ),
    ] {
        let e = explain(Path::new(&fixture(file)), &[]);
        assert_eq!(e["calls"].as_array().unwrap().len(), 1, "{file}");
        let c = &e["calls"][0];
        assert_eq!(c["api"], "openai-responses", "{file}");
        assert_eq!(c["model"], model, "{file}");
        assert_eq!(c["prompt_tokens"], prompt, "{file}");
        // Below the 1,024-token minimum: nothing cached, predicted as billed.
        assert_eq!(
            buckets(&e, 1, "uncached_tokens"),
            (prompt, prompt),
            "{file}"
        );
        assert_eq!(c["agrees"], true, "{file}");
    }
}

/// A folder holding a HAR and a claude-tap export: both formats recognised, every call and
/// skipped record of both, each session its own conversation.
#[test]
fn a_folder_of_a_har_and_a_claude_tap_export() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["har/session.har", "claude-tap/session.jsonl"] {
        let name = Path::new(f).file_name().unwrap();
        std::fs::copy(fixture(f), dir.path().join(name)).unwrap();
    }
    let e = explain(dir.path(), &[]);
    assert_eq!(e["files"].as_array().unwrap().len(), 2);
    assert_eq!(e["calls"].as_array().unwrap().len(), 5);
    assert_eq!(e["conversations"], 3);
    assert_eq!(e["skipped_count"], 3);
    assert_eq!(e["unexplained_calls"], 0);
    assert_the_anthropic_session(&e, 1);
    assert_the_anthropic_session(&e, 4);
    assert!(e["calls"][3]["at"]
        .as_str()
        .unwrap()
        .ends_with("session.jsonl: line 1"));
}

/// The records of a JSON Lines trace as a HAR 1.2 archive, pretty-printed as proxies save it: each
/// request body as `postData.text` (its conversation in Claude Code's `metadata.user_id`, as HAR
/// records no session), each response as `content.text`.
fn har_of_jsonl(jsonl: &Path, har: &Path) {
    let text = std::fs::read_to_string(jsonl).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let rec: Value = serde_json::from_str(line).unwrap();
            let mut request = rec["request"].clone();
            let session = rec["session"].as_str().expect("a session per record");
            request["metadata"] =
                serde_json::json!({"user_id": format!("user_0_account_1_session_{session}")});
            let (request, response) = (request.to_string(), rec["response"].to_string());
            serde_json::json!({
                "startedDateTime": rec["time"], "time": 812.5,
                "request": {"method": "POST", "url": rec["url"], "httpVersion": "HTTP/2",
                            "headers": [{"name": "x-note", "value": "a \"quoted\" {[value]}\\"}],
                            "postData": {"mimeType": "application/json", "text": request}},
                "response": {"status": 200, "statusText": "OK",
                             "content": {"size": response.len(), "mimeType": "application/json",
                                         "text": response}},
                "cache": {}, "timings": {"send": 0.1, "wait": 800.0, "receive": 12.4}
            })
        })
        .collect();
    let archive = serde_json::json!({"log": {"version": "1.2",
        "creator": {"name": "test", "version": "1"}, "pages": [], "entries": entries}});
    std::fs::write(har, serde_json::to_string_pretty(&archive).unwrap()).unwrap();
}

/// An explanation without what names the file (`files`, `bytes`, and `at` wherever it is): what is
/// left must not depend on the trace's format.
fn without_places(mut e: Value) -> Value {
    fn drop_at(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("at");
                o.values_mut().for_each(drop_at);
            }
            Value::Array(a) => a.iter_mut().for_each(drop_at),
            _ => {}
        }
    }
    let obj = e.as_object_mut().unwrap();
    obj.remove("files");
    obj.remove("bytes");
    drop_at(&mut e);
    e
}

/// The same exchanges read from a HAR (through its entry scanner) and from pcsim's JSON Lines are
/// explained alike, call by call, cause by cause, fix by fix: on the fixture trace and on traces
/// with a timestamp in the system prompt, a re-ordered tool list and an OpenAI model.
#[test]
fn the_same_exchanges_as_a_har_explain_as_their_json_lines_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut traces = vec![PathBuf::from(fixture("trace.jsonl"))];
    traces.push(trace(dir.path(), None, "claude-opus-4.8", &["timestamp"]).0);
    traces.push(
        trace(
            dir.path(),
            Some(&fixture("reorder.toml")),
            "claude-opus-4.8",
            &[],
        )
        .0,
    );
    traces.push(trace(dir.path(), None, "gpt-5.6", &["edit@3"]).0);
    for (i, jsonl) in traces.iter().enumerate() {
        let har = dir.path().join(format!("same-{i}.har"));
        har_of_jsonl(jsonl, &har);
        let from_lines = explain(jsonl, &[]);
        let from_har = explain(&har, &[]);
        let calls = from_har["calls"].as_array().unwrap();
        assert!(calls.len() >= 5, "{}", jsonl.display());
        assert_eq!(from_har["skipped_count"], 0, "{}", jsonl.display());
        assert!(calls[1]["at"].as_str().unwrap().ends_with(": entry 2"));
        assert_eq!(
            without_places(from_har),
            without_places(from_lines),
            "{}",
            jsonl.display()
        );
    }
}

/// The fix named `name` of an explanation.
fn fix_of<'e>(e: &'e Value, name: &str) -> &'e Value {
    e["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fix"] == name)
        .unwrap_or_else(|| panic!("no fix {name}"))
}

/// The input dollars a trace's Anthropic responses billed, from their usage and the catalog's
/// prices of `model` (uncached at the input price, writes at the 5-minute and 1-hour tiers'
/// multipliers, reads at the read multiplier).
fn anthropic_trace_input_usd(path: &Path, model: &str) -> f64 {
    let m = catalog_model(model);
    let input = m["input_usd_per_mtok"]["value"].as_f64().unwrap() / 1e6;
    let rules = &m["cache"]["explicit"];
    let mult = |v: &Value| v["value"].as_f64().unwrap();
    let (w5, w1h, read) = (
        mult(&rules["tiers"]["5m"]["write_multiplier"]),
        mult(&rules["tiers"]["1h"]["write_multiplier"]),
        mult(&rules["read_multiplier"]),
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut usd = 0.0;
    for line in text.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        let u = &rec["response"]["usage"];
        let n = |v: &Value| v.as_u64().unwrap() as f64;
        usd += (n(&u["input_tokens"])
            + n(&u["cache_creation"]["ephemeral_5m_input_tokens"]) * w5
            + n(&u["cache_creation"]["ephemeral_1h_input_tokens"]) * w1h
            + n(&u["cache_read_input_tokens"]) * read)
            * input;
    }
    usd
}

/// The tool names a trace's requests list (first request) and those its answers call (every
/// `tool_use` of every request's messages and response).
fn tools_listed_and_called(path: &Path) -> (Vec<String>, std::collections::BTreeSet<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut listed = Vec::new();
    let mut called = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let rec: Value = serde_json::from_str(line).unwrap();
        if i == 0 {
            for t in rec["request"]["tools"].as_array().unwrap() {
                listed.push(t["name"].as_str().unwrap().to_string());
            }
        }
        let parts = rec["request"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter())
            .chain(rec["response"]["content"].as_array().unwrap().iter());
        for p in parts.filter(|p| p["type"] == "tool_use") {
            called.insert(p["name"].as_str().unwrap().to_string());
        }
    }
    (listed, called)
}

/// 40 tools, of which the answers call 3 (`tool-calls=3`): dropping the 37 others saves exactly
/// what the same session sent with only those 3 tools (tools-3.toml, its own trace) was billed
/// less, both read from the traces' usage at the catalog's prices. On that 3-tool trace every
/// tool is called and the fix saves nothing.
#[test]
fn dropping_the_tools_a_conversation_never_calls() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let model = "claude-opus-4.8";
    let (a, _) = trace(
        dir_a.path(),
        Some(&fixture("tools-40.toml")),
        model,
        &["tool-calls=3"],
    );
    let (b, _) = trace(
        dir_b.path(),
        Some(&fixture("tools-3.toml")),
        model,
        &["tool-calls=3"],
    );
    // The traces are what the test needs: 40 tools listed, 3 called; the same 3 in the other.
    let (listed_a, called_a) = tools_listed_and_called(&a);
    let (listed_b, called_b) = tools_listed_and_called(&b);
    assert_eq!(listed_a.len(), 40);
    assert_eq!(called_a.len(), 3, "{called_a:?}");
    assert_eq!(called_a, called_b);
    assert_eq!(
        listed_b,
        listed_a
            .iter()
            .filter(|t| called_a.contains(*t))
            .cloned()
            .collect::<Vec<_>>()
    );
    let e = explain(&a, &[]);
    assert_eq!(e["disagreeing_calls"], 0, "{}", e["summary"]);
    assert_eq!(e["unexplained_calls"], 0, "{}", e["summary"]);
    let fix = fix_of(&e, "drop_unused_tools");
    assert_eq!(fix["simulated"], true, "{fix}");
    let (usd_a, usd_b) = (
        anthropic_trace_input_usd(&a, model),
        anthropic_trace_input_usd(&b, model),
    );
    let predicted = fix["predicted_usd"].as_f64().unwrap();
    let saving = fix["saving_usd"].as_f64().unwrap();
    assert!((predicted - usd_b).abs() < 1e-9, "{predicted} vs {usd_b}");
    assert!(
        (saving - (usd_a - usd_b)).abs() < 1e-9,
        "{saving} vs {}",
        usd_a - usd_b
    );
    assert!(saving > 0.01, "{saving}");
    // Every tool called: nothing to drop.
    let fix_b = explain(&b, &[])["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fix"] == "drop_unused_tools")
        .unwrap()
        .clone();
    assert_eq!(fix_b["simulated"], true);
    assert_eq!(fix_b["saving_usd"].as_f64().unwrap(), 0.0, "{fix_b}");
}

/// Eight conversations on one prefix at 60 requests a minute, no `prompt_cache_key`, on a model
/// that routes about 15 a minute of a prefix to one machine (gpt-4.1): the trace is billed as `run`
/// billed it, overflow included (the misses are `provider_miss`, naming the machine), and a key
/// per conversation saves exactly what `run` bills less for the same workload with a key per
/// session (shared-prefix-keyed.toml). One conversation at 3 a minute: the key saves nothing.
#[test]
fn a_prompt_cache_key_per_conversation_on_a_busy_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let model = "gpt-4.1";
    let (path, run) = trace(dir.path(), Some(&fixture("shared-prefix.toml")), model, &[]);
    let keyed_scenario = fixture("shared-prefix-keyed.toml");
    let keyed = json_of(&[
        "run",
        keyed_scenario.as_str(),
        "--model",
        model,
        "--strategy",
        "cached",
        "--format",
        "json",
        "-q",
    ]);
    let total = |r: &Value| r["results"][0]["total_usd"].as_f64().unwrap();
    let e = explain(&path, &[]);
    assert_eq!(e["conversations"], 8);
    assert_eq!(e["disagreeing_calls"], 0, "{}", e["summary"]);
    assert_eq!(e["unexplained_calls"], 0, "{}", e["summary"]);
    assert!((e["billed_usd"].as_f64().unwrap() - total(&run)).abs() < 1e-9);
    let overflowed: Vec<String> = e["calls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["causes"].as_array().unwrap().iter())
        .filter(|c| c["cause"] == "provider_miss")
        .map(|c| c["detail"].as_str().unwrap().to_string())
        .collect();
    assert!(!overflowed.is_empty());
    assert!(
        overflowed
            .iter()
            .all(|d| d.contains("; routed to machine ")),
        "{overflowed:?}"
    );
    let fix = fix_of(&e, "prompt_cache_key");
    assert_eq!(fix["simulated"], true, "{fix}");
    let saving = fix["saving_usd"].as_f64().unwrap();
    // Output dollars are the same in both runs: the difference is the input's.
    let by_run = total(&run) - total(&keyed);
    assert!((saving - by_run).abs() < 1e-9, "{saving} vs {by_run}");
    assert!(saving > 0.01, "{saving}");
    // One conversation, 3 requests a minute: under the rate, the key changes nothing.
    let dir1 = tempfile::tempdir().unwrap();
    let (one, _) = trace(dir1.path(), Some(&fixture("base.toml")), model, &[]);
    let e1 = explain(&one, &[]);
    let fix1 = fix_of(&e1, "prompt_cache_key");
    assert_eq!(fix1["simulated"], true);
    assert_eq!(fix1["saving_usd"].as_f64().unwrap(), 0.0, "{fix1}");
}
