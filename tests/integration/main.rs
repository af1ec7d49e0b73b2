//! Integration tests: one binary, one module per area.

mod charts;
mod cli;
mod common;
mod facts;
mod inputs;
mod time;
mod tools;
mod whatif;
