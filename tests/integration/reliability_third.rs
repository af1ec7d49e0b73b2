//! Issue 29, the third attack: processes never outlive pcsim (here ended by SIGKILL, which runs no
//! destructor: the watchdog's case), and control characters from inputs never reach SVG or CSV raw.

use std::time::{Duration, Instant};

/// Processes (by pid) whose environment carries the capture marker of pcsim process `pid`.
#[cfg(target_os = "linux")]
fn marked_by(pid: u32) -> Vec<u32> {
    let needle = format!("PCSIM_CAPTURE_ID={pid}-");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(p);
            }
        }
    }
    found
}

/// A `kill -9` of pcsim during `config` with 20 servers, each with a child in its group and a
/// `setsid` grandchild, leaves no server process (before the watchdog, all 60 kept running).
#[cfg(target_os = "linux")]
#[test]
fn kill_9_during_config_with_20_servers_leaves_no_server_process() {
    let dir = tempfile::tempdir().unwrap();
    let servers: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#""s{i}": {{"command": "sh", "args": ["-c", "sleep 600 & setsid sleep 600 & exec sleep 600"]}}"#
            )
        })
        .collect();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        format!("{{\"mcpServers\": {{{}}}}}", servers.join(", ")),
    )
    .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"))
        .args([
            "config",
            config.to_str().unwrap(),
            "--timeout-seconds",
            "120",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Every server and both of its helpers started: 60 marked processes.
    let until = Instant::now() + Duration::from_secs(30);
    while marked_by(pid).len() < 60 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = marked_by(pid).len();
    child.kill().unwrap(); // SIGKILL: no destructor, no signal handler runs
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(15);
    while !marked_by(pid).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = marked_by(pid);
    // Clean up whatever a failure leaves, then judge.
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert!(started >= 60, "only {started} server processes started");
    assert!(
        left.is_empty(),
        "{} server processes outlived pcsim: {left:?}",
        left.len()
    );
}

/// A control character in a scenario or tool name made every SVG invalid XML (exit 0), and an ESC
/// reached the CSV raw: both now show it as `\u{1b}`.
#[test]
fn control_characters_in_names_leave_svg_valid_and_csv_free_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("t.json");
    std::fs::write(
        &tools,
        r#"[{"name": "evil\u001b[31m\u0001tool", "description": "d", "inputSchema": {"type": "object"}}]"#,
    )
    .unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        "name = \"bad\\u001b[2Jname\\u0007\"\nmodels = [\"claude-opus-4.8\"]\n[tools]\nfiles = [\"t.json\"]\n[session]\ncalls = 3\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    crate::common::pcsim()
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--svg",
        ])
        .assert()
        .success();
    let mut svgs = 0;
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        let p = e.path();
        if !p.extension().is_some_and(|x| x == "csv" || x == "svg") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        if p.extension().is_some_and(|x| x == "svg") {
            svgs += 1;
            roxmltree::Document::parse(&text)
                .unwrap_or_else(|err| panic!("{} is not valid XML: {err}", p.display()));
        }
        {
            assert!(
                !text
                    .chars()
                    .any(|c| c.is_control() && !matches!(c, '\n' | '\t')),
                "{} holds a raw control character",
                p.display()
            );
        }
    }
    assert!(svgs > 0);
    let csv = crate::common::stdout_of(&["run", scenario.to_str().unwrap(), "--format", "csv"]);
    assert!(!csv.contains('\u{1b}'), "{csv}");
}

