//! Simulation layer: the resolved request (`request`: the scenario with its overrides checked and
//! every (model, strategy) pair with its prices), the discrete-event engine (prompt segments, cache
//! store, per-mode rules, event queue), billing (the one place tokens become dollars), running a
//! request (`simulate`), the Monte Carlo and its statistics, and the bench workload.
//! Depends on [`crate::input`], [`crate::model`] and [`crate::base`].

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod bench;
pub mod billing;
pub mod engine;
pub mod montecarlo;
pub mod request;
pub mod simulate;
pub(crate) mod stats;
