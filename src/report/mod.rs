//! Reports: text tables, CSV, JSON (and charts), plus atomic file output.

pub mod chart;
pub mod csv;
pub mod json;
pub mod table;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes a file atomically: a temporary file in the same folder, then a rename, so a reader never
/// sees a half-written report and an existing file is replaced whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let io = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::Io {
            path: p,
            action,
            source,
        }
    };
    let mut f = std::fs::File::create(&tmp).map_err(io("cannot create", &tmp))?;
    let result = f.write_all(bytes).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("cannot write", &tmp)(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("cannot replace", path)(e)
    })
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

/// Formats dollars with enough digits for sub-cent per-call figures.
pub fn usd(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("${x:.2}")
    } else if x.abs() >= 1.0 {
        format!("${x:.4}")
    } else {
        format!("${x:.6}")
    }
}
