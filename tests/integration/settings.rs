//! Request-setting changes as scenario events (`[[event]] change = "tool_choice"`): the catalog says
//! per model and caching mode which prompt part a change invalidates (`invalidates` in models.toml);
//! the engine makes that part and every later one miss from the change on. The expected dollars are
//! worked out by hand in the comments from the catalog's documented prices.

use pcsim::input::scenario::Scenario;
use pcsim::model::catalog::Catalog;
use pcsim::model::pricing::Pricing;
use pcsim::model::strategy::Strategy;
use pcsim::sim::billing::CallBill;
use pcsim::sim::engine::{simulate_collect, SimSetup};

use crate::common::root;

/// Three calls: a 2,000-token system prompt, a 100-token task, 100 user tokens and 50 output tokens
/// per call, 10 s apart, no tools; `event` is added as is.
fn bills(model: &str, strategy: &str, event: &str) -> Vec<CallBill> {
    let text = format!("[session]\ncalls = 3\nsystem_tokens = 2000\nfirst_user_tokens = 100\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\ngap_seconds = 10\n{event}");
    let s = Scenario::from_toml_str(&text, "test scenario", &root().join("examples")).unwrap();
    let c = Catalog::embedded()
        .unwrap()
        .priced(&Pricing::on("2026-12-03".parse().unwrap()))
        .unwrap();
    let m = c.model(model).unwrap();
    let r = Strategy::parse(strategy).unwrap().resolve(m).unwrap();
    simulate_collect(&s, &SimSetup::new(m, &r, s.first_token_seconds), 0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
}

/// Claude Opus 4.8 ($5 in, $25 out, writes 1.25x, reads 0.1x), explicit:system+last.
/// Call 1 writes its 2,100 tokens: 2,100 x 1.25 x 5e-6 = $0.013125, plus 50 x 25e-6 = $0.00125.
/// Call 2 reads 2,100 (0.1x: $0.00105) and writes the new 150 ($0.0009375): $0.0032375.
/// Call 3, after `tool_choice` changed: the messages miss, the system prompt still hits. It reads
/// the 2,000 system tokens ($0.001) and writes the 400 message tokens, 400 x 1.25 x 5e-6 =
/// $0.0025: $0.00475. Without the change it reads 2,250 ($0.001125) and writes 150: $0.0033125.
#[test]
fn anthropic_tool_choice_change_keeps_the_system_prompt_and_rewrites_the_messages() {
    let event = "[[event]]\nat_call = 3\nchange = \"tool_choice\"\n";
    let with = bills("claude-opus-4.8", "explicit:system+last", event);
    let without = bills("claude-opus-4.8", "explicit:system+last", "");
    assert!(close(with[0].cost_usd, 0.014375), "{}", with[0].cost_usd);
    assert!(close(with[1].cost_usd, 0.0032375), "{}", with[1].cost_usd);
    assert_eq!(
        (with[2].cache_read_tokens, with[2].cache_write_tokens),
        (2000, 400)
    );
    assert!(close(with[2].cost_usd, 0.00475), "{}", with[2].cost_usd);
    assert_eq!(
        (without[2].cache_read_tokens, without[2].cache_write_tokens),
        (2250, 150)
    );
    assert!(
        close(without[2].cost_usd, 0.0033125),
        "{}",
        without[2].cost_usd
    );
    // Images and thinking settings invalidate the same part on Anthropic (documented).
    for change in ["images", "thinking"] {
        let b = bills(
            "claude-opus-4.8",
            "explicit:system+last",
            &format!("[[event]]\nat_call = 3\nchange = \"{change}\"\n"),
        );
        assert!(close(b[2].cost_usd, 0.00475), "{change}: {}", b[2].cost_usd);
    }
}

/// GPT-5.2 ($1.75 in, $14 out, automatic): a reasoning-effort change invalidates the whole prefix,
/// so call 3 reads nothing and pays its 2,400 prompt tokens in full: 2,400 x 1.75e-6 = $0.0042,
/// plus 50 x 14e-6 = $0.0007: $0.0049. A tool_choice change keeps the prefix (OpenAI recommends
/// it to keep tools stable): the bill is the same as without any change.
#[test]
fn openai_thinking_change_misses_everything_and_tool_choice_nothing() {
    let thinking = bills(
        "gpt-5.2",
        "automatic",
        "[[event]]\nat_call = 3\nchange = \"thinking\"\n",
    );
    assert_eq!(thinking[2].prompt_tokens, 2400);
    assert_eq!(thinking[2].cache_read_tokens, 0);
    assert!(
        close(thinking[2].cost_usd, 0.0049),
        "{}",
        thinking[2].cost_usd
    );
    let tool_choice = bills(
        "gpt-5.2",
        "automatic",
        "[[event]]\nat_call = 3\nchange = \"tool_choice\"\n",
    );
    let none = bills("gpt-5.2", "automatic", "");
    assert!(none[2].cache_read_tokens > 0);
    let costs = |b: &[CallBill]| b.iter().map(|c| c.cost_usd).collect::<Vec<_>>();
    assert_eq!(costs(&tool_choice), costs(&none));
}

/// A change the model's catalog entry does not list (DeepSeek documents none) changes nothing.
#[test]
fn an_undocumented_change_invalidates_nothing() {
    let a = bills(
        "deepseek-v4-flash",
        "automatic",
        "[[event]]\nat_call = 2\nchange = \"images\"\n",
    );
    let b = bills("deepseek-v4-flash", "automatic", "");
    assert_eq!(a[1].cache_read_tokens, b[1].cache_read_tokens);
    assert!(b[1].cache_read_tokens > 0);
}
