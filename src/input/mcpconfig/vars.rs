//! What expanding a value needs from outside the file ([`Ctx`]) and the variable syntaxes more than
//! one client family uses: `${VAR}` / `${VAR:-default}` and a placeholder scanner with any
//! delimiters.

use std::collections::BTreeMap;
use std::path::Path;

use super::Client;

/// Expands `${VAR}` / `${VAR:-default}` (and `${env:VAR}`); `Err(name)` for an unset variable
/// without a default.
pub(crate) fn expand_vars(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        match (lookup(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(name.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Where a reason names the field it comes from.
pub(super) const IN: &str = "{IN}";

/// What expanding a value needs from outside the file.
pub(super) struct Ctx<'a> {
    pub(super) client: Client,
    pub(super) lookup: &'a dyn Fn(&str) -> Option<String>,
    pub(super) inputs: &'a BTreeMap<String, String>,
    /// VS Code `inputs` defaults.
    pub(super) input_defaults: &'a BTreeMap<String, String>,
    pub(super) workspace: &'a Path,
    /// The configuration file's folder (OpenCode's `{file:...}` paths are relative to it).
    pub(super) config_dir: &'a Path,
}

/// Replaces each `open`…`close` placeholder in `s` by what `resolve` gives for the text between
/// them; `Ok(None)` leaves the placeholder as written (as a client leaves what it does not know),
/// `Err` refuses the value. An unclosed placeholder and all after it stay as written. VS Code's
/// `${…}` and Continue's `${{ … }}` differ only in the delimiters and in what they resolve.
pub(super) fn substitute(
    s: &str,
    open: &str,
    close: &str,
    mut resolve: impl FnMut(&str) -> std::result::Result<Option<String>, String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        let after = &rest[i + open.len()..];
        let Some(end) = after.find(close) else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        match resolve(&after[..end])? {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[i..i + open.len() + end + close.len()]),
        }
        rest = &after[end + close.len()..];
    }
    out.push_str(rest);
    Ok(out)
}
