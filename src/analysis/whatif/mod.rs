//! `whatif`: the scenario as it is against the same scenario with one more tool-list change at call
//! K, per model and strategy: the extra dollars, the extra cache writes, and when (if ever) the change
//! pays for itself.

mod change;
mod outcome;
mod run;
#[cfg(test)]
mod tests;
mod types;

pub use change::{apply_change, tools_at};
pub use run::{selection, selection_at, whatif, whatif_request, whatif_request_with_progress};
pub use types::{ChangeSummary, ToolChange, WhatifOutcome, WhatifReport, WhatifRuns};

/// Strategies simulated when none are given: no caching and each model's own caching. For every
/// caching strategy, the `append` tool-change rule is added as an extra row where the model offers it.
pub const DEFAULT_STRATEGIES: [&str; 2] = ["none", "cached"];

/// Dollar differences below this are taken as zero (sums of sub-cent floats).
const EPS_USD: f64 = 1e-12;
