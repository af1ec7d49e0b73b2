//! Sourced numbers: every number of the catalog carries where it comes from (`measured: …`,
//! `documented: …`, `derived: …`, `assumed: …`), and is checked for range and source when loaded.

use serde::{Deserialize, Serialize};

use crate::base::text::num;
use crate::error::{Error, Result};

/// A number (or flag) together with where it comes from: `measured: …`, `documented: …`,
/// `derived: …` or `assumed: …`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sourced<T> {
    /// The value itself.
    pub value: T,
    /// Where the value comes from, so a reader can audit it.
    pub source: String,
    /// For prices: the day (`YYYY-MM-DD`) the value was last compared with its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// For prices: what was read on the `checked` day, as a person can find it again: the id of
    /// one of the catalog's `[[tracker]]` files (its `checked` is then no later than the file's
    /// release day), or a page's title and its date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_against: Option<String>,
}

/// Kinds of source a catalog number may cite.
pub const SOURCE_KINDS: [&str; 4] = ["measured:", "documented:", "derived:", "assumed:"];

/// Checks a sourced number: finite, within bounds, with a well-formed source.
pub(crate) fn check_number<T: Copy + AsF64>(
    origin: &str,
    field: &str,
    v: &Sourced<T>,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<()> {
    let x: f64 = v.value.to_f64();
    if !x.is_finite() {
        return Err(Error::invalid(
            origin,
            field,
            format!("value {} is not a finite number", num(x)),
        ));
    }
    if let Some(min) = min {
        if x < min {
            let what = if min == f64::MIN_POSITIVE {
                "must be greater than zero".to_string()
            } else {
                format!("must be at least {min}")
            };
            return Err(Error::invalid(
                origin,
                field,
                format!("value {} {what}", num(x)),
            ));
        }
    }
    if let Some(max) = max {
        if x > max {
            return Err(Error::invalid(
                origin,
                field,
                format!("value {} must be at most {max}", num(x)),
            ));
        }
    }
    check_source(origin, field, &v.source)
}

/// Numbers a catalog may hold, viewed as f64 for range checks.
pub(crate) trait AsF64 {
    fn to_f64(self) -> f64;
}

impl AsF64 for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

impl AsF64 for u64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl AsF64 for u32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

/// A source must start with one of [`SOURCE_KINDS`] and say something after it.
pub(crate) fn check_source(origin: &str, field: &str, source: &str) -> Result<()> {
    let s = source.trim();
    match SOURCE_KINDS.iter().find(|k| s.starts_with(*k)) {
        Some(kind) if s.len() > kind.len() + 3 => Ok(()),
        _ => Err(Error::invalid(
            origin,
            format!("{field}.source"),
            format!(
                "source `{source}` must start with one of {} and say where the number comes from",
                SOURCE_KINDS.join(" ")
            ),
        )),
    }
}
