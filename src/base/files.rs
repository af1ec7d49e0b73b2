//! Files: safe access shared by every layer, and short file names. Inputs are opened without
//! blocking and checked on the opened descriptor (no check-then-open race) and read whole within a
//! size limit ([`read_text`]); the identities of the files a run read are kept (so that no output
//! ever lands on an input); temporary files are created exclusively and without following symbolic
//! links, and removed when dropped or, in the `pcsim` program, when the process is interrupted
//! (`base::signals`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Device and inode of a file: the identity that survives other names (hard links, `..`, symbolic
/// links to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity in `meta` (`None` where the platform has no inode numbers).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// One input a run read.
#[derive(Debug, Clone)]
struct Input {
    shown: PathBuf,
    canonical: Option<PathBuf>,
    id: Option<FileId>,
}

static RECORDING: AtomicBool = AtomicBool::new(false);
static INPUTS: Mutex<Vec<Input>> = Mutex::new(Vec::new());

/// Starts recording every input file read through [`open_input`] (and so [`crate::base::files::read_text`]),
/// so that [`input_at`] can refuse to write over one. The binary calls it once at start; library
/// users that write reports through the report layer may call it too. Off by default so that a library
/// embedded in a long-lived process does not accumulate paths.
pub(crate) fn protect_inputs() {
    RECORDING.store(true, Ordering::Relaxed);
}

/// Records `path` (already opened, with metadata `meta`) as an input of this run.
fn note_input(path: &Path, meta: &std::fs::Metadata) {
    if !RECORDING.load(Ordering::Relaxed) {
        return;
    }
    let input = Input {
        shown: path.to_path_buf(),
        canonical: std::fs::canonicalize(path).ok(),
        id: FileId::of(meta),
    };
    if let Ok(mut inputs) = INPUTS.lock() {
        inputs.push(input);
    }
}

/// The input (as the user named it) that `path` is, if writing `path` would replace one of the files
/// this run read: same canonical path, or same device and inode (a hard link, a symbolic link to it).
/// An input that no longer exists under its name is not protected any more (its inode may be reused).
pub(crate) fn input_at(path: &Path) -> Option<PathBuf> {
    let inputs = INPUTS.lock().ok()?.clone();
    if inputs.is_empty() {
        return None;
    }
    let target_meta = std::fs::metadata(path).ok();
    let target_id = target_meta.as_ref().and_then(FileId::of);
    let target_canonical = canonical_target(path);
    for input in inputs {
        if target_canonical.is_some() && input.canonical == target_canonical {
            return Some(input.shown);
        }
        if let (Some(t), Some(i)) = (target_id, input.id) {
            // The input must still be the same file under its own name: a deleted input's inode
            // number can be given to a new, unrelated file.
            let still = std::fs::metadata(&input.shown)
                .ok()
                .and_then(|m| FileId::of(&m));
            if t == i && still == Some(i) {
                return Some(input.shown);
            }
        }
    }
    None
}

/// Canonical form of a path that may not exist yet: its folder canonicalised, its name appended.
fn canonical_target(path: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(path) {
        return Some(c);
    }
    let name = path.file_name()?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// Why an input path cannot be read as a file.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum OpenError {
    /// The operating system refused (missing, permissions, loop, ...).
    Io(std::io::Error),
    /// A folder.
    Folder,
    /// A device, pipe or socket.
    Special,
}

/// Opens `path` for reading, only if it is a regular file. The check is made on the opened
/// descriptor (`fstat`), so a file swapped for a pipe between a check and the open cannot slip
/// through, and the open itself does not block on a pipe (`O_NONBLOCK`). The input is recorded for
/// [`input_at`].
pub(crate) fn open_input(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), OpenError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if meta.is_dir() {
        return Err(OpenError::Folder);
    }
    if !meta.is_file() {
        return Err(OpenError::Special);
    }
    #[cfg(unix)]
    clear_nonblocking(&file);
    note_input(path, &meta);
    Ok((file, meta))
}

