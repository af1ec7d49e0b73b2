//! `--report FILE.html | FILE.md`: one self-contained report per command, checked as a reader gets
//! it: the HTML opens in headless Chromium (Debian's `chromium`, installed by `.ci/run`) with no
//! error, and its screenshot shows the charts.
//!
//! Without Chromium the browser test fails under CI (`CI=true`) and says so; on a developer machine
//! without it, it prints `SKIPPED:` and why past the test harness's capture, so every `cargo test`
//! run shows it (`apt-get install chromium`).
//! Set `PCSIM_REPORT_DUMP=/some/dir` to keep the report and the screenshot for viewing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// A scenario with the GitHub and filesystem servers (real captures shipped under examples/mcp).
fn github_filesystem_scenario(dir: &Path) -> PathBuf {
    let root = common::root();
    let path = dir.join("github-filesystem.toml");
    let text = format!(
        r#"name = "github-filesystem-agent"
description = "30-call coding agent with the GitHub and filesystem MCP servers"
models = ["claude-opus-4.8", "gpt-5.6", "gemini-3.6-flash", "kimi-k3"]
seed = 1

[tools]
files = ["{}", "{}"]

[session]
calls = 30
system_tokens = 1800
first_user_tokens = 250
tool_result_tokens = 900
output_tokens = 220
gap_seconds = 12
first_token_seconds = 1.5
"#,
        root.join("examples/mcp/server-github.tools.json").display(),
        root.join("examples/mcp/server-filesystem.tools.json")
            .display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn github_tool_names() -> String {
    let text =
        std::fs::read_to_string(common::root().join("examples/mcp/server-github.tools.json"))
            .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `pcsim whatif` of disconnecting the GitHub server before call 10, with `--report path`.
fn whatif_report(scenario: &Path, report: &Path) -> String {
    let out = common::pcsim()
        .arg("whatif")
        .arg(scenario)
        .args(["--at-call", "10", "--remove-tools", &github_tool_names()])
        .args(["--chart-size", "1200x750", "--report"])
        .arg(report)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn dump(name: &str, bytes: &[u8]) {
    if let Ok(dir) = std::env::var("PCSIM_REPORT_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(name), bytes).unwrap();
    }
}

#[test]
fn html_report_is_one_self_contained_file_with_charts_prices_and_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = github_filesystem_scenario(dir.path());
    let report = dir.path().join("whatif.html");
    let stdout = whatif_report(&scenario, &report);
    assert!(
        stdout.contains(&format!("wrote {}", report.display())),
        "{stdout}"
    );
    // One file: nothing else was written beside it.
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let html = std::fs::read_to_string(&report).unwrap();
    // Every inline chart is well-formed SVG.
    let mut rest = html.as_str();
    let mut svgs = 0;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").expect("closed svg") + i + "</svg>".len();
        roxmltree::Document::parse(&rest[i..end]).expect("inline SVG parses");
        svgs += 1;
        rest = &rest[end..];
    }
    assert_eq!(svgs, 2);
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "whatif-cumulative and whatif-difference inline"
    );
    assert!(!html.contains("<script"), "no script");
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "no external resource"
    );
    for want in [
        "What a tool-list change before call 10 costs",
        "Removed (26): create_or_update_file",
        "pays back",
        "Prices used and their sources",
        "Provenance",
        "--at-call 10 --remove-tools create_or_update_file,",
        "--report",
        "built-in models.toml",
        "github-filesystem.toml",
        "The scenario as simulated",
    ] {
        assert!(html.contains(want), "{want} missing");
    }
    // The source string of every price of every model simulated is in the report, as the catalog
    // has it on the day the report prices (today: the dated changes in force).
    let catalog = pcsim::model::catalog::Catalog::embedded()
        .unwrap()
        .priced(&pcsim::model::pricing::Pricing::default())
        .unwrap();
    for id in ["claude-opus-4.8", "gpt-5.6", "gemini-3.6-flash", "kimi-k3"] {
        let m = catalog.model(id).unwrap();
        for s in [&m.input_usd_per_mtok.source, &m.output_usd_per_mtok.source] {
            let escaped = s
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;");
            assert!(html.contains(&escaped), "{id}: source `{s}` missing");
        }
    }
    // The figures in the results table are the ones the JSON reports.
    let json = common::pcsim()
        .arg("whatif")
        .arg(&scenario)
        .args(["--at-call", "10", "--remove-tools", &github_tool_names()])
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    for o in v["outcomes"].as_array().unwrap() {
        let changed = pcsim::report::usd(o["changed_usd"].as_f64().unwrap());
        assert!(
            html.contains(&format!("<td class=\"n\">{changed}</td>")),
            "{changed}"
        );
    }
    dump("whatif.html", html.as_bytes());
}