/// Folder walks follow no link into a folder and read each file once: a folder holding `ln -s .
/// loop` was read 41 times (exit 0, totals 41 times too large), two self-links or a link to `/`
/// hung. The totals now equal those of the file alone, and the links are named on stderr.
#[cfg(unix)]
#[test]
fn a_folder_with_link_loops_is_replayed_once_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let log = crate::common::root().join("tests/fixtures/usage/anthropic_messages.jsonl");
    std::fs::copy(&log, logs.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(".", logs.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", logs.join("up")).unwrap();
    std::os::unix::fs::symlink("/", logs.join("root")).unwrap();
    std::os::unix::fs::symlink("a.jsonl", logs.join("same.jsonl")).unwrap();
    let total = |path: &std::path::Path| {
        let out = crate::common::pcsim()
            .args(["replay", path.to_str().unwrap(), "--format", "json"])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v.to_string(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (one, _) = total(&log);
    let (folder, err) = total(&logs);
    let counts = |json: &str| {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        (
            v["files"].as_u64().unwrap(),
            v["calls_logged"].as_u64().unwrap(),
            v["logged_own_models_usd"].as_f64().unwrap(),
        )
    };
    assert_eq!(counts(&folder), counts(&one), "{folder}");
    assert!(
        err.contains("loop") && err.contains("not followed"),
        "{err}"
    );
    assert!(
        err.contains("same.jsonl") && err.contains("already listed"),
        "{err}"
    );
}

/// The TOML parser keeps every token of a document (and one error per token after a syntax error):
/// 60 MB of `=` lines or of nested `[` aborted past 3 GB. A TOML file over 8 MiB is refused before
/// it is parsed, naming the file and the limit, as a scenario, a catalog and a Codex configuration.
#[test]
fn toml_files_over_the_size_limit_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 8 * 1024 * 1024;
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "=\n".repeat(limit / 2 + 1)).unwrap();
    let b = big.to_str().unwrap();
    let codex = dir.path().join(".codex");
    std::fs::create_dir(&codex).unwrap();
    let config = codex.join("config.toml");
    std::fs::write(&config, format!("a = {}", "[".repeat(limit))).unwrap();
    let cases: [Vec<&str>; 4] = [
        vec!["run", b],
        vec!["models", "--catalog", b],
        vec!["run", "--catalog", b],
        vec!["config", config.to_str().unwrap()],
    ];
    for args in cases {
        let err = crate::common::refused(crate::common::pcsim().args(&args));
        assert!(
            err.contains(&format!("{limit}-byte limit of a TOML file")),
            "{args:?}: {err}"
        );
    }
    // Just under the limit, a syntax error names its line and shows a short excerpt of it, not the
    // whole 8 MB line.
    let deep = dir.path().join("deep.toml");
    std::fs::write(&deep, format!("a = {}", "[".repeat(limit - 10))).unwrap();
    let err = crate::common::refused(crate::common::pcsim().args(["run", deep.to_str().unwrap()]));
    assert!(err.contains("line 1, column"), "{err}");
    assert!(err.len() < 1000, "{} bytes of error", err.len());
}

/// A parsed JSON value takes tens of bytes however short its text: 60 MB of `0,` took 2.2 GB in
/// `import-litellm`, `models --check-against` and `config`. Documents of more than 4,000,000 values
/// are refused before parsing, naming the file and the limit.
#[test]
fn json_documents_over_the_value_limit_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let flat = dir.path().join("flat.json");
    std::fs::write(&flat, format!("{{\"a\": [{}0]}}", "0,".repeat(4_000_000))).unwrap();
    let f = flat.to_str().unwrap();
    let out = dir.path().join("out.toml");
    let cases: [Vec<&str>; 3] = [
        vec!["import-litellm", f, "--out", out.to_str().unwrap()],
        vec!["models", "--check-against", f],
        vec!["config", f],
    ];
    for args in cases {
        let err = crate::common::refused(crate::common::pcsim().args(&args));
        assert!(
            err.contains("flat.json") && err.contains("limit of 4000000 values"),
            "{args:?}: {err}"
        );
    }
    assert!(!out.exists());
    // Commas and brackets inside strings are not values: a long string is within the limit.
    std::fs::write(
        &flat,
        format!("{{\"m\": {{\"mode\": \"{}\"}}}}", ",[{:".repeat(2_000_000)),
    )
    .unwrap();
    let run = crate::common::pcsim()
        .args(["models", "--check-against", f])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!err.contains("values in a JSON input"), "{err}");
}

/// One line of a pcsim usage log, `ms` milliseconds after 2026-01-01.
fn usage_line(ms: u64, session: &str, input: u64) -> String {
    let s = ms / 1000;
    format!(
        "{{\"sent_at\":\"2026-01-{:02}T{:02}:{:02}:{:02}.{:03}Z\",\"session_id\":\"{session}\",\"model\":\"claude-opus-4.8\",\"usage\":{{\"input_tokens\":{input},\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":100}}}}\n",
        1 + s / 86_400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60,
        ms % 1000
    )
}

