//! Issue 27: every usage log read right or refused loudly. Each call at its own model's prices; a
//! model outside the catalog named with its usage and left out (or priced by an explicit catalog
//! entry); folders keep every file's warnings and count every call. Every expected total is computed
//! here by hand from the rows and the catalog's prices.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{catalog_model, pcsim, refused, replay_json, root};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/usage").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Dollars of logged buckets at a catalog model's prices: uncached at the base rate, 5-minute
/// writes, 1-hour writes and reads at the model's multipliers, output at the output rate.
struct Rates {
    input: f64,
    output: f64,
    w5: f64,
    w1h: f64,
    read: f64,
}

impl Rates {
    fn of(model: &Value) -> Rates {
        let e = &model["cache"]["explicit"];
        let num = |v: &Value| v["value"].as_f64().unwrap();
        // A model without a 5m or 1h tier: NaN, so a test that bills such writes fails loudly.
        let tier = |t: &str| {
            e["tiers"][t]["write_multiplier"]["value"]
                .as_f64()
                .unwrap_or(f64::NAN)
        };
        Rates {
            input: num(&model["input_usd_per_mtok"]),
            output: num(&model["output_usd_per_mtok"]),
            w5: tier("5m"),
            w1h: tier("1h"),
            read: num(&e["read_multiplier"]),
        }
    }

    fn catalog(id: &str) -> Rates {
        Rates::of(&catalog_model(id))
    }

    /// (uncached, 5m written, 1h written, read, output) tokens.
    fn usd(&self, (u, w5, w1h, r, o): (u64, u64, u64, u64, u64)) -> f64 {
        let mut weighted = u as f64 + r as f64 * self.read;
        // Only the tiers a row writes to are priced (a model may lack one).
        if w5 > 0 {
            weighted += w5 as f64 * self.w5;
        }
        if w1h > 0 {
            weighted += w1h as f64 * self.w1h;
        }
        weighted * self.input / 1e6 + o as f64 * self.output / 1e6
    }
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() < 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `claude_code_model_switch.jsonl`: three calls on `claude-sonnet-4-20250514` (not in the catalog),
/// then `/model opus` and two calls on Opus 4.8. The Opus rows: (6, 13,800 written, 0 read, 300 out)
/// and (2, 700 written, 13,800 read, 120 out).
fn opus_rows() -> [(u64, u64, u64, u64, u64); 2] {
    [(6, 13_800, 0, 0, 300), (2, 700, 0, 13_800, 120)]
}

#[test]
fn a_model_outside_the_catalog_is_named_and_left_out_never_priced_at_another() {
    let (v, err) = replay_json(&[s(&fixture("claude_code_model_switch.jsonl"))]);
    let opus = Rates::catalog("claude-opus-4.8");
    let want: f64 = opus_rows().iter().map(|r| opus.usd(*r)).sum();
    let r = &v["results"][0];
    assert_eq!(r["model"], "claude-opus-4.8");
    assert_eq!(r["calls_total"], 2);
    close(f(&r["logged"]["cost_usd"]), want);
    close(f(&v["logged_own_models_usd"]), want);
    // The Sonnet 4 calls: named with their count and the usage left out of the totals.
    // Prompts 12,003 + 12,805 + 13,304 = 38,112 tokens; outputs 150 + 220 + 90 = 460.
    let u = &v["unpriced_models"][0];
    assert_eq!(u["model"], "claude-sonnet-4-20250514");
    assert_eq!(u["calls"], 3);
    assert_eq!(u["prompt_tokens"], 38_112);
    assert_eq!(u["output_tokens"], 460);
    assert_eq!(u["cache_read_tokens"], 24_800);
    assert!(
        err.contains(
            "`claude-sonnet-4-20250514` (3 calls, 38112 prompt tokens, 460 output tokens)"
        ) && err.contains("left out of the totals")
            && err.contains("--catalog"),
        "{err}"
    );
    // Every call is counted (5 read, 2 priced) and the one session is one conversation.
    assert_eq!(v["calls_logged"], 5);
    assert_eq!(v["calls_priced"], 2);
    assert_eq!(v["conversations"], 1);
    // The table says so too, under the totals.
    let out = pcsim()
        .args(["replay", s(&fixture("claude_code_model_switch.jsonl"))])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("not in these totals") && text.contains("claude-sonnet-4-20250514"),
        "{text}"
    );
}

/// The `[[model]]` block of `id` in the built-in catalog, renamed to `new_id` (a catalog overlay
/// entry for a model the catalog does not have).
fn renamed_model_block(id: &str, new_id: &str) -> String {
    let text = std::fs::read_to_string(root().join("models.toml")).unwrap();
    let at = text.find(&format!("id = \"{id}\"")).unwrap();
    let start = text[..at].rfind("[[model]]").unwrap();
    let end = text[at..].find("\n[[").map_or(text.len(), |e| at + e + 1);
    text[start..end]
        .replacen(&format!("id = \"{id}\""), &format!("id = \"{new_id}\""), 1)
        .replacen("name = \"", "name = \"Overlay of ", 1)
}

