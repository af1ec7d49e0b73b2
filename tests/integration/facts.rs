//! The measured facts of `tests/fixtures/reference/measured-facts.md` that are simulation results, reproduced
//! through the public API. Each test names its fact; tolerances are the calibration's stated fit error.
//! Dollar facts were billed by the study's gateway at its own rates, so every test prices on the
//! built-in price sheet `study-2026-07-31`, not on today's list prices.

use std::path::Path;

use pcsim::input::scenario::Scenario;
use pcsim::model::catalog::Catalog;
use pcsim::model::pricing::Pricing;
use pcsim::model::strategy::Strategy;
use pcsim::model::tools::{load_tool_file, synthetic_tools};
use pcsim::sim::billing::CallBill;
use pcsim::sim::engine::{simulate_collect, SimSetup};

use crate::common::{capture, root};

fn catalog() -> Catalog {
    Catalog::embedded()
        .expect("built-in catalog loads")
        .priced(&Pricing::sheet("study-2026-07-31"))
        .expect("the study's price sheet applies")
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test scenario", &root().join("examples"))
        .expect("test scenario is valid")
}

fn bills(s: &Scenario, model: &str, strategy: &str) -> Vec<CallBill> {
    let c = catalog();
    let m = c.model(model).unwrap();
    let r = Strategy::parse(strategy).unwrap().resolve(m).unwrap();
    simulate_collect(s, &SimSetup::new(m, &r, s.first_token_seconds), 0)
}

fn within(actual: f64, expected: f64, rel: f64) -> bool {
    (actual - expected).abs() <= rel * expected.abs()
}

/// Fact: on Opus 4.8 a request of only "Reply OK" bills 11 tokens; adding the small get_weather tool
/// makes it 412 (+401 tokens, +$0.002 per call).
#[test]
fn one_small_tool_adds_about_401_tokens_on_opus_4_8() {
    let base = scenario("[session]\ncalls = 1\nfirst_user_tokens = 11\noutput_tokens = 0\n");
    let with = scenario("[tools]\nfiles = [\"tools/get_weather.json\"]\n[session]\ncalls = 1\nfirst_user_tokens = 11\noutput_tokens = 0\n");
    let a = &bills(&base, "claude-opus-4.8", "none")[0];
    let b = &bills(&with, "claude-opus-4.8", "none")[0];
    assert_eq!(a.prompt_tokens, 11);
    let added = (b.prompt_tokens - a.prompt_tokens) as f64;
    assert!(
        within(added, 401.0, 0.03),
        "get_weather adds {added} tokens, measured 401"
    );
    let usd = b.cost_usd - a.cost_usd;
    assert!(
        within(usd, 0.002, 0.05),
        "get_weather adds ${usd:.5} per call, measured $0.002"
    );
}

fn slope(model: &str) -> f64 {
    let c = catalog();
    let r = c.model(model).unwrap().rendering();
    let sizes: Vec<f64> = (0..=40)
        .step_by(10)
        .map(|n| r.block_tokens(&synthetic_tools(1, n, 3)) as f64)
        .collect();
    (sizes[4] - sizes[1]) / 30.0
}

/// Fact: identical-shape synthetic tools (three parameters, one-line descriptions), 0 to 40 of them:
/// Claude about 173 tokens per tool, GPT-5.6 about 64 (2.7x apart).
#[test]
fn per_tool_sizes_on_claude_and_gpt() {
    let claude = slope("claude-opus-4.8");
    let gpt = slope("gpt-5.6");
    assert!(
        within(claude, 173.0, 0.02),
        "Claude {claude} tokens per tool"
    );
    assert!(within(gpt, 64.0, 0.03), "GPT-5.6 {gpt} tokens per tool");
    assert!(within(claude / gpt, 2.7, 0.05), "ratio {}", claude / gpt);
}

