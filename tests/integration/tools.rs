//! `pcsim tools` and `pcsim sweep` on the real MCP captures and on small inputs, plus bad input.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{capture, json_of, pcsim, reference};
use pcsim::model::catalog::Catalog;
use pcsim::model::tools::{
    anthropic_tool, gemini_declaration, load_tool_files_with_warnings, openai_tool,
    synthetic_tools, MCP_ONLY_FIELDS,
};

/// Runs pcsim expecting exit code 2; returns stderr.
fn user_error(args: &[&str]) -> String {
    let out = pcsim().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "pcsim {args:?}: {err}");
    assert!(out.stdout.is_empty(), "no partial output on error");
    err
}

fn model<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == id)
        .unwrap_or_else(|| panic!("model {id} in report"))
}

fn tokens(report: &Value, id: &str) -> f64 {
    model(report, id)["tool_block_tokens"].as_f64().unwrap()
}

fn usd(report: &Value, id: &str) -> f64 {
    model(report, id)["usd_per_call"].as_f64().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn all_captures() -> Vec<PathBuf> {
    let dir = reference().join("mcp");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "captures in {}", dir.display());
    files
}

#[test]
fn every_capture_loads_and_converts_like_a_client() {
    let files = all_captures();
    for f in &files {
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let raw_tools = raw["tools"].as_array().unwrap();
        let (tools, warnings) = load_tool_files_with_warnings(&[f]).unwrap();
        assert!(warnings.is_empty(), "{}: {warnings:?}", f.display());
        assert_eq!(tools.len(), raw_tools.len(), "{}", f.display());
        for (t, r) in tools.iter().zip(raw_tools) {
            assert_eq!(t.name, r["name"].as_str().unwrap());
            assert_eq!(t.input_schema, r["inputSchema"]);
            let forms = [
                anthropic_tool(t),
                openai_tool(t)["function"].clone(),
                gemini_declaration(t),
            ];
            for form in forms {
                let keys: Vec<&String> = form.as_object().unwrap().keys().collect();
                for field in MCP_ONLY_FIELDS {
                    assert!(
                        !keys.iter().any(|k| *k == field),
                        "{}: {field} kept",
                        f.display()
                    );
                }
                assert_eq!(form["description"], r["description"]);
            }
            assert!(!gemini_declaration(t).to_string().contains("\"$schema\""));
        }
        // The command prices every tool of the file on the six measured models.
        let rep = json_of(&["tools", s(f), "--format", "json"]);
        assert_eq!(rep["models"].as_array().unwrap().len(), 6);
        assert_eq!(
            rep["tool_count"].as_u64().unwrap() as usize,
            raw_tools.len()
        );
    }
}

#[test]
fn github_server_matches_the_measured_facts() {
    let f = capture("server-github");
    // Dollar facts hold at the study gateway's rates, its price sheet.
    let rep = json_of(&[
        "tools",
        s(&f),
        "--format",
        "json",
        "--price-sheet",
        "study-2026-07-31",
    ]);
    // Gemini 3.6 Flash: the GitHub server's 26 tools cost $0.0029 per call (measured).
    let gem = usd(&rep, "gemini-3.6-flash");
    assert!((gem / 0.0029 - 1.0).abs() < 0.02, "gemini ${gem}");
    // GLM bills more than twice Gemini's tokens, yet costs less in dollars.
    let ratio = tokens(&rep, "glm-5.2") / tokens(&rep, "gemini-3.6-flash");
    assert!(ratio > 2.0, "glm/gemini tokens {ratio}");
    assert!(usd(&rep, "glm-5.2") < gem);
    // Against bytes/4 of the JSON: Claude about 1.36x, GPT-5.6 and Gemini about 0.5x. The facts'
    // own figures fix the basis: get_weather is "about 130 tokens by bytes/4", which is its
    // pretty-printed JSON (531 bytes; compact is 369), and Claude's measured 173 tokens per synthetic
    // tool is 1.30x bytes/4 of that tool pretty-printed but 1.91x compact. So the ratios are checked
    // per synthetic tool, on pretty-printed bytes, within 5%.
    let syn = synthetic_tools(1, 40, 3);
    let quarter = syn[0].metrics().bytes as f64 / 4.0;
    let c = Catalog::embedded().unwrap();
    for (id, want) in [
        ("claude-opus-4.8", 1.36),
        ("gpt-5.6", 0.5),
        ("gemini-3.6-flash", 0.5),
    ] {
        let r = c.model(id).unwrap().rendering();
        let per = (r.block_tokens(&syn) - r.block_tokens(&syn[..10])) as f64 / 30.0;
        let ratio = per / quarter;
        assert!((ratio / want - 1.0).abs() <= 0.05, "{id} {ratio}");
    }
    // Per-tool rows add up with the preamble to the block, largest first.
    let m = model(&rep, "claude-opus-4.8");
    let rows = m["tools"].as_array().unwrap();
    assert_eq!(rows.len(), 26);
    let sum: u64 = rows.iter().map(|r| r["tokens"].as_u64().unwrap()).sum();
    assert_eq!(
        sum + m["preamble_tokens"].as_u64().unwrap(),
        m["tool_block_tokens"].as_u64().unwrap()
    );
    assert!(rows
        .windows(2)
        .all(|w| w[0]["tokens"].as_u64() >= w[1]["tokens"].as_u64()));
    // Parameters are where the tokens are: dropping optional parameters or parameter descriptions
    // saves more than shortening tool descriptions, on every model.
    for m in rep["models"].as_array().unwrap() {
        let saved = |name: &str| {
            m["trims"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["trim"] == name)
                .unwrap()["saved_tokens"]
                .as_i64()
                .unwrap()
        };
        assert!(
            saved("required-only") > saved("first-sentence"),
            "{}",
            m["model"]
        );
        assert!(
            saved("no-param-descriptions") > saved("first-sentence"),
            "{}",
            m["model"]
        );
    }
}