#[cfg(unix)]
fn clear_nonblocking(file: &std::fs::File) {
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// Creates `path` as a new, empty file for writing: fails if anything exists there (`O_EXCL`, which
/// also never follows a symbolic link) and never opens a symbolic link (`O_NOFOLLOW`).
pub(crate) fn create_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY);
    }
    options.open(path)
}

/// A temporary file that is removed when dropped (unless [`TempFile::keep`] was called) and, in the
/// `pcsim` program ([`install_interrupt_cleanup`]), when the process is interrupted by SIGINT,
/// SIGTERM or SIGHUP.
#[derive(Debug)]
pub(crate) struct TempFile {
    path: PathBuf,
    slot: Option<usize>,
    kept: bool,
}

impl TempFile {
    /// Creates a new temporary file at `path` ([`create_exclusive`]).
    pub(crate) fn create(path: PathBuf) -> std::io::Result<(TempFile, std::fs::File)> {
        // Registered before it exists, so an interruption right after the creation still removes it
        // (the name holds the process id: no other process's file can have it).
        let slot = crate::base::signals::register(&path);
        let file = match create_exclusive(&path) {
            Ok(f) => f,
            Err(e) => {
                if let Some(s) = slot {
                    crate::base::signals::unregister(s);
                }
                return Err(e);
            }
        };
        Ok((
            TempFile {
                path,
                slot,
                kept: false,
            },
            file,
        ))
    }