/// With `--runs N` the report carries the figures over the runs, as the JSON has them (mean and
/// the range of 90% of runs, the share of runs in which the verdict holds), before the first run's
/// table, for whatif, compare and advise on the shipped GitHub + filesystem example.
#[test]
fn reports_of_monte_carlo_runs_show_the_figures_over_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = common::root().join("examples/github-filesystem.toml");
    let pcsim_json = |args: &[&str]| -> serde_json::Value {
        let s = scenario.to_str().unwrap();
        let tail = ["--runs", "20", "--format", "json"];
        common::json_of(&[&[args[0], s], &args[1..], &tail[..]].concat())
    };
    let report_of = |args: &[&str]| -> String {
        let path = dir.path().join(format!("{}.html", args[0]));
        common::pcsim()
            .arg(args[0])
            .arg(&scenario)
            .args(&args[1..])
            .args(["--runs", "20", "--chart-size", "800x500", "--report"])
            .arg(&path)
            .assert()
            .success();
        std::fs::read_to_string(&path).unwrap()
    };
    let usd = |v: &serde_json::Value| pcsim::report::usd(v.as_f64().unwrap());
    let range = |i: &serde_json::Value| {
        format!(
            "{} [{}, {}]",
            usd(&i["mean"]),
            usd(&i["p5"]),
            usd(&i["p95"])
        )
    };
    let share = |v: &serde_json::Value| format!("{:.0}%", v.as_f64().unwrap() * 100.0);
    let cell = |text: &str| format!("<td class=\"n\">{text}</td>");

    let whatif = [
        "whatif",
        "--at-call",
        "10",
        "--remove-servers",
        "github",
        "--model",
        "kimi-k3",
    ];
    let v = pcsim_json(&whatif);
    let html = report_of(&whatif);
    assert!(html.contains("Over 20 runs from seed 3"), "no runs note");
    let over_runs = html
        .find("saving USD (mean [p5, p95])")
        .expect("runs table");
    let first_run = html
        .find("The first run alone (seed 3)")
        .expect("first-run label");
    assert!(over_runs < first_run);
    let mut checked = 0;
    for o in v["outcomes"].as_array().unwrap() {
        let r = &o["runs"];
        assert!(
            html.contains(&cell(&range(&r["saving_usd"]))),
            "{}",
            range(&r["saving_usd"])
        );
        assert!(html.contains(&cell(&share(&r["share_saving"]))));
        checked += 1;
    }
    assert_eq!(checked, 2, "none and automatic on kimi-k3");

    let compare = ["compare", "--model", "kimi-k3"];
    let v = pcsim_json(&compare);
    let html = report_of(&compare);
    for o in v["comparisons"][0]["strategies"].as_array().unwrap() {
        let r = &o["runs"];
        for key in ["total_usd", "saving_usd"] {
            assert!(
                html.contains(&cell(&range(&r[key]))),
                "{key} {}",
                range(&r[key])
            );
        }
        assert!(html.contains(&cell(&share(&r["share_cheapest"]))));
    }

    let advise = ["advise", "--model", "gemini-3.6-flash"];
    let v = pcsim_json(&advise);
    let html = report_of(&advise);
    let rec = &v["advice"][0]["recommended"];
    assert!(html.contains(&format!("<td>{}</td>", rec["strategy"].as_str().unwrap())));
    for key in ["total_usd", "saving_usd"] {
        assert!(html.contains(&cell(&range(&rec["runs"][key]))), "{key}");
    }
    assert!(html.contains(&cell(&share(&rec["runs"]["share_cheapest"]))));
    // The TTL tier and the tools to drop, over the runs as the JSON has them.
    let ttl = &v["advice"][0]["ttl"];
    assert!(
        html.contains(&cell(&range(&ttl["runs"]["saving_usd"]))),
        "ttl"
    );
    let drops = v["advice"][0]["drop_tools"].as_array().unwrap();
    assert!(!drops.is_empty());
    for d in drops {
        assert!(html.contains(&format!("<td>{}</td>", d["name"].as_str().unwrap())));
        assert!(
            html.contains(&cell(&range(&d["runs"]["saving_usd"]))),
            "{}",
            d["name"]
        );
    }
}