#[test]
fn a_one_tool_server_outweighs_a_nine_tool_server_where_schemas_render_compactly() {
    let (one, nine) = (
        capture("server-sequential-thinking"),
        capture("server-memory"),
    );
    let one_rep = json_of(&["tools", s(&one), "--format", "json"]);
    let nine_rep = json_of(&["tools", s(&nine), "--format", "json"]);
    assert_eq!(one_rep["tool_count"], 1);
    assert_eq!(nine_rep["tool_count"], 9);
    // GPT-5.6's harmony rendering writes schemas as terse TypeScript, so the long description
    // dominates. (Gemini's declarations are JSON: there the two come out within 2%.)
    assert!(tokens(&one_rep, "gpt-5.6") > tokens(&nine_rep, "gpt-5.6"));
    // Claude renders structure at full weight: there, the nine tools cost more.
    assert!(tokens(&one_rep, "claude-opus-4.8") < tokens(&nine_rep, "claude-opus-4.8"));
}

#[test]
fn sweep_reproduces_the_per_tool_facts_and_writes_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep-out");
    let rep = json_of(&[
        "sweep",
        "--max-tools",
        "21",
        "--format",
        "json",
        "--out",
        s(&out),
    ]);
    let points = rep["points"].as_array().unwrap();
    assert_eq!(points.len(), 6 * 22);
    let at = |id: &str, n: u64| {
        points
            .iter()
            .find(|p| p["model"] == id && p["tools"] == n)
            .unwrap()["tool_block_tokens"]
            .as_f64()
            .unwrap()
    };
    // Claude ≈ 173 and GPT-5.6 ≈ 64 tokens per tool (2.7x apart).
    let slope = |id: &str| (at(id, 21) - at(id, 1)) / 20.0;
    assert!((slope("claude-opus-4.8") - 173.0).abs() < 2.0);
    assert!((slope("gpt-5.6") - 64.0).abs() < 1.0);
    let ratio = slope("claude-opus-4.8") / slope("gpt-5.6");
    assert!((ratio - 2.7).abs() < 0.05, "{ratio}");
    // A 20-tool block was 3,682 tokens on Opus 4.8; 21 tools were 4,082 on Opus 5 (measured).
    assert!((at("claude-opus-4.8", 20) / 3682.0 - 1.0).abs() < 0.01);
    assert!((at("claude-opus-5", 21) / 4082.0 - 1.0).abs() < 0.01);
    assert_eq!(at("gpt-5.6", 0), 0.0);
    // Both files were written, and agree with stdout.
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(written, rep);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + points.len());
    assert!(csv.contains(&format!(
        "claude-opus-4.8,20,{},",
        at("claude-opus-4.8", 20)
    )));
}

#[test]
fn sweep_refuses_an_unwritable_folder_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let err = user_error(&["sweep", "--out", s(&file.join("sub"))]);
    assert!(err.contains("a-file"), "{err}");
}