/// Fact: Claude Opus 4.8 with cache_control on the last tool: a 20-tool block was written once,
/// 3,682 tokens at 1.25x; every later call read it at 0.1x.
#[test]
fn twenty_tool_block_written_once_then_read() {
    let s = scenario("[tools]\nsynthetic = { count = 20, params = 3 }\n[session]\ncalls = 6\nfirst_user_tokens = 20\ntool_result_tokens = 30\noutput_tokens = 10\ngap_seconds = 20\n");
    let b = bills(&s, "claude-opus-4.8", "explicit:tools");
    let block = b[0].tool_block_tokens;
    assert!(within(block as f64, 3682.0, 0.01), "block {block}");
    assert_eq!(b[0].cache_write_tokens, block);
    assert_eq!(b[0].cache_read_tokens, 0);
    for c in &b[1..] {
        assert_eq!(
            (c.cache_write_tokens, c.cache_read_tokens),
            (0, block),
            "call {}",
            c.call
        );
    }
    // Dollars: the write at 1.25x, the reads at 0.1x of $5 per million, the rest at the base rate.
    let price = 5.0 / 1e6;
    let out = 25.0 / 1e6;
    let first = block as f64 * 1.25 * price
        + b[0].uncached_tokens as f64 * price
        + b[0].output_tokens as f64 * out;
    assert!((b[0].cost_usd - first).abs() < 1e-12);
    let later = block as f64 * 0.1 * price
        + b[1].uncached_tokens as f64 * price
        + b[1].output_tokens as f64 * out;
    assert!((b[1].cost_usd - later).abs() < 1e-12);
    // 90% off the recurring cost of the block: each later call costs the block's price less 90%
    // than the same call with caching off (same tokens, same output, all of them uncached).
    let off = bills(&s, "claude-opus-4.8", "none");
    let full_block = block as f64 * price;
    for (cached, uncached) in b[1..].iter().zip(&off[1..]) {
        let saving = (uncached.cost_usd - cached.cost_usd) / full_block;
        assert!(within(saving, 0.9, 1e-9), "call {}: {saving}", cached.call);
    }
}

/// Fact: the minimum cacheable prefix on Claude is 1,024 tokens: a 2-tool block (about 655 tokens)
/// cannot be cached even when marked.
#[test]
fn two_tool_block_is_not_cacheable() {
    let s = scenario("[tools]\nsynthetic = { count = 2, params = 3 }\n[session]\ncalls = 4\nfirst_user_tokens = 20\ntool_result_tokens = 30\noutput_tokens = 10\n");
    let b = bills(&s, "claude-opus-4.8", "explicit:tools");
    assert!(
        b[0].tool_block_tokens < 1024 && b[0].tool_block_tokens > 500,
        "block {}",
        b[0].tool_block_tokens
    );
    for c in &b {
        assert_eq!(
            (c.cache_write_tokens, c.cache_read_tokens),
            (0, 0),
            "call {}",
            c.call
        );
        assert_eq!(c.uncached_tokens, c.prompt_tokens);
    }
}

/// Fact: on Claude Opus 5, adding one tool to a cached 20-tool set re-wrote the whole 4,082-token
/// block at 1.25x. The mid-conversation tool-change beta keeps the cache.
#[test]
fn adding_a_tool_rewrites_the_whole_block_on_opus_5() {
    let text = "[tools]\nsynthetic = { count = 20, params = 3 }\n[session]\ncalls = 5\nfirst_user_tokens = 20\ntool_result_tokens = 30\noutput_tokens = 10\n[[event]]\nat_call = 3\nadd_synthetic = { count = 1, params = 3 }\n";
    let s = scenario(text);
    let b = bills(&s, "claude-opus-5", "explicit:tools");
    let new_block = b[2].tool_block_tokens;
    assert!(
        within(new_block as f64, 4082.0, 0.01),
        "21-tool block {new_block}"
    );
    assert_eq!(
        b[2].cache_read_tokens, 0,
        "nothing of the old block survives"
    );
    assert_eq!(
        b[2].cache_write_tokens, new_block,
        "the whole block is written again"
    );
    assert_eq!(b[3].cache_read_tokens, new_block);
    let beta = bills(&s, "claude-opus-5", "explicit:tools/tool-changes=append");
    assert_eq!(
        beta[2].cache_read_tokens, b[0].tool_block_tokens,
        "the beta keeps reading the old block"
    );
    assert_eq!(beta[2].cache_write_tokens, 0);
    assert!(beta[2].cost_usd < b[2].cost_usd);
}

