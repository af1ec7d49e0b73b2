//! Time and uncertainty (issue 5): TTL expiry and refresh, tiered writes, parallel misses, shared
//! caches, routing, Monte Carlo statistics and reproducibility, bad input.

use std::path::Path;

use pcsim::input::scenario::Scenario;
use pcsim::model::catalog::{Catalog, EMBEDDED_CATALOG};
use pcsim::sim::billing::CallBill;
use pcsim::sim::simulate::{run_scenario, SimResult};

use crate::common::pcsim;

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test.toml", Path::new(".")).unwrap()
}

fn run_one(catalog: &Catalog, s: &Scenario, model: &str, strategy: &str) -> SimResult {
    let mut r = run_scenario(catalog, s, &[model.into()], &[strategy.into()]).unwrap();
    assert_eq!(r.results.len(), 1, "{model} {strategy}: {:?}", r.skipped);
    r.results.remove(0)
}

/// One session of `calls` calls, `gap` seconds apart, with 20 tools and a 1,800-token system prompt.
fn session(calls: usize, gap: f64, first_token: f64) -> Scenario {
    session_with_tools(20, calls, gap, first_token)
}

fn session_with_tools(tools: usize, calls: usize, gap: f64, first_token: f64) -> Scenario {
    scenario(&format!(
        "[tools]\nsynthetic = {{ count = {tools}, params = 3 }}\n[session]\ncalls = {calls}\n\
         system_tokens = 1800\nfirst_user_tokens = 250\ntool_result_tokens = 900\n\
         output_tokens = 220\ngap_seconds = {gap}\nfirst_token_seconds = {first_token}\n"
    ))
}

fn reads(calls: &[CallBill]) -> Vec<bool> {
    calls.iter().map(|c| c.cache_read_tokens > 0).collect()
}

/// Claude Opus 4.8 list prices ($ per token) used in the hand computations below.
const IN: f64 = 5.0 / 1e6;
const OUT: f64 = 25.0 / 1e6;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-9)
}

#[test]
fn ttl_counts_from_request_start_and_a_read_refreshes_it() {
    let c = Catalog::embedded().unwrap();
    // 5-minute entries, responses start after 30 s. At exactly 300 s after the writing request
    // started the entry is gone (the lifetime counts from the request start, not the response).
    let at_300 = run_one(
        &c,
        &session(2, 300.0, 30.0),
        "claude-opus-4.8",
        "explicit:tools",
    );
    assert_eq!(reads(&at_300.calls), [false, false]);
    let at_299 = run_one(
        &c,
        &session(2, 299.0, 30.0),
        "claude-opus-4.8",
        "explicit:tools",
    );
    assert_eq!(reads(&at_299.calls), [false, true]);
    // Calls 200 s apart: call 3 at 400 s hits only because the read at 200 s restarted the TTL
    // (written at 0 s, it would have expired at 300 s); every later call likewise.
    let chain = run_one(
        &c,
        &session(5, 200.0, 1.0),
        "claude-opus-4.8",
        "explicit:tools",
    );
    assert_eq!(reads(&chain.calls), [false, true, true, true, true]);
    // Gemini's explicit cache is not refreshed by reads: 1 h from the write, whatever happens.
    // Calls at 0, 2000 and 4000 s: the second reads, the third (past 3600 s) writes again.
    // (80 tools: above Gemini's 4,096-token minimum.)
    let gem = run_one(
        &c,
        &session_with_tools(80, 3, 2000.0, 1.0),
        "gemini-3.6-flash",
        "explicit:tools",
    );
    assert_eq!(reads(&gem.calls), [false, true, false]);
    assert!(gem.calls[2].cache_write_tokens > 0);
}

