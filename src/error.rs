//! Typed errors of the library. Every user-facing error names the file (or flag), the field and the
//! offending value, so the CLI can print it as is and exit with code 2.

pub(crate) mod files;

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
    let (file, meta) = match crate::error::files::open_input(path) {
        Ok(x) => x,
        Err(crate::error::files::OpenError::Io(e)) => return Err(io("cannot read")(e)),
        Err(crate::error::files::OpenError::Folder) => {
            return Err(Error::invalid(display, "path", "is a folder, not a file"))
        }
        Err(crate::error::files::OpenError::Special) => {
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

/// The closest candidate to `wanted`, for "did you mean" hints: one whose leading part, up to a
/// separator, `wanted` is (the shortest; `explicit` -> `explicit:tools+system+last`, `gemini` -> a
/// Gemini id, never `implicit` or `o4-mini`, which are merely a few edits away), else the nearest by
/// edit distance within about half the name's length.
pub(crate) fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let lower = wanted.to_lowercase();
    if lower.chars().count() >= 3 {
        let extends = candidates
            .iter()
            .copied()
            .filter(|c| {
                // `wanted` is a whole leading part of the name, ended by a separator (`:`, `-`,
                // `.`, `@`): `explicit` of `explicit:tools`, not `tool_1` of `tool_10`.
                let c_lower = c.to_lowercase();
                c_lower.starts_with(&lower)
                    && c_lower[lower.len()..]
                        .chars()
                        .next()
                        .is_some_and(|n| !n.is_alphanumeric() && n != '_')
            })
            .min_by_key(|c| c.len());
        if extends.is_some() {
            return extends;
        }
    }
    let limit = |c: &str| (c.len().max(wanted.len()) / 2).max(2);
    candidates
        .into_iter()
        // The length difference bounds the distance from below: skipping hopeless candidates first
        // keeps a megabyte-long unknown name from costing seconds.
        .filter(|c| c.len().abs_diff(wanted.len()) <= limit(c))
        .map(|c| (edit_distance(wanted, c), c))
        .filter(|(d, c)| *d <= limit(c))
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

/// A number as a user would write it: plain for ordinary magnitudes, `1e300` (not three hundred
/// digits) for huge or tiny ones.
pub(crate) fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A TOML syntax or schema error as an [`Error::Parse`] whose message starts with the line and column,
/// names the offending line, and suggests the closest field or value for an unknown one.
/// Largest TOML file pcsim reads (scenarios, catalogs, client configurations), in bytes; also the
/// limit of a YAML client configuration. The TOML
/// parser keeps every token and event of a document at once, tens of bytes per input byte, and one
/// error per token after a syntax error: 60 MB of `=` lines or of nested `[` aborted past 3 GB (issue
/// 29). At 8 MiB the worst parse stays near 600 MB; real scenarios and catalogs are kilobytes. (A
/// catalog `import-litellm` generates is parsed from memory, bounded by its entry limit instead.)
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

pub(crate) fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> Error {
    let mut message = e.message().trim().to_string();
    if let Some(hint) = unknown_name_hint(&message) {
        message.push_str(&hint);
    }
    let Some(span) = e.span() else {
        return Error::parse(origin, message);
    };
    let (line, column) = line_column(text, span.start);
    let source_line = text.lines().nth(line - 1).unwrap_or("").trim_end();
    // At most 120 characters of the line, from 60 before the column: a 60 MB line is not repeated.
    let skip = column.saturating_sub(61);
    let mut source_line: String = source_line.chars().skip(skip).take(120).collect();
    if skip > 0 {
        source_line.insert(0, '…');
    }
    Error::parse(
        origin,
        format!("line {line}, column {column}: {message}\n  {line} | {source_line}"),
    )
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// "; did you mean `x`?" for serde's "unknown field `y`, expected one of `x`, ..." messages.
fn unknown_name_hint(message: &str) -> Option<String> {
    let rest = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.split_once(p).map(|(_, r)| r))?;
    let (wanted, rest) = rest.split_once('`')?;
    let expected = rest.split_once("expected")?.1;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(wanted, candidates.iter().copied()).map(|c| format!("; did you mean `{c}`?"))
}

impl Error {
    /// Adds `:line:column` to the file of an [`Error::Invalid`] about `origin` when the field can be
    /// found in `text`, the TOML it came from (see [`locate_toml_field`]). Other errors (including
    /// those about other files, such as a tool file named by a scenario) are returned unchanged.
    pub(crate) fn located_in(self, text: &str, origin: &str) -> Self {
        match self {
            Error::Invalid {
                file,
                field,
                problem,
            } if file == origin => {
                let file = match locate_toml_field(text, &field) {
                    Some((line, column)) => format!("{file}:{line}:{column}"),
                    None => file,
                };
                Error::Invalid {
                    file,
                    field,
                    problem,
                }
            }
            other => other,
        }
    }
}

/// One `key = value` (or table header) of a TOML text, with its full path.
struct TomlSite {
    /// Array-of-tables instance the site belongs to: (array name, 0-based index).
    instance: Option<(String, usize)>,
    path: Vec<String>,
    line: usize,
    column: usize,
    value: String,
}

fn toml_key_parts(key: &str) -> Vec<String> {
    key.split('.')
        .map(|k| k.trim().trim_matches('"').trim_matches('\'').to_string())
        .filter(|k| !k.is_empty())
        .collect()
}

/// Every header and key of a TOML text (one level of inline tables included), by a line scanner that
/// is good enough for error locations; it is only used on text that the TOML parser accepted.
fn toml_sites(text: &str) -> Vec<TomlSite> {
    let mut sites = Vec::new();
    let mut table: Vec<String> = Vec::new();
    let mut instance: Option<(String, usize)> = None;
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim_start();
        let indent = raw.chars().count() - trimmed.chars().count();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        if let Some(h) = trimmed.strip_prefix("[[") {
            let name = h.split("]]").next().unwrap_or("");
            table = toml_key_parts(name);
            let key = table.join(".");
            let i = counts.entry(key.clone()).or_insert(0);
            // Only top-level arrays (model, family, event) identify instances in field names.
            if table.len() == 1 {
                instance = Some((key, *i));
            }
            *i += 1;
            sites.push(TomlSite {
                instance: instance.clone(),
                path: table.clone(),
                line,
                column: indent + 1,
                value: String::new(),
            });
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('[') {
            let name = h.split(']').next().unwrap_or("");
            table = toml_key_parts(name);
            if instance
                .as_ref()
                .is_some_and(|(a, _)| table.first() != Some(a))
            {
                instance = None;
            }
            sites.push(TomlSite {
                instance: instance.clone(),
                path: table.clone(),
                line,
                column: indent + 1,
                value: String::new(),
            });
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        let mut path = table.clone();
        path.extend(toml_key_parts(key));
        let value_start =
            key.chars().count() + 1 + (value.chars().count() - value.trim_start().chars().count());
        let value = value.trim();
        sites.push(TomlSite {
            instance: instance.clone(),
            path: path.clone(),
            line,
            column: indent + value_start + 1,
            value: value.trim_matches('"').to_string(),
        });
        // One level of inline table: `x = { a = 1, b = "..." }`.
        if let Some(inner) = value.strip_prefix('{') {
            let offset = indent + value_start + 2;
            let mut consumed = 0;
            for part in inner.split(',') {
                if let Some((k, v)) = part.split_once('=') {
                    let mut p = path.clone();
                    p.extend(toml_key_parts(k));
                    let lead = v.chars().count() - v.trim_start().chars().count();
                    sites.push(TomlSite {
                        instance: instance.clone(),
                        path: p,
                        line,
                        column: offset + consumed + k.chars().count() + 1 + lead,
                        value: v
                            .trim()
                            .trim_end_matches('}')
                            .trim()
                            .trim_matches('"')
                            .to_string(),
                    });
                }
                consumed += part.chars().count() + 1;
            }
        }
    }
    sites
}

/// Line and column of a field named the way pcsim's errors name fields — `session.calls`,
/// `event[2].at_call` (0-based, in file order), ``model `gpt-5.6`.cache.explicit.min_tokens`` — in
/// TOML text. Falls back to the closest enclosing table or key that exists; `None` if nothing matches.
pub(crate) fn locate_toml_field(text: &str, field: &str) -> Option<(usize, usize)> {
    // Split off an instance selector on the first segment.
    let (first, rest) = match field.find(['.', ' ', '[']) {
        Some(i) => field.split_at(i),
        None => (field, ""),
    };
    let mut selector_index: Option<usize> = None;
    let mut selector_id: Option<&str> = None;
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(" `") {
        let (id, r) = r.split_once('`')?;
        selector_id = Some(id);
        rest = r;
    } else if let Some(r) = rest.strip_prefix('[') {
        let (i, r) = r.split_once(']')?;
        selector_index = i.parse().ok();
        rest = r;
    }
    let mut path = vec![first.to_string()];
    path.extend(toml_key_parts(rest.trim_start_matches('.')));
    let sites = toml_sites(text);
    let wanted_instance: Option<usize> = match (selector_index, selector_id) {
        (Some(i), _) => Some(i),
        (None, Some(id)) => sites
            .iter()
            .find(|s| s.path == [first.to_string(), "id".to_string()] && s.value == id)
            .and_then(|s| s.instance.as_ref().map(|(_, i)| *i)),
        (None, None) => None,
    };
    if (selector_index.is_some() || selector_id.is_some()) && wanted_instance.is_none() {
        return None;
    }
    let in_scope = |s: &&TomlSite| match wanted_instance {
        Some(i) => s
            .instance
            .as_ref()
            .is_some_and(|(a, k)| a == first && *k == i),
        None => true,
    };
    for len in (1..=path.len()).rev() {
        if let Some(s) = sites
            .iter()
            .filter(in_scope)
            .find(|s| s.path[..] == path[..len])
        {
            return Some((s.line, s.column));
        }
    }
    None
}

#[cfg(test)]
mod tests {

    /// Hints suggest a name of the same kind: a leading part before a separator (the flag value
    /// `explicit`, a model family) before a few edits (`explicit` is two edits from `implicit`).
    #[test]
    fn closest_prefers_the_name_a_word_begins_over_a_few_edits() {
        let strategies = [
            "none",
            "cached",
            "automatic",
            "implicit",
            "explicit:tools+system+last",
        ];
        assert_eq!(
            closest("explicit", strategies),
            Some("explicit:tools+system+last")
        );
        assert_eq!(closest("implicitt", strategies), Some("implicit"));
        let models = ["o4-mini", "gemini-3.6-flash", "gemini-3.6-pro-long"];
        assert_eq!(closest("gemini", models), Some("gemini-3.6-flash"));
        // A name continued by a letter or digit is not a leading part (and five edits is too far).
        assert_eq!(closest("auto", ["automatic"]), None);
        assert_eq!(closest("zzzzzz", models), None);
    }
    use super::*;

    #[test]
    fn locates_fields_by_path_instance_and_inline_key() {
        let text = "name = \"x\"\n[session]\ncalls = 0\ngap = { dist = \"exponential\", mean = -1 }\n\n[[model]]\nid = \"a\"\nprice = { value = 1.0, source = \"s\" }\n[[model]]\nid = \"b\"\nprice = { value = -5, source = \"s\" }\n[model.cache.explicit]\nmin = 3\n[[event]]\nat_call = 1\n[[event]]\nat_call = 99\n";
        assert_eq!(locate_toml_field(text, "session.calls"), Some((3, 9)));
        assert_eq!(locate_toml_field(text, "session.gap.mean"), Some((4, 38)));
        assert_eq!(locate_toml_field(text, "model `b`.price"), Some((11, 9)));
        assert_eq!(
            locate_toml_field(text, "model `b`.price.source"),
            Some((11, 32))
        );
        assert_eq!(
            locate_toml_field(text, "model `b`.cache.explicit.min"),
            Some((13, 7))
        );
        // A missing key points at its table.
        assert_eq!(
            locate_toml_field(text, "model `b`.cache.explicit.tiers"),
            Some((12, 1))
        );
        assert_eq!(locate_toml_field(text, "event[1].at_call"), Some((17, 11)));
        assert_eq!(locate_toml_field(text, "model `zz`.price"), None);
    }

    #[test]
    fn unknown_field_gets_a_suggestion() {
        let m = "unknown field `cals`, expected one of `calls`, `system_tokens`";
        assert_eq!(
            unknown_name_hint(m).as_deref(),
            Some("; did you mean `calls`?")
        );
        assert_eq!(
            unknown_name_hint("unknown field `zzzzzzzz`, expected `calls`"),
            None
        );
    }

    #[test]
    fn closest_suggests_near_miss() {
        let ids = ["claude-opus-4.8", "gpt-5.6", "kimi-k3"];
        assert_eq!(closest("claude-opus-48", ids), Some("claude-opus-4.8"));
        assert_eq!(closest("gpt5.6", ids), Some("gpt-5.6"));
        assert_eq!(closest("totally-different-thing", ids), None);
    }
}
