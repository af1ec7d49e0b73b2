//! Criterion bench of tool-token counting: the 15 real MCP captures of ../shared/reference/mcp
//! rendered and counted on every family of the built-in catalog (what `pcsim tools` does for a
//! whole catalog), after the one-time tokenizer load.
//! `cargo bench --bench tokens`. The captures must be there (the bench panics without them).

use std::path::PathBuf;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};

use pcsim::model::catalog::Catalog;
use pcsim::model::tools::{load_tool_file, Tool};

fn captures() -> Vec<Vec<Tool>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/mcp");
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
    // The first count loads o200k_base: timed once, outside the measured loop.
    let t = Instant::now();
    let first = catalog.families[0].tool_rendering.block_tokens(&caps[0]);
    eprintln!(
        "first count (tokenizer load included): {:.0} ms ({first} tokens)",
        t.elapsed().as_secs_f64() * 1e3
    );
    c.bench_function("15_captures_all_families", |b| {
        b.iter(|| {
            let mut total = 0u64;
            for fam in &catalog.families {
                let r = &fam.tool_rendering;
                for tools in &caps {
                    // The block and every tool's own tokens, as a per-tool report needs them.
                    let (block, per) = r.block_and_tool_tokens(tools);
                    total += block + per.iter().sum::<u64>();
                }
            }
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
