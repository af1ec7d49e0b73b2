//! Report layer: the renderers of `run` (text tables, CSV, JSON), the charts of every report (PNG and
//! SVG), and atomic file output. Renders what the simulation and analysis layers computed; computes
//! no figures of its own (a chart's parts come from the prices each result was billed at). The
//! formatting primitives (dollars, CSV fields, tables) live in [`crate::base::text`] so the analyses
//! can use them too.

pub mod chart;
pub mod csv;
pub mod document;
pub mod json;
pub mod table;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes a file atomically: a temporary file in the same folder, then a rename, so a reader never
/// sees a half-written report and an existing file is replaced whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Like [`write_atomic`], with the content streamed by `write` (large reports need not be built in
/// memory first). If `write` fails or panics, the temporary file is removed and an existing file at
/// `path` keeps its old content; a replaced file keeps its permissions.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    // Process id plus a counter: two writers in one process (threads) never share a temporary file.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let io = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::Io {
            path: p,
            action,
            source,
        }
    };
    if path.is_dir() {
        return Err(Error::invalid(
            path.display().to_string(),
            "output path",
            "is a folder; a report cannot replace it",
        ));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    /// Removes the temporary file unless it was renamed into place (also when `write` panics).
    struct Cleanup<'a>(&'a Path, bool);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(io("cannot create", &tmp))?;
    let mut guard = Cleanup(&tmp, false);
    let mut out = std::io::BufWriter::new(file);
    write(&mut out).map_err(io("cannot write", &tmp))?;
    let file = out
        .into_inner()
        .map_err(|e| io("cannot write", &tmp)(e.into_error()))?;
    file.sync_all().map_err(io("cannot write", &tmp))?;
    if let Ok(meta) = std::fs::metadata(path) {
        // Keep the permissions of the file being replaced (best effort).
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    drop(file);
    std::fs::rename(&tmp, path).map_err(io("cannot replace", path))?;
    guard.1 = true;
    Ok(())
}

/// Checks up front that `dir` exists (creating it if needed) and can be written, so no simulation
/// work is wasted before an unwritable output folder is discovered.
pub fn ensure_writable_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        action: "cannot create output folder",
        source,
    })?;
    let probe = dir.join(format!(".pcsim-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        action: "cannot write to output folder",
        source,
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

pub use crate::base::text::usd;
