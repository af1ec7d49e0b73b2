//! Safe file access shared by every layer (in `error`, the lowest layer, as
//! [`crate::error::read_text`] uses it): inputs opened without blocking and checked on the opened
//! descriptor (no check-then-open race), the identities of the files a run read (so that no output
//! ever lands on an input), temporary files created exclusively and without following symbolic
//! links, and their removal when the process is interrupted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

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

/// Starts recording every input file read through [`open_input`] (and so [`crate::error::read_text`]),
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

// ------------------------------------------------------------------------------------------------
// Temporary files removed on SIGINT, SIGTERM and SIGHUP.

#[cfg(unix)]
mod cleanup {
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::Once;

    /// Slots of temporary files in progress. A signal handler may only read memory that stays valid,
    /// so the path strings are leaked (a few bytes per report file) rather than freed.
    const SLOTS: usize = 1024;
    static TEMPS: [AtomicPtr<libc::c_char>; SLOTS] =
        [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
    static INSTALL: Once = Once::new();

    extern "C" fn on_signal(sig: libc::c_int) {
        for slot in &TEMPS {
            let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !p.is_null() {
                // SAFETY: unlink is async-signal-safe; `p` is a leaked, NUL-terminated string.
                unsafe {
                    libc::unlink(p);
                }
            }
        }
        // SAFETY: restoring the default action and re-raising are async-signal-safe; the process
        // then ends by the signal as it would have without the handler.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Installs the handlers (once). Only the `pcsim` program calls it ([`install_interrupt_cleanup`]):
    /// a library must not take over a host program's signals.
    pub(crate) fn install() {
        INSTALL.call_once(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                // SAFETY: installs a handler that only calls async-signal-safe functions. A signal
                // the process ignores (e.g. under `nohup`) stays ignored.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                        && old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    libc::sigemptyset(&mut action.sa_mask);
                    libc::sigaction(sig, &action, std::ptr::null_mut());
                }
            }
            // A write past the file-size limit (`ulimit -f`) fails with EFBIG instead of killing
            // the process, so the report's error path removes its temporary file (issue 29).
            // SAFETY: setting a signal's disposition to ignore is async-signal-safe and global.
            unsafe {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            }
        });
    }

    /// Registers a temporary file; returns its slot (`None` when all slots are taken: best effort).
    pub(crate) fn register(path: &Path) -> Option<usize> {
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        let p = c.into_raw();
        for (i, slot) in TEMPS.iter().enumerate() {
            if slot
                .compare_exchange(std::ptr::null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Some(i);
            }
        }
        None
    }

    /// Forgets a temporary file (renamed into place or removed).
    pub(crate) fn unregister(slot: usize) {
        TEMPS[slot].store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

#[cfg(not(unix))]
mod cleanup {
    pub(crate) fn install() {}
    pub(crate) fn register(_path: &std::path::Path) -> Option<usize> {
        None
    }
    pub(crate) fn unregister(_slot: usize) {}
}

/// Makes an interruption (SIGINT, SIGTERM, SIGHUP) remove the temporary files of reports being
/// written, then end the process by the signal as it would have. Process-wide, so only the `pcsim`
/// program installs it (`cli::main`); a program embedding the library keeps its own handlers, and
/// its temporary files are removed when their writers are dropped.
pub(crate) fn install_interrupt_cleanup() {
    cleanup::install();
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
        let slot = cleanup::register(&path);
        let file = match create_exclusive(&path) {
            Ok(f) => f,
            Err(e) => {
                if let Some(s) = slot {
                    cleanup::unregister(s);
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
        let slot = cleanup::register(&path);
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
            cleanup::unregister(s);
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(s) = self.slot.take() {
            cleanup::unregister(s);
        }
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
