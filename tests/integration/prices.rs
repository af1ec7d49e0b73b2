//! Prices: the catalog's sources and `checked` dates, dated price changes (`--on`), price sheets
//! (`--price-sheet`), service tiers, regional pricing, long-context tiers and placement rules. The
//! expected dollars are worked out by hand in the comments from the catalog's documented prices.

use serde_json::Value;

use pcsim::input::scenario::Scenario;
use pcsim::model::catalog::Catalog;
use pcsim::model::pricing::Pricing;
use pcsim::model::strategy::Strategy;
use pcsim::sim::billing::CallBill;
use pcsim::sim::engine::{simulate_collect, SimSetup};

use crate::common::{json_of, pcsim, root};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test scenario", &root().join("examples"))
        .expect("test scenario is valid")
}

fn day(s: &str) -> pcsim::base::date::Day {
    s.parse().unwrap()
}

/// The bills of run 0 of `strategy` on `model` with the catalog priced as `pricing`.
fn bills(text: &str, model: &str, strategy: &str, pricing: &Pricing) -> Vec<CallBill> {
    let c = Catalog::embedded().unwrap().priced(pricing).unwrap();
    let m = c.model(model).unwrap();
    let r = Strategy::parse(strategy).unwrap().resolve(m).unwrap();
    let s = scenario(text);
    simulate_collect(&s, &SimSetup::new(m, &r, s.first_token_seconds), 0)
}

/// Total dollars of `strategy` on `model` with the catalog priced as `pricing`.
fn total(text: &str, model: &str, strategy: &str, pricing: &Pricing) -> f64 {
    bills(text, model, strategy, pricing)
        .last()
        .unwrap()
        .cumulative_usd
}

/// Two calls without tools or system prompt: a first message of `first` tokens, then 10 more.
fn two_calls(first: u64) -> String {
    format!("[session]\ncalls = 2\nfirst_user_tokens = {first}\nuser_tokens = 10\ntool_result_tokens = 0\noutput_tokens = 100\ngap_seconds = 10\n")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
}

const ONE_CALL: &str = "[session]\ncalls = 1\nfirst_user_tokens = 10000\noutput_tokens = 500\n";

