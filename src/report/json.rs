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

/// Pretty JSON of any report written straight to `out`, with a trailing newline: nothing is built
/// in memory first, so a report of a million per-call rows costs no more than its rows.
pub(crate) fn write_json<T: Serialize>(out: &mut dyn std::io::Write, value: &T) -> Result<()> {
    use std::io::Write;
    // The encoder writes a few bytes at a time: buffered here, each is a copy rather than a call
    // through `out` (a third of the time of a report of two million calls).
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
    serde_json::to_writer_pretty(&mut buffered, value)
        .and_then(|()| buffered.write_all(b"\n").map_err(serde_json::Error::io))
        .and_then(|()| buffered.flush().map_err(serde_json::Error::io))
        .map_err(|e| match e.io_error_kind() {
            Some(kind) => Error::Io {
                path: "standard output".into(),
                action: "writing",
                source: std::io::Error::new(kind, e.to_string()),
            },
            None => Error::Internal(format!("cannot encode JSON: {e}")),
        })
}
