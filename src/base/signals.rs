//! Temporary files removed on SIGINT, SIGTERM and SIGHUP: the process-wide handlers, which only the
//! `pcsim` program installs (`cli::main` calls [`install_interrupt_cleanup`]; a program embedding
//! the library keeps its own), and the registry of temporary files in progress that
//! `base::files::TempFile` keeps up to date and the handlers remove before the process ends by the
//! signal.

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

pub(crate) use cleanup::{register, unregister};