#[test]
fn tiered_one_hour_and_five_minute_bill_checked_by_hand() {
    let c = Catalog::embedded().unwrap();
    let strategy = "explicit:tools@1h+system+last";
    // Second call 12 s later: everything of call 1 is read.
    let r = run_one(&c, &session(2, 12.0, 1.5), "claude-opus-4.8", strategy);
    let (a, b) = (&r.calls[0], &r.calls[1]);
    let t = a.tool_block_tokens;
    assert!(t >= 1024 && t < a.prompt_tokens);
    // Call 1: the tool block written at 2x (1 h), the rest of the prompt at 1.25x (5 min).
    assert_eq!(
        (a.cache_write_tokens, a.cache_read_tokens, a.uncached_tokens),
        (a.prompt_tokens, 0, 0)
    );
    let first = (t as f64 * 2.0 + (a.prompt_tokens - t) as f64 * 1.25) * IN + 220.0 * OUT;
    assert!(close(a.cost_usd, first), "{} vs {first}", a.cost_usd);
    // Call 2: call 1's prompt read at 0.1x, the new messages written at 1.25x.
    let second = (a.prompt_tokens as f64 * 0.1 + (b.prompt_tokens - a.prompt_tokens) as f64 * 1.25)
        * IN
        + 220.0 * OUT;
    assert!(close(b.cost_usd, second), "{} vs {second}", b.cost_usd);

    // Second call 10 min later: the 5-minute entries are gone, the 1-hour tool block is not.
    let r = run_one(&c, &session(2, 600.0, 1.5), "claude-opus-4.8", strategy);
    let (a, b) = (&r.calls[0], &r.calls[1]);
    assert_eq!(b.cache_read_tokens, t);
    assert_eq!(b.cache_write_tokens, b.prompt_tokens - t);
    let second = (t as f64 * 0.1 + (b.prompt_tokens - t) as f64 * 1.25) * IN + 220.0 * OUT;
    assert!(close(b.cost_usd, second), "{} vs {second}", b.cost_usd);
    // Tokens by tier over the run: one 1 h write, two 5 min writes.
    let by_tier = &r.totals.cache_write_tokens_by_tier;
    assert_eq!(by_tier["1h"], t);
    assert_eq!(by_tier["5m"], (a.prompt_tokens - t) + (b.prompt_tokens - t));
    assert!(close(r.total_usd, a.cost_usd + b.cost_usd));
}

fn sessions(count: usize, every: f64, shared: bool, first_token: f64) -> Scenario {
    scenario(&format!(
        "[tools]\nsynthetic = {{ count = 20, params = 3 }}\n[session]\ncalls = 3\n\
         system_tokens = 1800\nfirst_user_tokens = 250\ntool_result_tokens = 900\n\
         output_tokens = 220\ngap_seconds = 12\nfirst_token_seconds = {first_token}\n\
         [sessions]\ncount = {count}\nevery_seconds = {every}\nshared_cache = {shared}\n"
    ))
}

fn first_call_of(r: &SimResult, session: u32) -> CallBill {
    *r.calls
        .iter()
        .find(|c| c.session == session && c.call == 1)
        .unwrap()
}

#[test]
fn parallel_requests_miss_until_the_writing_response_starts() {
    let c = Catalog::embedded().unwrap();
    // Writes become readable 1.5 s after the writing request started.
    for (every, second_reads) in [(0.0, false), (1.0, false), (1.5, true), (2.0, true)] {
        let r = run_one(
            &c,
            &sessions(2, every, true, 1.5),
            "claude-opus-4.8",
            "explicit:tools",
        );
        let (a, b) = (first_call_of(&r, 1), first_call_of(&r, 2));
        assert_eq!(a.cache_write_tokens, a.tool_block_tokens);
        if second_reads {
            assert_eq!(
                (b.cache_read_tokens, b.cache_write_tokens),
                (b.tool_block_tokens, 0)
            );
        } else {
            // Both pay the write: the second request was sent before the first response began.
            assert_eq!(
                (b.cache_read_tokens, b.cache_write_tokens),
                (0, b.tool_block_tokens),
                "every {every}"
            );
        }
    }
    // A duplicate write by a parallel request does not delay the first write: a third request at
    // 2 s reads what the first (at 0 s, readable from 1.5 s) wrote, although the second (at 1 s)
    // wrote the same prefix again, readable only from 2.5 s.
    let r = run_one(
        &c,
        &sessions(3, 1.0, true, 1.5),
        "claude-opus-4.8",
        "explicit:tools",
    );
    let hits: Vec<bool> = (1..=3)
        .map(|i| first_call_of(&r, i).cache_read_tokens > 0)
        .collect();
    assert_eq!(hits, [false, false, true]);
}

