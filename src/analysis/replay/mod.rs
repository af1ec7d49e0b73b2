//! Replay of real usage logs: read logged token buckets per call (see [`crate::input::usagelog`] for
//! the formats), rebuild the call sequence, bill the logged buckets at pcsim's prices, re-simulate the
//! same prompts with pcsim's caching rules, and compare per call and in total.
//!
//! A log is split into conversations: by session id, by agent (a sub-agent's sidechain is its own
//! conversation, with its own cache prefix, and is counted in the totals), and optionally where the
//! gap between two calls of a session exceeds `session_gap_seconds`. Each conversation grows: a call's
//! prompt extends the previous one by the difference in prompt tokens; a prompt shorter than the
//! previous one restarts it (compaction, `/clear`). An optional fixed prefix (`prefix_tokens`: tools
//! plus system prompt) is kept across restarts and shared by the main agent's conversations; that is
//! where the `tools` and `system` breakpoints go. Calls of all conversations are billed in time order
//! against one cache, as an account's calls are.
//!
//! One file per concept:
//! - `pricing.rs`: the log's model matched to the catalog, logged buckets at its prices.
//! - `types.rs`: [`ReplayOptions`], [`Buckets`], [`CallComparison`], [`ReplayResult`].
//! - `conversations.rs`: calls split into conversations, their start times, the inferred prefix.
//! - `own.rs`: a log split by each call's own model, the parts' replays merged back; calls of models
//!   outside the catalog named and left out.
//! - `simulate.rs`: [`replay`] itself, and its content seed.
//! - `tally.rs`: totals by day, session, project and model.
//!
//! Many files replayed (in parallel) and summed as `pcsim replay` does: [`crate::analysis::replay_logs`].

mod conversations;
mod own;
mod pricing;
mod simulate;
mod tally;
mod types;

pub(crate) use crate::input::usagelog::{load_log, utc_date, LoggedCall, UsageLog};
pub(crate) use conversations::conversations;
// What `pcsim replay` does per log before `replay`: the model the log names, matched to the catalog
// (when no model is given), and the stable prefix inferred from the log (when a strategy needs one
// and none is given). Public for programs that replay logs one by one (the Python bindings, a
// distributed replay) and must choose as the command does.
pub use conversations::infer_prefix_tokens;
pub(crate) use own::{merge_parts, split_by_model, sub_log, FirstSeen, ModelSplit, UnpricedCalls};
pub use pricing::match_model;
pub(crate) use pricing::{logged_usd, uncached_usd, LoggedRates, ModelMatcher};
pub use simulate::{content_seed, replay, uses_prefix_anchors};
pub(crate) use tally::{tally_groups, Tally, GROUPINGS};
pub use types::{Buckets, CallComparison, ReplayOptions, ReplayResult};

#[cfg(test)]
mod tests;