/// `fit` ended in "internal error (a bug in pcsim)" (exit 1) on legal histories: sessions more than
/// 30 days apart, 1 ms between calls, a `--name` with DEL. Each now writes a scenario that loads.
#[test]
fn fit_has_no_internal_error_on_gaps_over_30_days_1_ms_gaps_or_a_del_in_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let day = 86_400_000;
    let apart: String = [
        (0, "a", 1000),
        (5000, "a", 1200),
        (31 * day, "b", 1000),
        (31 * day + 5000, "b", 1200),
    ]
    .iter()
    .map(|&(t, s, i)| usage_line(t, s, i))
    .collect();
    let fast: String = (0..50)
        .map(|i| usage_line(i, "a", 1000 + 150 * i))
        .collect();
    for (log, text, name) in [
        ("apart.jsonl", &apart, "apart"),
        ("fast.jsonl", &fast, "fast"),
        ("named.jsonl", &fast, "a\u{7f}b"),
    ] {
        std::fs::write(dir.path().join(log), text).unwrap();
        let a = crate::common::pcsim()
            .current_dir(dir.path())
            .args([
                "-q",
                "fit",
                log,
                "--out",
                "fitted.toml",
                "--check-runs",
                "2",
            ])
            .args(["--name", name])
            .output()
            .unwrap();
        assert_eq!(
            a.status.code(),
            Some(0),
            "{log}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        crate::common::pcsim()
            .current_dir(dir.path())
            .args(["-q", "run", "fitted.toml"])
            .assert()
            .success();
    }
}

/// A usage log's line is held whole while it is parsed: a sparse 8 GB file (one line of zeros)
/// aborted and a 1 GB line took 2 GB. A line, or a log that is one JSON document, past the 64 MiB
/// limit of an input file is refused, naming the file and the limit (the rest is never read).
#[test]
fn usage_log_lines_and_documents_past_the_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, head) in [("zeros.jsonl", &b""[..]), ("doc.json", &b"[\n"[..])] {
        let path = dir.path().join(name);
        std::fs::write(&path, head).unwrap();
        // Sparse: 8 GiB of zeros without a newline, no disk space used.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(8 << 30)
            .unwrap();
        let err = crate::common::refused(crate::common::pcsim().args([
            "replay",
            path.to_str().unwrap(),
            "--model",
            "claude-opus-4.8",
        ]));
        assert!(
            err.contains(name) && err.contains("67108864-byte limit of a log line"),
            "{err}"
        );
    }
}

/// A UTF-8 byte-order mark at the start of a usage log is not part of its first record (the first
/// call was lost as unreadable).
#[test]
fn a_usage_log_with_a_byte_order_mark_reads_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..5)
        .map(|i| usage_line(i * 1000, "a", 1000 + 150 * i))
        .collect();
    std::fs::write(dir.path().join("plain.jsonl"), &text).unwrap();
    std::fs::write(dir.path().join("bom.jsonl"), format!("\u{feff}{text}")).unwrap();
    let calls = |log: &str| {
        let a = crate::common::pcsim()
            .current_dir(dir.path())
            .args(["-q", "replay", log, "--format", "json"])
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
        (v["calls_logged"].as_u64(), v["unreadable_records"].as_u64())
    };
    assert_eq!(calls("plain.jsonl"), (Some(5), Some(0)));
    assert_eq!(calls("bom.jsonl"), (Some(5), Some(0)));
}

/// `RAYON_NUM_THREADS=600` under a 1 GB address-space limit made rayon panic building its pool
/// (exit 1, "internal error"): the pool is now capped and built with the threads that can start.
#[cfg(target_os = "linux")]
#[test]
fn many_rayon_threads_under_a_memory_limit_do_not_panic() {
    let bin = assert_cmd::cargo::cargo_bin("pcsim");
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -v 1000000 && exec \"$0\" -q run --runs 100",
            bin.to_str().unwrap(),
        ])
        .env("RAYON_NUM_THREADS", "600")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("total USD"));
}

