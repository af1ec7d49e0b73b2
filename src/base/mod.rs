//! Foundation layer: content hashing, the deterministic random streams, the amounts (fixed numbers
//! or distributions) that scenarios and catalogs are written in, calendar dates, text formatting
//! (dollars, numbers, CSV fields, aligned tables, "did you mean" hints), safe file access and the
//! interrupt cleanup of temporary files, the positions of TOML errors, and numbered work done in
//! parallel with its results taken in order. Depends on nothing but
//! [`crate::error`]; every other layer may use it.

pub mod date;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod hash;
pub(crate) mod ordered;
pub mod quantity;
pub(crate) mod rng;
pub(crate) mod signals;
pub(crate) mod terminal;
pub(crate) mod text;
pub(crate) mod tomlpos;
