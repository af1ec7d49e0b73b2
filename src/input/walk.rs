//! Folders of input files (usage logs, traces), walked safely: each regular file once (by device
//! and inode), no symbolic link followed into a folder (a `ln -s . loop` was read 41 times, a link
//! to `/` walked the whole disk), FIFOs and devices never opened, and the walk bounded in depth and
//! in files before any of them is read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The most files one walk lists (a home folder by mistake is refused, not read for minutes).
pub const MAX_WALK_FILES: usize = 100_000;

/// The deepest folder a walk enters below the one given.
pub const MAX_WALK_DEPTH: usize = 64;

/// What a walk found besides its files: links and special files it did not follow or open.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Walked {
    /// The regular files, in path order within each folder, each once.
    pub files: Vec<PathBuf>,
    /// Entries left out, each with the reason (a link to a folder, a FIFO, a file already listed
    /// under another name).
    pub left_out: Vec<(PathBuf, &'static str)>,
}

/// The files of `paths` whose extension is one of `extensions`: a file is taken as given (a link
/// to a regular file too); a folder is walked. A folder in which nothing matches is an error naming
/// it, as is a walk past [`MAX_WALK_FILES`] or [`MAX_WALK_DEPTH`].
pub fn input_files(paths: &[PathBuf], extensions: &[&str]) -> Result<Walked> {
    let mut walked = Walked::default();
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|source| Error::Io {
            path: p.clone(),
            action: "reading",
            source,
        })?;
        if meta.is_dir() {
            seen.insert(identity(&meta));
            let before = walked.files.len();
            walk(p, extensions, 0, &mut seen, &mut walked)?;
            if walked.files.len() == before {
                return Err(Error::invalid(
                    p.display().to_string(),
                    "folder",
                    format!("holds no .{} file", extensions.join(" or .")),
                ));
            }
        } else if seen.insert(identity(&meta)) {
            walked.files.push(p.clone());
        }
    }
    Ok(walked)
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    (0, NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

fn walk(
    dir: &Path,
    extensions: &[&str],
    depth: usize,
    seen: &mut HashSet<(u64, u64)>,
    walked: &mut Walked,
) -> Result<()> {
    if depth > MAX_WALK_DEPTH {
        return Err(Error::invalid(
            dir.display().to_string(),
            "folder",
            format!("more than {MAX_WALK_DEPTH} folders deep (the walk's limit)"),
        ));
    }
    let listing = |source| Error::Io {
        path: dir.to_path_buf(),
        action: "listing",
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(listing)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        // The entry itself, not what a link points to.
        let Ok(own) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let kind = own.file_type();
        if kind.is_dir() {
            if seen.insert(identity(&own)) {
                walk(&p, extensions, depth + 1, seen, walked)?;
            }
            continue;
        }
        let wanted = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e));
        if kind.is_symlink() {
            match std::fs::metadata(&p) {
                Ok(target) if target.is_file() && wanted => {
                    if seen.insert(identity(&target)) {
                        walked.files.push(p);
                    } else {
                        walked.left_out.push((p, "a link to a file already listed"));
                    }
                }
                Ok(target) if target.is_dir() => walked
                    .left_out
                    .push((p, "a link to a folder (not followed)")),
                _ => {}
            }
            continue;
        }
        if !wanted {
            continue;
        }
        if !kind.is_file() {
            walked.left_out.push((
                p,
                "not a regular file (a FIFO, socket or device is never opened)",
            ));
            continue;
        }
        if seen.insert(identity(&own)) {
            walked.files.push(p);
            if walked.files.len() > MAX_WALK_FILES {
                return Err(Error::invalid(
                    dir.display().to_string(),
                    "folder",
                    format!("more than {MAX_WALK_FILES} files to read (the walk's limit)"),
                ));
            }
        }
    }
    Ok(())
}