/// `capture --out srv.py -- python3 srv.py` replaced the server's own script with its tool list:
/// an output that is a file of the server's command line (a word, or a value after `=`) is refused
/// before the server starts, and the script is left as it was.
#[test]
fn capture_never_writes_over_a_file_of_the_servers_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("srv.py");
    std::fs::copy(
        crate::common::root().join("tests/fixtures/fake_mcp_server.py"),
        &script,
    )
    .unwrap();
    let before = std::fs::read(&script).unwrap();
    for (out, word) in [("srv.py", "srv.py"), ("./srv.py", "--script=srv.py")] {
        let err = crate::common::refused(
            crate::common::pcsim()
                .current_dir(dir.path())
                .args(["capture", "--timeout-seconds", "10", "--tools-out", out])
                .args(["--", "python3", word]),
        );
        assert!(err.contains("a file of the server's command line"), "{err}");
        assert_eq!(std::fs::read(&script).unwrap(), before);
    }
    // Another output path works (the server is a real one).
    crate::common::pcsim()
        .current_dir(dir.path())
        .args([
            "-q",
            "capture",
            "--timeout-seconds",
            "10",
            "--tools-out",
            "tools.json",
        ])
        .args(["--", "python3", "srv.py"])
        .assert()
        .success();
    assert!(dir.path().join("tools.json").is_file());
}

/// A per-call chart drew one bar per call: `run` at the 2,000,000-bill limit with `--report` took
/// 40 s and 3.4 GB and wrote 695 MB. Past 2,000 calls each bar is the mean cost per call of a bin
/// of consecutive calls, said in the title, so the chart's size is bounded by design.
#[test]
fn per_call_charts_bin_calls_past_2000_bars() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("long.toml"),
        "models = [\"claude-opus-4.8\"]\nstrategies = [\"cached\"]\n[session]\ncalls = 5000\ntool_result_tokens = 20\noutput_tokens = 20\n",
    )
    .unwrap();
    crate::common::pcsim()
        .current_dir(dir.path())
        .args(["-q", "run", "long.toml", "--out", "out", "--svg"])
        .assert()
        .success();
    let svg = std::fs::read_to_string(dir.path().join("out/per-call-claude-opus-4.8-cached.svg"))
        .unwrap();
    assert!(
        svg.contains("each bar: the mean cost per call of 3 consecutive calls"),
        "no bin note in the title"
    );
    // At most 1,667 bars (5,000 calls in bins of 3) of at most six parts, plus axes and legend.
    let rects = svg.matches("<rect").count();
    assert!(rects < 1_667 * 6 + 200, "{rects} rectangles");
    assert!(svg.len() < 4_000_000, "{} bytes", svg.len());
}

