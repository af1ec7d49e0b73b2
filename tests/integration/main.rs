//! Integration tests: one binary, one module per area.

mod cli;
mod common;
mod facts;
mod inputs;
mod tools;
mod whatif;
