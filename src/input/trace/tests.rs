use super::*;

fn items(text: &str) -> Vec<TraceItem<'static>> {
    let mut out = Vec::new();
    read_trace(text.as_bytes(), "t.jsonl", &mut |i| {
        out.push(i.into_owned())
    })
    .unwrap();
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
    read_trace(bytes.as_slice(), "t.jsonl", &mut |i| {
        out.push(i.into_owned())
    })
    .unwrap();
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

fn format_of(head: &str) -> Option<&'static str> {
    FORMATS
        .iter()
        .find(|f| f.sniff(head.as_bytes()))
        .map(|f| f.name())
}

#[test]
fn each_format_is_told_by_its_first_bytes() {
    assert_eq!(format_of(ANTHROPIC), Some("pcsim-jsonl"));
    assert_eq!(
        format_of("{\n  \"log\": {\"version\": \"1.2\""),
        Some("har")
    );
    assert_eq!(
        format_of(
            r#"{"timestamp": "2026-03-10T20:40:00Z", "request": {"method": "POST", "path": "/v1/messages""#
        ),
        Some("claude-tap")
    );
    assert_eq!(
        format_of(r#"{"id":"x","request":{"body":{"model""#),
        Some("claude-tap")
    );
    assert_eq!(format_of("[1, 2]"), None);
}

fn har_of(entries: &str) -> String {
    format!(
        r#"{{"log": {{"version": "1.2", "creator": {{"name": "t"}}, "entries": [{entries}], "pages": []}}, "extra": 1}}"#
    )
}

fn har_entry(method: &str, url: &str, request: &str, response: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    format!(
        r#"{{"startedDateTime": "2026-01-01T00:00:10Z", "request": {{"method": "{method}", "url": "{url}", "postData": {{"text": {}}}}}, "response": {{"status": 200, "content": {{"mimeType": "application/json", "text": {}}}}}}}"#,
        q(request),
        q(response)
    )
}

#[test]
fn a_har_is_read_entry_by_entry_and_a_cut_off_archive_ends_with_a_skip() {
    let v: serde_json::Value = serde_json::from_str(ANTHROPIC).unwrap();
    let (req, resp) = (v["request"].to_string(), v["response"].to_string());
    let url = "https://api.anthropic.com/v1/messages";
    let entries = [
        har_entry("POST", url, &req, &resp),
        har_entry("POST", "https://example.com/upload", "a=1", "ok"),
        har_entry("POST", url, &req, &resp),
    ]
    .join(", ");
    let text = har_of(&entries);
    let got = items(&text);
    assert_eq!(got.len(), 3);
    let TraceItem::Record(r) = &got[2] else {
        panic!("{got:?}")
    };
    assert_eq!(r.at, "t.jsonl: entry 3");
    assert_eq!(r.time, Some(1_767_225_610.0));
    assert!(exchange_of((**r).clone()).is_ok());
    let TraceItem::Skipped(s) = &got[1] else {
        panic!("{got:?}")
    };
    assert!(s.reason.starts_with("unknown endpoint"), "{s:?}");
    // Cut inside entry 3: entries 1 and 2 are read, then one skip names the place.
    let cut = &text[..text.len() - 200];
    let got = items(cut);
    assert_eq!(got.len(), 3, "{got:?}");
    let TraceItem::Skipped(s) = &got[2] else {
        panic!("{got:?}")
    };
    assert!(
        s.reason
            .starts_with("truncated JSON (the archive ends inside entry 3"),
        "{s:?}"
    );
}

#[test]
fn a_har_gemini_stream_as_sse_or_as_a_json_array_bills_its_last_usage() {
    let req = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.6-flash:streamGenerateContent";
    let chunk = |n: u64| {
        format!(
            r#"{{"candidates":[],"usageMetadata":{{"promptTokenCount":1200,"cachedContentTokenCount":1024,"candidatesTokenCount":{n}}}}}"#
        )
    };
    let sse = format!("data: {}\r\n\r\ndata: {}\r\n\r\n", chunk(1), chunk(7));
    let array = format!("[{},\n{}]", chunk(1), chunk(7));
    for body in [sse, array] {
        let text = har_of(&har_entry("POST", url, req, &body));
        let got = items(&text);
        let [TraceItem::Record(r)] = got.as_slice() else {
            panic!("{got:?}")
        };
        let ex = exchange_of((**r).clone()).unwrap();
        assert_eq!(ex.api, Api::Gemini);
        assert_eq!(ex.model, "gemini-3.6-flash");
        assert_eq!(ex.billed.cache_read_tokens, 1024);
        assert_eq!(ex.billed.prompt_tokens, 1200);
    }
}

#[test]
fn a_har_entry_that_is_bad_json_or_too_long_is_skipped_and_the_next_one_read() {
    let v: serde_json::Value = serde_json::from_str(ANTHROPIC).unwrap();
    let (req, resp) = (v["request"].to_string(), v["response"].to_string());
    let good = har_entry("POST", "https://api.anthropic.com/v1/messages", &req, &resp);
    // Brackets balance, so the scanner cuts the entry out; its own parse refuses it.
    let bad = r#"{"request": {"method": "POST",, "url": "x"}}"#;
    let long = good.replace("You help.", &"You help. ".repeat(200));
    let text = har_of(&[good.as_str(), bad, long.as_str(), good.as_str()].join(",\n"));
    let mut out = Vec::new();
    let mut input = std::io::BufReader::with_capacity(64, text.as_bytes());
    let read =
        har::read_entries(&mut input, "t.har", &mut |i| out.push(i.into_owned()), 1500).unwrap();
    assert_eq!(read, text.len() as u64);
    let got: Vec<String> = out
        .iter()
        .map(|i| match i {
            TraceItem::Record(r) => format!("{}: ok", r.at),
            TraceItem::Skipped(s) => format!("{}: {}", s.at, s.reason),
        })
        .collect();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(got[0], "t.har: entry 1: ok");
    assert_eq!(
        got[1],
        "t.har: entry 2: not valid JSON (entry 2: key must be a string at line 1 column 31)"
    );
    assert_eq!(
        got[2],
        format!(
            "t.har: entry 3: entry too long ({} bytes, more than the 1500-byte limit of a HAR entry)",
            long.len()
        )
    );
    assert_eq!(got[3], "t.har: entry 4: ok");
    let TraceItem::Record(r) = &out[3] else {
        panic!()
    };
    assert_eq!(r.request, req);
    assert_eq!(r.response, resp);
    // Cut after the entries, inside the last key's value: the entries are read, then one skip.
    let cut = &text[..text.len() - 3];
    let mut out = Vec::new();
    let mut input = std::io::BufReader::with_capacity(64, cut.as_bytes());
    let read =
        har::read_entries(&mut input, "t.har", &mut |i| out.push(i.into_owned()), 1500).unwrap();
    assert_eq!(read, cut.len() as u64);
    let [.., TraceItem::Skipped(last)] = out.as_slice() else {
        panic!("{out:?}")
    };
    assert_eq!(out.len(), 5);
    assert_eq!(last.at, "t.har: end");
    assert_eq!(
        last.reason,
        format!(
            "truncated JSON (the archive ends at byte {}, after 4 entries, before its closing brackets)",
            cut.len()
        )
    );
}