#[test]
fn a_catalog_entry_prices_the_model_and_price_sets_its_rates() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("sonnet4.toml");
    std::fs::write(
        &overlay,
        renamed_model_block("claude-sonnet-4.6", "claude-sonnet-4"),
    )
    .unwrap();
    let log = fixture("claude_code_model_switch.jsonl");
    let sonnet_rows = [
        (3, 12_000, 0, 0, 150),
        (5, 800, 0, 12_000, 220),
        (4, 500, 0, 12_800, 90),
    ];
    let opus = Rates::catalog("claude-opus-4.8");
    let opus_usd: f64 = opus_rows().iter().map(|r| opus.usd(*r)).sum();
    // The overlay's model has Sonnet 4.6's rates.
    let sonnet = Rates::catalog("claude-sonnet-4.6");
    let (v, err) = replay_json(&["--catalog", s(&overlay), s(&log)]);
    assert!(!err.contains("left out"), "{err}");
    assert_eq!(v["unpriced_models"].as_array().unwrap().len(), 0);
    let want = opus_usd + sonnet_rows.iter().map(|r| sonnet.usd(*r)).sum::<f64>();
    close(f(&v["results"][0]["logged"]["cost_usd"]), want);
    assert_eq!(v["results"][0]["calls_total"], 5);
    // --price sets its input and output rates; the cache multipliers stay the entry's.
    let (v, _) = replay_json(&[
        "--catalog",
        s(&overlay),
        "--price",
        "claude-sonnet-4=2,10",
        s(&log),
    ]);
    let priced = Rates {
        input: 2.0,
        output: 10.0,
        ..sonnet
    };
    let want = opus_usd + sonnet_rows.iter().map(|r| priced.usd(*r)).sum::<f64>();
    close(f(&v["results"][0]["logged"]["cost_usd"]), want);
}

