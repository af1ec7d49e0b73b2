//! Values expanded by the rules of the client that reads the file, with the bytes that variables
//! add bounded; the syntaxes shared by several families (`${VAR}` / `${VAR:-default}`, a
//! placeholder scanner). Each client's own syntax (`${env:NAME}`, `${input:id}`,
//! `${{ secrets.NAME }}`, `{env:NAME}` and the rest) is in its family module under `clients/`.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

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

/// Expands one value the way `ctx.client` does; `Err(reason)` when the server cannot be started as
/// configured (an unset variable that client refuses to start without, an input nobody gave).
pub(super) fn expand(s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
    // Every client's syntax looks variables up through `ctx.lookup`: counting the bytes it hands
    // out bounds the expansion before it is built (a 120 KB file repeating a 100 KB variable 2,000
    // times asked for gigabytes). Past the bound the lookups give nothing and the value is refused.
    let given = std::cell::Cell::new(0usize);
    let over = std::cell::Cell::new(false);
    let bounded = |name: &str| -> Option<String> {
        let v = (ctx.lookup)(name)?;
        given.set(given.get().saturating_add(v.len()));
        if given.get().saturating_add(s.len()) > MAX_EXPANDED_BYTES {
            over.set(true);
            return Some(String::new());
        }
        Some(v)
    };
    let ctx = &Ctx {
        client: ctx.client,
        lookup: &bounded,
        inputs: ctx.inputs,
        input_defaults: ctx.input_defaults,
        workspace: ctx.workspace,
        config_dir: ctx.config_dir,
    };
    let expanded = expand_unbounded(s, ctx);
    if over.get() {
        return Err(format!(
            "expands to more than {MAX_EXPANDED_BYTES} bytes {IN}, the most one argument or environment value can hold (Linux's MAX_ARG_STRLEN)"
        ));
    }
    expanded
}

/// The most bytes one expanded value may have: what Linux lets one argument or environment string
/// be (`MAX_ARG_STRLEN`, 32 pages); a server could not be started with a longer one.
pub const MAX_EXPANDED_BYTES: usize = 131_072;

/// One value expanded by the rules of `ctx.client` (its family module's).
pub(super) fn expand_unbounded(s: &str, ctx: &Ctx) -> std::result::Result<String, String> {
    super::clients::format(ctx.client).expand(s, ctx)
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
