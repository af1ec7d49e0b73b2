//! Foundation layer: content hashing, the deterministic random streams and the amounts (fixed numbers
//! or distributions) that scenarios and catalogs are written in. Depends on nothing but
//! [`crate::error`]; every other layer may use it.

pub mod date;
pub mod hash;
pub mod quantity;
pub mod rng;
