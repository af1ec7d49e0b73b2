//! A replay's calls summed by UTC day, session, project and logged model.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::hash::FastMap;

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
///
/// Grouped by borrowed keys (the day by its number), so a call costs four hash lookups and no
/// allocation; each key is copied, and each day's date written, once.
pub(crate) fn tally_groups(
    log: &UsageLog,
    r: &ReplayResult,
) -> BTreeMap<(&'static str, String), Tally> {
    const NONE: &str = "(none)";
    // Day number -> (a time of that day, its tally); the date is the same for every time of the day.
    let mut days: FastMap<Option<i64>, (f64, Tally)> = FastMap::default();
    let mut named: [FastMap<&str, Tally>; 3] = Default::default();
    for c in &r.calls {
        let Some(l) = log.calls.get(c.call - 1) else {
            continue;
        };
        let day = l.unix_time.map(|t| (t / 86_400.0).floor() as i64);
        days.entry(day)
            .or_insert_with(|| (l.unix_time.unwrap_or_default(), Tally::default()))
            .1
            .add_call(c);
        let keys = [&l.session, &l.project, &l.model];
        for (by, key) in named.iter_mut().zip(keys) {
            by.entry(key.as_deref().unwrap_or(NONE))
                .or_default()
                .add_call(c);
        }
    }
    let mut out: BTreeMap<(&'static str, String), Tally> = BTreeMap::new();
    for (day, (t, tally)) in days {
        let key = day.map_or_else(|| NONE.to_string(), |_| utc_date(t));
        out.insert((GROUPINGS[0], key), tally);
    }
    for (by, groups) in GROUPINGS[1..].iter().zip(named) {
        for (key, tally) in groups {
            out.insert((by, key.to_string()), tally);
        }
    }
    out
}
