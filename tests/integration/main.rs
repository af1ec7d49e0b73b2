//! Integration tests: one binary, one module per area.

mod charts;
mod cli;
mod common;
mod decisions;
mod docs;
mod facts;
mod fuzz;
mod house;
mod inputs;
mod prices;
mod properties;
mod reliability;
mod time;
mod tools;
mod whatif;
