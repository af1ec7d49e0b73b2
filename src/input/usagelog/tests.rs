//! The fast path ([`super::fast`]) against the general reader: every line it takes must give what the
//! general reader gives for it, down to the unknown fields, the messages of unreadable records and the
//! order of calls.

use super::{read_log_with, FileState};

/// The log (or error) and the lines the fast path read, with the fast path on or off.
fn read(text: &str, general_only: bool) -> (String, usize) {
    let state = FileState {
        general_only,
        ..Default::default()
    };
    match read_log_with(text.as_bytes(), "log.jsonl", state) {
        Ok((log, state)) => (format!("{log:?}"), state.fast_lines),
        Err(e) => (format!("error: {e}"), 0),
    }
}

/// Reads `text` both ways; returns the lines the fast path took.
fn same_both_ways(text: &str) -> usize {
    let (fast, taken) = read(text, false);
    let (general, none) = read(text, true);
    assert_eq!(none, 0);
    assert_eq!(
        fast, general,
        "fast path and general reader differ on:\n{text}"
    );
    taken
}

/// The usage-log fixtures (tests/fixtures/usage/*.json, *.jsonl), sorted; at least 20 of them.
fn usage_fixtures() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/usage");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/usage")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "fixtures missing: {files:?}");
    files
}

#[test]
fn every_usage_fixture_reads_the_same_with_the_fast_path() {
    let files = usage_fixtures();
    let mut taken = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("fixture");
        if same_both_ways(&text) > 0 {
            taken.push(f.file_name().expect("name").to_string_lossy().into_owned());
        }
    }
    // Not vacuous: the transcripts and the gateway-form logs go through the fast path.
    for f in ["claude_code_session.jsonl", "two_sessions.jsonl"] {
        assert!(
            taken.iter().any(|t| t == f),
            "{f} not read by the fast path: {taken:?}"
        );
    }
}

/// A Claude Code assistant line with `extra` fields at the top and in the message.
fn assistant(top: &str, message: &str) -> String {
    format!(
        r#"{{"isSidechain":false,"userType":"external","cwd":"/home/dev/p","sessionId":"s-1","version":"2.0.31","type":"assistant","uuid":"a-1","requestId":"req_1","timestamp":"2026-11-30T09:00:00.000Z"{top},"message":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8-20260501","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":4,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"cache_creation":{{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":0}},"output_tokens":12,"service_tier":"standard"}}{message}}}}}"#
    )
}

