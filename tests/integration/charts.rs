//! Charts: every kind renders from a small simulated scenario as a PNG of the requested size that is
//! not blank, as well-formed SVG, byte-identically across renders; empty input is an error.
//!
//! Set `PCSIM_CHART_DUMP=/some/dir` to keep the rendered files for viewing.

use std::path::Path;

use pcsim::input::scenario::Scenario;
use pcsim::model::catalog::Catalog;
use pcsim::model::strategy::Strategy;
use pcsim::model::tools::synthetic_tools;
use pcsim::report::chart::{
    horizontal_bar_chart, line_chart, percentile_series, run_charts, stacked_bar_chart, Axis,
    ChartOptions, LineSeries, Unit,
};
use pcsim::sim::engine::{simulate_collect, SimSetup};
use pcsim::sim::simulate::run_scenario;

use crate::common;
use predicates::prelude::*;

const SMALL: &str = r#"
name = "charts-test"
description = "8-call agent, 12 tools, two models"
models = ["claude-opus-4.8", "gpt-5.6"]
strategies = ["none", "cached"]
seed = 7

[tools]
synthetic = { count = 12, params = 3 }

[session]
calls = 8
system_tokens = 1500
first_user_tokens = 200
tool_result_tokens = 700
output_tokens = 150
gap_seconds = 10
first_token_seconds = 1.0
"#;

fn small_scenario() -> Scenario {
    Scenario::from_toml_str(SMALL, "charts-test.toml", Path::new(".")).unwrap()
}

fn opts(w: u32, h: u32, svg: bool) -> ChartOptions {
    ChartOptions {
        width: w,
        height: h,
        svg,
        log_scale: false,
    }
}

/// Keeps a rendered chart when `PCSIM_CHART_DUMP` names a folder.
fn dump(name: &str, bytes: &[u8]) {
    if let Ok(dir) = std::env::var("PCSIM_CHART_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(name), bytes).unwrap();
    }
}

/// Decodes a PNG and checks its size and that it shows a real chart: many distinct colours
/// (anti-aliased text and lines in several palette colours) and a fair share of non-white pixels
/// in the middle of the image, where the plot is.
fn assert_png_chart(bytes: &[u8], w: u32, h: u32, what: &str) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder
        .read_info()
        .unwrap_or_else(|e| panic!("{what}: not a PNG: {e}"));
    let mut buf = vec![
        0;
        reader
            .output_buffer_size()
            .expect("a PNG this size fits in memory")
    ];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (w, h), "{what}: size");
    assert_eq!(info.color_type, png::ColorType::Rgb, "{what}");
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    // One bit per 24-bit colour: cheap to fill even in an unoptimised test build.
    let mut seen = vec![0u64; 1 << 18];
    let mut colours = 0usize;
    let mut inked = 0usize;
    let mut total = 0usize;
    for y in 0..h {
        for x in 0..w {
            let p = px(x, y);
            let c = (p.0 as usize) << 16 | (p.1 as usize) << 8 | p.2 as usize;
            if seen[c >> 6] & (1 << (c & 63)) == 0 {
                seen[c >> 6] |= 1 << (c & 63);
                colours += 1;
            }
            if (w / 8..w * 5 / 8).contains(&x) && (h / 4..h * 3 / 4).contains(&y) {
                total += 1;
                if p != (255, 255, 255) {
                    inked += 1;
                }
            }
        }
    }
    assert!(colours > 50, "{what}: only {colours} colours");
    let share = inked as f64 / total as f64;
    assert!(share > 0.01, "{what}: plot area {:.4} inked", share);
}

/// Parses SVG text as XML and returns the text content of all `<text>` elements.
fn svg_texts(bytes: &[u8], w: u32, h: u32, what: &str) -> Vec<String> {
    let text = std::str::from_utf8(bytes).unwrap();
    let doc = roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{what}: bad XML: {e}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "{what}");
    assert_eq!(
        root.attribute("width"),
        Some(w.to_string().as_str()),
        "{what}"
    );
    assert_eq!(
        root.attribute("height"),
        Some(h.to_string().as_str()),
        "{what}"
    );
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn run_charts_are_pngs_of_the_requested_size_and_not_blank() {
    let catalog = Catalog::embedded().unwrap();
    let rep = run_scenario(&catalog, &small_scenario(), &[], &[]).unwrap();
    assert_eq!(rep.results.len(), 4);
    let files = run_charts(&rep, &opts(800, 500, false)).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cumulative-by-call.png",
            "cumulative-by-time.png",
            "per-call-claude-opus-4.8-none.png",
            "per-call-claude-opus-4.8-cached.png",
            "per-call-gpt-5.6-none.png",
            "per-call-gpt-5.6-cached.png",
        ]
    );
    for f in &files {
        dump(&f.name, &f.bytes);
        assert_png_chart(&f.bytes, 800, 500, &f.name);
    }
    // Identical input gives identical bytes (embedded font, deterministic encoder).
    let again = run_charts(&rep, &opts(800, 500, false)).unwrap();
    assert_eq!(files, again);
}