    /// Takes charge of a side file that already exists (e.g. a hard link to an old report kept for
    /// undoing a failed set): removed on drop and on interruption, like a created one.
    pub(crate) fn adopt(path: PathBuf) -> TempFile {
        let slot = crate::base::signals::register(&path);
        TempFile {
            path,
            slot,
            kept: false,
        }
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the file as moved into place: it is no longer removed.
    pub(crate) fn keep(mut self) {
        self.kept = true;
        if let Some(s) = self.slot.take() {
            crate::base::signals::unregister(s);
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(s) = self.slot.take() {
            crate::base::signals::unregister(s);
        }
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A short, stable form of a file name: names up to `max` bytes unchanged; longer ones cut at a
/// character boundary and ended with a hash of the whole name, so different long ids stay different
/// and the same id always gives the same name.
pub(crate) fn shorten_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let hash = format!("-{:016x}", crate::base::hash::fnv1a(name.as_bytes()));
    let mut cut = max.saturating_sub(hash.len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{hash}", &name[..cut])
}

/// Largest input file pcsim reads (catalogs, scenarios, tool lists): far above any real one, small
/// enough that a wrong path (a disk image, `/dev/zero`) cannot exhaust memory.
#[doc(hidden)]
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Reads a whole text file, mapping failures to [`Error::Io`]. Only regular files are read (a FIFO or a
/// device such as `/dev/stdin` or `/dev/zero` would block or never end), at most [`MAX_INPUT_BYTES`],
/// and the text must be UTF-8; each refusal names the file.
#[doc(hidden)]
pub fn read_text(path: &std::path::Path) -> Result<String> {
    read_text_within(path, MAX_INPUT_BYTES, "an input file")
}

/// Refuses TOML text of `len` bytes over [`MAX_TOML_BYTES`], naming `origin` and the limit.
pub(crate) fn check_toml_size(len: usize, origin: &str) -> Result<()> {
    if len as u64 > MAX_TOML_BYTES {
        return Err(Error::invalid(
            origin,
            "size",
            format!("{len} bytes is more than the {MAX_TOML_BYTES}-byte limit of a TOML file"),
        ));
    }
    Ok(())
}

/// [`read_text`] of a TOML file: at most [`MAX_TOML_BYTES`].
pub(crate) fn read_toml_text(path: &std::path::Path) -> Result<String> {
    read_text_within(path, MAX_TOML_BYTES, "a TOML file")
}

/// Largest TOML file pcsim reads (scenarios, catalogs, client configurations), in bytes; also the
/// limit of a YAML client configuration. The TOML parser keeps every token and event of a document
/// at once, tens of bytes per input byte, and one error per token after a syntax error: 60 MB of
/// `=` lines or of nested `[` aborted past 3 GB (issue 29). At 8 MiB the worst parse stays near
/// 600 MB; real scenarios and catalogs are kilobytes. (A catalog `import-litellm` generates is
/// parsed from memory, bounded by its entry limit instead.)
#[doc(hidden)]
pub const MAX_TOML_BYTES: u64 = 8 * 1024 * 1024;

/// Most values (numbers, strings, arrays, objects, keys) in a JSON document parsed whole (client
/// configurations, LiteLLM price files): a parsed value takes tens of bytes however short its text,
/// so 60 MB of `0,` took 2.2 GB (issue 29). LiteLLM's own file has about 60,000.
#[doc(hidden)]
pub const MAX_JSON_VALUES: usize = 4_000_000;

/// Refuses JSON text with more than [`MAX_JSON_VALUES`] values, counted on the text in one pass
/// before parsing (separators and openings outside strings), naming `origin` and the limit.
pub(crate) fn check_json_values(text: &str, origin: &str) -> Result<()> {
    let (mut values, mut in_string, mut escaped) = (1usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' | b':' => values += 1,
            _ => {}
        }
    }
    if values > MAX_JSON_VALUES {
        return Err(Error::invalid(
            origin,
            "size",
            format!("about {values} JSON values is more than the limit of {MAX_JSON_VALUES} values in a JSON input"),
        ));
    }
    Ok(())
}

/// [`read_text`] with a smaller size limit (at most [`MAX_INPUT_BYTES`]) for one kind of input,
/// `what` naming it in the refusal ("a tool file"). The size is checked on the open file before
/// anything is read.
pub(crate) fn read_text_within(path: &std::path::Path, limit: u64, what: &str) -> Result<String> {
    use std::io::Read;
    let limit = limit.min(MAX_INPUT_BYTES);
    let io = |action: &'static str| {
        move |source| Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let display = path.display().to_string();
    // Opened first, then checked on the descriptor: a path swapped for a pipe after a check cannot
    // make the read block.
    let (file, meta) = match open_input(path) {
        Ok(x) => x,
        Err(OpenError::Io(e)) => return Err(io("cannot read")(e)),
        Err(OpenError::Folder) => {
            return Err(Error::invalid(display, "path", "is a folder, not a file"))
        }
        Err(OpenError::Special) => {
            return Err(Error::invalid(
                display,
                "path",
                "is not a regular file (a device, pipe or socket); give the path of a file",
            ))
        }
    };
    if meta.len() > limit {
        return Err(Error::invalid(
            display,
            "size",
            format!(
                "{} bytes is more than the {limit}-byte limit of {what}",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    // `take` keeps the limit even if the file grows while it is read.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io("cannot read"))?;
    if bytes.len() as u64 > limit {
        return Err(Error::invalid(
            display,
            "size",
            format!("more than the {limit}-byte limit of {what}"),
        ));
    }
    // A UTF-8 byte-order mark (Windows editors write one) is not part of the text: dropped here so
    // TOML and JSON inputs treat it alike.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let text = String::from_utf8_lossy(&e.as_bytes()[..at]);
        let line = text.matches('\n').count() + 1;
        let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Error::parse(
            display.clone(),
            format!(
                "line {line}, column {column} (byte {at}): not UTF-8 text; save the file as UTF-8"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_stably_and_distinctly() {
        let a = "é".repeat(3000);
        let b = format!("{}x", "é".repeat(3000));
        let sa = shorten_name(&a, 120);
        assert!(sa.len() <= 120, "{}", sa.len());
        assert_eq!(sa, shorten_name(&a, 120));
        assert_ne!(sa, shorten_name(&b, 120));
        assert_eq!(shorten_name("short", 120), "short");
    }

    #[cfg(unix)]
    #[test]
    fn exclusive_creation_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("probe");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_exclusive(&link).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
