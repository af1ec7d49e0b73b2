//! Typed errors of the library. Every user-facing error names the file (or flag), the field and the
//! offending value, so the CLI can print it as is and exit with code 2.

use std::path::PathBuf;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in pcsim's library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`cannot read`, `writing`, ...).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not well-formed TOML or JSON (the message carries line and column when known).
    #[error("{file}: {message}")]
    Parse {
        /// The file (or `command line`, `built-in ...`).
        file: String,
        /// What is wrong, with line and column when known.
        message: String,
    },
    /// A well-formed input holds a value that is not allowed.
    #[error("{file}: field `{field}`: {problem}")]
    Invalid {
        /// The file (or `command line`).
        file: String,
        /// The field (or flag) holding the value.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A model id that the catalog does not have.
    #[error("unknown model id `{id}`{hint} (run `pcsim models` for the list)")]
    UnknownModel {
        /// The id asked for.
        id: String,
        /// `; did you mean ...?`, or empty.
        hint: String,
    },
    /// A caching strategy that cannot be parsed or that the model does not support.
    #[error("strategy `{strategy}`: {problem}")]
    Strategy {
        /// The strategy as written.
        strategy: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An external MCP server (or its launcher) failed: did not start, timed out, sent garbage.
    #[error("MCP server `{server}`: {problem}")]
    Server {
        /// The server's name.
        server: String,
        /// What went wrong.
        problem: String,
    },
    /// A request that is well-formed but cannot be simulated (e.g. a chart with nothing to draw).
    #[error("{0}")]
    Unsupported(String),
    /// A failure that is pcsim's fault, not the input's (an encoder that refuses what pcsim built,
    /// an invariant that does not hold): a bug, reported with exit code 1.
    #[error("internal error (a bug in pcsim): {0}")]
    Internal(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub(crate) fn invalid(
        file: impl Into<String>,
        field: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Error::Invalid {
            file: file.into(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// Shorthand for [`Error::Parse`].
    pub(crate) fn parse(file: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Parse {
            file: file.into(),
            message: message.to_string(),
        }
    }

    /// True when the error is the user's (bad input), false for internal failures.
    pub fn is_user_error(&self) -> bool {
        match self {
            Error::Internal(_) => false,
            Error::Io { .. } => self.io_is_users(),
            _ => true,
        }
    }

    fn io_is_users(&self) -> bool {
        match self {
            // An input the user named that cannot be read (a loop of links, a /proc file that
            // refuses reads, a device) is the user's to fix, whatever the system's reason.
            Error::Io { action, .. } if action.starts_with("cannot read") => true,
            Error::Io { source, .. } if source.raw_os_error().is_some_and(is_users_errno) => true,
            Error::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::AlreadyExists
                    | std::io::ErrorKind::InvalidInput
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::NotADirectory
                    | std::io::ErrorKind::ReadOnlyFilesystem
            ),
            _ => false,
        }
    }
}

/// System error numbers that come from the paths the user gave (not from pcsim or the machine).
fn is_users_errno(errno: i32) -> bool {
    #[cfg(unix)]
    {
        [
            libc::ELOOP,
            libc::ENAMETOOLONG,
            libc::EACCES,
            libc::EPERM,
            libc::EROFS,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::ENXIO,
            libc::ENODEV,
            libc::ETXTBSY,
            libc::EEXIST,
            libc::EXDEV,
        ]
        .contains(&errno)
    }
    #[cfg(not(unix))]
    {
        let _ = errno;
        false
    }
}