#[test]
fn markdown_report_links_pngs_written_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = github_filesystem_scenario(dir.path());
    let report = dir.path().join("pr.md");
    whatif_report(&scenario, &report);
    let md = std::fs::read_to_string(&report).unwrap();
    let links: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("![")?.split_once("](")?.1.strip_suffix(')'))
        .collect();
    assert_eq!(
        links,
        ["pr-whatif-cumulative.png", "pr-whatif-difference.png"]
    );
    for l in links {
        let bytes = std::fs::read(dir.path().join(l)).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()))
            .read_info()
            .unwrap();
        let mut buf = vec![
            0;
            reader
                .output_buffer_size()
                .expect("a PNG this size fits in memory")
        ];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (1200, 750), "{l}");
    }
    assert!(
        md.contains("| model | strategy | tool-change rule |"),
        "{md}"
    );
    assert!(md.contains("## Prices used and their sources"));
    assert!(md.contains("| seed | 1 |"), "{md}");
}

#[test]
fn every_command_writes_a_report_and_a_bad_name_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = github_filesystem_scenario(dir.path());
    for (cmd, extra) in [
        ("run", vec!["--model", "gpt-5.6"]),
        // GPT-5.6 takes breakpoints only inside messages: compare names such a strategy.
        (
            "compare",
            vec!["--model", "gpt-5.6", "--strategy", "explicit:system+last"],
        ),
        ("advise", vec!["--model", "gpt-5.6"]),
    ] {
        let report = dir.path().join(format!("{cmd}.html"));
        common::pcsim()
            .arg(cmd)
            .arg(&scenario)
            .args(extra)
            .args(["--chart-size", "800x500", "--report"])
            .arg(&report)
            .assert()
            .success();
        let html = std::fs::read_to_string(&report).unwrap();
        assert!(
            html.contains(&format!("pcsim {cmd}: github-filesystem-agent")),
            "{cmd}"
        );
        assert!(html.contains("<svg"), "{cmd}: no chart");
        assert!(
            html.contains("gpt-5.6") && html.contains("Provenance"),
            "{cmd}"
        );
    }
    // config: the servers of a client configuration, served from the stored captures.
    let cfg = dir.path().join("demo.mcp.json");
    let serve = common::root().join("examples/mcp/serve_capture.py");
    let capture = common::root().join("examples/mcp/server-github.tools.json");
    std::fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"github": {"command": "python3", "args": [serve, capture]}}})
            .to_string(),
    )
    .unwrap();
    let report = dir.path().join("config.md");
    common::pcsim()
        .arg("config")
        .arg(&cfg)
        .args(["--model", "gpt-5.6", "--report"])
        .arg(&report)
        .assert()
        .success();
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("| github |") && md.contains("| 26 |"), "{md}");
    assert!(dir.path().join("config-config-overhead.png").is_file());
    // A report name that is neither .html nor .md is a user error, before anything runs.
    let out = common::pcsim()
        .arg("run")
        .arg(&scenario)
        .args(["--report", "r.pdf"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("--report") && err.contains(".html"), "{err}");
}

/// Chromium from Debian's package, or `None` (and the skip said loudly) outside CI.
fn chromium() -> Option<PathBuf> {
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return Some(PathBuf::from(p));
        }
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is not installed: .ci/run installs it (apt-get install -y chromium)");
    }
    common::say_skipped(
        "the HTML report was not opened in a browser: chromium is not installed \
         (apt-get install -y chromium; .ci/run does)",
    );
    None
}