#[test]
fn per_call_parts_add_up_to_each_bill() {
    // The stacked bars split each call's dollars with the catalog's prices; the parts must add up
    // to what the engine billed, for every model and strategy.
    let catalog = Catalog::embedded().unwrap();
    let rep = run_scenario(&catalog, &small_scenario(), &[], &[]).unwrap();
    for r in &rep.results {
        let model = catalog.model(&r.model).unwrap();
        let resolved = Strategy::parse(&r.strategy_requested)
            .unwrap()
            .resolve(model)
            .unwrap();
        let prices = SimSetup::new(model, &resolved, 0.0).prices;
        let mut saw_read = false;
        for c in &r.calls {
            let p = prices.parts_usd(c);
            saw_read |= p.cache_read_usd > 0.0;
            assert!(
                (p.total() - c.cost_usd).abs() <= 1e-12 + 1e-9 * c.cost_usd,
                "{} {} call {}: parts {} vs bill {}",
                r.model,
                r.strategy,
                c.call,
                p.total(),
                c.cost_usd
            );
        }
        assert_eq!(saw_read, r.totals.cache_read_tokens > 0, "{}", r.strategy);
    }
}

#[test]
fn svg_charts_are_well_formed_and_carry_their_text() {
    let catalog = Catalog::embedded().unwrap();
    let rep = run_scenario(&catalog, &small_scenario(), &[], &["none".into()]).unwrap();
    let files = run_charts(&rep, &opts(1600, 1000, true)).unwrap();
    assert_eq!(files.len(), 4);
    for f in &files {
        assert!(f.name.ends_with(".svg"), "{}", f.name);
        dump(&f.name, &f.bytes);
        let texts = svg_texts(&f.bytes, 1600, 1000, &f.name);
        assert!(
            texts.iter().any(|t| t.contains("charts-test")),
            "{}: {texts:?}",
            f.name
        );
        assert!(texts.iter().any(|t| t.contains("(USD)")), "{}", f.name);
    }
    let again = run_charts(&rep, &opts(1600, 1000, true)).unwrap();
    assert_eq!(files, again);
}

/// Median and 5th/95th percentiles of cumulative cost per call over 40 Monte Carlo runs of a
/// scenario whose tool results vary.
fn monte_carlo_band(catalog: &Catalog, model: &str, strategy: &str) -> LineSeries {
    let text = SMALL.replace(
        "tool_result_tokens = 700",
        "tool_result_tokens = { dist = \"exponential\", mean = 700 }",
    );
    let scenario = Scenario::from_toml_str(&text, "band.toml", Path::new(".")).unwrap();
    let m = catalog.model(model).unwrap();
    let resolved = Strategy::parse(strategy).unwrap().resolve(m).unwrap();
    let setup = SimSetup::new(m, &resolved, scenario.first_token_seconds);
    let runs: Vec<Vec<pcsim::sim::billing::CallBill>> = (0..40)
        .map(|run| simulate_collect(&scenario, &setup, run))
        .collect();
    let series = percentile_series(model, strategy, &runs).unwrap();
    // Check the summary against the runs directly: at the last call, the median and the band edges
    // are the 21st, 3rd and 38th smallest totals of the 40 runs (nearest rank).
    let mut last: Vec<f64> = runs
        .iter()
        .map(|r| r.last().unwrap().cumulative_usd)
        .collect();
    last.sort_by(f64::total_cmp);
    let n = scenario.calls;
    assert_eq!(series.points.len(), n);
    assert_eq!(series.points[n - 1], (n as f64, last[20]));
    let band = series.band.as_ref().unwrap();
    assert_eq!(band[n - 1], (n as f64, last[2], last[37]));
    for (p, b) in series.points.iter().zip(band) {
        assert!(b.1 <= p.1 && p.1 <= b.2, "{p:?} outside {b:?}");
    }
    series
}

