//! Unit tests of the what-if.

use super::*;
use crate::analysis::testutil::scenario;
use crate::input::scenario::{Scenario, ToolEvent};
use crate::model::catalog::Catalog;
use crate::model::tools::{synthetic_tool, synthetic_tools, Tool};

fn session(calls: usize) -> Scenario {
    scenario(&format!(
        "name = \"t\"\n[tools]\nsynthetic = {{ count = 20, params = 3 }}\n\
         [session]\ncalls = {calls}\nsystem_tokens = 500\nfirst_user_tokens = 100\n\
         tool_result_tokens = 300\noutput_tokens = 50\ngap_seconds = 10\n"
    ))
}

fn add_one() -> ToolChange {
    ToolChange {
        add: vec![synthetic_tool(21, 3)],
        ..Default::default()
    }
}

#[test]
fn opus5_adding_one_tool_rewrites_the_whole_block() {
    // Measured: adding one tool to a cached 20-tool set re-wrote the whole 4,082-token block at
    // 1.25x on Claude Opus 5.
    let catalog = Catalog::embedded().unwrap();
    let sc = session(8);
    let k = 4;
    let rep = whatif(
        &catalog,
        &sc,
        k,
        &add_one(),
        &["claude-opus-5".into()],
        &["explicit:tools".into()],
    )
    .unwrap();
    let m = catalog.model("claude-opus-5").unwrap();
    let old_block = m.rendering().block_tokens(&synthetic_tools(1, 20, 3));
    let new_block = m.rendering().block_tokens(&synthetic_tools(1, 21, 3));
    let o = &rep.outcomes[0];
    assert_eq!(o.strategy, "explicit:tools");
    assert_eq!(o.tool_change_rule, "invalidate");
    assert_eq!(o.tool_block_tokens_before, old_block);
    assert_eq!(o.tool_block_tokens_after, new_block);
    // The call-K write is the whole new block, not just the added tool.
    assert_eq!(o.baseline_write_at_change_tokens, 0);
    assert_eq!(o.write_at_change_tokens, new_block);
    let rel = (new_block as f64 - 4082.0).abs() / 4082.0;
    assert!(rel < 0.01, "modelled block {new_block} vs measured 4,082");
    // Dollars of call K: the new block at 1.25x instead of the old one at 0.1x; the added tool's
    // tokens at 0.1x on every later call.
    let price = m.input_usd_per_mtok.value / 1e6;
    let at_k = (new_block as f64 * 1.25 - old_block as f64 * 0.1) * price;
    assert!(
        (o.extra_usd_at_change - at_k).abs() < 1e-12,
        "{}",
        o.extra_usd_at_change
    );
    let later = (new_block - old_block) as f64 * 0.1 * price;
    assert!((o.extra_usd_per_call_after - later).abs() < 1e-12);
    let total = at_k + later * (8 - k) as f64;
    assert!((o.extra_usd - total).abs() < 1e-12);
    assert_eq!(o.breakeven_calls, None);
    assert_eq!(o.breakeven_calls_extrapolated, None);
    assert!(o.verdict.contains("never"), "{}", o.verdict);
    // The beta rule: the block stays cached; the new tool is sent after it, nothing re-written.
    let a = &rep.outcomes[1];
    assert_eq!(a.strategy, "explicit:tools/tool-changes=append");
    assert_eq!(a.tool_change_rule, "append");
    assert_eq!(a.write_at_change_tokens, 0);
    assert_eq!(a.tool_block_tokens_after, old_block);
    // What the beta is worth here: only the new tool's tokens, at the base rate, from call K on.
    let tool = m.rendering().tool_tokens(&synthetic_tool(21, 3));
    let append_extra = tool as f64 * price * (8 - k + 1) as f64;
    assert!(
        (a.extra_usd - append_extra).abs() < 1e-12,
        "{} vs {append_extra}",
        a.extra_usd
    );
    assert!(a.extra_usd < o.extra_usd);
    let worth = a.append_saving_usd.unwrap();
    assert!((worth - (o.extra_usd - a.extra_usd)).abs() < 1e-15);
    assert_eq!(o.append_saving_usd, None);
}

/// Calls, counting call K, until removing 10 of 20 tools pays back under explicit:tools on Opus
/// 4.8, worked out from the formula: call K writes the new block at 1.25x instead of reading the
/// old one at 0.1x; every later call reads the smaller block.
fn hand_breakeven(old: u64, new: u64) -> u64 {
    let first = 1.25 * new as f64 - 0.1 * old as f64;
    let per_call = 0.1 * (old - new) as f64;
    let mut m = 1;
    while first - (m - 1) as f64 * per_call > 0.0 {
        m += 1;
    }
    m
}

