//! Request-setting changes (`[[event]] change = "tool_choice"`) as the engine applies them. The
//! catalog says per model and caching mode which prompt part a change invalidates
//! ([`crate::model::catalog::CacheRules::invalidated_by`]); from the change on, that part and every
//! later one are new to the cache. A part is made new by folding a marker, which counts the changes
//! so far, into the identity of its first segment ([`Prompt::salt_next`]; it adds no tokens): every
//! prefix that reaches into the part then hashes anew, and every prefix that ends before it (the
//! tools and system prompt, when the messages are invalidated) still hits. One implementation for
//! every provider; the data decides the part.

use crate::base::hash::{chain, fnv1a};
use crate::input::scenario::{Scenario, SettingEvent, ToolEvent};
use crate::sim::engine::prompt::Prompt;

/// One event of a scenario, in call order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// A tool-list change.
    Tools(&'a ToolEvent),
    /// A request-setting change.
    Setting(&'a SettingEvent),
}

/// The scenario's tool-list and setting events in call order (each list is in call order
/// already); at the same call the tool-list change comes first.
pub(crate) fn in_call_order(s: &Scenario) -> Vec<Step<'_>> {
    let mut steps: Vec<(usize, u8, Step<'_>)> = s
        .events
        .iter()
        .map(|e| (e.at_call, 0, Step::Tools(e)))
        .chain(
            s.setting_events
                .iter()
                .map(|c| (c.at_call, 1, Step::Setting(c))),
        )
        .collect();
    // Stable: events of one kind at the same call keep the scenario's order.
    steps.sort_by_key(|&(at, kind, _)| (at, kind));
    steps.into_iter().map(|(_, _, step)| step).collect()
}

/// The prompt parts a setting change can invalidate, in prompt order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// From the tool preamble on: the whole prompt.
    Tools,
    /// From the system prompt on.
    System,
    /// From the first message on.
    Messages,
}

impl Part {
    /// The part of a catalog name (`tools`, `system`, `messages`); other names invalidate nothing
    /// (the catalog loader admits only those and `none`).
    pub(crate) fn parse(name: &str) -> Option<Part> {
        match name {
            "tools" => Some(Part::Tools),
            "system" => Some(Part::System),
            "messages" => Some(Part::Messages),
            _ => None,
        }
    }
}

/// How many setting changes have invalidated each part so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Markers {
    counts: [u64; 3],
}

impl Markers {
    /// Records one more change that invalidates `part`.
    pub(crate) fn bump(&mut self, part: Part) {
        self.counts[part as usize] += 1;
    }

    /// Marks the start of `part` in `p` (call it where the part begins) when a change has
    /// invalidated it; a prompt no setting change touched is exactly what it was without this.
    pub(crate) fn push(&self, part: Part, p: &mut Prompt) {
        let n = self.counts[part as usize];
        if n > 0 {
            p.salt_next(chain(chain(fnv1a(b"setting change"), part as u64), n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::prompt::Segment;

    #[test]
    fn markers_change_the_prefix_only_from_their_part_on() {
        let mut a = Prompt::default();
        let mut b = Prompt::default();
        let mut m = Markers::default();
        m.bump(Part::Messages);
        for (p, markers) in [(&mut a, Markers::default()), (&mut b, m)] {
            p.push(Segment { tokens: 10, id: 1 });
            markers.push(Part::System, p);
            p.push(Segment { tokens: 20, id: 2 });
            markers.push(Part::Messages, p);
            p.push(Segment { tokens: 30, id: 3 });
        }
        // The same tokens and the same prefixes up to the system prompt; new from the messages on.
        assert_eq!(a.cum_tokens, b.cum_tokens);
        assert_eq!(a.cum_hash[..2], b.cum_hash[..2]);
        assert_ne!(a.cum_hash[2], b.cum_hash[2]);
    }
}