#[test]
fn percentile_band_is_drawn_around_the_median() {
    let catalog = Catalog::embedded().unwrap();
    let series = vec![
        monte_carlo_band(&catalog, "claude-opus-4.8", "none"),
        monte_carlo_band(&catalog, "claude-opus-4.8", "cached"),
    ];
    // The runs really differ, so the band has width (otherwise the test would prove nothing).
    let band = series[0].band.as_ref().unwrap();
    assert!(band.iter().any(|b| b.2 > b.1 * 1.01), "{band:?}");
    let title = "Cumulative cost, 40 runs: charts-test\nmedian with 5th–95th percentile band";
    let x = Axis::new("call number", Unit::Count);
    let y = Axis::new("cumulative cost (USD)", Unit::Usd);
    let png = line_chart(title, &x, &y, &series, &opts(1600, 1000, false)).unwrap();
    dump("band.png", &png);
    assert_png_chart(&png, 1600, 1000, "band");
    // The band is a translucent fill of the first palette colour: its blend with white must appear.
    let mut without = series.clone();
    for s in &mut without {
        s.band = None;
    }
    let plain = line_chart(title, &x, &y, &without, &opts(1600, 1000, false)).unwrap();
    assert_ne!(png, plain);
    let svg = line_chart(title, &x, &y, &series, &opts(800, 500, true)).unwrap();
    let texts = svg_texts(&svg, 800, 500, "band.svg");
    assert!(texts.iter().any(|t| t.contains("percentile")), "{texts:?}");
}

#[test]
fn sweep_chart_shows_tool_block_tokens_per_model() {
    let catalog = Catalog::embedded().unwrap();
    let counts: Vec<usize> = (0..=10).map(|k| k * 10).collect();
    let series: Vec<LineSeries> = ["claude-opus-4.8", "gpt-5.6", "gemini-3.6-flash"]
        .iter()
        .map(|id| {
            let m = catalog.model(id).unwrap();
            LineSeries {
                group: id.to_string(),
                style: String::new(),
                points: counts
                    .iter()
                    .map(|&n| {
                        (
                            n as f64,
                            m.rendering().block_tokens(&synthetic_tools(0, n, 4)) as f64,
                        )
                    })
                    .collect(),
                band: None,
            }
        })
        .collect();
    // Tokens grow with the tool count for every model.
    for s in &series {
        assert!(s.points.windows(2).all(|w| w[1].1 > w[0].1), "{}", s.group);
    }
    let x = Axis::new("tools in the prompt", Unit::Count);
    let y = Axis::new("tool-block tokens per call (tokens)", Unit::Tokens);
    let title = "Tool-block tokens by tool count\nsynthetic tools with 4 parameters";
    for (w, h) in [(1600, 1000), (800, 500)] {
        let png = line_chart(title, &x, &y, &series, &opts(w, h, false)).unwrap();
        dump(&format!("sweep-{w}x{h}.png"), &png);
        assert_png_chart(&png, w, h, "sweep");
    }
}

#[test]
fn tools_chart_lists_tools_largest_first() {
    let catalog = Catalog::embedded().unwrap();
    let m = catalog.model("claude-opus-4.8").unwrap();
    let tools = pcsim::model::tools::load_tool_file(&common::capture("server-github")).unwrap();
    let bars: Vec<(String, f64)> = tools
        .iter()
        .map(|t| (t.name.clone(), m.rendering().tool_tokens(t) as f64))
        .collect();
    let x = Axis::new("tokens per call (tokens)", Unit::Tokens);
    let title = format!("Tokens of each tool on {}\n{} tools", m.name, tools.len());
    for (w, h) in [(1600, 1000), (800, 500)] {
        let png = horizontal_bar_chart(&title, &x, &bars, &opts(w, h, false)).unwrap();
        dump(&format!("tools-{w}x{h}.png"), &png);
        assert_png_chart(&png, w, h, "tools");
    }
    let svg = horizontal_bar_chart(&title, &x, &bars, &opts(1600, 1000, true)).unwrap();
    let texts = svg_texts(&svg, 1600, 1000, "tools.svg");
    // The largest tool is labelled, with its token count printed at the end of its bar.
    let (name, tokens) = bars
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .unwrap();
    assert!(texts.iter().any(|t| t == name), "{name} missing");
    let printed = pcsim::report::chart::style::group(*tokens, 0);
    assert!(texts.contains(&printed), "{printed} missing from {texts:?}");
}