/// Tokens of tools given in API-form JSON on one model, from the library's rendering and counting
/// (whose text and counts tests/integration/tokens.rs checks against the reference renderer):
/// (each tool alone, the whole block).
fn expected_tokens(model: &str, tools: &[Value]) -> (Vec<u64>, u64) {
    let c = Catalog::embedded().unwrap();
    let r = c.model(model).unwrap().rendering();
    let tools =
        pcsim::model::tools::parse_tool_list(&Value::Array(tools.to_vec()).to_string(), "t")
            .unwrap();
    (
        tools.iter().map(|t| r.tool_tokens(t)).collect(),
        r.block_tokens(&tools),
    )
}

#[test]
fn small_input_priced_per_tool_with_keep_drop_and_trims() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let desc_a = "Reads a file from disk. Use it for text files only.";
    std::fs::write(
        &a,
        serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"tools":[
            {"name":"read","description":desc_a,"annotations":{"readOnlyHint":true},
             "inputSchema":{"type":"object","properties":{
                "path":{"type":"string","description":"File path."},
                "limit":{"type":"integer"}},"required":["path"]}}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &b,
        r#"[{"type":"function","function":{"name":"ping","description":"Ping.","parameters":{"type":"object","properties":{}}}}]"#,
    )
    .unwrap();
    let rep = json_of(&[
        "tools",
        s(&a),
        s(&b),
        "--model",
        "gpt-5.6",
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    let read_json = serde_json::json!({"name":"read","description":desc_a,"input_schema":{"type":"object","properties":{
        "path":{"type":"string","description":"File path."},"limit":{"type":"integer"}},"required":["path"]}});
    let ping_json = serde_json::json!({"name":"ping","description":"Ping.","input_schema":{"type":"object","properties":{}}});
    let c = Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap(); // priced as the command prices (today)
    for id in ["gpt-5.6", "claude-opus-4.8"] {
        let m = model(&rep, id);
        let (per, total) = expected_tokens(id, &[read_json.clone(), ping_json.clone()]);
        let read = per[0];
        assert!(
            per.iter().sum::<u64>() < total,
            "{id}: the wrapper has tokens of its own"
        );
        assert_eq!(m["tool_block_tokens"].as_u64().unwrap(), total, "{id}");
        let price = c.model(id).unwrap().input_usd_per_mtok.value;
        assert!((m["usd_per_call"].as_f64().unwrap() - total as f64 * price / 1e6).abs() < 1e-12);
        assert!(
            (m["usd_per_10_calls"].as_f64().unwrap() - 10.0 * total as f64 * price / 1e6).abs()
                < 1e-12
        );
        let rows = m["tools"].as_array().unwrap();
        assert_eq!(rows[0]["name"], "read");
        assert_eq!(rows[0]["tokens"].as_u64().unwrap(), read);
        assert!((rows[0]["share"].as_f64().unwrap() - read as f64 / total as f64).abs() < 1e-12);
        // first-sentence: "Reads a file from disk." keeps 23 of the description's bytes.
        let trims = m["trims"].as_array().unwrap();
        let first = trims
            .iter()
            .find(|t| t["trim"] == "first-sentence")
            .unwrap();
        let mut short = read_json.clone();
        short["description"] = "Reads a file from disk.".into();
        let (_, total_short) = expected_tokens(id, &[short, ping_json.clone()]);
        assert_eq!(
            first["saved_tokens"].as_i64().unwrap(),
            total as i64 - total_short as i64
        );
        let pct = first["saved_percent"].as_f64().unwrap();
        assert!((pct - 100.0 * (total - total_short) as f64 / total as f64).abs() < 1e-9);
        assert_eq!(trims.len(), 4);
    }
    // --keep prices only that tool; --drop leaves it out.
    let kept = json_of(&[
        "tools",
        s(&a),
        s(&b),
        "--model",
        "gpt-5.6",
        "--keep",
        "ping",
        "--format",
        "json",
    ]);
    let (_, ping) = expected_tokens("gpt-5.6", std::slice::from_ref(&ping_json));
    assert_eq!(tokens(&kept, "gpt-5.6") as u64, ping);
    let dropped = json_of(&[
        "tools",
        s(&a),
        s(&b),
        "--model",
        "gpt-5.6",
        "--drop",
        "read",
        "--format",
        "json",
    ]);
    assert_eq!(tokens(&dropped, "gpt-5.6"), tokens(&kept, "gpt-5.6"));
    let err = user_error(&["tools", s(&a), "--keep", "raed"]);
    assert!(
        err.contains("--keep") && err.contains("did you mean `read`"),
        "{err}"
    );
    // The table lists the same figures.
    let out = pcsim()
        .args(["tools", s(&a), s(&b), "--model", "gpt-5.6"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let total = tokens(&rep, "gpt-5.6") as u64;
    assert!(
        table.contains(&format!("gpt-5.6 (GPT-5.6 Sol): {total} tokens per call")),
        "{table}"
    );
    assert!(table.contains("no-param-descriptions"));
}

#[test]
fn accepted_oddities_warn_on_stderr_and_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("odd.json");
    std::fs::write(&f, r#"{"tools":[{"name":"nodesc","inputSchema":{"type":"object"}},{"name":"noschema","description":"x"}]}"#).unwrap();
    let out = pcsim()
        .args(["tools", s(&f), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("`nodesc`") && err.contains("no description"),
        "{err}"
    );
    assert!(
        err.contains("`noschema`") && err.contains("no input schema"),
        "{err}"
    );
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rep["warnings"].as_array().unwrap().len(), 2);
    assert_eq!(rep["tool_count"], 2);
}

#[test]
fn bad_tool_files_exit_2_naming_file_and_tool() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        (
            write("notjson.json", "{\"tools\": [ oops"),
            vec!["notjson.json", "not valid JSON"],
        ),
        (
            write("notlist.json", r#"{"servers": {}}"#),
            vec!["notlist.json", "not a tool list", "servers"],
        ),
        (
            write(
                "nameless.json",
                r#"[{"name":"ok"},{"description":"no name"}]"#,
            ),
            vec!["nameless.json", "tools[1].name"],
        ),
        (
            write(
                "schema.json",
                r#"[{"name":"bad","description":"d","inputSchema":"string"}]"#,
            ),
            vec![
                "schema.json",
                "`bad`",
                "inputSchema",
                "must be a JSON object",
            ],
        ),
    ];
    for (path, wants) in &cases {
        let err = user_error(&["tools", s(path)]);
        for w in wants {
            assert!(
                err.contains(w),
                "{}: missing {w:?} in {err}",
                path.display()
            );
        }
    }
    let one = write("one.json", r#"[{"name":"search","description":"a"}]"#);
    let two = write(
        "two.json",
        r#"{"tools":[{"name":"other","description":"b"},{"name":"search","description":"c"}]}"#,
    );
    let err = user_error(&["tools", s(&one), s(&two)]);
    assert!(
        err.contains("two.json")
            && err.contains("one.json")
            && err.contains("`search`")
            && err.contains("duplicate"),
        "{err}"
    );
    let err = user_error(&["tools", s(&dir.path().join("missing.json"))]);
    assert!(err.contains("missing.json"), "{err}");
    let err = user_error(&["tools", s(&one), "--model", "gpt-5.7"]);
    assert!(err.contains("gpt-5.7"), "{err}");
}

#[test]
fn one_small_tool_on_opus_matches_the_get_weather_fact() {
    // Anthropic's documented get_weather example: two parameters, a one-line description.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("weather.json");
    let tool = serde_json::json!([{"name":"get_weather","description":"Get the current weather in a given location",
        "input_schema":{"type":"object","properties":{
            "location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},
            "unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"The unit of temperature, either 'celsius' or 'fahrenheit'"}},
        "required":["location"]}}]);
    std::fs::write(&f, tool.to_string()).unwrap();
    let (tools, _) = load_tool_files_with_warnings(&[&f]).unwrap();
    // "its JSON is about 130 tokens by a bytes/4 estimate"
    let quarter = tools[0].metrics().bytes as f64 / 4.0;
    assert!((quarter / 130.0 - 1.0).abs() < 0.05, "{quarter}");
    // Adding it made the request bill +401 tokens and +$0.002 on Opus 4.8 (measured).
    let rep = json_of(&[
        "tools",
        s(&f),
        "--model",
        "claude-opus-4.8",
        "--format",
        "json",
    ]);
    let t = tokens(&rep, "claude-opus-4.8");
    assert!((t / 401.0 - 1.0).abs() < 0.05, "{t}");
    let d = usd(&rep, "claude-opus-4.8");
    assert!((d / 0.002 - 1.0).abs() < 0.05, "{d}");
}