/// Gemini 3.6 Flash's introductory prices ($0.75 in, $3.75 out) end on 2026-12-31; the 2027 rates
/// ($1.50, $7.50) apply from 2027-01-01. One call of 10,000 prompt tokens and 500 output tokens:
/// 2026-12-31: 10,000 x 0.75e-6 + 500 x 3.75e-6 = 0.0075 + 0.001875 = $0.009375;
/// 2027-01-01: 10,000 x 1.50e-6 + 500 x 7.50e-6 = 0.015 + 0.00375 = $0.01875.
#[test]
fn a_dated_price_change_applies_from_its_day() {
    let before = total(
        ONE_CALL,
        "gemini-3.6-flash",
        "none",
        &Pricing::on(day("2026-12-31")),
    );
    let after = total(
        ONE_CALL,
        "gemini-3.6-flash",
        "none",
        &Pricing::on(day("2027-01-01")),
    );
    assert!(close(before, 0.009375), "{before}");
    assert!(close(after, 0.01875), "{after}");
    // The same through the command line's --on, on a pricing command.
    let run = |on: &str| -> f64 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("one.toml");
        std::fs::write(&p, ONE_CALL).unwrap();
        let v = json_of(&[
            "run",
            p.to_str().unwrap(),
            "--model",
            "gemini-3.6-flash",
            "--strategy",
            "none",
            "--format",
            "json",
            "--on",
            on,
        ]);
        v["results"][0]["total_usd"].as_f64().unwrap()
    };
    assert!(close(run("2026-12-31"), 0.009375));
    assert!(close(run("2027-01-01"), 0.01875));
    let out = pcsim()
        .args(["run", "--on", "2027-02-30"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--on"));
}

/// Batch halves input and output and stacks with caching (GPT-5.6 Sol at its launch prices, $5 /
/// $30, in force until its cut of 2026-08-21; 0.5x). Two calls
/// with a 2,000-token system prompt, explicit:system+last, 30 s apart:
/// call 1 writes 2,000 + 100 = 2,100 tokens at 1.25x: 2,100 x 1.25 x 2.5e-6 = $0.0065625, plus 50
///   output tokens at 15e-6 = $0.00075;
/// call 2 reads 2,100 at 0.1x: 2,100 x 0.1 x 2.5e-6 = $0.000525, writes the 50 + 100 new tokens at
///   1.25x: 150 x 1.25 x 2.5e-6 = $0.00046875, plus $0.00075 of output.
/// Total $0.0090563; at standard prices exactly twice that.
#[test]
fn a_batch_run_halves_the_bill_and_keeps_caching() {
    let text = "[session]\ncalls = 2\nsystem_tokens = 2000\nfirst_user_tokens = 100\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\ngap_seconds = 30\n";
    let batch = Pricing {
        service_tier: Some("batch".into()),
        on: Some(day("2026-08-20")),
        ..Pricing::default()
    };
    let b = total(text, "gpt-5.6-sol", "explicit:system+last", &batch);
    let expected =
        2100.0 * 1.25 * 2.5e-6 + 0.00075 + 2100.0 * 0.1 * 2.5e-6 + 150.0 * 1.25 * 2.5e-6 + 0.00075;
    assert!(close(b, expected), "{b} vs {expected}");
    let standard = total(
        text,
        "gpt-5.6-sol",
        "explicit:system+last",
        &Pricing::on(day("2026-08-20")),
    );
    assert!(close(standard, 2.0 * expected), "{standard}");
}

/// A 300,000-token prompt on GPT-5.6 Sol (priced on 2026-08-20, before its cut of 2026-08-21) is
/// above its 272K long-context threshold: the whole call is billed at $10 in / $45 out, cache writes at 1.25x and reads at 0.1x of $10.
/// Call 1 (no cache yet) writes 300,000 at 1.25x: 300,000 x 1.25 x 10e-6 = $3.75, plus 100 output
/// tokens x 45e-6 = $0.0045: $3.7545. Call 2 reads the 300,000 at 0.1x: $0.30, writes the new
/// 100 + 10 tokens at 1.25x: 110 x 1.25 x 10e-6 = $0.001375, plus $0.0045: $0.305875.
/// The same prompt cut to 200,000 tokens is priced at $5 / $30.
#[test]
fn a_300k_token_prompt_takes_the_long_context_prices() {
    let on = Pricing::on(day("2026-08-20"));
    let sol = |first| bills(&two_calls(first), "gpt-5.6-sol", "explicit:last", &on);
    let calls = sol(300_000);
    assert_eq!(calls[0].prompt_tokens, 300_000);
    assert_eq!(calls[0].cache_write_tokens, 300_000);
    assert!(close(calls[0].cost_usd, 3.7545), "{}", calls[0].cost_usd);
    assert_eq!(calls[1].cache_read_tokens, 300_000);
    assert_eq!(calls[1].cache_write_tokens, 110);
    assert!(close(calls[1].cost_usd, 0.305875), "{}", calls[1].cost_usd);
    // Below the threshold: 200,000 x 1.25 x 5e-6 + 100 x 30e-6 = 1.25 + 0.003 = $1.253.
    let calls = sol(200_000);
    assert!(close(calls[0].cost_usd, 1.253), "{}", calls[0].cost_usd);
}

/// Qwen Flash (Model Studio, international): $0.05 / $0.40 up to 256,000 prompt tokens, $0.25 /
/// $2.00 above (LiteLLM's two `tiered_pricing` ranges); explicit cache writes 1.25x and reads 0.1x
/// of the request's input price. Two calls of `explicit:last` (no tools, no system prompt):
/// 300,000 tokens: call 1 writes them: 300,000 x 1.25 x 0.25e-6 = $0.09375, plus 100 output x
/// 2e-6 = $0.0002: $0.09395. Call 2 reads them: 300,000 x 0.1 x 0.25e-6 = $0.0075, writes the new
/// 110: 110 x 1.25 x 0.25e-6 = $0.000034375, plus $0.0002: $0.007734375.
/// 200,000 tokens: call 1: 200,000 x 1.25 x 0.05e-6 + 100 x 0.4e-6 = 0.0125 + 0.00004 = $0.01254.
/// The same figures come from the catalog that import-litellm makes of the LiteLLM entry.
#[test]
fn qwen_flash_takes_its_prompt_length_prices_with_explicit_caching() {
    let on = Pricing::on(day("2026-12-04"));
    let flash = |first| bills(&two_calls(first), "qwen-flash", "explicit:last", &on);
    let calls = flash(300_000);
    assert_eq!(calls[0].cache_write_tokens, 300_000);
    assert!(close(calls[0].cost_usd, 0.09395), "{}", calls[0].cost_usd);
    assert_eq!(calls[1].cache_read_tokens, 300_000);
    assert_eq!(calls[1].cache_write_tokens, 110);
    assert!(
        close(calls[1].cost_usd, 0.007734375),
        "{}",
        calls[1].cost_usd
    );
    let calls = flash(200_000);
    assert!(close(calls[0].cost_usd, 0.01254), "{}", calls[0].cost_usd);
    let c = Catalog::embedded().unwrap().priced(&on).unwrap();
    let m = c.model("qwen-flash").unwrap();
    // No breakpoint after the tools: Model Studio's markers sit in the messages.
    let e = Strategy::parse("explicit:tools")
        .unwrap()
        .resolve(m)
        .unwrap_err()
        .to_string();
    assert!(e.contains("qwen-flash"), "{e}");
    // The imported LiteLLM entry prices the uncached call the same way.
    let lite = std::fs::read_to_string(root().join("tests/fixtures/litellm_excerpt.json")).unwrap();
    let imp =
        pcsim::input::litellm::import(&lite, "excerpt", &["dashscope/qwen-flash".into()]).unwrap();
    let ic = Catalog::from_toml_str(&imp.toml, "imported").unwrap();
    let im = ic.model("dashscope/qwen-flash").unwrap();
    let none = Strategy::parse("none").unwrap();
    let s = scenario(&two_calls(300_000));
    let ours = simulate_collect(
        &s,
        &SimSetup::new(m, &none.resolve(m).unwrap(), s.first_token_seconds),
        0,
    );
    let theirs = simulate_collect(
        &s,
        &SimSetup::new(im, &none.resolve(im).unwrap(), s.first_token_seconds),
        0,
    );
    // 300,000 x 0.25e-6 + 100 x 2e-6 = $0.0752 on both.
    assert!(close(ours[0].cost_usd, 0.0752), "{}", ours[0].cost_usd);
    assert!(close(theirs[0].cost_usd, 0.0752), "{}", theirs[0].cost_usd);
}

/// OpenAI routes a request by its prompt prefix and `prompt_cache_key`. Two sessions, one second
/// apart, of two calls ten seconds apart on GPT-5.2 (automatic caching in 128-token steps, no
/// write fee, reads 0.1x; $1.75 in, $14 out): a 2,048-token system prompt, a 128-token first
/// turn, then 64 output and 64 user tokens a call, 64 output tokens each call ($0.000896).
/// One key for both (`shared`): session 1 call 1 writes 2,176 tokens at the input price,
/// 2,176 x 1.75e-6 + 0.000896 = $0.004704; session 2 call 1 reads the shared system prompt,
/// 2,048 x 0.175e-6 = $0.0003584, and writes its own 128 tokens, $0.000224: $0.0014784; each
/// second call reads its session's 2,176 tokens, $0.0003808, and writes 128, $0.000224:
/// $0.0015008. Total $0.009184.
/// A key per session (`per_session`): session 2 goes to machines of its own and reads nothing
/// at first, $0.004704 like session 1: total $0.0124096, 2,048 x 0.9 x 1.75e-6 = $0.0032256 more.
/// On a model that does not route by key (Kimi K3) the key changes nothing.
#[test]
fn a_prompt_cache_key_per_session_separates_the_sessions_caches_where_it_routes() {
    let text = |key: &str| {
        format!(
            "[session]\ncalls = 2\nsystem_tokens = 2048\nfirst_user_tokens = 128\nuser_tokens = 64\ntool_result_tokens = 0\noutput_tokens = 64\ngap_seconds = 10\nfirst_token_seconds = 0.5\n[sessions]\ncount = 2\nevery_seconds = 1\nprompt_cache_key = \"{key}\"\n"
        )
    };
    let on = Pricing::on(day("2026-12-04"));
    let bills = |key: &str, model: &str| {
        let c = Catalog::embedded().unwrap().priced(&on).unwrap();
        let m = c.model(model).unwrap();
        let r = Strategy::parse("automatic").unwrap().resolve(m).unwrap();
        let s = scenario(&text(key));
        simulate_collect(&s, &SimSetup::new(m, &r, s.first_token_seconds), 0)
    };
    let shared = bills("shared", "gpt-5.2");
    let costs: Vec<f64> = shared.iter().map(|b| b.cost_usd).collect();
    for (got, want) in costs
        .iter()
        .zip([0.004704, 0.0014784, 0.0015008, 0.0015008])
    {
        assert!(close(*got, want), "{costs:?}");
    }
    assert_eq!(shared[1].cache_read_tokens, 2048);
    assert!(close(shared.last().unwrap().cumulative_usd, 0.009184));
    let own = bills("per_session", "gpt-5.2");
    assert_eq!(own[1].cache_read_tokens, 0);
    assert!(close(own[1].cost_usd, 0.004704), "{}", own[1].cost_usd);
    assert!(close(own.last().unwrap().cumulative_usd, 0.0124096));
    // No routing by key: the same bills either way.
    assert_eq!(bills("shared", "kimi-k3"), bills("per_session", "kimi-k3"));
    // A value that is neither is refused naming the field.
    let e = Scenario::from_toml_str(&text("per_user"), "k.toml", &root().join("examples"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("sessions.prompt_cache_key") && e.contains("per_session"),
        "{e}"
    );
}

/// Regional endpoints cost 1.1x on Opus 4.8: 10,000 x 5e-6 x 1.1 + 500 x 25e-6 x 1.1 = $0.06875.
#[test]
fn regional_pricing_multiplies_by_the_models_factor() {
    let p = Pricing {
        regional: true,
        ..Pricing::default()
    };
    let t = total(ONE_CALL, "claude-opus-4.8", "none", &p);
    assert!(close(t, 0.06875), "{t}");
    // A model without a regional price is refused by name when selected, not silently priced.
    let c = Catalog::embedded().unwrap().priced(&p).unwrap();
    let e = c.model("kimi-k3").unwrap_err().to_string();
    assert!(e.contains("kimi-k3") && e.contains("regional"), "{e}");
}

/// The study's price sheet reproduces the gateway's rates, and selecting it by a wrong name is an
/// error that lists the sheets.
#[test]
fn the_study_sheet_holds_the_gateway_rates() {
    let c = Catalog::embedded()
        .unwrap()
        .priced(&Pricing::sheet("study-2026-07-31"))
        .unwrap();
    assert_eq!(
        c.model("gemini-3.6-flash")
            .unwrap()
            .input_usd_per_mtok
            .value,
        1.01
    );
    assert_eq!(c.model("glm-5.2").unwrap().input_usd_per_mtok.value, 0.45);
    // `gpt-5.6` is an alias of GPT-5.6 Sol: the sheet's Sol rates apply to it.
    assert_eq!(c.model("gpt-5.6").unwrap().input_usd_per_mtok.value, 1.75);
    let list = Catalog::embedded()
        .unwrap()
        .priced(&Pricing::on(day("2026-12-03")))
        .unwrap();
    assert_eq!(
        list.model("gemini-3.6-flash")
            .unwrap()
            .input_usd_per_mtok
            .value,
        0.75
    );
    assert_eq!(list.model("kimi-k3").unwrap().input_usd_per_mtok.value, 3.0);
    let out = pcsim()
        .args(["run", "--price-sheet", "gateway"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("study-2026-07-31") && err.contains("gateway"),
        "{err}"
    );
}

/// Every price of the built-in catalog says when it was checked, and the loader refuses one that
/// does not.
#[test]
fn every_price_has_a_source_and_a_checked_date() {
    let text = pcsim::model::catalog::EMBEDDED_CATALOG;
    let bad = text.replacen(
        ", checked = \"2026-11-20\", checked_against",
        ", checked_against",
        1,
    );
    assert_ne!(bad, text);
    let e = Catalog::from_toml_str(&bad, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("checked") && e.contains("m.toml"), "{e}");
    let bad = text.replacen("checked = \"2026-11-20\"", "checked = \"yesterday\"", 1);
    let e = Catalog::from_toml_str(&bad, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("yesterday"), "{e}");
}

/// OpenAI allows breakpoints only inside input messages: no breakpoint after the tools on GPT-5.6,
/// stated with the catalog's source; Claude keeps it.
#[test]
fn placement_constraints_come_from_the_catalog() {
    let c = Catalog::embedded().unwrap();
    let s = Strategy::parse("explicit:tools+last").unwrap();
    let e = s
        .resolve(c.model("gpt-5.6").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`tools` is not allowed") && e.contains("input messages"),
        "{e}"
    );
    assert!(s.resolve(c.model("claude-opus-4.8").unwrap()).is_ok());
    assert!(Strategy::parse("explicit:system+last")
        .unwrap()
        .resolve(c.model("gpt-5.6-luna").unwrap())
        .is_ok());
}

/// `tests/fixtures/litellm_excerpt.json` holds, verbatim, the entries of LiteLLM's
/// `model_prices_and_context_window.json` (BerriAI/litellm@00035b69, through its copy
/// RoCry/llm-api-price@8442b939 of 2026-07-24) for every LiteLLM key the catalog names, plus a few
/// more. Every built-in price the excerpt also carries must agree with it; the exceptions are
/// listed with their reason.
#[test]
fn each_built_in_price_the_litellm_excerpt_carries_agrees() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/litellm_excerpt.json")).unwrap();
    let check = |on: &str| {
        let c = Catalog::embedded()
            .unwrap()
            .priced(&Pricing::on(day(on)))
            .unwrap();
        pcsim::input::litellm_check::check_against(&c, &text, "excerpt").unwrap()
    };
    let fields = |r: &pcsim::input::litellm_check::CheckReport| -> Vec<(String, String)> {
        r.disagreements
            .iter()
            .map(|d| (d.model.clone(), d.field.clone()))
            .collect()
    };
    let pair = |m: &str, f: &str| (m.to_string(), f.to_string());
    // Gemini 2.5 Pro's `_priority` prices differ on every day: the excerpt lists them equal to the
    // standard ones (a 1.0x "tier"); LiteLLM 1.110.2 lists 1.8x, which the catalog carries.
    let priority = [
        pair("gemini-2.5-pro", "service_tier.priority.input_multiplier"),
        pair("gemini-2.5-pro", "service_tier.priority.output_multiplier"),
    ];
    // DeepSeek moved to peak / off-peak billing on 2026-08-16 and repriced V4 Flash on
    // 2026-09-10, after the excerpt's copy of 2026-07-24: from then on the catalog's list (peak)
    // prices differ from the file's (the read multiplier of V4 Flash is 0.02x again since
    // 2026-09-10, so it agrees).
    let deepseek = [
        pair("deepseek-v4-flash", "input_usd_per_mtok"),
        pair("deepseek-v4-flash", "output_usd_per_mtok"),
        pair("deepseek-v4-pro", "input_usd_per_mtok"),
        pair("deepseek-v4-pro", "output_usd_per_mtok"),
        pair("deepseek-v4-pro", "cache.automatic.read_multiplier"),
    ];
    // LiteLLM 1.110.2 (tests/fixtures/trackers/) corrected these after the excerpt's copy, and
    // the catalog follows it: GPT-5.5 priority 2.5x, Grok 4.5's read 0.15x, GPT-5.6's prompt limit
    // of 922,000 tokens.
    let mut corrected = vec![
        pair("gpt-5.5", "service_tier.priority.input_multiplier"),
        pair("gpt-5.5", "service_tier.priority.output_multiplier"),
        pair("grok-4.5", "cache.implicit.read_multiplier"),
    ];
    for m in ["gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"] {
        corrected.push(pair(m, "context_window"));
    }
    // OpenAI cut Terra and Luna on 2026-07-30 and Sol on 2026-08-21, after the copy of 2026-07-24.
    let cut = |models: &[&str]| -> Vec<(String, String)> {
        let mut v = Vec::new();
        for m in models {
            for f in [
                "input_usd_per_mtok",
                "output_usd_per_mtok",
                "long_context.input_usd_per_mtok",
                "long_context.output_usd_per_mtok",
            ] {
                v.push(pair(m, f));
            }
        }
        v
    };
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };
    // On 2026-08-01: those, the July cuts and Gemini 3.6 Flash's introductory price.
    let then = check("2026-08-01");
    let mut expected = priority.to_vec();
    expected.extend(corrected.iter().cloned());
    expected.extend(cut(&["gpt-5.6-terra", "gpt-5.6-luna"]));
    expected.push(pair("gemini-3.6-flash", "input_usd_per_mtok"));
    expected.push(pair("gemini-3.6-flash", "output_usd_per_mtok"));
    assert_eq!(sorted(fields(&then)), sorted(expected.clone()));
    assert!(then.agreeing >= 250, "{} prices compared", then.agreeing);
    // The keys named since (from LiteLLM 1.110.2) are not in the excerpt.
    let mut missing: Vec<&str> = then.missing_keys.iter().map(|(m, _)| m.as_str()).collect();
    missing.sort();
    assert_eq!(
        missing,
        [
            "claude-haiku-5.5",
            "claude-opus-5.5",
            "claude-sonnet-5.5",
            "glm-5.2",
            "glm-5.3",
            "gpt-6-luna",
            "gpt-6-sol",
            "gpt-6.1-sol",
            "gpt-6.1-terra",
            "grok-4.7",
            "kimi-k3",
            "mistral-medium-3"
        ]
    );
    // Today Sol's cut and DeepSeek's changes are in force as well.
    expected.extend(cut(&["gpt-5.6-sol"]));
    expected.extend(deepseek.iter().cloned());
    assert_eq!(
        sorted(fields(&check("2026-12-03"))),
        sorted(expected.clone())
    );
    // From 2027 on Gemini 3.6 Flash is at the rate LiteLLM lists.
    let later = check("2027-01-01");
    expected.retain(|(m, _)| m != "gemini-3.6-flash");
    assert_eq!(sorted(fields(&later)), sorted(expected.clone()));
    assert_eq!(expected.len(), 25);
    // A catalog price that drifts from the file is reported with both values.
    let drifted = pcsim::model::catalog::EMBEDDED_CATALOG.replacen(
        "input_usd_per_mtok = { value = 5.0, source = \"documented: LiteLLM key claude-opus-4-8",
        "input_usd_per_mtok = { value = 5.5, source = \"documented: LiteLLM key claude-opus-4-8",
        1,
    );
    let c = Catalog::from_toml_str(&drifted, "m.toml")
        .unwrap()
        .priced(&Pricing::on(day("2027-01-01")))
        .unwrap();
    let r = pcsim::input::litellm_check::check_against(&c, &text, "excerpt").unwrap();
    let d = r
        .disagreements
        .iter()
        .find(|d| d.model == "claude-opus-4.8")
        .expect("the drifted price is reported");
    assert_eq!(
        (d.field.as_str(), d.catalog, d.litellm),
        ("input_usd_per_mtok", Some(5.5), Some(5.0))
    );
    // The command prints the same.
    let out = pcsim()
        .current_dir(root())
        .args([
            "models",
            "--check-against",
            "tests/fixtures/litellm_excerpt.json",
            "--on",
            "2027-01-01",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("25 differ") && s.contains("service_tier.priority.input_multiplier"),
        "{s}"
    );
}

/// `import-litellm` maps every price that `models --check-against` compares: the catalog imported
/// from the excerpt agrees with the excerpt on every one of them (minimums, long-context tiers
/// with their cache reads, Batch / Flex / priority, regional multipliers, 1-hour writes).
#[test]
fn an_imported_catalog_agrees_with_the_file_it_came_from() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/litellm_excerpt.json")).unwrap();
    let imp = pcsim::input::litellm::import(&text, "excerpt", &[]).unwrap();
    let keys = serde_json::from_str::<serde_json::Map<String, Value>>(&text)
        .unwrap()
        .len();
    assert_eq!(imp.imported.len(), keys, "{:?}", imp.skipped);
    let c = Catalog::from_toml_str(&imp.toml, "imported").unwrap();
    let r = pcsim::input::litellm_check::check_against(&c, &text, "excerpt").unwrap();
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    assert!(r.missing_keys.is_empty() && r.not_compared.is_empty());
    // Far more than the base prices: tiers, minimums and long context are compared too.
    assert!(
        r.agreeing > 4 * keys,
        "{} prices for {keys} entries",
        r.agreeing
    );
    // Spot checks, from the excerpt's numbers: gpt-5.5 above 272K is 1e-05 in / 4.5e-05 out and
    // reads at 1e-06 / 1e-05 = 0.1; its Batch input is 2.5e-06 / 5e-06 = 0.5.
    let g = c.model("gpt-5.5").unwrap();
    let lc = g.long_context.as_ref().unwrap();
    assert_eq!(
        (
            lc.above_tokens.value,
            lc.input_usd_per_mtok.value,
            lc.output_usd_per_mtok.value
        ),
        (272_000, 10.0, 45.0)
    );
    assert_eq!(lc.read_multiplier.as_ref().unwrap().value, 0.1);
    assert_eq!(g.service_tier["batch"].input_multiplier.value, 0.5);
    // Claude Sonnet 4.5: prompt_cache_min_tokens 1024; 1-hour writes 6e-06 / 3e-06 = 2.
    let s = c.model("claude-sonnet-4-5").unwrap();
    let ex = s.cache.explicit.as_ref().unwrap();
    assert_eq!(ex.min_tokens.value, 1024);
    assert_eq!(ex.tiers["1h"].write_multiplier.value, 2.0);
    // Azure OpenAI's gpt-4o caches automatically (LiteLLM files its cached price as a write).
    let az = c.model("azure/eu/gpt-4o-2024-11-20").unwrap();
    assert!(az.cache.explicit.is_none() && az.cache.automatic.is_some());
}

/// Hostile rows are skipped with the LiteLLM key and field named; the rest is imported and the
/// command succeeds (exit 0). A file with nothing importable is a user error (exit 2).
#[test]
fn import_litellm_skips_bad_rows_and_imports_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lite.toml");
    let o = pcsim()
        .current_dir(root())
        .args([
            "import-litellm",
            "tests/fixtures/litellm_hostile.json",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(
        s.contains("imported 1 model, skipped 5 (5 with a value that cannot be a price)"),
        "{s}"
    );
    for line in [
        "skipped string-price: field `input_cost_per_token`: expected a price per token, found the string \"0.000003\"",
        "skipped negative-output: field `output_cost_per_token`: -0.000002 is negative",
        "skipped read-dearer-than-input: field `cache_read_input_token_cost`: 5e-6 is above input_cost_per_token 1e-6",
        "skipped half-a-token: field `prompt_cache_min_tokens`: expected a whole number of tokens",
        "skipped null-entry: the entry is not an object but null",
    ] {
        assert!(s.contains(line), "{line}\n{s}");
    }
    let c = Catalog::load(&out).unwrap();
    let m = c.model("claude-haiku-4-5").unwrap();
    assert_eq!(m.cache.explicit.as_ref().unwrap().min_tokens.value, 4096);
    // Nothing importable: exit 2, the file named.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"x": {"input_cost_per_token": "free", "output_cost_per_token": 0}}"#,
    )
    .unwrap();
    let o = pcsim().arg("import-litellm").arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.json") && err.contains("x: field `input_cost_per_token`"),
        "{err}"
    );
}

