use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::json_text::pretty_json_text;
use super::transport::{read_lines, Chunk};
use super::*;
use crate::error::Result;

/// A scripted server: answers each of our messages by method with canned lines.
struct Script {
    replies: BTreeMap<String, VecDeque<Vec<String>>>,
    pending: VecDeque<String>,
    sent: Vec<Value>,
}

impl Script {
    fn new(replies: &[(&str, Vec<String>)]) -> Self {
        let mut m: BTreeMap<String, VecDeque<Vec<String>>> = BTreeMap::new();
        for (k, v) in replies {
            m.entry(k.to_string()).or_default().push_back(v.clone());
        }
        Script {
            replies: m,
            pending: VecDeque::new(),
            sent: Vec::new(),
        }
    }
}

impl Transport for Script {
    fn send(&mut self, message: &Value) -> Result<()> {
        self.sent.push(message.clone());
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            if let Some(q) = self.replies.get_mut(method) {
                if let Some(lines) = q.pop_front() {
                    self.pending.extend(lines);
                }
            }
        }
        Ok(())
    }
    fn recv(&mut self, _deadline: Instant) -> Result<Received> {
        Ok(self
            .pending
            .pop_front()
            .map_or(Received::Closed, Received::Line))
    }
    fn describe_failure(&mut self) -> String {
        " (scripted)".into()
    }
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
}

fn run(script: &mut Script) -> Result<Capture> {
    capture_over(
        script,
        "test",
        &CaptureOptions::default(),
        Instant::now() + Duration::from_secs(1),
    )
}

#[test]
fn classifies_lines() {
    assert_eq!(classify("hello"), Incoming::Noise);
    assert_eq!(classify("[1,2]"), Incoming::Noise);
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#),
        Incoming::Response {
            id: json!(3),
            outcome: Ok(json!({"a":1}))
        }
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","id":"x","method":"roots/list"}"#),
        Incoming::Request {
            id: json!("x"),
            method: "roots/list".into()
        }
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#),
        Incoming::Notification {
            method: "notifications/message".into()
        }
    );
    assert!(matches!(
        classify(r#"{"id":1,"error":{"code":-1,"message":"no"}}"#),
        Incoming::Response {
            outcome: Err(_),
            ..
        }
    ));
}

#[test]
fn initialize_advertises_the_chosen_capabilities() {
    let mut o = CaptureOptions::default();
    let min = initialize_request(1, &o);
    assert_eq!(min["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(min["params"]["clientInfo"]["name"], "pcsim");
    assert_eq!(min["params"]["capabilities"], json!({}));
    o.capabilities = ClientCapabilities::Full;
    let full = initialize_request(1, &o);
    let caps = full["params"]["capabilities"].as_object().unwrap();
    for k in ["roots", "sampling", "elicitation", "tasks"] {
        assert!(caps.contains_key(k), "{k} missing");
    }
}

#[test]
fn follows_pages_skips_noise_and_answers_server_requests() {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
    let p1 =
        json!({"jsonrpc":"2.0","id":2,"result":{"tools":[tool("a"), tool("b")],"nextCursor":"c1"}});
    let p2 = json!({"jsonrpc":"2.0","id":3,"result":{"tools":[tool("c")]}});
    let mut s = Script::new(&[
        ("initialize", vec!["Server starting...".into(), init.into()]),
        (
            "tools/list",
            vec![
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#.into(),
                r#"{"jsonrpc":"2.0","id":"r1","method":"roots/list"}"#.into(),
                r#"{"jsonrpc":"2.0","id":99,"result":{}}"#.into(),
                p1.to_string(),
            ],
        ),
        ("tools/list", vec![p2.to_string()]),
    ]);
    let cap = run(&mut s).unwrap();
    let names: Vec<_> = cap.tools.iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, vec![json!("a"), json!("b"), json!("c")]);
    assert_eq!(cap.pages, 2);
    assert_eq!(cap.skipped_lines, 2);
    assert_eq!(cap.notifications, 1);
    assert_eq!(cap.server_requests, 1);
    assert_eq!(cap.protocol_version.as_deref(), Some("2025-06-18"));
    // Sent: initialize, initialized, tools/list, roots reply, tools/list with the cursor.
    let methods: Vec<_> = s
        .sent
        .iter()
        .map(|m| m.get("method").and_then(Value::as_str).unwrap_or("reply"))
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "reply",
            "tools/list"
        ]
    );
    assert_eq!(
        s.sent[3],
        json!({"jsonrpc":"2.0","id":"r1","result":{"roots":[]}})
    );
    assert_eq!(s.sent[4]["params"]["cursor"], "c1");
}

