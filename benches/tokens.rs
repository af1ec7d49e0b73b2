//! Criterion bench of tool-token counting: the 15 real MCP captures of tests/fixtures/reference/mcp
//! rendered and counted on every family of the built-in catalog (what `pcsim tools` does for a
//! whole catalog), after the one-time tokenizer load. The first pass (every distinct piece of text
//! met for the first time) is timed once, later passes by criterion. Then the counting alone, on
//! the same texts rendered beforehand, by pcsim's counter and by tiktoken-rs's `encode_ordinary`
//! (pcsim's counter before; both give the same counts, see tests/integration/tokens.rs),
//! sequentially.
//! `cargo bench --bench tokens`. The captures must be there (the bench panics without them).

use std::path::PathBuf;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};

use pcsim::model::catalog::Catalog;
use pcsim::model::render::TemplateKind;
use pcsim::model::tokenizer::{count, Vocabulary};
use pcsim::model::tools::{load_tool_file, Tool};

fn captures() -> Vec<Vec<Tool>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference/mcp");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 15, "the 15 captures in {}", dir.display());
    files
        .iter()
        .map(|f| load_tool_file(f).expect("capture loads"))
        .collect()
}

fn tokens(c: &mut Criterion) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let caps = captures();
    // The first count loads o200k_base: timed once, outside the measured loop, on a text of its own.
    let t = Instant::now();
    let first = count(&Vocabulary::O200k, "hello world", &[]).expect("o200k counts");
    eprintln!(
        "first count (tokenizer load included): {:.0} ms ({first} tokens)",
        t.elapsed().as_secs_f64() * 1e3
    );
    let all = || {
        let mut total = 0u64;
        for fam in &catalog.families {
            let r = &fam.tool_rendering;
            for tools in &caps {
                // The block and every tool's own tokens, as a per-tool report needs them.
                let (block, per) = r.block_and_tool_tokens(tools);
                total += block + per.iter().sum::<u64>();
            }
        }
        total
    };
    // The counter remembers each distinct piece's count per thread: the first pass meets every
    // piece for the first time (what one `pcsim tools` run over the catalog does), later passes
    // find them all. The first pass is timed once here; criterion then measures the later ones.
    let t = Instant::now();
    let total = all();
    eprintln!(
        "first pass, 15 captures on all families (pieces not yet remembered): {:.1} ms ({total} tokens)",
        t.elapsed().as_secs_f64() * 1e3
    );
    c.bench_function("15_captures_all_families", |b| {
        b.iter(|| std::hint::black_box(all()))
    });
    // Every text the loop above counts: each family's whole rendering and each tool's own text.
    let texts: Vec<(usize, String)> = catalog
        .families
        .iter()
        .enumerate()
        .filter(|(_, f)| f.tool_rendering.template != TemplateKind::Linear)
        .flat_map(|(i, f)| {
            caps.iter().flat_map(move |tools| {
                let r = f.tool_rendering.render(tools);
                let whole = r.text();
                r.tools.into_iter().chain([whole]).map(move |t| (i, t))
            })
        })
        .collect();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    eprintln!("counting only: {} texts, {bytes} bytes", texts.len());
    c.bench_function("count_only_pcsim", |b| {
        b.iter(|| {
            let total: u64 = texts
                .iter()
                .map(|(i, t)| catalog.families[*i].tool_rendering.count_text(t, &[]))
                .sum();
            std::hint::black_box(total)
        })
    });
    let tiktoken = tiktoken_rs::o200k_base().expect("o200k_base loads");
    c.bench_function("count_only_tiktoken_rs", |b| {
        b.iter(|| {
            let total: usize = texts
                .iter()
                .map(|(_, t)| tiktoken.encode_ordinary(t).len())
                .sum();
            std::hint::black_box(total)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = tokens
}
criterion_main!(benches);