#[test]
fn sessions_share_an_account_cache_and_totals_add_up() {
    let c = Catalog::embedded().unwrap();
    for model in ["claude-opus-4.8", "kimi-k3"] {
        let shared = run_one(&c, &sessions(3, 30.0, true, 1.5), model, "cached");
        let own = run_one(&c, &sessions(3, 30.0, false, 1.5), model, "cached");
        for r in [&shared, &own] {
            // Per-account total = sum of per-session totals = sum of calls.
            assert_eq!(r.per_session.len(), 3);
            let by_session: f64 = r.per_session.iter().map(|s| s.total_usd).sum();
            assert!(close(by_session, r.total_usd), "{model}");
            assert!(r.per_session.iter().all(|s| s.calls == 3));
            let reads: u64 = r.per_session.iter().map(|s| s.cache_read_tokens).sum();
            assert_eq!(reads, r.totals.cache_read_tokens);
        }
        // Shared: sessions 2 and 3 read the head session 1 wrote; their own first call does not.
        for s in [2, 3] {
            assert!(first_call_of(&shared, s).cache_read_tokens > 0, "{model}");
            assert_eq!(first_call_of(&own, s).cache_read_tokens, 0, "{model}");
        }
        assert!(shared.per_session[1].total_usd < shared.per_session[0].total_usd);
        assert!(close(
            own.per_session[1].total_usd,
            own.per_session[0].total_usd
        ));
        assert!(shared.total_usd < own.total_usd, "{model}");
    }
}

#[test]
fn routing_overflow_costs_a_miss_on_each_new_machine() {
    let c = Catalog::embedded().unwrap();
    // 20 one-call sessions 2 s apart on one prefix: about 15 requests a minute go to one machine.
    let s = scenario(
        "[tools]\nsynthetic = { count = 26, params = 4 }\n[session]\ncalls = 1\nsystem_tokens = 1800\n\
         first_user_tokens = 250\nfirst_token_seconds = 1.0\n[sessions]\ncount = 20\nevery_seconds = 2\n",
    );
    let r = run_one(&c, &s, "gpt-5.2", "automatic");
    let hits: Vec<bool> = (1..=20)
        .map(|i| first_call_of(&r, i).cache_read_tokens > 0)
        .collect();
    // Sessions 1-15 on machine 0 (the first writes), 16-20 overflow to machine 1 (16 writes).
    let expected: Vec<bool> = (1..=20).map(|i| i != 1 && i != 16).collect();
    assert_eq!(hits, expected);
    // The same model without the routing rule: only the very first request misses.
    let text = EMBEDDED_CATALOG
        .lines()
        .filter(|l| !l.starts_with("routing_rpm_per_prefix"))
        .collect::<Vec<_>>()
        .join("\n");
    let unrouted = Catalog::from_toml_str(&text, "m.toml").unwrap();
    let r = run_one(&unrouted, &s, "gpt-5.2", "automatic");
    assert_eq!(
        (1..=20)
            .filter(|&i| first_call_of(&r, i).cache_read_tokens == 0)
            .count(),
        1
    );
}

const STOCHASTIC: &str = r#"
seed = 9
models = ["claude-opus-4.8", "kimi-k3"]
strategies = ["none", "cached"]
[tools]
synthetic = { count = 10, params = 3 }
[session]
calls = 8
system_tokens = 1200
first_user_tokens = 200
tool_result_tokens = { dist = "log_normal", mu = 6.0, sigma = 0.8 }
output_tokens = { dist = "gamma", shape = 2.0, scale = 100.0 }
gap_seconds = { dist = "exponential", mean = 120 }
[sessions]
count = 2
poisson_per_hour = 30
"#;

fn mc(text: &str, runs: usize, seed: u64) -> pcsim::sim::simulate::RunReport {
    let mut s = scenario(text);
    s.runs = runs;
    s.seed = seed;
    run_scenario(&Catalog::embedded().unwrap(), &s, &[], &[]).unwrap()
}

