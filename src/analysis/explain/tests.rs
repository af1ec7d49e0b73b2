use super::*;
use crate::model::catalog::Catalog;

#[test]
fn every_cause_has_a_summary_phrase() {
    for c in CAUSES {
        assert!(!summary::phrase(c, "").is_empty(), "{c}");
    }
}

/// Scaled sizes add up to the bill, every prefix rounded once; equal sums are left alone.
#[test]
fn sizes_scale_to_the_billed_prompt() {
    let mut sizes = vec![100, 250, 0, 650];
    let mut preamble = 50;
    prompt::scale_to(&mut sizes, &mut preamble, 1_050);
    assert_eq!((preamble, sizes.clone()), (50, vec![100, 250, 0, 650]));
    prompt::scale_to(&mut sizes, &mut preamble, 2_100);
    assert_eq!(preamble + sizes.iter().sum::<u64>(), 2_100);
    assert_eq!((preamble, sizes), (100, vec![200, 500, 0, 1_300]));
}

/// The trace writer's texts have exactly the token counts asked for, in every family's tokenizer.
#[test]
fn written_texts_have_the_token_counts_asked_for() {
    let catalog = Catalog::embedded().unwrap();
    for id in [
        "claude-opus-4.8",
        "gpt-5.6",
        "gemini-3.6-flash",
        "glm-5.2",
        "kimi-k3",
    ] {
        let r = catalog.model(id).unwrap().rendering();
        for n in [0u64, 1, 3, 17, 250, 1_800] {
            let t = tracegen::text_of_tokens(r, n, "[session 1 call 2 result 1]");
            assert_eq!(r.count_text(&t, &[]), n, "{id}: {n} tokens: {t:?}");
        }
    }
}

/// Injections parse, and bad spellings are refused naming the flag.
#[test]
fn injections_parse() {
    assert_eq!(Injection::parse("timestamp").unwrap(), Injection::Timestamp);
    assert_eq!(Injection::parse("edit@5").unwrap(), Injection::Edit(5));
    assert_eq!(
        Injection::parse("parts@3=25").unwrap(),
        Injection::Parts(3, 25)
    );
    assert_eq!(
        Injection::parse("tool-calls=3").unwrap(),
        Injection::ToolCalls(3)
    );
    for bad in [
        "edit@1",
        "parts@5",
        "parts@x=2",
        "clock",
        "tool-calls=0",
        "tool-calls=",
    ] {
        let e = Injection::parse(bad).unwrap_err().to_string();
        assert!(e.contains("--trace-inject"), "{e}");
    }
}

/// One Anthropic record of `{time, request, response}` with two tools, one called in the answer.
fn record(time: &str) -> String {
    let tool = |n: &str| serde_json::json!({"name": n, "description": "d", "input_schema": {"type": "object"}});
    serde_json::json!({
        "time": time,
        "session": "s",
        "url": "https://api.anthropic.com/v1/messages",
        "request": {"model": "claude-opus-4.8", "tools": [tool("used"), tool("unused")],
                    "messages": [{"role": "user", "content": "hi"}]},
        "response": {"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "used", "input": {}}],
                     "usage": {"input_tokens": 500, "output_tokens": 5}}
    })
    .to_string()
}

/// A trace read once from a stream cannot know the tools a conversation calls before its end:
/// `drop_unused_tools` is reported not simulated, with the reason; `prompt_cache_key` is.
#[test]
fn a_stream_leaves_drop_unused_tools_unsimulated_with_the_reason() {
    let catalog = Catalog::embedded().unwrap();
    let text = format!(
        "{}\n{}\n",
        record("2026-01-01T00:00:00Z"),
        record("2026-01-01T00:00:10Z")
    );
    let e = explain_reader(
        &catalog,
        text.as_bytes(),
        "stdin",
        ExplainOptions::default(),
    )
    .unwrap();
    assert_eq!(e.calls.len(), 2, "{:?}", e.skipped);
    let fix = |n: &str| e.fixes.iter().find(|f| f.fix == n).unwrap();
    assert!(!fix("drop_unused_tools").simulated);
    assert!(fix("drop_unused_tools").note.contains("read once"));
    assert!(fix("prompt_cache_key").simulated);
}
