//! A replay's calls summed by UTC day, session, project and logged model.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{utc_date, Buckets, CallComparison, ReplayResult, UsageLog};

/// Calls, tokens and dollars of a set of calls, logged against predicted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub(crate) struct Tally {
    /// Calls.
    pub calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The log's buckets at the replay model's prices.
    pub logged: Buckets,
    /// pcsim's prediction.
    pub predicted: Buckets,
}

impl Tally {
    /// Adds one call.
    pub(crate) fn add_call(&mut self, c: &CallComparison) {
        self.calls += 1;
        self.prompt_tokens += c.prompt_tokens;
        self.output_tokens += c.output_tokens;
        self.logged.add(&c.logged);
        self.predicted.add(&c.predicted);
    }

    /// Adds another tally.
    pub(crate) fn add(&mut self, o: &Tally) {
        self.calls += o.calls;
        self.prompt_tokens += o.prompt_tokens;
        self.output_tokens += o.output_tokens;
        self.logged.add(&o.logged);
        self.predicted.add(&o.predicted);
    }
}

/// The groupings totals are reported by.
pub(crate) const GROUPINGS: [&str; 4] = ["day", "session", "project", "model"];

/// A replay's calls grouped by UTC day, session, project and logged model: `(grouping, key)` to
/// tally. Calls without the field are grouped under `(none)`.
pub(crate) fn tally_groups(
    log: &UsageLog,
    r: &ReplayResult,
) -> BTreeMap<(&'static str, String), Tally> {
    let mut out: BTreeMap<(&'static str, String), Tally> = BTreeMap::new();
    let none = || "(none)".to_string();
    for c in &r.calls {
        let Some(l) = log.calls.get(c.call - 1) else {
            continue;
        };
        let keys = [
            l.unix_time.map_or_else(none, utc_date),
            l.session.clone().unwrap_or_else(none),
            l.project.clone().unwrap_or_else(none),
            l.model.clone().unwrap_or_else(none),
        ];
        for (by, key) in GROUPINGS.iter().zip(keys) {
            out.entry((by, key)).or_default().add_call(c);
        }
    }
    out
}
