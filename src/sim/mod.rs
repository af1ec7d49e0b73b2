//! Simulation layer: the discrete-event engine (prompt segments, cache store, per-mode rules, event
//! queue), billing, running a scenario over models and strategies, the Monte Carlo and its
//! statistics, and the bench workload. Depends on [`crate::input`], [`crate::model`] and
//! [`crate::base`].

pub mod bench;
pub mod billing;
pub mod engine;
pub mod montecarlo;
pub mod request;
pub mod simulate;
pub mod stats;