/// A Markdown report and its PNGs are written as one set, as `--out` is: when one member cannot be
/// written, none is replaced (each PNG was renamed into place on its own, so a failure midway left
/// new pictures beside the old Markdown).
#[test]
fn a_markdown_report_is_replaced_as_a_whole_set_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let run = |model: &str| {
        crate::common::pcsim()
            .current_dir(dir.path())
            .args(["-q", "run", "--model", model, "--strategy", "none"])
            .args(["--strategy", "cached", "--report", "r.md"])
            .output()
            .unwrap()
    };
    assert!(run("kimi-k3").status.success());
    let snapshot = || {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    // The last picture of the next report (on another model, so its charts differ) cannot be
    // written: a folder holds its name.
    std::fs::create_dir(dir.path().join("r-per-call-glm-5.2-none.png")).unwrap();
    let before = snapshot();
    assert_eq!(
        before.len(),
        5,
        "{:?}",
        before.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let second = run("glm-5.2");
    assert!(
        !second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(snapshot(), before, "a member of the old set was replaced");
}

/// Past the file-size limit (`ulimit -f`) a report's write failed by SIGXFSZ, leaving its temporary
/// file, and with the signal ignored the error named the temporary file (`.r.html.tmp-PID-0`). Now
/// the write fails with an error naming the report, and no temporary file is left.
#[cfg(target_os = "linux")]
#[test]
fn a_report_past_the_file_size_limit_names_the_report_and_leaves_no_temporary_file() {
    let bin = assert_cmd::cargo::cargo_bin("pcsim");
    for trap in ["", "trap '' XFSZ; "] {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("sh")
            .current_dir(dir.path())
            .args([
                "-c",
                &format!("{trap}ulimit -f 1 && exec \"$0\" -q run --report r.html"),
                bin.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{trap}: {err}");
        assert!(err.contains("r.html: cannot write"), "{trap}: {err}");
        assert!(!err.contains(".tmp-"), "{trap}: {err}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{trap}: {left:?}");
    }
}

/// A catalog overlay (`--catalog FILE`) defining one model id twice kept the last silently; it is
/// refused naming both entries (replacing a built-in model of the same id stays what an overlay
/// does).
#[test]
fn a_catalog_overlay_defining_a_model_twice_is_refused_naming_both() {
    let text =
        std::fs::read_to_string(crate::common::root().join("tests/fixtures/catalog-imported.toml"))
            .unwrap();
    let first = text.find("[[model]]").unwrap();
    let end = text[first + 1..]
        .find("[[model]]")
        .map_or(text.len(), |i| first + 1 + i);
    let dir = tempfile::tempdir().unwrap();
    let twice = dir.path().join("twice.toml");
    std::fs::write(&twice, format!("{text}\n{}", &text[first..end])).unwrap();
    let err = crate::common::refused(crate::common::pcsim().args([
        "models",
        "--catalog",
        twice.to_str().unwrap(),
    ]));
    assert!(
        err.contains("twice.toml")
            && err.contains("model `claude-sonnet-4-5`")
            && err.contains("defined twice: [[model]] entries 1 and "),
        "{err}"
    );
    // The file as it is loads.
    crate::common::pcsim()
        .args(["-q", "models", "--catalog"])
        .arg(crate::common::root().join("tests/fixtures/catalog-imported.toml"))
        .assert()
        .success();
}

/// A client configuration naming one server twice kept the last silently (the JSON parse keeps the
/// last of two equal keys); it is refused naming the key's path, before any server starts.
#[test]
fn a_client_configuration_with_a_duplicate_key_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"fs": {"command": "true"}, "git": {"command": "true"}, "fs": {"command": "false"}}}"#,
    )
    .unwrap();
    let err = crate::common::refused(crate::common::pcsim().args([
        "config",
        config.to_str().unwrap(),
        "--timeout-seconds",
        "5",
    ]));
    assert!(
        err.contains("mcp.json") && err.contains("mcpServers.fs") && err.contains("appears twice"),
        "{err}"
    );
}

/// A YAML client configuration (Continue, Goose) is parsed whole as well: 48 MB of list items took
/// 2 GB. Over 8 MiB it is refused before parsing, naming the file and the limit.
#[test]
fn yaml_configurations_over_the_size_limit_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let continue_dir = dir.path().join(".continue");
    std::fs::create_dir(&continue_dir).unwrap();
    let config = continue_dir.join("config.yaml");
    std::fs::write(
        &config,
        format!("mcpServers:\n{}", "  - 0\n".repeat(8 * 1024 * 1024 / 6 + 1)),
    )
    .unwrap();
    let err = crate::common::refused(crate::common::pcsim().args([
        "config",
        config.to_str().unwrap(),
        "--client",
        "continue",
    ]));
    assert!(
        err.contains("config.yaml") && err.contains("8388608-byte limit of a YAML file"),
        "{err}"
    );
}

/// Runs `pcsim ARGS` with standard output into `out` and returns its exit status and its peak
/// resident memory in bytes (`wait4`'s rusage of that one child: a concurrent test's children do
/// not count).
#[cfg(target_os = "linux")]
// The child is reaped by wait4 (for its rusage), not by std's wait, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn exit_and_peak_rss(args: &[&str], out: &std::path::Path) -> (i32, u64) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"))
        .args(args)
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 writes both out-parameters.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our own unwaited child (`child` is never waited through std).
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    // ru_maxrss is in kilobytes on Linux.
    (libc::WEXITSTATUS(status), usage.ru_maxrss as u64 * 1024)
}

