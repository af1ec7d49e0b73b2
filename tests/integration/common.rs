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
/// MCP captures live. When it is absent the calling test fails, saying so: a test of real data must
/// not pass without it. `PCSIM_ALLOW_MISSING_SHARED=1` (a checkout without the data, on purpose)
/// turns that into `None` and a printed skip.
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
    if std::env::var_os("PCSIM_ALLOW_MISSING_SHARED").is_some_and(|v| v == "1") {
        eprintln!("skipped: shared/reference not found beside the checkout (set PCSIM_SHARED)");
        return None;
    }
    panic!(
        "shared/reference not found beside the checkout: set PCSIM_SHARED to it, or \
         PCSIM_ALLOW_MISSING_SHARED=1 to skip the tests of real data"
    );
}

/// A real MCP capture by file stem, e.g. `server-github`.
pub fn capture(stem: &str) -> Option<PathBuf> {
    shared_reference().map(|r| r.join("mcp").join(format!("{stem}.tools.json")))
}