/// Claude Sonnet 5.5's cache reads went from 0.1x to 0.05x of its $2 input on 2026-10-07. Two
/// calls, explicit:last: call 1 writes its 10,000-token prompt at 1.25x, 10,000 x 1.25 x 2e-6 =
/// $0.025, plus 100 output tokens x 10e-6 = $0.001; call 2 reads the 10,000 and writes the new
/// 100 + 10 tokens, 110 x 1.25 x 2e-6 = $0.000275, plus $0.001 of output. Reads: 10,000 x 0.1 x
/// 2e-6 = $0.002 on 2026-10-06, 10,000 x 0.05 x 2e-6 = $0.001 from 2026-10-07.
/// Totals $0.029275 and $0.028275.
#[test]
fn sonnet_5_5_reads_at_0_05x_from_2026_10_07() {
    let text = "[session]\ncalls = 2\nfirst_user_tokens = 10000\nuser_tokens = 10\ntool_result_tokens = 0\noutput_tokens = 100\ngap_seconds = 10\n";
    let on = |d: &str| {
        total(
            text,
            "claude-sonnet-5.5",
            "explicit:last",
            &Pricing::on(day(d)),
        )
    };
    let (before, after) = (on("2026-10-06"), on("2026-10-07"));
    assert!(close(before, 0.029275), "{before}");
    assert!(close(after, 0.028275), "{after}");
}