/// A screenshot decoded: its size and its pixels' bytes.
struct Screenshot {
    width: u32,
    height: u32,
    channels: usize,
    bytes: Vec<u8>,
}

impl Screenshot {
    /// Each pixel's channels (RGB or RGBA).
    fn pixels(&self) -> Vec<&[u8]> {
        self.bytes.chunks(self.channels).collect()
    }
}

/// Headless Chromium's screenshot of `url` in a window of `size`, with its own profile under
/// `dir`; the PNG is kept as `name` (see `dump`) and decoded.
fn screenshot(bin: &Path, dir: &Path, size: (u32, u32), url: &str, name: &str) -> Screenshot {
    let shot = dir.join("shot.png");
    run_chromium(
        bin,
        &dir.join("p-screenshot"),
        &[
            format!("--window-size={},{}", size.0, size.1),
            "--hide-scrollbars".into(),
            format!("--screenshot={}", shot.display()),
        ],
        url,
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote the screenshot");
    dump(name, &bytes);
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()))
        .read_info()
        .unwrap();
    let mut buf = vec![
        0;
        reader
            .output_buffer_size()
            .expect("a PNG this size fits in memory")
    ];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    Screenshot {
        width: info.width,
        height: info.height,
        channels: info.color_type.samples(),
        bytes: buf,
    }
}

/// How many pixels are within `tolerance` of `colour` on every channel (anti-aliased lines and
/// bars are near their colour, not on it).
fn pixels_near(px: &[&[u8]], (r, g, b): (i32, i32, i32), tolerance: i32) -> usize {
    px.iter()
        .filter(|p| {
            (p[0] as i32 - r).abs() < tolerance
                && (p[1] as i32 - g).abs() < tolerance
                && (p[2] as i32 - b).abs() < tolerance
        })
        .count()
}

/// Runs headless Chromium on `url` with `args`, killed after two minutes; (stdout, stderr).
fn run_chromium(bin: &Path, profile: &Path, args: &[String], url: &str) -> (String, String) {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Read both pipes on threads so a chatty browser never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut se, &mut s);
        s
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (t1.join().unwrap(), t2.join().unwrap())
}

/// The page with a first script that turns any error (a script error, a resource that fails to
/// load, a `console.error`) into the document title, so `--dump-dom` shows it.
fn with_error_hook(html: &str) -> String {
    let hook = r#"<script>window.addEventListener("error",function(e){document.title="PCSIM-ERROR "+(e.message||(e.target&&e.target.outerHTML))},true);console.error=function(){document.title="PCSIM-ERROR "+Array.prototype.join.call(arguments," ")};</script>"#;
    html.replacen("<head>", &format!("<head>\n{hook}"), 1)
}

fn title_of(dom: &str) -> String {
    let i = dom.find("<title>").map(|i| i + 7).unwrap_or(0);
    let j = dom[i..].find("</title>").map_or(i, |j| i + j);
    dom[i..j].to_string()
}

