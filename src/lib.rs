//! pcsim: a prompt-cache cost simulator.
//!
//! An agent session is a timed sequence of calls. Every call re-sends the tool definitions, the system
//! prompt and the growing conversation; each provider's caching rules (from `models.toml`) decide which
//! tokens are billed at the base rate, written to cache or read from it. pcsim applies those rules call
//! by call and reports per-call bills and cumulative costs.
//!
//! ```
//! use pcsim::{input::scenario::Scenario, model::catalog::Catalog, sim::simulate::run_scenario};
//! let catalog = Catalog::embedded().unwrap();
//! let scenario = Scenario::builtin_default().unwrap();
//! let report = run_scenario(&catalog, &scenario, &["claude-opus-4.8".into()], &[]).unwrap();
//! let none = &report.results[0];
//! let cached = &report.results[1];
//! assert!(cached.total_usd < none.total_usd);
//! ```

// No unwrap/expect in library code: bad input must become an `Error`, never a panic. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// Layers, lowest first: each may use only those listed before it (see each folder's module doc).
pub mod analysis;
pub mod base;
pub mod error;
pub mod input;
pub mod model;
pub mod report;
pub mod sim;

pub use error::{Error, Result};
