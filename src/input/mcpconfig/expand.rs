//! A value expanded by the rules of the client that reads the file (its family module's, under
//! `clients/`), with the bytes that variables add bounded.

use super::*;

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