/// Between a small run and a large one (each `(output bytes, peak RSS bytes)`), the output grew by
/// more than `min_output_growth` and the peak memory by less than `times` the output's growth.
#[cfg(target_os = "linux")]
fn memory_grows_less_than_output(
    (small_out, small_rss): (u64, u64),
    (large_out, large_rss): (u64, u64),
    min_output_growth: u64,
    times: u64,
) {
    let output_growth = large_out - small_out;
    let rss_growth = large_rss.saturating_sub(small_rss);
    assert!(
        output_growth > min_output_growth,
        "the output should grow by over {min_output_growth} bytes, grew by {output_growth}"
    );
    assert!(
        rss_growth < times * output_growth,
        "peak memory grew by {rss_growth} bytes while the JSON grew by {output_growth}: the output is held in memory"
    );
}

/// `replay --format json` writes its per-call rows straight to the output (issue 29): between a
/// log of 4,000 and one of 40,000 calls the JSON grows by about 20 MB, and the process's peak
/// memory grows by less than twice that (what it keeps per call: the log's calls and their
/// bills). Built as a JSON tree and then a string, as before, the growth was the tree (several
/// times the text) plus the text: over three times the output's.
#[cfg(target_os = "linux")]
#[test]
fn replay_json_memory_grows_less_than_twice_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let write_log = |calls: usize| {
        let path = dir.path().join(format!("log-{calls}.jsonl"));
        let mut text = String::new();
        for i in 0..calls {
            let (conversation, k) = (i / 500, i % 500);
            let read = if k == 0 { 0 } else { 2000 + 300 * k };
            let written = if k == 0 { 2000 } else { 300 };
            text.push_str(&format!(
                r#"{{"model": "claude-opus-4-8", "timestamp": {}, "usage": {{"input_tokens": 50, "cache_read_input_tokens": {read}, "cache_creation_input_tokens": {written}, "output_tokens": 200}}}}"#,
                1_767_225_600 + conversation * 100_000 + k * 30
            ));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        path
    };
    let measure = |calls: usize| {
        let log = write_log(calls);
        let out = dir.path().join(format!("out-{calls}.json"));
        let args = [
            "replay",
            log.to_str().unwrap(),
            "--model",
            "claude-opus-4.8",
            "--format",
            "json",
        ];
        let (code, rss) = exit_and_peak_rss(&args, &out);
        assert_eq!(code, 0, "pcsim {args:?} failed");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("the output is JSON");
        let rows = json["results"][0]["calls"].as_array().map_or(0, Vec::len);
        assert_eq!(rows, calls, "one per-call row per logged call");
        (std::fs::metadata(&out).unwrap().len(), rss)
    };
    memory_grows_less_than_output(measure(4_000), measure(40_000), 15_000_000, 2);
}

/// `run --format json` streams its report (issue 29: at the 2M-bill limit the JSON was built as one
/// string, beside a CSV nobody printed, 1.3 GB): between 4,000 and 40,000 bills kept the JSON grows
/// by about 15 MB and the process's peak memory by less than that (what it keeps per bill); before,
/// by one and a half times the output.
#[cfg(target_os = "linux")]
#[test]
fn run_json_memory_grows_less_than_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let measure = |sessions: usize| {
        let scenario = dir.path().join(format!("s{sessions}.toml"));
        std::fs::write(
            &scenario,
            format!(
                "name = \"mem\"\nmodels = [\"claude-opus-4.8\"]\nstrategies = [\"none\"]\n\
                 [tools]\nsynthetic = {{ count = 26, params = 4 }}\n[session]\ncalls = 100\n\
                 tool_result_tokens = 20\noutput_tokens = 20\nfirst_user_tokens = 20\n\
                 system_tokens = 100\n[sessions]\ncount = {sessions}\nevery_seconds = 1\n"
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("out-{sessions}.json"));
        let args = ["run", scenario.to_str().unwrap(), "--format", "json"];
        let (code, rss) = exit_and_peak_rss(&args, &out);
        assert_eq!(code, 0, "pcsim {args:?} failed");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("the output is JSON");
        assert!(json.is_object());
        (std::fs::metadata(&out).unwrap().len(), rss)
    };
    memory_grows_less_than_output(measure(40), measure(400), 10_000_000, 1);
}