#[test]
fn stacked_bars_with_many_calls_keep_labels_apart() {
    // 300 calls: labels must thin out (every 20th or so), never one per bar.
    let cats: Vec<String> = (1..=300).map(|i| i.to_string()).collect();
    let a: Vec<f64> = (0..300).map(|i| 0.001 * (1 + i % 7) as f64).collect();
    let b: Vec<f64> = (0..300).map(|i| 0.0005 * (1 + i % 3) as f64).collect();
    let stacks = vec![("uncached input".to_string(), a), ("output".to_string(), b)];
    let y = Axis::new("cost of the call (USD)", Unit::Usd);
    let svg = stacked_bar_chart(
        "Many calls",
        "call number",
        &y,
        &cats,
        &stacks,
        &opts(800, 500, true),
    )
    .unwrap();
    let texts = svg_texts(&svg, 800, 500, "many.svg");
    let numbers: Vec<&String> = texts.iter().filter(|t| cats.contains(t)).collect();
    assert!(numbers.len() >= 4 && numbers.len() <= 20, "{numbers:?}");
    let png = stacked_bar_chart(
        "Many calls",
        "call number",
        &y,
        &cats,
        &stacks,
        &opts(800, 500, false),
    )
    .unwrap();
    dump("many-calls.png", &png);
    assert_png_chart(&png, 800, 500, "many calls");
}

#[test]
fn charts_with_nothing_to_draw_are_clear_errors() {
    let o = opts(800, 500, false);
    let x = Axis::new("call number", Unit::Count);
    let y = Axis::new("cumulative cost (USD)", Unit::Usd);
    let empty = LineSeries {
        group: "m".into(),
        style: "none".into(),
        ..Default::default()
    };
    for e in [
        line_chart("Nothing", &x, &y, &[], &o).unwrap_err(),
        line_chart("Nothing", &x, &y, &[empty], &o).unwrap_err(),
        stacked_bar_chart("Nothing", "call", &y, &[], &[], &o).unwrap_err(),
        horizontal_bar_chart("Nothing", &y, &[], &o).unwrap_err(),
    ] {
        assert!(matches!(e, pcsim::Error::Unsupported(_)), "{e:?}");
        assert!(
            e.to_string().contains("`Nothing` has nothing to draw"),
            "{e}"
        );
    }
}

#[test]
fn run_out_writes_charts_and_prints_their_paths() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let assert = common::pcsim()
        .args([
            "run",
            "--strategy",
            "none",
            "--strategy",
            "cached",
            "--model",
            "gpt-5.6",
        ])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args(["--svg", "--chart-size", "800x500"])
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for name in [
        "cumulative-by-call.png",
        "cumulative-by-time.png",
        "per-call-gpt-5.6-none.png",
        "per-call-gpt-5.6-cached.png",
        "cumulative-by-call.svg",
        "per-call-gpt-5.6-cached.svg",
    ] {
        let path = out.join(name);
        assert!(
            stdout.contains(&format!("wrote {}", path.display())),
            "{name}: {stdout}"
        );
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".png") {
            assert_png_chart(&bytes, 800, 500, name);
        } else {
            svg_texts(&bytes, 800, 500, name);
        }
    }
}

#[test]
fn bad_chart_size_fails_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let assert = common::pcsim()
        .args(["run", "--chart-size", "800by500", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("--chart-size") && stderr.contains("800by500"),
        "{stderr}"
    );
    assert!(!out.exists(), "output folder created despite the bad flag");
}

#[test]
fn sweep_and_tools_out_write_their_charts() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep");
    common::pcsim()
        .args([
            "sweep",
            "--max-tools",
            "12",
            "--model",
            "gpt-5.6",
            "--model",
            "kimi-k3",
        ])
        .args(["--chart-size", "800x500", "--out"])
        .arg(&sweep)
        .assert()
        .success();
    for name in ["sweep-tokens.png", "sweep-usd.png"] {
        let bytes = std::fs::read(sweep.join(name)).unwrap();
        assert_png_chart(&bytes, 800, 500, name);
    }
    let tools = dir.path().join("tools");
    let assert = common::pcsim()
        .arg("tools")
        .arg(common::root().join("examples/tools/get_weather.json"))
        .args([
            "--model",
            "claude-opus-4.8",
            "--format",
            "json",
            "--svg",
            "--out",
        ])
        .arg(&tools)
        .assert()
        .success();
    // With JSON on stdout, the written paths go to stderr.
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let png = tools.join("tools-claude-opus-4.8.png");
    assert!(
        stderr.contains(&format!("wrote {}", png.display())),
        "{stderr}"
    );
    assert_png_chart(&std::fs::read(&png).unwrap(), 1600, 1000, "tools png");
    let svg = std::fs::read(tools.join("tools-claude-opus-4.8.svg")).unwrap();
    let texts = svg_texts(&svg, 1600, 1000, "tools svg");
    assert!(texts.iter().any(|t| t == "get_weather"), "{texts:?}");
    assert!(tools.join("tools.json").is_file());
}