/// GPT-6.2 Sol's 12-hour retention tier (writes at 2.5x, $5 per million, against 1.25x for 30
/// minutes): two calls two hours apart, a 2,000-token system prompt, explicit:system+last, $2 in,
/// $10 out, reads at 0.05x.
/// 30 minutes: call 1 writes 2,100 at 1.25x, 2,100 x 1.25 x 2e-6 = $0.00525; the cache has expired
///   by call 2, which writes its 2,250 tokens again: 2,250 x 1.25 x 2e-6 = $0.005625. With 2 x 50
///   output tokens x 10e-6 = $0.001: $0.011875.
/// 12 hours: call 1 writes 2,100 at 2.5x = $0.0105; call 2 reads 2,100 at 0.05x = $0.00021 and writes
///   the new 150 at 2.5x = $0.00075. With $0.001 of output: $0.01246.
#[test]
fn gpt_6_2_sol_keeps_its_cache_twelve_hours_at_2_5x() {
    let text = "[session]\ncalls = 2\nsystem_tokens = 2000\nfirst_user_tokens = 100\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\ngap_seconds = 7200\n";
    let p = Pricing::on(day("2026-12-03"));
    let half_hour = total(text, "gpt-6.2-sol", "explicit:system+last", &p);
    let twelve = total(text, "gpt-6.2-sol", "explicit:system@12h+last@12h", &p);
    assert!(close(half_hour, 0.011875), "{half_hour}");
    assert!(close(twelve, 0.01246), "{twelve}");
}

