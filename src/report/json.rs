//! JSON output (stable keys: see the README).

use serde::Serialize;

use crate::error::{Error, Result};

/// Pretty JSON of any report, with a trailing newline.
pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| Error::Internal(format!("cannot encode JSON: {e}")))
}