#[test]
fn svg_escapes_markup_in_labels() {
    let x = Axis::new("calls <n> & more", Unit::Count);
    let y = Axis::new("cost (USD)", Unit::Usd);
    let s = LineSeries {
        group: "model<&>\"'".into(),
        style: "none".into(),
        points: vec![(1.0, 0.5), (2.0, 1.0)],
        band: None,
    };
    let svg = line_chart(
        "A <b> & 'c'\n\"quoted\"",
        &x,
        &y,
        &[s],
        &opts(800, 500, true),
    )
    .unwrap();
    let texts = svg_texts(&svg, 800, 500, "escaped");
    assert!(texts.iter().any(|t| t == "A <b> & 'c'"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "model<&>\"'"), "{texts:?}");
}

#[test]
fn compare_out_writes_cumulative_charts() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let out = dir.path().join("cmp");
    common::pcsim()
        .arg("compare")
        .arg(&scenario)
        .args([
            "--model",
            "claude-opus-4.8",
            "--svg",
            "--chart-size",
            "800x500",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    for name in ["cumulative-by-call.png", "cumulative-by-time.png"] {
        assert_png_chart(&std::fs::read(out.join(name)).unwrap(), 800, 500, name);
    }
    // Every compared strategy is named in full in the legend: long names wrap onto a second line
    // at 800x500 instead of being cut to look alike.
    let texts = svg_texts(
        &std::fs::read(out.join("cumulative-by-call.svg")).unwrap(),
        800,
        500,
        "compare svg",
    );
    let joined = texts.concat();
    for s in [
        "none",
        "explicit:tools+system+last",
        "explicit:tools@1h+system+last",
        "explicit:tools@1h+system@1h+last@1h",
    ] {
        assert!(joined.contains(s), "{s} missing from {texts:?}");
    }
    assert!(!joined.contains('…'), "{texts:?}");
}

#[test]
fn run_with_several_runs_draws_median_and_band_in_the_by_call_chart() {
    let catalog = Catalog::embedded().unwrap();
    let text = SMALL.replace(
        "gap_seconds = 10",
        "gap_seconds = { dist = \"exponential\", mean = 200 }",
    );
    let mut s = Scenario::from_toml_str(&text, "charts-test.toml", Path::new(".")).unwrap();
    let one = run_scenario(&catalog, &s, &[], &[]).unwrap();
    s.runs = 60;
    let many = run_scenario(&catalog, &s, &[], &[]).unwrap();
    let mc = many.results[1]
        .montecarlo
        .as_ref()
        .expect("60 runs give a Monte Carlo summary");
    // Gaps around the 5-minute TTL make the cached cost spread: the band has width.
    let last = mc.curve.last().unwrap();
    assert!(last.p95 > last.p5, "band {} .. {}", last.p5, last.p95);
    let a = run_charts(&one, &opts(800, 500, false)).unwrap();
    let b = run_charts(&many, &opts(800, 500, false)).unwrap();
    assert_png_chart(&b[0].bytes, 800, 500, "cumulative-by-call with band");
    dump("band-cumulative-by-call.png", &b[0].bytes);
    assert_ne!(
        a[0].bytes, b[0].bytes,
        "the band and median change the by-call chart"
    );
}

/// The stroke colour of the legend sample drawn just before the text `label` (legend rows draw
/// their line sample, then their text).
fn legend_colour(svg: &[u8], label: &str) -> Option<String> {
    let text = std::str::from_utf8(svg).unwrap();
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut last = None;
    for n in doc.descendants() {
        if n.has_tag_name("polyline") || n.has_tag_name("line") || n.has_tag_name("rect") {
            last = n
                .attribute("stroke")
                .filter(|s| s.starts_with('#'))
                .or_else(|| n.attribute("fill").filter(|s| s.starts_with('#')))
                .map(str::to_string);
        }
        if n.has_tag_name("text") && n.text().map(str::trim) == Some(label) {
            return last;
        }
    }
    None
}

fn svg_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_model_keeps_its_colour_in_every_chart_of_a_report() {
    // run, compare and whatif of one scenario: every chart that shows a model uses one colour for
    // it, and different models get different colours.
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let models = [
        "--model",
        "kimi-k3",
        "--model",
        "gpt-5.6",
        "--model",
        "claude-opus-4.8",
    ];
    let common_args = ["--svg", "--chart-size", "800x500", "--out"];
    for (cmd, extra) in [
        ("run", vec![]),
        ("compare", vec![]),
        (
            "whatif",
            vec!["--at-call", "4", "--remove-tools", "synthetic_tool_12"],
        ),
    ] {
        common::pcsim()
            .arg(cmd)
            .arg(&scenario)
            .args(&extra)
            .args(models)
            .args(common_args)
            .arg(dir.path().join(cmd))
            .assert()
            .success();
    }
    let mut colour_of: std::collections::BTreeMap<&str, String> = Default::default();
    let mut checked = 0;
    for cmd in ["run", "compare", "whatif"] {
        for (name, svg) in svg_files(&dir.path().join(cmd)) {
            for m in ["kimi-k3", "gpt-5.6", "claude-opus-4.8"] {
                let Some(c) = legend_colour(&svg, m) else {
                    continue;
                };
                checked += 1;
                let first = colour_of.entry(m).or_insert_with(|| c.clone());
                assert_eq!(*first, c, "{cmd}/{name}: {m}");
            }
        }
    }
    // run: 2 cumulative charts; compare: 2 + totals; whatif: 2, each with three models.
    assert!(checked >= 7 * 3, "{checked}");
    let distinct: std::collections::BTreeSet<&String> = colour_of.values().collect();
    assert_eq!(distinct.len(), 3, "{colour_of:?}");
}

#[test]
fn a_chart_showing_some_models_keeps_the_report_colours() {
    // The key fixes colours before drawing: a chart with only the second model still gives it
    // the second colour (first-appearance order would give it the first).
    use pcsim::report::chart::{line_chart_with, ColourKey, LineExtras};
    let x = Axis::new("call", Unit::Count);
    let s = LineSeries {
        group: "b".into(),
        style: "none".into(),
        points: vec![(1.0, 1.0), (2.0, 2.0)],
        band: None,
    };
    let extras = LineExtras {
        colours: ColourKey::new(["a", "b"]),
        ..LineExtras::default()
    };
    let svg = line_chart_with(
        "t",
        &x,
        &x,
        std::slice::from_ref(&s),
        &extras,
        &opts(800, 500, true),
    )
    .unwrap();
    assert_eq!(legend_colour(&svg, "b").as_deref(), Some("#D55E00"));
    let plain = line_chart("t", &x, &x, &[s], &opts(800, 500, true)).unwrap();
    assert_eq!(legend_colour(&plain, "b").as_deref(), Some("#0072B2"));
}

#[test]
fn identical_lines_are_named_in_the_legend() {
    // Gemini 3.6 Flash's implicit cache never hits (measured): cached and none cost the same and
    // one line hides the other, so the legend says so; Opus's two lines differ.
    let catalog = Catalog::embedded().unwrap();
    let s = small_scenario();
    let models = [
        "gemini-3.6-flash".to_string(),
        "claude-opus-4.8".to_string(),
    ];
    let rep = run_scenario(&catalog, &s, &models, &[]).unwrap();
    let files = run_charts(&rep, &opts(1000, 600, true)).unwrap();
    let texts = svg_texts(&files[0].bytes, 1000, 600, &files[0].name).concat();
    assert!(texts.contains("Same line (hidden)"), "{texts}");
    // The note may wrap onto two legend lines: compare without the spaces.
    assert!(
        texts
            .replace(' ', "")
            .contains("gemini-3.6-flashnone=gemini-3.6-flashcached"),
        "{texts}"
    );
    assert!(!texts.contains("claude-opus-4.8 none ="), "{texts}");
    let only_opus = run_scenario(&catalog, &s, &models[1..], &[]).unwrap();
    let files = run_charts(&only_opus, &opts(1000, 600, true)).unwrap();
    let texts = svg_texts(&files[0].bytes, 1000, 600, &files[0].name).concat();
    assert!(!texts.contains("Same line"), "{texts}");
}

#[test]
fn whatif_out_writes_baseline_and_difference_charts_with_call_k_marked() {
    let out = tempfile::tempdir().unwrap();
    common::pcsim()
        .current_dir(common::root())
        .args([
            "whatif",
            "examples/tool-change.toml",
            "--at-call",
            "25",
            "--remove-tools",
            "web_search,fetch_page,search_code",
            "--model",
            "claude-opus-4.8",
            "--model",
            "kimi-k3",
            "--svg",
            "--chart-size",
            "1000x600",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("whatif-cumulative.png"))
        .stdout(predicate::str::contains("whatif-difference.svg"));
    for name in ["whatif-cumulative.png", "whatif-difference.png"] {
        assert_png_chart(
            &std::fs::read(out.path().join(name)).unwrap(),
            1000,
            600,
            name,
        );
    }
    let cumulative = std::fs::read(out.path().join("whatif-cumulative.svg")).unwrap();
    dump("whatif-cumulative.svg", &cumulative);
    let texts = svg_texts(&cumulative, 1000, 600, "whatif-cumulative").concat();
    for want in [
        "before call 25",
        "3 tools removed (19 -> 16 tools)",
        "as it is",
        "with the change, cached",
        "with the change, cached/tool-changes=append",
    ] {
        assert!(texts.contains(want), "{want} missing from {texts}");
    }
    // The marker is a vertical dotted line: many short pieces at one x, in the neutral grey.
    let diff = std::fs::read(out.path().join("whatif-difference.svg")).unwrap();
    let text = std::str::from_utf8(&diff).unwrap();
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut vertical: std::collections::BTreeMap<i64, usize> = Default::default();
    for n in doc.descendants().filter(|n| n.has_tag_name("polyline")) {
        if n.attribute("stroke") != Some("#555555") {
            continue;
        }
        let xs: Vec<i64> = n
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .filter_map(|p| p.split(',').next()?.parse().ok())
            .collect();
        if xs.len() >= 2 && xs.iter().all(|x| *x == xs[0]) {
            *vertical.entry(xs[0]).or_default() += 1;
        }
    }
    assert!(
        vertical.values().any(|n| *n >= 10),
        "no dotted vertical marker: {vertical:?}"
    );
    let texts = svg_texts(&diff, 1000, 600, "whatif-difference").concat();
    assert!(
        texts.contains("above zero: the change has paid for itself")
            && texts.contains("cumulative saving (USD)"),
        "{texts}"
    );
}

#[test]
fn compare_totals_chart_has_one_bar_per_simulated_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let out = dir.path().join("cmp");
    let json = common::pcsim()
        .arg("compare")
        .arg(&scenario)
        .args([
            "--format",
            "json",
            "--svg",
            "--chart-size",
            "1000x700",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let outcomes: Vec<(String, String, f64)> = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            m["strategies"].as_array().unwrap().iter().map(|o| {
                (
                    m["model"].as_str().unwrap().to_string(),
                    o["strategy_requested"].as_str().unwrap().to_string(),
                    o["total_usd"].as_f64().unwrap(),
                )
            })
        })
        .collect();
    assert!(outcomes.len() >= 6, "{outcomes:?}");
    let svg = std::fs::read(out.join("compare-totals.svg")).unwrap();
    dump("compare-totals.svg", &svg);
    let texts = svg_texts(&svg, 1000, 700, "compare-totals");
    for (m, s, _) in &outcomes {
        let label = format!("{m} {s}");
        assert!(texts.contains(&label), "{label} missing from {texts:?}");
    }
    // Bars: filled rectangles in a model colour; their widths follow the totals.
    let text = std::str::from_utf8(&svg).unwrap();
    let doc = roxmltree::Document::parse(text).unwrap();
    let palette = ["#0072B2", "#D55E00"];
    let widths: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter(|n| n.attribute("fill").is_some_and(|f| palette.contains(&f)))
        .filter_map(|n| n.attribute("width")?.parse().ok())
        .collect();
    // One bar per outcome plus one legend swatch per model (small squares).
    let bars: Vec<f64> = widths.iter().copied().filter(|w| *w > 20.0).collect();
    assert_eq!(bars.len(), outcomes.len(), "{widths:?}");
    let (imax, _) = outcomes
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .2.total_cmp(&b.1 .2))
        .unwrap();
    let bmax = bars
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    assert_eq!(imax, bmax, "the longest bar is the dearest strategy");
    assert!(texts.iter().any(|t| t.contains("baseline")));
    assert!(texts.iter().any(|t| t.contains("saves")));
}