/// Every built-in model states its context window (the largest prompt it accepts) with a source,
/// and the catalog's window agrees with LiteLLM's `max_input_tokens` wherever the excerpt carries
/// the model (`models --check-against` compares it).
#[test]
fn every_built_in_model_has_a_sourced_context_window() {
    let c = Catalog::embedded().unwrap();
    let missing: Vec<&str> = c
        .models
        .iter()
        .filter(|m| m.context_window.is_none())
        .map(|m| m.id.as_str())
        .collect();
    assert!(missing.is_empty(), "no context_window: {missing:?}");
    for m in &c.models {
        let w = m.context_window.as_ref().unwrap();
        assert!(w.value >= 100_000, "{}: {}", m.id, w.value);
        assert!(
            ["documented:", "derived:", "assumed:", "measured:"]
                .iter()
                .any(|p| w.source.starts_with(p)),
            "{}: {}",
            m.id,
            w.source
        );
    }
    // Figures read off the sources by hand: Grok 4.7 500,000 (docs.x.ai), GPT-6.2 Sol 922,000
    // input tokens (OpenAI's page), mistral-medium-3 262,144 (LiteLLM 1.110.2: the name serves
    // Medium 3.5 since 2026-06-16).
    let window = |id: &str| c.model(id).unwrap().context_window.as_ref().unwrap().value;
    assert_eq!(window("grok-4.7"), 500_000);
    assert_eq!(window("gpt-6.2-sol"), 922_000);
    assert_eq!(window("mistral-medium-3"), 262_144);
    // A drifted window is reported against the file.
    let text = std::fs::read_to_string(root().join("tests/fixtures/litellm_excerpt.json")).unwrap();
    let drifted = pcsim::model::catalog::EMBEDDED_CATALOG.replacen(
        "context_window = { value = 1000000, source = \"documented: LiteLLM key claude-opus-4-8",
        "context_window = { value = 128000, source = \"documented: LiteLLM key claude-opus-4-8",
        1,
    );
    let c = Catalog::from_toml_str(&drifted, "m.toml")
        .unwrap()
        .priced(&Pricing::on(day("2026-08-01")))
        .unwrap();
    let r = pcsim::input::litellm_check::check_against(&c, &text, "excerpt").unwrap();
    let d = r
        .disagreements
        .iter()
        .find(|d| d.model == "claude-opus-4.8")
        .expect("the drifted window is reported");
    assert_eq!(
        (d.field.as_str(), d.catalog, d.litellm),
        ("context_window", Some(128000.0), Some(1000000.0))
    );
}