#[test]
fn errors_name_the_server_and_the_step() {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let mut s = Script::new(&[
        ("initialize", vec![init.into()]),
        (
            "tools/list",
            vec![
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#
                    .into(),
            ],
        ),
    ]);
    let e = run(&mut s).unwrap_err().to_string();
    assert!(
        e.contains("test") && e.contains("tools/list failed") && e.contains("Method not found"),
        "{e}"
    );

    let mut s = Script::new(&[("initialize", vec!["garbage".into()])]);
    let e = run(&mut s).unwrap_err().to_string();
    assert!(
        e.contains("closed its output before answering initialize (scripted)"),
        "{e}"
    );

    let mut s = Script::new(&[("initialize", vec![r#"{"id":1,"result":"ok"}"#.into()])]);
    let e = run(&mut s).unwrap_err().to_string();
    assert!(e.contains("not a JSON object"), "{e}");
}

#[test]
fn a_cursor_loop_is_an_error() {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let page = |id: u64| {
        json!({"jsonrpc":"2.0","id":id,"result":{"tools":[],"nextCursor":"same"}}).to_string()
    };
    let mut s = Script::new(&[
        ("initialize", vec![init.into()]),
        ("tools/list", vec![page(2)]),
        ("tools/list", vec![page(3)]),
    ]);
    let e = run(&mut s).unwrap_err().to_string();
    assert!(e.contains("cursor `same` twice"), "{e}");
}

#[test]
fn reader_bounds_message_size() {
    let (tx, rx) = mpsc::sync_channel(8);
    read_lines(&b"short\r\nxxxxxxxxxxxxxxxxxxxxxxxx"[..], 10, 1000, tx);
    assert!(matches!(rx.recv().unwrap(), Chunk::Line(l) if l == "short"));
    assert!(matches!(rx.recv().unwrap(), Chunk::TooLong));
    let (tx, rx) = mpsc::sync_channel(8);
    read_lines(&b"a\nlast"[..], 10, 1000, tx);
    let got: Vec<String> = rx
        .iter()
        .map(|c| match c {
            Chunk::Line(l) => l,
            Chunk::Eof => "<eof>".into(),
            _ => "<other>".into(),
        })
        .collect();
    assert_eq!(got, ["a", "last", "<eof>"]);
    // Many short lines: 30 bytes (five 6-byte lines) are allowed, the sixth line is too much.
    let (tx, rx) = mpsc::sync_channel(8);
    let noise = b"noise\n".repeat(10);
    std::thread::spawn(move || read_lines(&noise[..], 10, 30, tx));
    let kinds: Vec<&str> = rx
        .iter()
        .map(|c| match c {
            Chunk::Line(_) => "line",
            Chunk::TooMuch => "too much",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["line", "line", "line", "line", "line", "too much"]);
}

#[test]
fn pretty_text_keeps_order_and_matches_serde_layout() {
    let raw = r#"{"z":1,"a":{"y":[],"b":{}},"s":"a,b:{\"c\"}","n":1.50}"#;
    let out = pretty_json_text(raw);
    assert!(out.find("\"z\"").unwrap() < out.find("\"a\"").unwrap());
    assert!(out.contains("1.50"), "numbers keep their spelling: {out}");
    let back: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(raw).unwrap());
    // On sorted input the layout is serde_json's own.
    let sorted = r#"{"a":[1,{"b":null}],"c":"x","d":[],"e":{}}"#;
    let v: Value = serde_json::from_str(sorted).unwrap();
    assert_eq!(
        pretty_json_text(sorted),
        serde_json::to_string_pretty(&v).unwrap()
    );
}