#[test]
fn a_log_with_no_model_the_catalog_prices_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.jsonl");
    let text: String = std::fs::read_to_string(fixture("claude_code_model_switch.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("claude-opus-4-8"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&p, text).unwrap();
    let err = refused(pcsim().args(["replay", s(&p)]));
    assert!(
        err.contains("old.jsonl")
            && err.contains("`claude-sonnet-4-20250514` (3 calls")
            && err.contains("--model"),
        "{err}"
    );
    // --model replays every call on a catalog model, as asked.
    let (v, _) = replay_json(&[s(&p), "--model", "claude-sonnet-4.6"]);
    assert_eq!(v["results"][0]["calls_total"], 3);
}

/// A folder: the model-switch session, the Claude Code session (Opus 4.8 main agent, a Haiku 4.5
/// sub-agent), a file wholly on an unknown model, and two files with an unreadable row each.
fn folder(dir: &Path) {
    let sub = dir.join("projects/ledger");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(
        fixture("claude_code_model_switch.jsonl"),
        sub.join("a-switch.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixture("claude_code_session.jsonl"),
        sub.join("b-session.jsonl"),
    )
    .unwrap();
    let line = |sess: &str, t: &str, m: &str, u: u64, o: u64| {
        format!("{{\"session_id\":\"{sess}\",\"timestamp\":\"{t}\",\"model\":\"{m}\",\"usage\":{{\"input_tokens\":{u},\"output_tokens\":{o}}}}}\n")
    };
    // Two sessions on Claude 3 Opus, which the catalog does not have.
    std::fs::write(
        sub.join("c-old.jsonl"),
        line(
            "o1",
            "2025-02-01T10:00:00Z",
            "claude-3-opus-20240229",
            1000,
            10,
        ) + &line(
            "o2",
            "2025-02-02T10:00:00Z",
            "claude-3-opus-20240229",
            2000,
            20,
        ),
    )
    .unwrap();
    // An unreadable row in each of two files.
    std::fs::write(
        sub.join("d-bad.jsonl"),
        line("d", "2026-01-05T10:00:00Z", "claude-haiku-4-5", 3000, 30) + "{not json\n",
    )
    .unwrap();
    std::fs::write(
        sub.join("e-bad.jsonl"),
        line("e", "2026-01-06T10:00:00Z", "claude-haiku-4-5", 4000, 40)
            + "{\"usage\":{\"input_tokens\":-1}}\n",
    )
    .unwrap();
}

#[test]
fn a_folder_keeps_every_warning_counts_every_conversation_and_tallies_every_call() {
    let dir = tempfile::tempdir().unwrap();
    folder(dir.path());
    let (v, err) = replay_json(&[s(dir.path())]);
    assert_eq!(v["files"], 5);
    assert_eq!(v["files_skipped"].as_array().unwrap().len(), 0);
    // Calls: 5 + 8 + 2 + 1 + 1; conversations: 1 + 2 (main agent, sub-agent) + 2 + 1 + 1.
    assert_eq!(v["calls_logged"], 17);
    assert_eq!(v["conversations"], 7);
    // Priced: all but the 3 Sonnet 4 calls and the 2 Claude 3 Opus calls.
    assert_eq!(v["calls_priced"], 12);
    let r = &v["results"][0];
    assert_eq!(r["calls_total"], 12);
    // The by-day, by-session, by-project and by-model tables each cover every priced call.
    for by in ["day", "session", "project", "model"] {
        let n: u64 = r["totals_by"][by]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["calls"].as_u64().unwrap())
            .sum();
        assert_eq!(n, 12, "totals by {by}");
    }
    // Every file's warning is kept: the switch file mixes models, both bad files are named.
    assert!(err.contains("a-switch.jsonl mixes models"), "{err}");
    assert!(
        err.contains("d-bad.jsonl: 1 record could not be read")
            && err.contains("e-bad.jsonl: 1 record could not be read"),
        "{err}"
    );
    let unpriced: Vec<(String, u64)> = v["unpriced_models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["model"].as_str().unwrap().to_string(),
                u["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        unpriced,
        [
            ("claude-sonnet-4-20250514".to_string(), 3),
            ("claude-3-opus-20240229".to_string(), 2)
        ]
    );
    // The folder's logged total is the sum of its files' at their own models: the Haiku rows by
    // hand, the other files as replayed alone.
    let haiku = Rates::catalog("claude-haiku-4.5");
    let mut want = haiku.usd((3000, 0, 0, 0, 30)) + haiku.usd((4000, 0, 0, 0, 40));
    for f_ in ["a-switch.jsonl", "b-session.jsonl"] {
        let (one, _) = replay_json(&[s(&dir.path().join("projects/ledger").join(f_))]);
        want += f(&one["results"][0]["logged"]["cost_usd"]);
    }
    close(f(&r["logged"]["cost_usd"]), want);
    close(f(&v["logged_own_models_usd"]), want);
}

/// Logged (uncached, written, read, output) tokens of one call.
type Row = (u64, u64, u64, u64);

fn logged_rows(v: &Value) -> Vec<Row> {
    v["results"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let l = &c["logged"];
            (
                l["uncached_tokens"].as_u64().unwrap(),
                l["cache_write_tokens"].as_u64().unwrap(),
                l["cache_read_tokens"].as_u64().unwrap(),
                c["output_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn litellm_spendlogs_rows_keep_their_cache_counts_whether_metadata_is_an_object_or_a_string() {
    let (v, err) = replay_json(&[s(&fixture("litellm_spendlogs.jsonl"))]);
    // Rows 1-2: the database row (metadata an object); rows 3-5: the PubSub payload (metadata a
    // JSON string); row 4 failed. Row 5 has no usage_object: only its total prompt is known.
    assert_eq!(v["failed_calls"], 1);
    assert_eq!(v["cache_split_unknown_calls"], 1);
    assert!(
        err.contains("1 call gives only the total prompt tokens"),
        "{err}"
    );
    assert_eq!(v["unknown_fields"].as_object().unwrap().len(), 0);
    // prompt_tokens = uncached + written + read (LiteLLM's normalised Anthropic usage).
    assert_eq!(
        logged_rows(&v),
        [
            (10, 24_000, 0, 400),
            (20, 1000, 24_000, 300),
            (30, 1500, 25_000, 250),
            (26_800, 0, 0, 120)
        ]
    );
    let sonnet = Rates::catalog("claude-sonnet-4.5");
    let want = sonnet.usd((10, 24_000, 0, 0, 400))
        + sonnet.usd((20, 1000, 0, 24_000, 300))
        + sonnet.usd((30, 1500, 0, 25_000, 250))
        + sonnet.usd((26_800, 0, 0, 0, 120));
    assert_eq!(v["results"][0]["model"], "claude-sonnet-4.5");
    close(f(&v["results"][0]["logged"]["cost_usd"]), want);
    // The session column is the session.
    assert_eq!(
        v["results"][0]["totals_by"]["session"][0]["key"],
        "sess-ledger-01"
    );
}

#[test]
fn codex_rollouts_with_only_running_totals_are_differenced() {
    let (v, _) = replay_json(&[s(&fixture("codex_rollout_cumulative.jsonl"))]);
    // Running totals (input, cached, output): (9,000, 0, 400), (19,200, 8,960, 750),
    // (30,200, 19,072, 950), each repeated once or not: the calls are their differences.
    assert_eq!(v["calls_logged"], 3);
    assert_eq!(v["duplicates_merged"], 2);
    assert_eq!(
        logged_rows(&v),
        [
            (9000, 0, 0, 400),
            (10_200 - 8960, 0, 8960, 350),
            (11_000 - 10_112, 0, 10_112, 200)
        ]
    );
    let gpt = Rates::catalog("gpt-5.6");
    let want = gpt.usd((9000, 0, 0, 0, 400))
        + gpt.usd((1240, 0, 0, 8960, 350))
        + gpt.usd((888, 0, 0, 10_112, 200));
    close(f(&v["results"][0]["logged"]["cost_usd"]), want);
}

#[test]
fn fit_on_a_folder_skips_an_unreadable_file_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::copy(
        fixture("codex_rollout_cumulative.jsonl"),
        logs.join("rollout-a.jsonl"),
    )
    .unwrap();
    std::fs::copy(fixture("two_sessions.jsonl"), logs.join("b.jsonl")).unwrap();
    std::fs::write(logs.join("c-broken.jsonl"), "not a log\n").unwrap();
    let out = dir.path().join("fitted.toml");
    let a = pcsim()
        .args(["fit", s(&logs), "--out", s(&out), "--model", "gpt-5.6"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("warning: skipped") && err.contains("c-broken.jsonl"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    // 3 Codex calls and 9 gateway calls are fitted.
    assert!(text.contains(": 12 calls"), "{text}");
    // A single unreadable log is still the error.
    let err = refused(pcsim().args([
        "fit",
        s(&logs.join("c-broken.jsonl")),
        "--out",
        s(&out),
        "--model",
        "gpt-5.6",
    ]));
    assert!(err.contains("c-broken.jsonl"), "{err}");
}

fn predicted_rows(v: &Value) -> Vec<(u64, u64, u64)> {
    v["results"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let p = &c["predicted"];
            (
                p["uncached_tokens"].as_u64().unwrap(),
                p["cache_write_tokens"].as_u64().unwrap(),
                p["cache_read_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `claude_code_progress_1h.jsonl`: an Opus 4.8 main agent that writes only 1-hour entries, its
/// calls 10 minutes apart (past a 5-minute lifetime); a Haiku 4.5 sub-agent whose two calls exist
/// only as `progress` lines (`data.message.message.usage`), the first relayed twice.
#[test]
fn replay_honours_the_logged_one_hour_lifetime_and_reads_progress_usage() {
    let (v, err) = replay_json(&[s(&fixture("claude_code_progress_1h.jsonl"))]);
    assert_eq!(v["calls_logged"], 5);
    assert_eq!(v["sidechain_calls"], 2);
    assert_eq!(v["duplicates_merged"], 1);
    assert!(err.contains("2 sub-agent (sidechain) calls"), "{err}");
    // Log order: main call 1, the sub-agent's two calls, main calls 2 and 3.
    assert_eq!(
        logged_rows(&v),
        [
            (3, 20_000, 0, 200),
            (5, 8000, 0, 120),
            (4, 600, 8000, 90),
            (2, 1500, 20_000, 150),
            (2, 900, 21_500, 100)
        ]
    );
    // The logged total by hand: the main agent at Opus 4.8 with 1-hour writes, the sub-agent at
    // Haiku 4.5 with 5-minute writes.
    let (opus, haiku) = (
        Rates::catalog("claude-opus-4.8"),
        Rates::catalog("claude-haiku-4.5"),
    );
    let logged = opus.usd((3, 0, 20_000, 0, 200))
        + opus.usd((2, 0, 1500, 20_000, 150))
        + opus.usd((2, 0, 900, 21_500, 100))
        + haiku.usd((5, 8000, 0, 0, 120))
        + haiku.usd((4, 600, 0, 8000, 90));
    close(f(&v["results"][0]["logged"]["cost_usd"]), logged);
    // The replay writes where the log wrote, with the log's lifetimes: the main agent's prompts of
    // 20,003, 21,502 and 22,402 tokens are each read 10 minutes later from a 1-hour entry (with
    // 5-minute entries calls 4 and 5 would write their whole prompts again); the sub-agent's
    // 8,005 and 8,604 at 5 minutes.
    assert_eq!(
        predicted_rows(&v),
        [
            (0, 20_003, 0),
            (0, 8005, 0),
            (0, 599, 8005),
            (0, 1499, 20_003),
            (0, 900, 21_502)
        ]
    );
    let tiers = &v["results"][0]["predicted_write_tokens_by_tier"];
    assert_eq!(tiers["1h"], 20_003 + 1499 + 900);
    assert_eq!(tiers["5m"], 8005 + 599);
    let predicted = opus.usd((0, 0, 20_003, 0, 200))
        + opus.usd((0, 0, 1499, 20_003, 150))
        + opus.usd((0, 0, 900, 21_502, 100))
        + haiku.usd((0, 8005, 0, 0, 120))
        + haiku.usd((0, 599, 0, 8005, 90));
    close(f(&v["results"][0]["predicted"]["cost_usd"]), predicted);
    // A tier the strategy names is kept: at 5 minutes, the 10-minute pauses lose the main cache.
    let (v, _) = replay_json(&[
        s(&fixture("claude_code_progress_1h.jsonl")),
        "--strategy",
        "explicit:last@5m",
    ]);
    let p = predicted_rows(&v);
    assert_eq!((p[3], p[4]), ((0, 21_502, 0), (0, 22_402, 0)));
}

/// The logged buckets of every call (uncached, written, read, output) and the logged dollars.
fn read_fixture(name: &str) -> (Vec<Row>, f64, Value, String) {
    let (v, err) = replay_json(&[s(&fixture(name))]);
    (
        logged_rows(&v),
        f(&v["results"][0]["logged"]["cost_usd"]),
        v,
        err,
    )
}

#[test]
fn opentelemetry_genai_spans_are_read_from_otlp_json() {
    let (rows, usd, v, _) = read_fixture("otel_genai_spans.jsonl");
    // Three chat spans; the agent span (which sums them) and the tool span are not calls.
    // input_tokens counts the cached tokens: 12,010 = 10 + 12,000 written; 12,520 = 20 + 500 +
    // 12,000 read; the older spelling: prompt 13,000 = 20 + 480 + 12,500.
    assert_eq!(
        rows,
        [
            (10, 12_000, 0, 300),
            (20, 500, 12_000, 200),
            (20, 480, 12_500, 150)
        ]
    );
    assert_eq!(v["records_without_usage"], 2);
    let sonnet = Rates::catalog("claude-sonnet-4.5");
    let want = sonnet.usd((10, 12_000, 0, 0, 300))
        + sonnet.usd((20, 500, 0, 12_000, 200))
        + sonnet.usd((20, 480, 0, 12_500, 150));
    close(usd, want);
    let r = &v["results"][0];
    assert_eq!(r["totals_by"]["session"][0]["key"], "conv-ledger-7");
    assert_eq!(r["totals_by"]["project"][0]["key"], "ledger-agent");
    // startTimeUnixNano: the spans start 1 s, 10 s and 20 s after the agent's start.
    let t: Vec<f64> = r["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| f(&c["time_s"]))
        .collect();
    assert_eq!(t, [0.0, 9.0, 19.0]);
}

#[test]
fn langfuse_observations_keep_their_cache_buckets_and_stated_costs() {
    let (rows, usd, v, err) = read_fixture("langfuse_observations.json");
    // usageDetails buckets are disjoint: input is the uncached part; reasoning is output.
    assert_eq!(
        rows,
        [
            (8, 15_000, 0, 410),
            (12, 900, 15_000, 230),
            (1200, 0, 6400, 180 + 64)
        ]
    );
    assert!(!err.contains("unknown"), "{err}");
    let (sonnet, gpt) = (
        Rates::catalog("claude-sonnet-4.5"),
        Rates::catalog("gpt-5.6"),
    );
    let want = sonnet.usd((8, 15_000, 0, 0, 410))
        + sonnet.usd((12, 900, 0, 15_000, 230))
        + gpt.usd((1200, 0, 0, 6400, 244));
    close(usd, want);
    // costDetails.total of each observation, beside pcsim's repricing of the same calls.
    let st = &v["stated_cost"];
    assert_eq!(st["calls"], 3);
    close(f(&st["stated_usd"]), 0.062424 + 0.011361 + 0.01652);
    close(f(&st["repriced_usd"]), want);
    close(f(&st["gap_usd"]), want - (0.062424 + 0.011361 + 0.01652));
}

#[test]
fn helicone_exports_keep_the_cache_fields() {
    let (rows, usd, v, err) = read_fixture("helicone_export.json");
    // Anthropic rows: prompt_tokens is the uncached input; OpenAI's holds the cached tokens.
    assert_eq!(
        rows,
        [
            (6, 9000, 0, 250),
            (9, 700, 9000, 180),
            (5200 - 4096, 0, 4096, 90)
        ]
    );
    assert!(!err.contains("unknown"), "{err}");
    assert_eq!(v["unknown_fields"].as_object().unwrap().len(), 0);
    let (sonnet, gpt) = (
        Rates::catalog("claude-sonnet-4.5"),
        Rates::catalog("gpt-5.6"),
    );
    let want = sonnet.usd((6, 9000, 0, 0, 250))
        + sonnet.usd((9, 700, 0, 9000, 180))
        + gpt.usd((1104, 0, 0, 4096, 90));
    close(usd, want);
    assert_eq!(v["results"][0]["totals_by"]["session"][0]["key"], "sess-h1");
    close(
        f(&v["stated_cost"]["stated_usd"]),
        0.038768 + 0.008952 + 0.010268,
    );
}

#[test]
fn gemini_cli_chat_files_are_read() {
    let (rows, usd, v, _) = read_fixture("gemini_cli_chat.json");
    // input includes the cached tokens; tool-use prompt tokens are input, thoughts output.
    assert_eq!(
        rows,
        [
            (9800, 0, 0, 320 + 410),
            (11_200 + 64 - 9100, 0, 9100, 150 + 220)
        ]
    );
    assert_eq!(v["results"][0]["model"], "gemini-2.5-pro");
    let m = catalog_model("gemini-2.5-pro");
    let num = |x: &Value| f(&x["value"]);
    let (inp, out, read) = (
        num(&m["input_usd_per_mtok"]),
        num(&m["output_usd_per_mtok"]),
        num(&m["cache"]["explicit"]["read_multiplier"]),
    );
    let want = ((9800.0 + 2164.0 + 9100.0 * read) * inp + (730.0 + 370.0) * out) / 1e6;
    close(usd, want);
}

#[test]
fn opencode_exports_and_message_files_are_read_with_their_costs() {
    let sonnet = Rates::catalog("claude-sonnet-4.5");
    let (rows, usd, v, _) = read_fixture("opencode_export.json");
    // Buckets as OpenCode prices them: input uncached, cache.write, cache.read, output + reasoning.
    assert_eq!(rows, [(10, 14_000, 0, 280), (7, 600, 14_000, 190 + 40)]);
    let want = sonnet.usd((10, 14_000, 0, 0, 280)) + sonnet.usd((7, 600, 0, 14_000, 230));
    close(usd, want);
    assert_eq!(v["records_without_usage"], 2);
    let r = &v["results"][0];
    assert_eq!(r["totals_by"]["session"][0]["key"], "ses_5e2b7c9d1a");
    assert_eq!(r["totals_by"]["project"][0]["key"], "/home/dev/ledger");
    close(f(&v["stated_cost"]["stated_usd"]), 0.05673 + 0.009621);
    let (rows, usd, _, _) = read_fixture("opencode_message.json");
    assert_eq!(rows, [(5, 350, 14_600, 120)]);
    close(usd, sonnet.usd((5, 350, 0, 14_600, 120)));
}

#[test]
fn a_stated_cost_is_shown_beside_the_repricing_with_the_gap() {
    let log = fixture("litellm_spendlogs.jsonl");
    let (v, _) = replay_json(&[s(&log)]);
    // `spend` of the four successful rows.
    let stated = 0.09603 + 0.01551 + 0.016965 + 0.0098;
    let st = &v["stated_cost"];
    assert_eq!(st["calls"], 4);
    close(f(&st["stated_usd"]), stated);
    let repriced = f(&v["results"][0]["logged"]["cost_usd"]);
    close(f(&st["repriced_usd"]), repriced);
    close(f(&st["gap_percent"]), (repriced - stated) / stated * 100.0);
    let out = pcsim().args(["replay", s(&log)]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("the logs state $0.138305 for 4 of these calls"),
        "{text}"
    );
}

#[test]
fn a_scenario_draws_each_session_length_from_an_empirical_list() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("lengths.toml");
    std::fs::write(
        &sc,
        "models = [\"claude-opus-4.8\"]\nstrategies = [\"cached\"]\n[session]\ncalls = { dist = \"empirical\", values = [1, 4, 30] }\nsystem_tokens = 3000\n[sessions]\ncount = 60\nevery_seconds = 600\n",
    )
    .unwrap();
    let log = dir.path().join("run.jsonl");
    pcsim()
        .args(["run", s(&sc), "--usage-log", s(&log)])
        .assert()
        .success();
    let mut per_session: std::collections::BTreeMap<String, usize> = Default::default();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        *per_session
            .entry(v["session_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    assert_eq!(per_session.len(), 60);
    let mut lengths: Vec<usize> = per_session.values().copied().collect();
    lengths.sort_unstable();
    lengths.dedup();
    // Every session makes one of the listed lengths, and each length is drawn.
    assert_eq!(lengths, [1, 4, 30]);
    // A list with a zero-call session is refused, naming the field.
    std::fs::write(
        &sc,
        "[session]\ncalls = { dist = \"empirical\", values = [3, 0] }\n",
    )
    .unwrap();
    let err = refused(pcsim().args(["run", s(&sc)]));
    assert!(err.contains("session.calls"), "{err}");
}

/// A small deterministic generator (xorshift64*), so the history is the same on every machine.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-12), self.next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of Unix seconds (civil from days, Howard Hinnant's algorithm).
fn iso(unix: f64) -> String {
    let ms = (unix * 1000.0).round() as i64;
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// A Claude Code-shaped history from a known heavy-tailed scenario with compaction: 40 sessions
/// (Poisson arrivals, 4 minutes apart on average) on a 10,000-token stable prefix; session lengths
/// ceil(exp(N(2.3, 1.1))) calls (median 10, a tail to 400); first message U(200, 2,000) tokens;
/// each later call grows by the previous output (U(50, 800)) and a tool result (exponential, mean
/// 1,500); gaps U(5, 120) s; a prompt past 150,000 tokens is compacted to the prefix and a summary
/// of U(2,000, 5,000). Billed as Anthropic's 5-minute cache bills it: a call reads the previous
/// prompt and writes the rest; a session start (and a compaction) reads the prefix when a call of
/// any session was made in the last 5 minutes; 3 uncached tokens per call.
fn heavy_tailed_history(path: &Path) {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let prefix = 10_000u64;
    let t0 = 1_767_225_600.0; // 2026-01-01T00:00:00Z
                              // Calls of all sessions: (time, line), sorted by time at the end.
    let mut lines: Vec<(f64, String)> = Vec::new();
    let mut start = t0;
    let mut last_call_times: Vec<f64> = Vec::new();
    for s in 0..40 {
        start += -g.next().max(1e-12).ln() * 240.0;
        let n = ((2.3 + 1.1 * g.normal()).exp().ceil() as usize).clamp(1, 400);
        let (mut t, mut prev_prompt, mut prev_out) = (start, 0u64, 0u64);
        for k in 0..n {
            // The prefix is alive when any call of the history was made in the last 5 minutes.
            let prefix_alive = last_call_times.iter().any(|&x| x <= t && t - x < 300.0);
            let (prompt, read) = if k == 0 {
                let p = prefix + g.uniform(200.0, 2000.0) as u64;
                (p, if prefix_alive { prefix } else { 0 })
            } else {
                let grown = prev_prompt + prev_out + (-g.next().max(1e-12).ln() * 1500.0) as u64;
                if grown > 150_000 {
                    (prefix + g.uniform(2000.0, 5000.0) as u64, prefix)
                } else {
                    (grown, prev_prompt)
                }
            };
            let out = g.uniform(50.0, 800.0) as u64;
            let (uncached, write) = (3, prompt - read - 3);
            lines.push((
                t,
                format!(
                    "{{\"type\":\"assistant\",\"isSidechain\":false,\"sessionId\":\"sess-{s:02}\",\"cwd\":\"/home/dev/ledger\",\"timestamp\":\"{}\",\"message\":{{\"id\":\"msg_{s:02}_{k:03}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-8-20260501\",\"usage\":{{\"input_tokens\":{uncached},\"cache_creation_input_tokens\":{write},\"cache_read_input_tokens\":{read},\"output_tokens\":{out}}}}}}}",
                    iso(t)
                ),
            ));
            last_call_times.push(t);
            prev_prompt = prompt;
            prev_out = out;
            t += g.uniform(5.0, 120.0);
        }
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn fit_reproduces_a_heavy_tailed_history_with_compaction_where_the_old_fit_fails() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("history.jsonl");
    heavy_tailed_history(&log);
    let fit = |out: &str, extra: &[&str]| -> (Value, String) {
        let a = pcsim()
            .current_dir(dir.path())
            .args(["fit", "history.jsonl", "--out", out, "--format", "json"])
            .args(extra)
            .assert()
            .success();
        (
            serde_json::from_slice(&a.get_output().stdout).unwrap(),
            String::from_utf8_lossy(&a.get_output().stderr).into_owned(),
        )
    };
    let (v, err) = fit("fitted.toml", &[]);
    // The history's own total: every call at Opus 4.8's prices, as replay bills it.
    let (r, _) = replay_json(&[s(&log)]);
    close(
        f(&v["logged_usd"]),
        f(&r["results"][0]["logged"]["cost_usd"]),
    );
    assert!(f(&v["compactions"]) > 0.0, "the history compacts");
    assert!(v["calls"]["lengths"].is_array());
    let check = &v["check"];
    assert_eq!(check["runs"], 40);
    assert_eq!(
        check["reproduces"], true,
        "the fitted scenario's p5-p95 holds the history's total: {check}; {err}"
    );
    // The fit before this issue (every session the mean length, compactions inside their
    // conversations) does not: the check says so in a FAIL line.
    let (old, err) = fit(
        "old.toml",
        &["--session-lengths", "mean", "--compactions", "keep"],
    );
    assert_eq!(old["check"]["reproduces"], false, "{}", old["check"]);
    assert!(err.contains("FAIL: the history's logged total"), "{err}");
    let out = pcsim()
        .current_dir(dir.path())
        .args(["fit", "history.jsonl", "--out", "old2.toml"])
        .args(["--session-lengths", "mean", "--compactions", "keep"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("FAIL:"), "{text}");
    // The fitted scenario runs as `run --runs 40` runs it, with the same range.
    let a = pcsim()
        .current_dir(dir.path())
        .args([
            "-q",
            "run",
            "fitted.toml",
            "--runs",
            "40",
            "--strategy",
            "cached",
        ])
        .args(["--model", "claude-opus-4.8", "--format", "json"])
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let mc = &run["results"][0]["montecarlo"];
    close(f(&mc["p5_usd"]), f(&check["p5_usd"]));
    close(f(&mc["p95_usd"]), f(&check["p95_usd"]));
}

#[test]
fn a_sub_agent_in_its_own_transcript_and_in_progress_lines_is_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("claude_code_progress_1h.jsonl"),
        dir.path().join("main.jsonl"),
    )
    .unwrap();
    // The sub-agent's own transcript (as Claude Code also writes it, `agent-<id>.jsonl`): the same
    // two messages, ids msg_01S01 and msg_01S02, as sidechain lines.
    let line = |id: &str, t: &str, u: u64, w: u64, r: u64, o: u64| {
        format!("{{\"isSidechain\":true,\"agentId\":\"a7c41e2\",\"sessionId\":\"9b2e4d6f-1a3c-4e5b-8d7f-0c2a4e6b8d10\",\"type\":\"assistant\",\"timestamp\":\"{t}\",\"message\":{{\"id\":\"{id}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5-20251001\",\"usage\":{{\"input_tokens\":{u},\"cache_creation_input_tokens\":{w},\"cache_read_input_tokens\":{r},\"output_tokens\":{o}}}}}}}\n")
    };
    std::fs::write(
        dir.path().join("agent-a7c41e2.jsonl"),
        line("msg_01S01", "2026-11-30T10:00:31.000Z", 5, 8000, 0, 120)
            + &line("msg_01S02", "2026-11-30T10:00:50.000Z", 4, 600, 8000, 90),
    )
    .unwrap();
    let (v, err) = replay_json(&[s(dir.path())]);
    // 3 main-agent calls and the sub-agent's 2, once each.
    assert_eq!(v["calls_logged"], 5);
    assert_eq!(v["duplicates_across_files"], 2);
    assert!(err.contains("2 Claude Code messages found again"), "{err}");
    let (one, _) = replay_json(&[s(&fixture("claude_code_progress_1h.jsonl"))]);
    close(
        f(&v["results"][0]["logged"]["cost_usd"]),
        f(&one["results"][0]["logged"]["cost_usd"]),
    );
}

/// A log written newest first (or merged from several writers) is replayed in the order its calls
/// were made, with a warning: in log order each early call logged late joined the later one with
/// no gap, so caches that had expired were taken as alive (issue 29: +149.9% on a reversed log).
#[test]
fn a_log_out_of_time_order_is_replayed_in_time_order_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // Gaps of 4 to 8 minutes on a 5-minute cache: which reads hit depends on the real gaps.
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"order\"\nmodels = [\"claude-opus-4.8\"]\nstrategies = [\"cached\"]\nseed = 3\n\
         [session]\ncalls = 12\nsystem_tokens = 3000\nfirst_user_tokens = 300\n\
         tool_result_tokens = 400\noutput_tokens = 80\n\
         gap_seconds = { dist = \"uniform\", min = 240, max = 480 }\n\
         [sessions]\ncount = 3\nevery_seconds = 7200\n",
    )
    .unwrap();
    pcsim()
        .current_dir(dir.path())
        .args(["-q", "run", "s.toml", "--usage-log", "ordered.jsonl"])
        .assert()
        .success();
    let ordered = std::fs::read_to_string(dir.path().join("ordered.jsonl")).unwrap();
    let reversed: String = ordered.lines().rev().map(|l| format!("{l}\n")).collect();
    assert_ne!(reversed, ordered);
    std::fs::write(dir.path().join("reversed.jsonl"), &reversed).unwrap();
    let replay = |name: &str| {
        let out = pcsim()
            .current_dir(dir.path())
            .args(["replay", name, "--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (a, a_err) = replay("ordered.jsonl");
    let (b, b_err) = replay("reversed.jsonl");
    assert!(!a_err.contains("time order"), "{a_err}");
    // Every call but the newest was logged after a later one.
    let calls = a["calls_logged"].as_u64().unwrap();
    assert_eq!(calls, 36);
    assert!(
        b_err.contains(&format!(
            "{} calls were logged after a call with a later timestamp; the calls are replayed in time order",
            calls - 1
        )),
        "{b_err}"
    );
    for side in ["logged", "predicted"] {
        assert_eq!(
            a["results"][0][side], b["results"][0][side],
            "{side}: the reversed log replays as the ordered one"
        );
    }
    assert!(f(&a["results"][0]["predicted"]["cache_read_tokens"]) > 0.0);
}
