//! Typed errors of the library. Every user-facing error names the file (or flag), the field and the
//! offending value, so the CLI can print it as is and exit with code 2.

use std::path::PathBuf;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in pcsim's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {action}: {source}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A file is not well-formed TOML or JSON (the message carries line and column when known).
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    /// A well-formed input holds a value that is not allowed.
    #[error("{file}: field `{field}`: {problem}")]
    Invalid {
        file: String,
        field: String,
        problem: String,
    },
    /// A model id that the catalog does not have.
    #[error("unknown model id `{id}`{hint} (run `pcsim models` for the list)")]
    UnknownModel { id: String, hint: String },
    /// A caching strategy that cannot be parsed or that the model does not support.
    #[error("strategy `{strategy}`: {problem}")]
    Strategy { strategy: String, problem: String },
    /// An external MCP server (or its launcher) failed: did not start, timed out, sent garbage.
    #[error("MCP server `{server}`: {problem}")]
    Server { server: String, problem: String },
    /// A request that is well-formed but cannot be simulated (e.g. a chart with nothing to draw).
    #[error("{0}")]
    Unsupported(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(
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
    pub fn parse(file: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Parse {
            file: file.into(),
            message: message.to_string(),
        }
    }

    /// True when the error is the user's (bad input), false for internal failures.
    pub fn is_user_error(&self) -> bool {
        !matches!(self, Error::Io { .. }) || self.io_is_users()
    }

    fn io_is_users(&self) -> bool {
        match self {
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

/// Reads a whole text file, mapping failures to [`Error::Io`].
pub fn read_text(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        action: "cannot read",
        source,
    })
}

/// The closest candidate to `wanted` by edit distance, for "did you mean" hints.
pub fn closest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(wanted, c), c))
        .filter(|(d, c)| *d <= (c.len().max(wanted.len()) / 2).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_suggests_near_miss() {
        let ids = ["claude-opus-4.8", "gpt-5.6", "kimi-k3"];
        assert_eq!(closest("claude-opus-48", ids), Some("claude-opus-4.8"));
        assert_eq!(closest("gpt5.6", ids), Some("gpt-5.6"));
        assert_eq!(closest("totally-different-thing", ids), None);
    }
}
