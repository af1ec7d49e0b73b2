//! Analysis layer: questions answered with simulations. The same session under several strategies
//! (`compare`), with a changed tool list (`whatif`), recommendations backed by simulations
//! (`advise`), the pure break-even and TTL formulas they use, replay of usage logs against the
//! simulator's prediction (`replay`) and tool-block reports (`toolreport`). Every analysis starts from
//! a [`crate::sim::request::Request`] (or a tool list) and returns plain serialisable structs with
//! their own text and CSV forms. Depends on [`crate::sim`] and the layers below it, never on
//! the report layer above it.

pub mod advise;
#[cfg(feature = "cli")]
// Public only for the replay benches (benches/), which generate the same transcripts.
#[doc(hidden)]
pub mod bench;
pub mod breakeven;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod calibrate;
pub mod compare;
#[cfg(feature = "cli")]
pub(crate) mod config;
// Always built: `replay::replay_logs` (the Python bindings' replay too) sums the logged totals and a
// tool-list change's counterfactual; the rest is the command line's.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) mod counterfactual;
#[cfg(feature = "cli")]
pub(crate) mod diff;
pub mod explain;
#[cfg(feature = "cli")]
pub(crate) mod fit;
#[cfg(feature = "cli")]
pub(crate) mod fitdist;
pub mod replay;
pub mod replay_logs;
#[cfg(feature = "cli")]
pub(crate) mod toolreport;
pub mod uncertainty;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod vocabulary;
pub mod whatif;

use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::ModelSpec;
use crate::model::strategy::Strategy;
use crate::sim::engine::{Prepared, ToolCounts, Workspace};
use crate::sim::request::Pair;
use crate::sim::simulate::{summarise, SimResult};

pub(crate) use crate::sim::request::COMMAND_LINE;

/// A (model, strategy) that was not simulated, with the reason (stated, never silent); the same
/// record as `run` reports.
pub use crate::sim::request::Skipped as Skip;

/// The error when caching was asked for but no requested caching strategy could be simulated: every
/// skip with its reason, so nothing is dropped silently.
pub(crate) fn nothing_cacheable(skips: &[Skip]) -> Error {
    let reasons: Vec<String> = skips
        .iter()
        .map(|s| format!("{} / {}: {}", s.model, s.strategy, s.reason))
        .collect();
    Error::Unsupported(format!(
        "no requested caching strategy can be simulated on the chosen models: {}",
        reasons.join("; ")
    ))
}

/// [`simulate_one`] with the tool and list counts of `counts`, kept for the caller's next
/// simulations (each tool and list counted once over all of them).
pub(crate) fn simulate_one_counted(
    model: &ModelSpec,
    scenario: &Scenario,
    requested: &str,
    strategy: &Strategy,
    counts: &mut ToolCounts,
) -> Result<SimResult> {
    let pair = Pair::resolve(model, requested, strategy)?;
    let setup = pair.setup(scenario.first_token_seconds);
    let prepared = Prepared::with_counter(scenario, &setup, counts.counter(model.rendering()));
    let mut bills = Vec::with_capacity(scenario.calls * scenario.sessions);
    prepared.run(0, &mut Workspace::new(), |b| bills.push(*b));
    Ok(summarise(&pair, bills))
}

/// `part / whole` in percent, 0 when `whole` is 0 (no baseline cost, nothing to compare against).
pub(crate) fn percent(part: f64, whole: f64) -> f64 {
    if whole.abs() > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::path::Path;

    use crate::input::scenario::Scenario;

    /// A scenario from TOML text (tests only).
    pub fn scenario(text: &str) -> Scenario {
        Scenario::from_toml_str(text, "test.toml", Path::new(".")).expect("test scenario is valid")
    }
}