/// Fact: Kimi K3, automatic caching with no configuration: on the second call 2,048 of the block's
/// 2,112 tokens (97%) came from cache, in 256-token blocks.
#[test]
fn kimi_reads_whole_256_token_blocks() {
    let c = catalog();
    let tools = synthetic_tools(1, 10, 3);
    let block = c.model("kimi-k3").unwrap().rendering().block_tokens(&tools);
    assert!(block < 2112);
    // Two sessions with different task messages share the account's cache; the prefix they share
    // (tools plus system prompt) is padded to exactly 2,112 tokens.
    let text = format!(
        "[tools]\nsynthetic = {{ count = 10, params = 3 }}\n[session]\ncalls = 1\nsystem_tokens = {}\nfirst_user_tokens = 40\noutput_tokens = 10\n[sessions]\ncount = 2\nevery_seconds = 30\n",
        2112 - block
    );
    let b = bills(&scenario(&text), "kimi-k3", "automatic");
    assert_eq!(b[0].cache_read_tokens, 0);
    assert_eq!(b[1].cache_read_tokens, 2048);
    // 97% of the second call's shared prefix came from cache (the prefix is what both sessions send
    // before their own task message).
    let shared = b[1].prompt_tokens - 40;
    assert_eq!(shared, 2112, "{:?}", b[1]);
    assert!(within(
        b[1].cache_read_tokens as f64 / shared as f64,
        0.97,
        0.01
    ));
}

/// Fact: Gemini implicit caching gave no hit in three prepared tests with the tool block.
#[test]
fn gemini_implicit_caching_gives_no_hit_by_default() {
    let s = scenario("[tools]\nsynthetic = { count = 80, params = 3 }\n[session]\ncalls = 10\nfirst_user_tokens = 20\ntool_result_tokens = 300\noutput_tokens = 50\ngap_seconds = 5\n");
    let b = bills(&s, "gemini-3.6-flash", "implicit");
    assert!(
        b[0].prompt_tokens > 4096,
        "the prompt is above the 4,096 minimum"
    );
    assert!(b.iter().all(|c| c.cache_read_tokens == 0));
    let none = bills(&s, "gemini-3.6-flash", "none");
    let total = |v: &[CallBill]| v.last().unwrap().cumulative_usd;
    assert!(
        (total(&b) - total(&none)).abs() < 1e-12,
        "no discount to plan on"
    );
}

/// Fact: Gemini 3.6 Flash: the GitHub MCP server's 26 tools cost $0.0029 per call; GLM 5.2 bills more
/// than twice Gemini's tokens for the same tools yet costs less in dollars.
#[test]
fn github_server_on_gemini_and_glm() {
    let path = capture("server-github");
    let tools = load_tool_file(Path::new(&path)).unwrap();
    assert_eq!(tools.len(), 26);
    let c = catalog();
    let per_call = |id: &str| {
        let m = c.model(id).unwrap();
        let t = m.rendering().block_tokens(&tools);
        (t, m.input_usd(t as f64))
    };
    let (gem_t, gem_usd) = per_call("gemini-3.6-flash");
    let (glm_t, glm_usd) = per_call("glm-5.2");
    assert!(
        within(gem_usd, 0.0029, 0.02),
        "Gemini ${gem_usd:.5} per call"
    );
    assert!(
        glm_t as f64 > 2.0 * gem_t as f64,
        "GLM {glm_t} vs Gemini {gem_t} tokens"
    );
    assert!(
        glm_usd < gem_usd,
        "GLM ${glm_usd:.5} vs Gemini ${gem_usd:.5}"
    );
}