#[test]
fn per_call_chart_draws_base_rate_storage_apart_from_the_write_surcharge() {
    let catalog = Catalog::embedded().unwrap();
    let models = [
        "gemini-3.6-flash".to_string(),
        "claude-opus-4.8".to_string(),
    ];
    let rep = run_scenario(&catalog, &small_scenario(), &models, &["cached".into()]).unwrap();
    let files = run_charts(&rep, &opts(1000, 600, true)).unwrap();
    let legend = |stem: &str| {
        let f = files.iter().find(|f| f.name.starts_with(stem)).unwrap();
        // Long legend labels wrap onto a second line: compare the joined text.
        svg_texts(&f.bytes, 1000, 600, &f.name).join(" ")
    };
    // Gemini's implicit cache stores at no surcharge: no "cache writes", no surcharge part.
    let gemini = legend("per-call-gemini-3.6-flash");
    assert!(
        gemini.contains("stored in cache (base input rate)"),
        "{gemini}"
    );
    assert!(
        !gemini.contains("surcharge") && !gemini.contains("cache writes"),
        "{gemini}"
    );
    // Opus writes at 1.25x: the base-rate part and the 0.25x surcharge are separate parts.
    let opus = legend("per-call-claude-opus-4.8");
    for want in [
        "stored in cache (base input rate)",
        "cache-write surcharge",
        "cache reads",
    ] {
        assert!(opus.contains(want), "{want}: {opus}");
    }
}

