//! Integration tests: one binary, one module per area.

mod catalog_flags;
mod charts;
mod cli;
mod client_configs;
mod common;
mod decisions;
mod docs;
mod facts;
mod fit;
mod fuzz;
mod house;
mod inputs;
mod layers;
mod limits;
mod money;
mod prices;
mod properties;
mod reliability;
mod replay_logs;
mod report;
mod settings;
mod snapshots;
mod time;
mod tokens;
mod tools;
mod whatif;
