//! pcsim: a prompt-cache cost simulator.
//!
//! An agent session is a timed sequence of calls. Every call re-sends the tool definitions, the system
//! prompt and the growing conversation; each provider's caching rules (from `models.toml`) decide which
//! tokens are billed at the base rate, written to cache or read from it. pcsim applies those rules call
//! by call and reports per-call bills and cumulative costs.
//!
//! ```
//! use pcsim::{catalog::Catalog, scenario::Scenario, simulate::run_scenario};
//! let catalog = Catalog::embedded().unwrap();
//! let scenario = Scenario::builtin_default().unwrap();
//! let report = run_scenario(&catalog, &scenario, &["claude-opus-4.8".into()], &[]).unwrap();
//! let none = &report.results[0];
//! let cached = &report.results[1];
//! assert!(cached.total_usd < none.total_usd);
//! ```

// No unwrap/expect in library code: bad input must become an `Error`, never a panic. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod analysis;
pub mod bench;
pub mod billing;
pub mod capture;
pub mod catalog;
pub mod engine;
pub mod error;
pub mod hash;
pub mod litellm;
pub mod mcpconfig;
pub mod montecarlo;
pub mod quantity;
pub mod replay;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod simulate;
pub mod stats;
pub mod strategy;
pub mod tokens;
pub mod toolreport;
pub mod tools;
pub mod trim;

pub use error::{Error, Result};