#[test]
fn log_scale_puts_the_cost_axis_on_decades() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], out: &str| {
        common::pcsim()
            .args([
                "run",
                "--strategy",
                "none",
                "--svg",
                "--chart-size",
                "1000x600",
            ])
            .args(extra)
            .arg("--out")
            .arg(dir.path().join(out))
            .assert()
            .success();
        let svg = std::fs::read(dir.path().join(out).join("cumulative-by-call.svg")).unwrap();
        svg_texts(&svg, 1000, 600, out)
    };
    let log = run(&["--log-scale"], "log");
    let linear = run(&[], "linear");
    assert!(log.iter().any(|t| t.contains("log scale")), "{log:?}");
    assert!(!linear.iter().any(|t| t.contains("log scale")));
    // Ticks at 1, 2, 5 times powers of ten: from Gemini's first call (under a cent) to Opus's
    // total (about $2).
    for tick in ["$0.01", "$0.10", "$1"] {
        assert!(log.iter().any(|t| t == tick), "{tick} missing from {log:?}");
        assert!(
            !linear.iter().any(|t| t == tick && tick == "$0.01"),
            "{linear:?}"
        );
    }
}

/// `advise --out` on six models, each with many placements: every model keeps its bars (no caching
/// and its cheapest placements, the recommendation marked), and the subtitle says how many per
/// model are drawn, instead of one model's twenty placements pushing the others off the chart.
#[test]
fn advise_chart_shows_every_model_with_its_cheapest_placements() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("adv");
    let scenario = common::root().join("examples/github-filesystem.toml");
    let v = common::json_of(&[
        "advise",
        scenario.to_str().unwrap(),
        "--format",
        "json",
        "--svg",
        "--chart-size",
        "1200x750",
        "--out",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read(out.join("advise-totals.svg")).unwrap();
    dump("advise-totals.svg", &svg);
    let texts = svg_texts(&svg, 1200, 750, "advise-totals").join("\n");
    let advice = v["advice"].as_array().unwrap();
    assert_eq!(advice.len(), 6);
    for a in advice {
        let model = a["model"].as_str().unwrap();
        let rec = a["recommended"]["strategy"].as_str().unwrap();
        assert!(
            texts.contains(&format!("{model} none")),
            "{model}: no baseline bar\n{texts}"
        );
        if rec != "none" {
            assert!(
                texts.contains(&format!("{model} {rec}")),
                "{model}: {rec} not drawn\n{texts}"
            );
        }
    }
    assert_eq!(
        texts.matches("recommended").count(),
        advice
            .iter()
            .filter(|a| a["recommended"]["strategy"] != "none")
            .count()
    );
    assert!(texts.contains("the 2 cheapest of each model"), "{texts}");
    assert!(!texts.contains("do not fit"), "{texts}");
}
