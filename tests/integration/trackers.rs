//! Price trackers: the catalog against the pinned tracker files of `tests/fixtures/trackers/`
//! (excerpts of LiteLLM 1.110.2 and genai-prices 0.2.5 with their provenance), every difference
//! with a verdict in `verdicts.toml`; and the rule that a price checked against a tracker file is
//! dated no later than the file.

use std::collections::BTreeSet;

use pcsim::input::litellm_check::{check_against_on, CheckReport};
use pcsim::model::catalog::{Catalog, EMBEDDED_CATALOG};
use pcsim::model::pricing::Pricing;

use crate::common::{json_of, root};

/// The pinned trackers: the catalog's `[[tracker]]` id, the excerpt and the day the check reads.
fn pinned() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/trackers/provenance.json"))
        .expect("tests/fixtures/trackers/provenance.json is committed");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2, "LiteLLM and genai-prices are pinned");
    list.iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap().to_string();
            (s("id"), s("excerpt"), s("released"))
        })
        .collect()
}

fn check(excerpt: &str, day: &str) -> CheckReport {
    let text = std::fs::read_to_string(root().join("tests/fixtures/trackers").join(excerpt))
        .expect("the pinned excerpt is committed");
    let day = day.parse().unwrap();
    let c = Catalog::embedded()
        .unwrap()
        .priced(&Pricing::on(day))
        .unwrap();
    check_against_on(&c, &text, excerpt, day).unwrap()
}

/// Every difference between the catalog and a pinned tracker file has a verdict (`pcsim`,
/// `tracker` or `open`, with a reason), and every verdict names a difference that still exists: a
/// price fixed or a tracker corrected makes its verdict stale, and the test says which.
#[test]
fn every_difference_with_a_pinned_tracker_has_a_verdict() {
    let text =
        std::fs::read_to_string(root().join("tests/fixtures/trackers/verdicts.toml")).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    let verdicts = v["verdict"].as_array().unwrap();
    let mut listed = BTreeSet::new();
    for x in verdicts {
        let s = |k: &str| x[k].as_str().unwrap().to_string();
        assert!(
            ["pcsim", "tracker", "open"].contains(&s("verdict").as_str()),
            "{x}"
        );
        assert!(s("reason").len() > 20, "a verdict gives its reason: {x}");
        assert!(
            listed.insert((s("tracker"), s("model"), s("field"))),
            "listed twice: {x}"
        );
    }
    let mut found = BTreeSet::new();
    for (id, excerpt, day) in pinned() {
        let r = check(&excerpt, &day);
        assert!(r.missing_keys.is_empty(), "{id}: {:?}", r.missing_keys);
        assert!(r.agreeing >= 350, "{id}: {} prices compared", r.agreeing);
        for d in &r.disagreements {
            found.insert((r.tracker.clone(), d.model.clone(), d.field.clone()));
        }
    }
    let unexplained: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        unexplained.is_empty(),
        "differences without a verdict: {unexplained:?}"
    );
    assert!(stale.is_empty(), "verdicts without a difference: {stale:?}");
}

/// The issue's prices, against both pinned trackers on their own days: GPT-5.6 Luna $0.20 / $1.20,
/// Terra $2 / $12, Sol $4 / $20, the 5.5 Claude minimums 512, GPT-5.5 priority 2.5x, Grok 4.5's
/// read 0.15x, GPT-6 Luna's long-context tier, Kimi K3's 5-minute write at 1x: each agrees.
#[test]
fn the_issues_prices_agree_with_both_trackers() {
    for (id, excerpt, day) in pinned() {
        let r = check(&excerpt, &day);
        let agrees = |m: &str, f: &str| r.agreed.iter().any(|a| a.model == m && a.field == f);
        for (m, f) in [
            ("gpt-5.6-luna", "input_usd_per_mtok"),
            ("gpt-5.6-luna", "output_usd_per_mtok"),
            ("gpt-5.6-terra", "input_usd_per_mtok"),
            ("gpt-5.6-terra", "output_usd_per_mtok"),
            ("gpt-5.6-sol", "input_usd_per_mtok"),
            ("gpt-5.6-sol", "output_usd_per_mtok"),
            ("gpt-5.6-sol", "long_context.output_usd_per_mtok"),
            ("gpt-5.5", "service_tier.priority.input_multiplier"),
            ("grok-4.5", "cache.implicit.read_multiplier"),
            ("gpt-6-luna", "long_context.input_usd_per_mtok"),
            ("gpt-6-luna", "service_tier.flex.input_multiplier"),
        ] {
            assert!(agrees(m, f), "{id}: {m} {f}");
        }
        if id.starts_with("litellm") {
            for (m, f) in [
                ("claude-haiku-5.5", "cache.explicit.min_tokens"),
                ("claude-sonnet-5.5", "cache.explicit.min_tokens"),
                ("kimi-k3", "cache.automatic.read_multiplier"),
                ("claude-sonnet-4.6", "service_tier.batch.input_multiplier"),
                ("grok-4.7", "service_tier.batch.input_multiplier"),
                ("mistral-medium-3", "input_usd_per_mtok"),
            ] {
                assert!(agrees(m, f), "{id}: {m} {f}");
            }
        }
    }
}

