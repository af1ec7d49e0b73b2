use super::*;

fn items(text: &str) -> Vec<TraceItem> {
    let mut out = Vec::new();
    read_trace(text.as_bytes(), "t.jsonl", &mut |i| out.push(i)).unwrap();
    out
}

const ANTHROPIC: &str = r#"{"time":"2026-01-01T00:00:10Z","session":"s1","url":"https://api.anthropic.com/v1/messages","request":{"model":"claude-opus-4-8","tools":[{"name":"a","description":"A.","input_schema":{"type":"object"}},{"name":"b","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],"system":[{"type":"text","text":"You help."}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]},"response":{"type":"message","usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":5}}}"#;

#[test]
fn an_anthropic_record_becomes_regions_with_breakpoints_and_usage() {
    let got = items(ANTHROPIC);
    let [TraceItem::Record(r)] = got.as_slice() else {
        panic!("{got:?}")
    };
    let ex = exchange_of((**r).clone()).unwrap();
    assert_eq!(ex.api, Api::AnthropicMessages);
    assert_eq!(ex.model, "claude-opus-4-8");
    assert_eq!(ex.session.as_deref(), Some("s1"));
    assert_eq!(ex.time, Some(1_767_225_610.0));
    let kinds: Vec<_> = ex
        .regions
        .iter()
        .map(|r| (r.kind, r.index, r.part))
        .collect();
    assert_eq!(
        kinds,
        [
            (RegionKind::Tool, 0, 0),
            (RegionKind::Tool, 1, 0),
            (RegionKind::System, 0, 0),
            (RegionKind::Message, 0, 0)
        ]
    );
    let bps: Vec<_> = ex.regions.iter().map(|r| r.breakpoint.clone()).collect();
    assert_eq!(bps, [None, Some("1h".into()), None, Some("5m".into())]);
    assert_eq!(
        (
            ex.billed.uncached_tokens,
            ex.billed.cache_write_5m_tokens,
            ex.billed.cache_read_tokens
        ),
        (3, 10, 20)
    );
}

#[test]
fn a_breakpoint_is_not_content() {
    let moved = ANTHROPIC.replace(
        r#""text":"hi","cache_control":{"type":"ephemeral"}"#,
        r#""text":"hi""#,
    );
    let hashes = |t: &str| {
        let got = items(t);
        let TraceItem::Record(r) = &got[0] else {
            panic!()
        };
        let ex = exchange_of((**r).clone()).unwrap();
        ex.regions.iter().map(|r| r.hash).collect::<Vec<_>>()
    };
    assert_eq!(hashes(ANTHROPIC), hashes(&moved));
}

#[test]
fn bad_records_are_skipped_with_a_reason_each() {
    let no_usage = ANTHROPIC.replace(r#""usage""#, r#""nothing""#);
    let unknown = ANTHROPIC.replace("/v1/messages", "/v1/embeddings");
    let truncated = &ANTHROPIC[..ANTHROPIC.len() / 2];
    let text = format!("{ANTHROPIC}\n{truncated}\n{no_usage}\n{unknown}\n");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"{\"request\":\"\xff\xfe\"}\n");
    let mut out = Vec::new();
    read_trace(bytes.as_slice(), "t.jsonl", &mut |i| out.push(i)).unwrap();
    let reasons: Vec<String> = out
        .into_iter()
        .map(|i| match i {
            TraceItem::Record(r) => match exchange_of(*r) {
                Ok(_) => "ok".to_string(),
                Err(s) => s.reason,
            },
            TraceItem::Skipped(s) => s.reason,
        })
        .collect();
    assert_eq!(reasons[0], "ok");
    assert!(reasons[1].starts_with("truncated JSON"), "{reasons:?}");
    assert!(reasons[2].starts_with("missing usage"), "{reasons:?}");
    assert!(reasons[3].starts_with("unknown endpoint"), "{reasons:?}");
    assert!(reasons[4].starts_with("binary body"), "{reasons:?}");
}