#[test]
fn monte_carlo_is_reproducible_and_independent_of_threads() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let three = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let a = one.install(|| mc(STOCHASTIC, 200, 4));
    let b = three.install(|| mc(STOCHASTIC, 200, 4));
    assert_eq!(a.results.len(), 4);
    for (x, y) in a.results.iter().zip(&b.results) {
        let (mx, my) = (
            x.montecarlo.as_ref().unwrap(),
            y.montecarlo.as_ref().unwrap(),
        );
        assert_eq!(mx, my, "{} {}", x.model, x.strategy);
        assert_eq!(mx.runs, 200);
        // A stochastic total: a real spread, ordered statistics, the interval around the mean.
        let (lo, hi) = (mx.ci95_low_usd.unwrap(), mx.ci95_high_usd.unwrap());
        assert!(lo < mx.mean_usd && mx.mean_usd < hi);
        assert!(mx.p5_usd < mx.median_usd && mx.median_usd < mx.p95_usd);
        // The curve has one point per call, ends at the total and never decreases.
        assert_eq!(mx.curve.len(), 16);
        let last = mx.curve.last().unwrap();
        assert!(close(last.mean, mx.mean_usd));
        assert!(close(last.median, mx.median_usd));
        assert!(mx.curve.windows(2).all(|w| w[1].mean >= w[0].mean));
        assert!(mx
            .curve
            .iter()
            .all(|p| p.p5 <= p.median && p.median <= p.p95));
        // Run 0 is one of the runs: within the observed range.
        assert!(x.total_usd > 0.0);
    }
    // Another seed gives other draws.
    let c = mc(STOCHASTIC, 200, 5);
    assert_ne!(
        a.results[1].montecarlo.as_ref().unwrap().mean_usd,
        c.results[1].montecarlo.as_ref().unwrap().mean_usd
    );
}

#[test]
fn monte_carlo_of_a_deterministic_scenario_has_zero_width() {
    let text = pcsim::input::scenario::DEFAULT_SCENARIO;
    let r = mc(text, 50, 1);
    for x in &r.results {
        let m = x.montecarlo.as_ref().unwrap();
        assert_eq!(m.mean_usd, x.total_usd, "{} {}", x.model, x.strategy);
        assert_eq!(
            (m.p5_usd, m.median_usd, m.p95_usd),
            (x.total_usd, x.total_usd, x.total_usd)
        );
        assert_eq!(
            (m.ci95_low_usd, m.ci95_high_usd),
            (Some(x.total_usd), Some(x.total_usd))
        );
        for (p, c) in m.curve.iter().zip(&x.calls) {
            assert_eq!(
                (p.mean, p.p5, p.p95),
                (c.cumulative_usd, c.cumulative_usd, c.cumulative_usd)
            );
        }
    }
}