#[test]
fn edge_lines_read_the_same_with_the_fast_path() {
    let user = r#"{"isSidechain":false,"cwd":"/p","sessionId":"s-1","type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x \" y"}]},"timestamp":"2026-11-30T09:00:00.000Z"}"#;
    let compact = r#"{"sent_at":"2026-01-01T00:00:01.500Z","session_id":"session-1","model":"claude-opus-4.8","usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":5}}"#;
    let lines: Vec<String> = vec![
        assistant("", ""),
        user.to_string(),
        compact.to_string(),
        // Repeated keys: the last wins, at the top and in the message.
        assistant(r#","sessionId":"s-2","cwd":"/q""#, r#","model":"claude-haiku-4-5""#),
        assistant("", r#","usage":{"input_tokens":7,"output_tokens":1}"#),
        assistant("", r#","usage":{"input_tokens":7,"output_tokens":1,"server_tool_use":{"web_search_requests":1}}"#),
        // Escaped keys and values.
        assistant(r#","session\u0049d":"s-\u00e9""#, ""),
        r#"{"mess\u0061ge":{"usage":{"input_tokens":3,"output_tokens":1}},"sessionId":"s"}"#.into(),
        // Ids as numbers, empty, or of another type.
        assistant(r#","sessionId":42"#, ""),
        assistant(r#","sessionId":"""#, ""),
        assistant(r#","sessionId":["s"],"cwd":null"#, ""),
        assistant(r#","isSidechain":"true""#, ""),
        assistant(r#","isSidechain":true,"agentId":"ag-1""#, ""),
        // Times: a number (milliseconds), unparsable, both keys.
        assistant(r#","timestamp":1764493200123"#, ""),
        assistant(r#","timestamp":"yesterday""#, ""),
        r#"{"timestamp":"bad","sent_at":"2026-01-01T00:00:02Z","session_id":"s","usage":{"input_tokens":1,"output_tokens":1}}"#.into(),
        // Stated costs.
        assistant(r#","costUSD":0.25"#, ""),
        assistant(r#","costUSD":"0.25""#, ""),
        // A model at the top beside the message's, and only at the top.
        assistant(r#","model":"gpt-5.6""#, ""),
        r#"{"sessionId":"s","model":"claude-opus-4.8","message":{"id":"m9","usage":{"input_tokens":1,"output_tokens":1}}}"#.into(),
        // Message ids missing (the request id then), repeated (merged).
        r#"{"sessionId":"s","requestId":"r7","message":{"usage":{"input_tokens":1,"output_tokens":2}}}"#.into(),
        r#"{"sessionId":"s","requestId":"r7","message":{"usage":{"input_tokens":1,"output_tokens":9}}}"#.into(),
        // Shapes left to the general reader.
        r#"{"message":"hello","usage":{"input_tokens":1,"output_tokens":1}}"#.into(),
        r#"{"message":null,"type":"progress"}"#.into(),
        r#"{"message":[1,2,3],"sessionId":"s"}"#.into(),
        r#"{"message":{"content":"hi"},"usage":{"input_tokens":2,"output_tokens":1}}"#.into(),
        r#"{"type":"message","usage":{"input_tokens":2,"output_tokens":1}}"#.into(),
        r#"{"usage":{"input_tokens":2,"output_tokens":1},"stopReason":"end"}"#.into(),
        r#"{"usage":{"input_tokens":2,"output_tokens":1},"object":"response"}"#.into(),
        r#"{"usage":"none","input_tokens":5,"output_tokens":1}"#.into(),
        assistant(r#","data":{"x":1}"#, ""),
        // Usage without a usage object, usage with unknown and bad fields.
        r#"{"session_id":"s","usage":null}"#.into(),
        r#"{"session_id":"s","usage":{"input_tokens":2,"output_tokens":1,"surprise":1,"cache_creation":{"odd":2}}}"#.into(),
        assistant("", r#","usage":{"input_tokens":-4,"output_tokens":1}"#),
        assistant("", r#","usage":{"input_tokens":4,"cache_creation_input_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":1},"output_tokens":1}"#),
        r#"{"session_id":"s","usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}}"#.into(),
        r#"{"session_id":"s","usage":{"input_tokens":9,"output_tokens":1,"input_tokens_details":{"cached_tokens":4}}}"#.into(),
        // Values read in the line's pass: ids as other numbers, times in other forms, counts at
        // their bounds, a message's model and id of other types.
        assistant(r#","sessionId":-7,"cwd":1.5e3,"agentId":true"#, ""),
        assistant(r#","timestamp":"1764493200.5""#, ""),
        assistant(r#","timestamp":"2026-11-30T09:00:00.000\u005a""#, ""),
        assistant(r#","timestamp":1764493200.25"#, ""),
        assistant(r#","timestamp":{"at":1}"#, ""),
        assistant("", r#","usage":{"input_tokens":null,"output_tokens":null}"#),
        assistant("", r#","usage":{"input_tokens":4.0,"output_tokens":1}"#),
        assistant("", r#","usage":{"input_tokens":1000000000,"output_tokens":1}"#),
        assistant("", r#","usage":{"input_tokens":1000000001,"output_tokens":1}"#),
        assistant("", r#","model":7,"id":"""#),
        assistant("", r#","model":"","id":null"#),
        r#"{"session_id":"s","model":"","id":7,"usage":{"input_tokens":2,"output_tokens":1}}"#.into(),
        r#"{"session_id":"s","id":"r\u0031","usage":{"input_tokens":2,"output_tokens":1,"cache_creation":null}}"#.into(),
        // Not JSON, not an object.
        r#"{"message":{"usage":{"input_tokens":1}}"#.into(),
        "[1,2]".into(),
        "\"text\"".into(),
    ];
    let mut taken = 0;
    for l in &lines {
        // Each line alone (with a readable call, so the file is a log), then all together.
        taken += same_both_ways(&format!("{compact}\n{l}\n"));
    }
    taken += same_both_ways(&(lines.join("\n") + "\n"));
    // The last line cut off mid-write.
    let cut = format!("{compact}\n{}", &assistant("", "")[..120]);
    same_both_ways(&cut);
    assert!(taken > lines.len(), "the fast path took {taken} lines");
}

/// A log read in place from memory (`parse_log`) and through the buffered reader (`read_log`, as
/// files are): the same log, or the same error, down to line numbers, bytes and the last line.
fn same_in_place_and_buffered(text: &str) {
    let show = |r: crate::error::Result<super::UsageLog>| match r {
        Ok(log) => format!("{log:?}"),
        Err(e) => format!("error: {e}"),
    };
    let in_place = show(super::parse_log(text, "log.jsonl"));
    let buffered = show(super::read_log(text.as_bytes(), "log.jsonl"));
    assert_eq!(
        in_place, buffered,
        "in place and buffered differ on:\n{text:?}"
    );
}

#[test]
fn logs_in_memory_read_as_files_are_read() {
    let files = usage_fixtures();
    for f in &files {
        same_in_place_and_buffered(&std::fs::read_to_string(f).expect("fixture"));
    }
    let line = |n: u32| {
        format!(
            r#"{{"sent_at":"2026-01-01T00:00:0{n}Z","session_id":"s","model":"m","usage":{{"input_tokens":{n},"output_tokens":1}}}}"#
        )
    };
    let (a, b, c) = (line(1), line(2), line(3));
    for text in [
        format!("{a}\n{b}\n{c}\n"),
        format!("{a}\n{b}\n{c}"),
        format!("{a}\n{b}\n{{\"sent_at\":\"2026"),
        format!("\u{feff}{a}\n{b}\n"),
        format!("\n  \n{a}\r\n\r\n{b}\r\n"),
        format!("not json\n{a}\n{b}\n"),
        format!("[{a},\n{b}]\n"),
        format!("{a}\nnot json\n{b}\n"),
        "\n\n".to_string(),
        String::new(),
    ] {
        same_in_place_and_buffered(&text);
    }
    // Not vacuous: the calls are read, with their lines, on both paths.
    let log = super::parse_log(&format!("\n{a}\n\n{b}\n"), "log.jsonl").expect("log");
    let at: Vec<&str> = log.calls.iter().map(|c| c.at.as_str()).collect();
    assert_eq!(at, ["line 2", "line 4"]);
}