#[test]
fn html_report_of_the_github_filesystem_whatif_opens_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let scenario = github_filesystem_scenario(dir.path());
    let report = dir.path().join("whatif.html");
    whatif_report(&scenario, &report);
    let html = std::fs::read_to_string(&report).unwrap();
    let url = |p: &Path| format!("file://{}", p.display());

    // No error while loading: the hooked copy keeps its title. The control page (a missing
    // picture) shows that the hook does catch errors.
    let hooked = dir.path().join("hooked.html");
    std::fs::write(&hooked, with_error_hook(&html)).unwrap();
    let (dom, log) = run_chromium(
        &bin,
        &dir.path().join("p1"),
        &["--dump-dom".into()],
        &url(&hooked),
    );
    assert_eq!(
        title_of(&dom),
        "pcsim whatif: github-filesystem-agent",
        "{log}"
    );
    assert_eq!(dom.matches("<svg").count(), 2, "both charts in the DOM");
    assert!(!log.contains("CONSOLE"), "console messages: {log}");
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        with_error_hook(&html).replace("</body>", "<img src=\"missing.png\"></body>"),
    )
    .unwrap();
    let (dom, _) = run_chromium(
        &bin,
        &dir.path().join("p2"),
        &["--dump-dom".into()],
        &url(&control),
    );
    assert!(
        title_of(&dom).starts_with("PCSIM-ERROR"),
        "{}",
        title_of(&dom)
    );

    // The screenshot is not blank: varied pixels, and the models' palette colours from the
    // inline charts.
    let shot = screenshot(
        &bin,
        dir.path(),
        (1280, 2600),
        &url(&report),
        "whatif-screenshot.png",
    );
    assert_eq!((shot.width, shot.height), (1280, 2600));
    let px = shot.pixels();
    let lum: Vec<f64> = px
        .iter()
        .map(|p| (p[0] as f64 + p[1] as f64 + p[2] as f64) / 3.0)
        .collect();
    let mean = lum.iter().sum::<f64>() / lum.len() as f64;
    let var = lum.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / lum.len() as f64;
    let inked = lum.iter().filter(|l| **l < 200.0).count() as f64 / lum.len() as f64;
    assert!(var > 100.0, "screenshot looks blank: variance {var}");
    assert!(inked > 0.01, "screenshot has almost no ink: {inked}");
    // Opus blue and GPT vermillion lines of the charts (anti-aliased: near the colour).
    for (r, g, b) in [(0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00)] {
        let near = pixels_near(&px, (r, g, b), 24);
        assert!(near > 500, "colour #{r:02X}{g:02X}{b:02X}: {near} pixels");
    }
}

/// `pcsim diff A B --report`: two scenarios (HTML) and two tool lists (Markdown), each with the
/// figures of the JSON, the prices used and the provenance; a bad name is refused before any work.
#[test]
fn diff_writes_a_report_for_two_scenarios_and_for_two_tool_lists() {
    let dir = tempfile::tempdir().unwrap();
    let root = common::root();
    let a = root.join("examples/github-filesystem.toml");
    let b = root.join("examples/large-toolset.toml");
    let report = dir.path().join("diff.html");
    let run = |args: &[&std::ffi::OsStr]| {
        let out = common::pcsim().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let json: serde_json::Value = serde_json::from_slice(&run(&[
        "diff".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--model".as_ref(),
        "kimi-k3".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]))
    .unwrap();
    run(&[
        "diff".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--model".as_ref(),
        "kimi-k3".as_ref(),
        "--report".as_ref(),
        report.as_os_str(),
    ]);
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("pcsim diff:"), "title");
    let rows = json["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        for key in ["total_usd_a", "total_usd_b", "saving_usd"] {
            let cell = pcsim::report::usd(r[key].as_f64().unwrap());
            assert!(
                html.contains(&format!(">{cell}<")),
                "{key} {cell} not in the report"
            );
        }
    }
    assert!(html.contains("Provenance") && html.contains("github-filesystem.toml"));
    assert!(html.contains("Prices used") && html.contains("kimi-k3"));
    assert!(!html.contains("<script"));

    // Two tool lists, as Markdown.
    let ta = root.join("examples/mcp/server-github.tools.json");
    let tb = root.join("examples/mcp/server-filesystem.tools.json");
    let md_path = dir.path().join("tools.md");
    let json: serde_json::Value = serde_json::from_slice(&run(&[
        "diff".as_ref(),
        ta.as_os_str(),
        tb.as_os_str(),
        "--model".as_ref(),
        "gpt-5.6".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]))
    .unwrap();
    run(&[
        "diff".as_ref(),
        ta.as_os_str(),
        tb.as_os_str(),
        "--model".as_ref(),
        "gpt-5.6".as_ref(),
        "--report".as_ref(),
        md_path.as_os_str(),
    ]);
    let md = std::fs::read_to_string(&md_path).unwrap();
    let m = &json["models"][0];
    let row = format!(
        "| gpt-5.6 | {} | {} | {} | {} | {} |",
        m["tokens_a"],
        m["tokens_b"],
        pcsim::report::usd(m["usd_per_call_a"].as_f64().unwrap()),
        pcsim::report::usd(m["usd_per_call_b"].as_f64().unwrap()),
        pcsim::report::usd(m["saving_usd_per_call"].as_f64().unwrap()),
    );
    assert!(md.contains(&row), "{row} not in\n{md}");
    assert!(md.contains("Removed in B"), "{md}");
    // A bad name: exit 2 before any work, nothing written.
    let bad = dir.path().join("diff.pdf");
    let out = common::pcsim()
        .arg("diff")
        .arg(&ta)
        .arg(&tb)
        .arg("--report")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--report"));
    assert!(!bad.exists());
}