#[test]
fn removing_tools_pays_back_after_the_rewrite() {
    let catalog = Catalog::embedded().unwrap();
    let m = catalog.model("claude-opus-4.8").unwrap();
    let old = m.rendering().block_tokens(&synthetic_tools(1, 20, 3));
    let new = m.rendering().block_tokens(&synthetic_tools(1, 10, 3));
    // The measured Opus 4.8 20-tool block is 3,682 tokens; the fitted family gives it within 1%.
    assert!((old as f64 / 3682.0 - 1.0).abs() < 0.01, "{old}");
    let expected = hand_breakeven(old, new);
    let change = ToolChange {
        remove: (11..=20)
            .map(|i| format!("synthetic_tool_{i:02}"))
            .collect(),
        ..Default::default()
    };
    let k = 3;
    let strategies = ["none".to_string(), "explicit:tools".to_string()];
    let ids = ["claude-opus-4.8".to_string()];
    // Long enough: paid back inside the session.
    let long = whatif(&catalog, &session(20), k, &change, &ids, &strategies).unwrap();
    let none = &long.outcomes[0];
    assert_eq!(none.strategy, "none");
    assert_eq!(none.breakeven_calls, Some(1), "{}", none.verdict);
    let price = m.input_usd_per_mtok.value / 1e6;
    let saved = (old - new) as f64 * price * (20 - k + 1) as f64;
    assert!((none.extra_usd + saved).abs() < 1e-12);
    let e = &long.outcomes[1];
    assert_eq!(e.strategy, "explicit:tools");
    assert_eq!(e.write_at_change_tokens, new);
    assert_eq!(e.breakeven_calls, Some(expected), "{}", e.verdict);
    assert_eq!(e.breakeven_calls_extrapolated, Some(expected));
    // Too short: not paid back, but the extrapolation at the steady saving gives the same count.
    let short = whatif(&catalog, &session(10), k, &change, &ids, &strategies).unwrap();
    let e = &short.outcomes[1];
    assert!(expected > (10 - k + 1) as u64);
    assert_eq!(e.breakeven_calls, None);
    assert_eq!(
        e.breakeven_calls_extrapolated,
        Some(expected),
        "{}",
        e.verdict
    );
    assert!(e.extra_usd > 0.0);
}

#[test]
fn bad_changes_are_errors_naming_the_flag() {
    let catalog = Catalog::embedded().unwrap();
    let sc = session(6);
    let ids = ["claude-opus-4.8".to_string()];
    let err = |k: usize, c: &ToolChange| {
        whatif(&catalog, &sc, k, c, &ids, &[])
            .unwrap_err()
            .to_string()
    };
    for k in [0, 7] {
        let e = err(k, &add_one());
        assert!(
            e.contains("--at-call") && e.contains(&format!("value {k}")),
            "{e}"
        );
    }
    let e = err(
        3,
        &ToolChange {
            remove: vec!["synthetic_tool_2".into()],
            ..Default::default()
        },
    );
    assert!(
        e.contains("--remove-tools")
            && e.contains("`synthetic_tool_2`")
            && e.contains("did you mean"),
        "{e}"
    );
    let e = err(
        3,
        &ToolChange {
            add: vec![synthetic_tool(5, 3)],
            ..Default::default()
        },
    );
    assert!(e.contains("twice"), "{e}");
    let all: Vec<String> = (1..=20).map(|i| format!("synthetic_tool_{i:02}")).collect();
    let e = err(
        3,
        &ToolChange {
            keep: Some(all),
            ..Default::default()
        },
    );
    assert!(e.contains("--keep-tools") && e.contains("as it is"), "{e}");
    // A later event of the scenario that adds the same tool again.
    let mut later = sc.clone();
    later.events.push(ToolEvent {
        at_call: 5,
        add: vec![synthetic_tool(21, 3)],
        remove: vec![],
        keep: None,
        replace: None,
    });
    let e = whatif(&catalog, &later, 3, &add_one(), &ids, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("event at call 5") && e.contains("`synthetic_tool_21` twice"),
        "{e}"
    );
    // Removing earlier a tool that a later event removes is a fair question: the later removal
    // then has nothing to do.
    let mut later = sc.clone();
    later.events.push(ToolEvent {
        at_call: 5,
        add: vec![],
        remove: vec!["synthetic_tool_03".into()],
        keep: None,
        replace: None,
    });
    let earlier = ToolChange {
        remove: vec!["synthetic_tool_03".into()],
        ..Default::default()
    };
    let rep = whatif(&catalog, &later, 3, &earlier, &ids, &["none".into()]).unwrap();
    // Two calls (3 and 4) without the tool's tokens at the base rate.
    let m = catalog.model("claude-opus-4.8").unwrap();
    let r = m.rendering();
    let without: Vec<Tool> = sc
        .tools
        .iter()
        .filter(|t| t.name != "synthetic_tool_03")
        .cloned()
        .collect();
    let t = r.block_tokens(&sc.tools) - r.block_tokens(&without);
    let saved = 2.0 * t as f64 * m.input_usd_per_mtok.value / 1e6;
    assert!(
        (rep.outcomes[0].extra_usd + saved).abs() < 1e-12,
        "{}",
        rep.outcomes[0].extra_usd
    );
    // A strategy no chosen model offers: an error, not a table of baselines.
    let e = whatif(&catalog, &sc, 3, &add_one(), &ids, &["automatic".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no automatic caching"), "{e}");
}

#[test]
fn append_variant_is_a_stated_skip_where_not_offered() {
    let catalog = Catalog::embedded().unwrap();
    let rep = whatif(
        &catalog,
        &session(6),
        3,
        &add_one(),
        &["gpt-5.6".into()],
        &[],
    )
    .unwrap();
    assert_eq!(rep.outcomes.len(), 2);
    let s = &rep.skipped[0];
    assert!(s.strategy.ends_with("/tool-changes=append"), "{s:?}");
    assert!(s.reason.contains("not offered"), "{}", s.reason);
    assert_eq!(rep.csv().lines().count(), 3);
}
