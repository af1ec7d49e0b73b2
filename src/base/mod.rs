//! Foundation layer: content hashing, the deterministic random streams, the amounts (fixed numbers
//! or distributions) that scenarios and catalogs are written in, and text formatting (dollars, CSV
//! fields, aligned tables). Depends on nothing but [`crate::error`]; every other
//! layer may use it.

pub mod date;
pub(crate) mod files;
#[doc(hidden)]
pub mod hash;
pub mod quantity;
pub(crate) mod rng;
pub(crate) mod terminal;
pub(crate) mod text;
