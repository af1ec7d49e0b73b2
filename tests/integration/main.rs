//! Integration tests: one binary, one module per area.

mod common;
mod fuzz;
mod properties;
mod reliability;
