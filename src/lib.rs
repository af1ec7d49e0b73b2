//! pcsim: a prompt-cache cost simulator.
//!
//! An agent session is a timed sequence of calls. Every call re-sends the tool definitions, the system
//! prompt and the growing conversation; each provider's caching rules (from `models.toml`) decide which
//! tokens are billed at the base rate, written to cache or read from it. pcsim applies those rules call
//! by call and reports per-call bills and cumulative costs.
//!
//! The entry types are re-exported here; the rest of the API lives in its layer's module (see
//! `docs/architecture.md`): [`model`] (catalog, strategies, tools and their token counts), [`input`]
//! (scenarios, MCP captures and client configurations, price imports, usage logs), [`sim`] (the
//! request, the engine, Monte Carlo), [`analysis`] (compare, what-if, advise, replay) and [`report`]
//! (the text, CSV and JSON renderings and the charts). `docs/public-api.txt` lists every public item
//! and method; CI fails when the API changes without it. Items marked `#[doc(hidden)]` are public
//! only for pcsim's own integration tests, benches and fuzz harness: they are not the API and may
//! change in any release. The `cli` feature (on by default) adds the `pcsim` program ([`cli::main`]);
//! a program that only simulates can leave it out (`default-features = false, features =
//! ["tokenizers"]`): no clap, no indicatif, no anyhow.
//!
//! Load a catalog and a scenario and run it (every model and strategy the scenario names):
//!
//! ```
//! use pcsim::{run_scenario, Catalog, Scenario};
//! let catalog = Catalog::embedded()?;
//! let scenario = Scenario::from_toml_str(
//!     r#"
//!     name = "doc"
//!     models = ["claude-opus-4.8"]
//!     strategies = ["none", "cached"]
//!     [tools]
//!     synthetic = { count = 20, params = 4 }
//!     [session]
//!     calls = 10
//!     system_tokens = 1500
//!     first_user_tokens = 200
//!     tool_result_tokens = 600
//!     output_tokens = 150
//!     gap_seconds = 10
//!     "#,
//!     "doc.toml",
//!     std::path::Path::new("."),
//! )?;
//! let report = run_scenario(&catalog, &scenario, &[], &[])?;
//! let (none, cached) = (&report.results[0], &report.results[1]);
//! // `cached` is the cheapest caching the model allows on this session: one breakpoint on the
//! // newest message covers the whole prefix of a single conversation.
//! assert_eq!(cached.strategy, "explicit:last");
//! assert_eq!(cached.strategy_requested, "cached");
//! assert!(cached.total_usd < none.total_usd);
//! # Ok::<(), pcsim::Error>(())
//! ```
//!
//! Compare caching strategies on the same session (`none` is added as the baseline; a strategy a
//! model does not offer is a stated skip):
//!
//! ```
//! use pcsim::{analysis::compare, Catalog, Scenario};
//! let catalog = Catalog::embedded()?;
//! let scenario = Scenario::builtin_default()?;
//! let strategies = ["explicit:tools".into(), "explicit:tools+system+last".into()];
//! let request = compare::selection(&["claude-opus-4.8".into()], &strategies)
//!     .resolve(&catalog, scenario)?;
//! let report = compare::compare_request(&request)?;
//! let opus = &report.comparisons[0];
//! assert_eq!(opus.strategies[0].strategy, "none");
//! assert!(opus.strategies.iter().all(|o| o.total_usd <= opus.none_usd));
//! # Ok::<(), pcsim::Error>(())
//! ```
//!
//! A Monte Carlo: the `runs` override is checked against the scenario's work limit, and every
//! result then carries the distribution of its total over the runs:
//!
//! ```
//! use pcsim::{run_request, Catalog, Scenario, Selection};
//! let catalog = Catalog::embedded()?;
//! let scenario = Scenario::builtin_default()?;
//! let request = Selection::new(&["kimi-k3".into()], &["cached".into()])
//!     .overrides(Some(50), Some(7))
//!     .resolve(&catalog, scenario)?;
//! let report = run_request(&request, &|_| {})?;
//! let mc = report.results[0].montecarlo.as_ref().expect("50 runs");
//! assert_eq!(mc.runs, 50);
//! assert!(mc.p5_usd <= mc.median_usd && mc.median_usd <= mc.p95_usd);
//! let (low, high) = (mc.ci95_low_usd.unwrap(), mc.ci95_high_usd.unwrap());
//! assert!(low <= mc.mean_usd && mc.mean_usd <= high);
//! # Ok::<(), pcsim::Error>(())
//! ```

//! A what-if: the session with two tools removed before call 25, against the session as it is, on
//! the same timeline; then the advice for the session as it is:
//!
//! ```
//! use pcsim::analysis::{advise, whatif};
//! use pcsim::{report, Catalog, Scenario};
//! let catalog = Catalog::embedded()?;
//! let scenario = Scenario::load(std::path::Path::new("examples/tool-change.toml"))?;
//! let change = whatif::ToolChange {
//!     remove: vec!["web_search".into(), "fetch_page".into()],
//!     ..Default::default()
//! };
//! let (changed, summary) = whatif::apply_change(&scenario, 25, &change)?;
//! let models = ["gpt-5.2".to_string()];
//! let request = whatif::selection_at(&models, &[], 25).resolve(&catalog, scenario.clone())?;
//! let report = whatif::whatif_request(&request, &changed, 25, summary)?;
//! assert!(report.table().contains("remove 2 tool(s)"));
//! let json = report::to_json(&report)?; // what `pcsim whatif --format json` prints
//! assert!(json.contains("\"at_call\": 25"));
//!
//! let advice = advise::advise(&catalog, &scenario, &models)?;
//! assert_eq!(advice.advice[0].model, "gpt-5.2");
//! assert!(advice.advice[0].recommended.total_usd <= advice.advice[0].none_usd);
//! # Ok::<(), pcsim::Error>(())
//! ```

#![warn(missing_docs)]
// Every type a public signature or field shows can be named and has its page in the docs.
#![warn(unnameable_types)]
// Without the `cli` feature the analyses only the program runs (fit, diff, tools, sweep, calibrate,
// the benchmark) are not compiled; a few small helpers of the program's own that
// live beside library code (terminal escaping, report-set writing, argument parsers) stay compiled
// and unused there. They are checked for dead code in the default build, which CI lints.
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]
// No unwrap/expect in library code: bad input must become an `Error`, never a panic. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// Layers, lowest first: error, base, model, input, sim, analysis, report, cli; each may use only the
// ones below it (see each folder's module doc). rustfmt sorts the declarations by name.
pub mod analysis;
pub mod base;
#[cfg(feature = "cli")]
pub mod cli;
pub mod error;
pub mod input;
pub mod model;
pub mod report;
pub mod sim;

pub use error::{Error, Result};

pub use analysis::compare::{compare, CompareReport};
pub use input::scenario::Scenario;
pub use model::catalog::{Catalog, ModelSpec};
pub use model::strategy::Strategy;
pub use sim::montecarlo::MonteCarlo;
pub use sim::request::{Pair, Request, Selection, Skipped};
pub use sim::simulate::{run_request, run_scenario, RunReport, SimResult};