/// The bar colours of an inline SVG chart (`fill="#RRGGBB"` of its `rect`s), most used first.
fn bar_colours(svg: &str) -> Vec<(i32, i32, i32)> {
    let mut counts: Vec<((i32, i32, i32), usize)> = Vec::new();
    for rect in svg.split("<rect").skip(1) {
        let tag = rect.split('>').next().unwrap_or("");
        let Some(at) = tag.find("fill=\"#") else {
            continue;
        };
        let hex = &tag[at + 7..];
        if hex.len() < 6 {
            continue;
        }
        let Ok(rgb) = u32::from_str_radix(&hex[..6], 16) else {
            continue;
        };
        let c = (
            (rgb >> 16) as i32,
            ((rgb >> 8) & 0xff) as i32,
            (rgb & 0xff) as i32,
        );
        // Greys (background, axes, text) are not bars.
        let (hi, lo) = (c.0.max(c.1).max(c.2), c.0.min(c.1).min(c.2));
        if hi - lo < 16 {
            continue;
        }
        match counts.iter_mut().find(|(k, _)| *k == c) {
            Some((_, n)) => *n += 1,
            None => counts.push((c, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts.into_iter().map(|(c, _)| c).collect()
}

/// `explain --report`: the report of a trace with an edited message opens in headless Chromium
/// with no error or console message, its per-call chart in the DOM, and a screenshot that shows the
/// chart's bars in the colours the chart itself uses (read back from the report's inline SVG).
#[test]
fn html_report_of_explain_opens_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (trace, _) = crate::explain::trace(
        dir.path(),
        Some(&crate::explain::fixture("base.toml")),
        "claude-opus-4.8",
        &["edit@5"],
    );
    let report = dir.path().join("explain.html");
    common::pcsim()
        .args([
            "explain",
            trace.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "-q",
        ])
        .assert()
        .success();
    let html = std::fs::read_to_string(&report).unwrap();
    dump("explain-report.html", html.as_bytes());
    let url = |p: &Path| format!("file://{}", p.display());

    let hooked = dir.path().join("hooked.html");
    std::fs::write(&hooked, with_error_hook(&html)).unwrap();
    let (dom, log) = run_chromium(
        &bin,
        &dir.path().join("p1"),
        &["--dump-dom".into()],
        &url(&hooked),
    );
    let title = title_of(&dom);
    assert!(
        title.starts_with("pcsim explain") && !title.contains("PCSIM-ERROR"),
        "{title}\n{log}"
    );
    assert_eq!(
        dom.matches("<svg").count(),
        1,
        "the per-call chart in the DOM"
    );
    assert!(
        dom.contains("messages_changed"),
        "the injected cause is named"
    );
    assert!(!log.contains("CONSOLE"), "console messages: {log}");

    let shot = screenshot(
        &bin,
        dir.path(),
        (1280, 2000),
        &url(&report),
        "explain-screenshot.png",
    );
    let px = shot.pixels();
    let svg = &html[html.find("<svg").expect("inline chart")..];
    let colours = bar_colours(svg);
    assert!(
        colours.len() >= 2,
        "bars of at least two colours: {colours:?}"
    );
    // The two most used bar colours (of reads, new tokens or a cause) are on screen.
    for (r, g, b) in colours.into_iter().take(2) {
        let near = pixels_near(&px, (r, g, b), 16);
        assert!(near > 300, "colour #{r:02X}{g:02X}{b:02X}: {near} pixels");
    }
}