/// A price whose `checked_against` names a tracker cannot be dated later than the tracker's
/// release day (LiteLLM 1.110.2 was published on 2026-11-20): the loader refuses it, naming the
/// field, the two days and the tracker. A page title is free text and not held to a date.
#[test]
fn a_checked_date_later_than_its_trackers_release_is_refused() {
    let line = "checked = \"2026-11-20\", checked_against = \"litellm-1.110.2\"";
    assert!(EMBEDDED_CATALOG.contains(line));
    let bad = EMBEDDED_CATALOG.replacen(
        line,
        "checked = \"2026-12-03\", checked_against = \"litellm-1.110.2\"",
        1,
    );
    let e = Catalog::from_toml_str(&bad, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.toml")
            && e.contains("checked")
            && e.contains("2026-12-03 is later than 2026-11-20")
            && e.contains("litellm-1.110.2"),
        "{e}"
    );
    // The release day itself is allowed, and so is a page's title.
    let ok = EMBEDDED_CATALOG.replacen(
        line,
        "checked = \"2026-12-03\", checked_against = \"developers.openai.com/api/docs/pricing of 2026-12-03\"",
        1,
    );
    assert!(Catalog::from_toml_str(&ok, "m.toml").is_ok());
    // Every built-in price that cites a LiteLLM or genai-prices figure in its source says which
    // tracker file it was checked against, and the loader has held its date (it loads).
    let c = Catalog::embedded().unwrap();
    let ids: Vec<&str> = c.trackers.iter().map(|t| t.id.as_str()).collect();
    let v = json_of(&["models", "--format", "json"]);
    let mut cited = 0;
    walk(&v["models"], &mut |o| {
        let source = o.get("source").and_then(|s| s.as_str()).unwrap_or("");
        if o.get("checked").is_some() && source.starts_with("documented: LiteLLM key") {
            cited += 1;
            let against = o
                .get("checked_against")
                .and_then(|s| s.as_str())
                .unwrap_or("(none)");
            assert!(
                ids.contains(&against),
                "{source}: checked against {against}"
            );
        }
    });
    assert!(cited > 200, "{cited} prices cite LiteLLM");
}

fn walk(v: &serde_json::Value, f: &mut dyn FnMut(&serde_json::Map<String, serde_json::Value>)) {
    match v {
        serde_json::Value::Object(o) => {
            f(o);
            o.values().for_each(|x| walk(x, f));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}

/// The README's pricing date is the catalog's: the trackers it names are the catalog's pinned
/// ones with their versions and release days, and the count of prices checked against them is the
/// catalog's.
#[test]
fn the_readme_states_the_catalogs_pricing_date() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let para = readme
        .split("**Pricing date.**")
        .nth(1)
        .expect("README has a **Pricing date.** paragraph")
        .split("\n\n")
        .next()
        .unwrap()
        .replace('\n', " ");
    let c = Catalog::embedded().unwrap();
    for id in ["litellm-1.110.2", "genai-prices-0.2.5"] {
        let t = c.trackers.iter().find(|t| t.id == id).unwrap();
        let version = t.version.split(' ').next().unwrap();
        let said = format!("{} {version} (published {})", t.name, t.released);
        assert!(para.contains(&said), "README should say `{said}`: {para}");
    }
    let v = json_of(&["models", "--format", "json"]);
    let mut n = 0;
    for m in v["models"].as_array().unwrap() {
        if m.get("alias_of").is_some() {
            continue;
        }
        walk(m, &mut |o| {
            let against = o.get("checked_against").and_then(|s| s.as_str());
            if matches!(against, Some("litellm-1.110.2" | "genai-prices-0.2.5")) {
                n += 1;
            }
        });
    }
    assert!(
        para.contains(&format!("{n} prices are checked against one of them")),
        "README should give {n}: {para}"
    );
    let mut unchecked = 0;
    for m in v["models"].as_array().unwrap() {
        if m.get("alias_of").is_none() {
            walk(m, &mut |o| {
                if o.get("checked").and_then(|s| s.as_str()) == Some("unchecked") {
                    unchecked += 1;
                }
            });
        }
    }
    assert!(
        para.contains(&format!(
            "{unchecked} prices are marked `checked = \"unchecked\"`"
        )),
        "README should give {unchecked} unchecked prices: {para}"
    );
}