#[test]
fn run_with_runs_and_seed_reports_montecarlo_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, STOCHASTIC).unwrap();
    let out = pcsim()
        .args(["run", "--runs", "200", "--seed", "3", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No progress bar off a terminal.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r0 = &v["results"][0];
    assert!(r0["total_usd"].is_f64() && r0["calls"].is_array());
    let m = &r0["montecarlo"];
    for k in [
        "mean_usd",
        "median_usd",
        "p5_usd",
        "p95_usd",
        "ci95_low_usd",
        "ci95_high_usd",
    ] {
        assert!(m[k].is_f64(), "{k}");
    }
    assert_eq!(m["runs"], 200);
    let p = &m["curve"][0];
    for k in ["call", "mean", "p5", "median", "p95"] {
        assert!(p[k].is_number(), "{k}");
    }
    // The library gives the same figures for the same seed and runs.
    let lib = mc(STOCHASTIC, 200, 3);
    let lm = lib.results[0].montecarlo.as_ref().unwrap();
    assert_eq!(m["mean_usd"].as_f64().unwrap(), lm.mean_usd);
}

#[test]
fn bad_runs_and_distributions_name_the_field() {
    let out = pcsim().args(["run", "--runs", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--runs") && e.contains("value 0"), "{e}");

    let bad = |text: &str| {
        Scenario::from_toml_str(text, "bad.toml", Path::new("."))
            .unwrap_err()
            .to_string()
    };
    let e = bad("runs = 0\n[session]\ncalls = 2\n");
    assert!(
        e.contains("bad.toml") && e.contains("`runs`") && e.contains("value 0"),
        "{e}"
    );
    let e = bad("[session]\ncalls = 2\ngap_seconds = { dist = \"exponential\", mean = -3 }\n");
    assert!(e.contains("session.gap_seconds") && e.contains("-3"), "{e}");
    let e =
        bad("[session]\ncalls = 2\noutput_tokens = { dist = \"log_normal\", mu = 5, sigma = 0 }\n");
    assert!(
        e.contains("session.output_tokens") && e.contains("sigma"),
        "{e}"
    );
    let e = bad("[session]\ncalls = 2\ntool_result_tokens = { dist = \"log_normal\", mu = 5, sigma = -1 }\n");
    assert!(e.contains("session.tool_result_tokens"), "{e}");

    // A TTL of zero in a catalog.
    let text = EMBEDDED_CATALOG.replacen(
        "ttl_seconds = { value = 300.0",
        "ttl_seconds = { value = 0.0",
        1,
    );
    let e = Catalog::from_toml_str(&text, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.toml") && e.contains("ttl_seconds") && e.contains("value 0"),
        "{e}"
    );
}

#[test]
fn bench_reports_its_json_keys() {
    let out = pcsim()
        .args([
            "bench",
            "--format",
            "json",
            "--seconds",
            "0",
            "--montecarlo-runs",
            "20",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in [
        "calls_per_second_1_thread",
        "calls_per_second_all_threads",
        "montecarlo_10k_seconds",
        "calls_per_second_1_thread_models_apart",
    ] {
        assert!(v[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {}", v[k]);
    }
    assert_eq!(v["montecarlo_runs"], 20);
    // What a process pays before its first count, and replay's throughput beside a typed parse
    // of the same generated transcripts.
    assert!(v["tokenizer_load_ms"].as_f64().is_some_and(|x| x > 0.0));
    let replay = &v["replay"];
    for k in [
        "mb_per_second",
        "typed_parse_mb_per_second",
        "times_typed_parse",
    ] {
        assert!(
            replay[k].as_f64().is_some_and(|x| x > 0.0),
            "replay.{k}: {replay}"
        );
    }
    assert_eq!(replay["files"], 24);
    assert_eq!(replay["calls"], 24 * 40, "{replay}");
    assert!(replay["bytes"].as_u64().is_some_and(|b| b > 1_000_000));
    // The same on pcsim's own compact log (run --usage-log): 24 files of 10 sessions of 40 calls.
    let compact = &v["replay_compact"];
    assert!(
        compact["times_typed_parse"]
            .as_f64()
            .is_some_and(|x| x > 0.0),
        "{compact}"
    );
    assert_eq!(compact["calls"], 24 * 10 * 40, "{compact}");
    if cfg!(target_os = "linux") {
        for k in ["load_average_before", "load_average_after"] {
            let l = v[k].as_array().unwrap_or_else(|| panic!("{k}: {}", v[k]));
            assert_eq!(l.len(), 3, "{k}");
            assert!(
                l.iter().all(|x| x.as_f64().is_some_and(|x| x >= 0.0)),
                "{k}"
            );
        }
    }
    let e = pcsim()
        .args(["bench", "--montecarlo-runs", "0"])
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2));
}

#[test]
fn real_github_tools_expire_between_sparse_calls_on_a_timeline() {
    let github = crate::common::capture("server-github");
    // The 26 real GitHub tools cached for 5 min. Calls about 240 s apart: each read restarts the
    // TTL, so every call after the first reads (call 3 at ~480 s is past the write's 300 s).
    let text = format!(
        "[tools]\nfiles = [{:?}]\n[session]\ncalls = 4\nsystem_tokens = 500\n\
         gap_seconds = {{ dist = \"uniform\", min = 239.9, max = 240.1 }}\n",
        github.display().to_string()
    );
    let mut s = scenario(&text);
    let c = Catalog::embedded().unwrap();
    let r = run_one(&c, &s, "claude-opus-4.8", "explicit:tools");
    assert_eq!(reads(&r.calls), [false, true, true, true]);
    // Calls 10 min apart: the block has expired every time and is written again.
    s.gap_seconds = pcsim::base::quantity::Quantity::fixed(600.0);
    let r = run_one(&c, &s, "claude-opus-4.8", "explicit:tools");
    assert_eq!(reads(&r.calls), [false, false, false, false]);
    assert!(r
        .calls
        .iter()
        .all(|b| b.cache_write_tokens == b.tool_block_tokens));
    // The built-in default scenario (examples/default.toml) loads from the project root too.
    let d = Scenario::load(&crate::common::root().join("examples/default.toml")).unwrap();
    assert_eq!(d.tools.len(), 26);
}
