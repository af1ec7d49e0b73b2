//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The `pcsim` binary under test.
pub fn pcsim() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("pcsim")
        .expect("the pcsim binary is built for integration tests")
}

/// The project root (where Cargo.toml and models.toml live).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `shared/reference` beside the checkout (or `$PCSIM_SHARED`), where the measured facts and the real
/// MCP captures live. `None` (and a printed reason) when it is absent, so tests can skip honestly.
pub fn shared_reference() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PCSIM_SHARED") {
        let p = PathBuf::from(p);
        if p.is_dir() {
            return Some(p);
        }
    }
    let mut dir = Some(root());
    while let Some(d) = dir {
        let candidate = d.join("shared").join("reference");
        if candidate.is_dir() {
            return Some(candidate);
        }
        dir = d.parent().map(PathBuf::from);
    }
    eprintln!("skipped: shared/reference not found beside the checkout (set PCSIM_SHARED)");
    None
}

/// A real MCP capture by file stem, e.g. `server-github`.
pub fn capture(stem: &str) -> Option<PathBuf> {
    shared_reference().map(|r| r.join("mcp").join(format!("{stem}.tools.json")))
}