/// DeepSeek V4 Flash's list (peak) prices by day, and `--service-tier off-peak` at half of them.
/// Two calls, automatic caching (64-token blocks, no write fee): a 6,400-token system prompt,
/// 64-token user turns and answers. Call 1 sends 6,464 uncached tokens and 64 output tokens; call 2
/// reads those 6,464 and sends the answer and the new turn, 128 tokens, uncached, plus 64 output.
/// Until 2026-08-16, $0.14 / $0.28, reads 0.02x:
///   6,464 x 0.14e-6 + 64 x 0.28e-6 + 6,464 x 0.02 x 0.14e-6 + 128 x 0.14e-6 + 64 x 0.28e-6
///   = 0.00090496 + 0.00001792 + 0.0000180992 + 0.00001792 + 0.00001792 = $0.0009768192;
/// from 2026-08-17 (peak $0.44 / $1.32, reads $0.014 = 0.0318182x):
///   0.00284416 + 0.00008448 + 6,464 x 0.0318182 x 0.44e-6 + 0.00005632 + 0.00008448
///   = $0.0031599360517;
/// from 2026-09-10 (V4.1 Flash at peak $0.30 / $1.20, reads $0.006 = 0.02x):
///   0.0019392 + 0.0000768 + 0.000038784 + 0.0000384 + 0.0000768 = $0.002169984;
/// off-peak that day: every rate halved, $0.001084992.
#[test]
fn deepseek_takes_its_dated_peak_prices_and_off_peak_halves_them() {
    let text = "[session]\ncalls = 2\nsystem_tokens = 6400\nfirst_user_tokens = 64\nuser_tokens = 64\ntool_result_tokens = 0\noutput_tokens = 64\ngap_seconds = 30\n";
    let on = |d: &str| total(text, "deepseek-v4-flash", "automatic", &Pricing::on(day(d)));
    let v = on("2026-08-01");
    assert!(close(v, 0.0009768192), "{v}");
    let v = on("2026-09-01");
    assert!(close(v, 0.0031599360517), "{v}");
    let v = on("2026-12-03");
    assert!(close(v, 0.002169984), "{v}");
    let off_peak = Pricing {
        service_tier: Some("off-peak".into()),
        on: Some(day("2026-12-03")),
        ..Pricing::default()
    };
    let v = total(text, "deepseek-v4-flash", "automatic", &off_peak);
    assert!(close(v, 0.001084992), "{v}");
    // A model without the tier is refused by name, not priced at its peak rates.
    let out = pcsim()
        .args([
            "run",
            "--model",
            "claude-opus-4.8",
            "--service-tier",
            "off-peak",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("off-peak"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The default scenario's GPT-5.6 rows at the prices in force since Sol's cut of 2026-08-21
/// (LiteLLM 1.110.2 key gpt-5.6-sol and genai-prices 0.2.5 openai/gpt-5.6-sol: $4 input, $20
/// output, cache writes 1.25x and reads 0.1x of input; OpenAI's page as issue 31 quotes it).
/// The scenario: 20 calls, a tool block of B tokens (the token model's figure for 26 synthetic
/// tools of 4 parameters: 1,981 today), a 1,800-token system prompt, a 250-token task, then 900
/// tool-result and 220 output tokens per call. Call n's prompt is B + 2,050 + 1,120 (n - 1):
/// 20 B + 41,000 + 212,800 prompt tokens (293,420 with B = 1,981) and 4,400 output tokens.
/// No caching: 293,420 x 4e-6 + 4,400 x 20e-6 = 1.17368 + 0.088 = $1.26168.
/// Cached (its cheapest placement, explicit:last, bills as explicit:system+last here): call 1 writes its B + 2,050 tokens; each later call reads the
/// previous prompt and writes the 1,120 new tokens: writes B + 2,050 + 19 x 1,120 = 25,311, reads
/// 19 (B + 2,050) + 1,120 x (0 + 1 + ... + 18) = 76,589 + 191,520 = 268,109:
/// 25,311 x 1.25 x 4e-6 + 268,109 x 0.1 x 4e-6 + 0.088 = 0.126555 + 0.1072436 + 0.088 = $0.3217986.
/// With `--price-sheet sol-promotion-ended` (the launch $5 / $30): 293,420 x 5e-6 + 0.132 = $1.5991.
#[test]
fn the_default_scenarios_gpt_5_6_rows_match_a_hand_computation() {
    let (input, output) = (4.0e-6, 20.0e-6);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--model", "gpt-5.6", "--format", "json"];
        args.extend_from_slice(extra);
        json_of(&args)
    };
    let c = Catalog::embedded().unwrap();
    let b = c
        .model("gpt-5.6")
        .unwrap()
        .rendering()
        .block_tokens(&pcsim::model::tools::synthetic_tools(1, 26, 4)) as f64;
    let v = run(&["--on", "2026-12-05"]);
    let rows = v["results"].as_array().unwrap();
    let row = |s: &str| rows.iter().find(|r| r["strategy"] == s).unwrap();
    let none = row("none");
    assert_eq!(none["calls"][0]["tool_block_tokens"].as_f64().unwrap(), b);
    let prompt = 20.0 * b + 41_000.0 + 212_800.0;
    assert_eq!(none["totals"]["prompt_tokens"].as_f64().unwrap(), prompt);
    let by_hand = prompt * input + 4_400.0 * output;
    assert!(
        (none["total_usd"].as_f64().unwrap() - by_hand).abs() < 1e-6,
        "{none}"
    );
    // `cached`: the cheapest placement, one moving breakpoint on the last message (on one
    // conversation it bills as explicit:system+last does: the same writes and reads).
    let cached = rows
        .iter()
        .find(|r| r["strategy_requested"] == "cached")
        .unwrap();
    let writes = b + 2_050.0 + 19.0 * 1_120.0;
    let reads = 19.0 * (b + 2_050.0) + 1_120.0 * 171.0;
    assert_eq!(
        cached["totals"]["cache_write_tokens"].as_f64().unwrap(),
        writes
    );
    assert_eq!(
        cached["totals"]["cache_read_tokens"].as_f64().unwrap(),
        reads
    );
    let by_hand = writes * 1.25 * input + reads * 0.1 * input + 4_400.0 * output;
    assert!(
        (cached["total_usd"].as_f64().unwrap() - by_hand).abs() < 1e-6,
        "{}",
        cached["total_usd"]
    );
    // Today's figures, as the comment works them out (a change of the token model's block shows
    // here: update the comment's figures with it).
    assert_eq!(b, 1981.0);
    assert!(close(prompt * input + 4_400.0 * output, 1.26168));
    assert!(close(by_hand, 0.3217986));
    // The other side of the promotion's date, and the launch prices before the cut.
    for extra in [
        &["--price-sheet", "sol-promotion-ended"][..],
        &["--on", "2026-08-20"][..],
    ] {
        let v = run(extra);
        let none = &v["results"][0];
        let launch = prompt * 5e-6 + 4_400.0 * 30e-6;
        assert!(
            (none["total_usd"].as_f64().unwrap() - launch).abs() < 1e-6,
            "{extra:?}: {none}"
        );
    }
}

/// Claude Haiku 5.5 with a 700-token system prompt caches it: its minimum is 512 tokens (LiteLLM
/// 1.110.2 key claude-haiku-5-5, prompt_cache_min_tokens 512; it was assumed 4,096 before). Prices
/// (LiteLLM 1.110.2 and genai-prices 0.2.5 anthropic/claude-haiku-5-5): $0.10 input, $0.50 output,
/// 5-minute writes $0.125 (1.25x), reads $0.01 (0.1x). Two calls 30 s apart,
/// explicit:system+last, a 100-token first turn, a 50-token answer, a 100-token second turn:
/// call 1 writes 800 tokens: 800 x 0.125e-6 = $0.0001, plus 50 x 0.5e-6 = $0.000025;
/// call 2 reads 800: 800 x 0.01e-6 = $0.000008, writes 150: 150 x 0.125e-6 = $0.00001875, plus
/// $0.000025. Total $0.00017675 (uncached it would be 1,750 x 0.1e-6 + $0.00005 = $0.000225).
#[test]
fn haiku_5_5_caches_a_700_token_system_prompt() {
    let text = "[session]\ncalls = 2\nsystem_tokens = 700\nfirst_user_tokens = 100\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\ngap_seconds = 30\n";
    let on = Pricing::on(day("2026-12-05"));
    let calls = bills(text, "claude-haiku-5.5", "explicit:system+last", &on);
    assert_eq!(
        (calls[0].cache_write_tokens, calls[1].cache_read_tokens),
        (800, 800)
    );
    let by_hand =
        800.0 * 0.125e-6 + 50.0 * 0.5e-6 + 800.0 * 0.01e-6 + 150.0 * 0.125e-6 + 50.0 * 0.5e-6;
    assert!(close(by_hand, 0.00017675));
    let total = calls.last().unwrap().cumulative_usd;
    assert!(close(total, by_hand), "{total} vs {by_hand}");
}

/// A promotion (`until`) applies from its first through its last day; after it the prices in force
/// before return. Sol's cut given an end on 2026-11-21: $4 that day, $5 the next, and the report of
/// a run names the pricing day and the change in force.
#[test]
fn a_promotion_ends_on_its_last_day() {
    let from = "effective_from = \"2026-08-21\"\n";
    let text = pcsim::model::catalog::EMBEDDED_CATALOG.replacen(
        from,
        &format!("{from}until = \"2026-11-21\"\n"),
        1,
    );
    assert_ne!(text, pcsim::model::catalog::EMBEDDED_CATALOG);
    let c = Catalog::from_toml_str(&text, "m.toml").unwrap();
    let price = |d: &str| {
        let p = c.priced(&Pricing::on(day(d))).unwrap();
        let m = p.model("gpt-5.6-sol").unwrap();
        (m.input_usd_per_mtok.value, m.priced.clone().unwrap())
    };
    assert_eq!(
        price("2026-11-21"),
        (
            4.0,
            "list prices on 2026-11-21 (price change of 2026-08-21)".into()
        )
    );
    assert_eq!(
        price("2026-11-22"),
        (5.0, "list prices on 2026-11-22".into())
    );
    assert_eq!(price("2026-08-20").0, 5.0);
    // An end before the start is refused.
    let bad = pcsim::model::catalog::EMBEDDED_CATALOG.replacen(
        from,
        &format!("{from}until = \"2026-08-01\"\n"),
        1,
    );
    let e = Catalog::from_toml_str(&bad, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("until") && e.contains("before effective_from"),
        "{e}"
    );
    // A report's provenance names the pricing day and its price sources the change in force.
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let out = pcsim()
        .args([
            "run",
            "--model",
            "gpt-5.6",
            "--on",
            "2026-12-05",
            "--report",
        ])
        .arg(&md)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = std::fs::read_to_string(&md).unwrap();
    assert!(r.contains("| pricing | list prices on 2026-12-05 |"), "{r}");
    assert!(
        r.contains("list prices on 2026-12-05 (price change of 2026-08-21)"),
        "{r}"
    );
}

/// `import-litellm` on keys that are built-in ids keeps the built-in caching mechanics and takes
/// only the prices from the file, and says which ids it overlays: laid on the built-in catalog with
/// `--catalog`, GPT-5.6 Sol keeps its 30-minute explicit cache with no breakpoint after the tools
/// and its `gpt-5.6` alias, at LiteLLM 1.110.2's $4 / $20; Opus 5 keeps its rendering family
/// (`claude-5`, factor 1.517), not the generic one the import gives unknown Claude keys.
#[test]
fn import_litellm_keeps_the_mechanics_of_the_built_in_models_it_overlays() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/trackers/litellm-1.110.2.json"))
        .unwrap();
    let keys = ["gpt-5.6-sol".to_string(), "claude-opus-5".to_string()];
    let imp = pcsim::input::litellm::import(&text, "litellm-1.110.2.json", &keys).unwrap();
    assert_eq!(
        imp.replaced,
        [
            ("gpt-5.6-sol".to_string(), "gpt-5.6-sol".to_string()),
            ("claude-opus-5".to_string(), "claude-opus-5".to_string())
        ]
    );
    let c = Catalog::overlay_toml_str(&imp.toml, "imported.toml").unwrap();
    let builtin = Catalog::embedded().unwrap();
    for id in ["gpt-5.6-sol", "gpt-5.6"] {
        let m = c.model(id).unwrap();
        let b = builtin.model(id).unwrap();
        assert_eq!(
            (m.input_usd_per_mtok.value, m.output_usd_per_mtok.value),
            (4.0, 20.0)
        );
        assert!(m.input_usd_per_mtok.source.contains("LiteLLM"), "{id}");
        assert_eq!(m.default_strategy, b.default_strategy);
        let (e, be) = (
            m.cache.explicit.as_ref().unwrap(),
            b.cache.explicit.as_ref().unwrap(),
        );
        assert_eq!(e.default_tier, "30m");
        assert_eq!(e.tiers["30m"].ttl_seconds.value, 1800.0);
        assert_eq!(e.allowed_anchors, be.allowed_anchors);
        assert_eq!(e.invalidates, be.invalidates);
        assert_eq!(e.tiers["30m"].write_multiplier.value, 1.25);
        assert!(
            m.price_change.is_empty(),
            "the file's prices are as of the import"
        );
    }
    let opus = c.model("claude-opus-5").unwrap();
    assert_eq!(opus.family, "claude-5");
    assert_eq!(
        opus.rendering().factor.as_ref().map(|f| f.value),
        builtin
            .model("claude-opus-5")
            .unwrap()
            .rendering()
            .factor
            .as_ref()
            .map(|f| f.value)
    );
    // The command says which ids it overlays.
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("i.toml");
    let out = pcsim()
        .current_dir(root())
        .args([
            "import-litellm",
            "tests/fixtures/trackers/litellm-1.110.2.json",
            "--model",
            "gpt-5.6-sol",
            "--out",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("overlays built-in gpt-5.6-sol with gpt-5.6-sol"),
        "{s}"
    );
}

/// Bedrock Converse logs split cache writes by lifetime in `cacheDetails`; replay bills the 1-hour
/// ones at the 1-hour rate. Claude Sonnet 4.6 on Bedrock, $3 in / $15 out, writes 1.25x (5 min) and
/// 2x (1 h): 10 uncached + 1,000 written for 5 min + 2,000 for 1 h + 20 output =
/// 10 x 3e-6 + 1,000 x 1.25 x 3e-6 + 2,000 x 2 x 3e-6 + 20 x 15e-6 = 0.00003 + 0.00375 + 0.012 +
/// 0.0003 = $0.01608 (all 3,000 at the 5-minute rate: 0.00003 + 0.01125 + 0.0003 = $0.01158).
#[test]
fn replay_bills_bedrock_one_hour_writes_at_the_one_hour_rate() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bedrock.jsonl");
    let line = |details: &str| {
        format!("{{\"modelId\": \"us.anthropic.claude-sonnet-4-6\", \"stopReason\": \"end_turn\", \"usage\": {{\"inputTokens\": 10, \"outputTokens\": 20, \"totalTokens\": 3030, \"cacheReadInputTokens\": 0, \"cacheWriteInputTokens\": 3000{details}}}}}\n")
    };
    let logged = |details: &str| {
        std::fs::write(&log, line(details)).unwrap();
        let calls = pcsim::input::usagelog::load_log(&log).unwrap().calls;
        let v = json_of(&[
            "replay",
            log.to_str().unwrap(),
            "--model",
            "bedrock-claude-sonnet-4.6",
            "--strategy",
            "none",
            "--format",
            "json",
        ]);
        (
            calls[0].cache_write_5m_tokens,
            calls[0].cache_write_1h_tokens,
            v["results"][0]["logged"]["cost_usd"].as_f64().unwrap(),
        )
    };
    let (w5, w1h, usd) = logged(", \"cacheDetails\": [{\"ttl\": \"1h\", \"inputTokens\": 2000}, {\"ttl\": \"5m\", \"inputTokens\": 1000}]");
    assert_eq!((w5, w1h), (1000, 2000));
    let by_hand = 10.0 * 3e-6 + 1000.0 * 1.25 * 3e-6 + 2000.0 * 2.0 * 3e-6 + 20.0 * 15e-6;
    assert!((usd - by_hand).abs() < 1e-9, "{usd} vs {by_hand}");
    // Without cacheDetails every write is a 5-minute one.
    let (w5, w1h, usd) = logged("");
    assert_eq!((w5, w1h), (3000, 0));
    assert!((usd - 0.01158).abs() < 1e-9, "{usd}");
    // More 1-hour writes than writes is refused, naming the field.
    std::fs::write(
        &log,
        line(", \"cacheDetails\": [{\"ttl\": \"1h\", \"inputTokens\": 5000}]"),
    )
    .unwrap();
    let e = pcsim::input::usagelog::load_log(&log);
    let text = match e {
        Err(e) => e.to_string(),
        Ok(l) => format!("{:?}", l.unreadable_examples),
    };
    assert!(text.contains("cacheDetails"), "{text}");
}

/// `import-litellm` maps LiteLLM's 12-hour write price (`cache_creation_input_token_cost_above_12hr`)
/// to a 12-hour tier and DeepSeek's `off_peak_pricing` to the `off-peak` service tier, and
/// `--check-against` compares both: on LiteLLM 1.110.2, GPT-6 Luna's 12-hour write is 2.5e-07 /
/// 1e-07 = 2.5x and DeepSeek V4 Flash off-peak is 1.5e-07 / 3e-07 = 0.5x in and 6e-07 / 1.2e-06 =
/// 0.5x out; the imported catalog agrees with the file on every price compared.
#[test]
fn import_litellm_maps_twelve_hour_writes_and_off_peak_prices() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/trackers/litellm-1.110.2.json"))
        .unwrap();
    let keys = [
        "gpt-6-luna".to_string(),
        "deepseek/deepseek-v4-flash".to_string(),
    ];
    let imp = pcsim::input::litellm::import(&text, "litellm-1.110.2.json", &keys).unwrap();
    assert!(!imp.unmapped.contains_key("off_peak_pricing"));
    assert!(!imp
        .unmapped
        .contains_key("cache_creation_input_token_cost_above_12hr"));
    let c = Catalog::from_toml_str(&imp.toml, "imported").unwrap();
    let luna = c.model("gpt-6-luna").unwrap();
    let t12 = &luna.cache.explicit.as_ref().unwrap().tiers["12h"];
    assert_eq!(
        (t12.ttl_seconds.value, t12.write_multiplier.value),
        (43200.0, 2.5)
    );
    let off = &c.model("deepseek/deepseek-v4-flash").unwrap().service_tier["off-peak"];
    assert_eq!(
        (off.input_multiplier.value, off.output_multiplier.value),
        (0.5, 0.5)
    );
    let r = pcsim::input::litellm_check::check_against(&c, &text, "file").unwrap();
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    for f in [
        "cache.explicit.tiers.12h.write_multiplier",
        "service_tier.off-peak.input_multiplier",
    ] {
        assert!(r.agreed.iter().any(|a| a.field == f), "{f} compared");
    }
}

/// A price nobody could compare with a source says so instead of carrying an invented date:
/// `checked = "unchecked"` with `checked_against = "unchecked: why"`; the loader refuses the
/// first without the second. Every built-in price has either a day or such a reason.
#[test]
fn an_unchecked_price_says_why() {
    let text = pcsim::model::catalog::EMBEDDED_CATALOG;
    let line = "checked = \"unchecked\", checked_against = \"unchecked: ";
    assert!(text.contains(line));
    let bad = text.replacen(
        line,
        "checked = \"unchecked\", checked_against = \"shortapi ",
        1,
    );
    let e = Catalog::from_toml_str(&bad, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.toml") && e.contains("checked_against") && e.contains("unchecked: why"),
        "{e}"
    );
    let v: toml::Value = toml::from_str(text).unwrap();
    let (mut dated, mut unchecked) = (0, 0);
    fn walk(v: &toml::Value, f: &mut dyn FnMut(&toml::map::Map<String, toml::Value>)) {
        match v {
            toml::Value::Table(t) => {
                f(t);
                t.values().for_each(|x| walk(x, f));
            }
            toml::Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    walk(&v, &mut |t| {
        let Some(c) = t.get("checked").and_then(|c| c.as_str()) else {
            return;
        };
        let against = t.get("checked_against").and_then(|a| a.as_str());
        assert!(against.is_some(), "a price checked {c} says against what");
        if c == "unchecked" {
            unchecked += 1;
            assert!(against.unwrap().starts_with("unchecked: "));
        } else {
            dated += 1;
        }
    });
    assert!(dated > 500, "{dated}");
    assert_eq!(unchecked, 6, "qwen3.6-plus's list and long-context prices");
}
