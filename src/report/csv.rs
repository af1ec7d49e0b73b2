//! CSV output: one row per call, with model and strategy columns.

use std::fmt::Write as _;

use crate::base::text::usd_number;
use crate::sim::simulate::RunReport;

/// Column names of the per-call CSV (a stable contract).
pub(crate) const CALL_COLUMNS: [&str; 15] = [
    "model",
    "strategy",
    "session",
    "call",
    "time_s",
    "prompt_tokens",
    "uncached_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "tool_block_tokens",
    "cost_usd",
    "storage_usd",
    "cumulative_usd",
    "strategy_requested",
];

pub(crate) use crate::base::text::field;

/// Every call of every result.
pub(crate) fn run_calls(report: &RunReport) -> String {
    let mut out = CALL_COLUMNS.join(",");
    out.push('\n');
    for r in &report.results {
        for c in &r.calls {
            let _ = writeln!(
                out,
                "{},{},{},{},{:.3},{},{},{},{},{},{},{},{},{},{}",
                field(&r.model),
                field(&r.strategy),
                c.session,
                c.call,
                c.time_s,
                c.prompt_tokens,
                c.uncached_tokens,
                c.cache_write_tokens,
                c.cache_read_tokens,
                c.output_tokens,
                c.tool_block_tokens,
                usd_number(c.cost_usd),
                usd_number(c.storage_usd),
                usd_number(c.cumulative_usd),
                field(&r.strategy_requested),
            );
        }
    }
    out
}
