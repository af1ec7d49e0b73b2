//! A prompt as an ordered list of segments (tool preamble, each tool, system prompt, each message),
//! each with a token count and a content identity. Boundary `i` is the point right after segment `i`;
//! its prefix is identified by the chained hash of all segments up to it, so two prompts share a
//! cached prefix exactly when their leading segments are identical.

use crate::base::hash::chain;

/// One segment of a prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Tokens of the segment.
    pub tokens: u64,
    /// Content identity.
    pub id: u64,
}

/// A prompt with its prefix sums kept up to date as segments are appended.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Prompt {
    /// Cumulative tokens at each boundary.
    pub cum_tokens: Vec<u64>,
    /// Prefix identity at each boundary.
    pub cum_hash: Vec<u64>,
    /// Boundary index after the last tool segment, if there are tools.
    pub tools_end: Option<usize>,
    /// Boundary index after the system prompt, if there is one.
    pub system_end: Option<usize>,
    /// An identity folded into the next segment pushed (0: none), so that a change that adds no
    /// tokens (a request setting) still makes every later prefix new.
    salt: u64,
}

impl Clone for Prompt {
    fn clone(&self) -> Self {
        Prompt {
            cum_tokens: self.cum_tokens.clone(),
            cum_hash: self.cum_hash.clone(),
            tools_end: self.tools_end,
            system_end: self.system_end,
            salt: self.salt,
        }
    }

    /// Copies into the existing buffers (the engine rebuilds prompts from a prepared head on every
    /// session start; this keeps that free of allocation once the buffers are large enough).
    fn clone_from(&mut self, source: &Self) {
        self.cum_tokens.clone_from(&source.cum_tokens);
        self.cum_hash.clone_from(&source.cum_hash);
        self.tools_end = source.tools_end;
        self.system_end = source.system_end;
        self.salt = source.salt;
    }
}

impl Prompt {
    /// Reserves room for `additional` more segments.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.cum_tokens.reserve(additional);
        self.cum_hash.reserve(additional);
    }

    /// Removes every segment.
    pub(crate) fn clear(&mut self) {
        self.cum_tokens.clear();
        self.cum_hash.clear();
        self.tools_end = None;
        self.system_end = None;
        self.salt = 0;
    }

    /// Appends a segment (zero-token segments are skipped: they carry nothing to cache).
    #[inline]
    pub(crate) fn push(&mut self, s: Segment) {
        if s.tokens == 0 {
            return;
        }
        let (t, h) = match (self.cum_tokens.last(), self.cum_hash.last()) {
            (Some(t), Some(h)) => (*t, *h),
            _ => (0, 0),
        };
        // Saturating: scenario limits keep real sums far below u64::MAX; this only guarantees that no
        // input, however extreme, can overflow.
        let id = if self.salt == 0 {
            s.id
        } else {
            chain(s.id, std::mem::take(&mut self.salt))
        };
        self.cum_tokens.push(t.saturating_add(s.tokens));
        self.cum_hash.push(chain(h, id));
    }

    /// Folds `salt` into the identity of the next segment pushed (and so of every later prefix):
    /// the prefix up to here is unchanged.
    pub(crate) fn salt_next(&mut self, salt: u64) {
        self.salt = chain(self.salt, salt);
    }

    /// Marks the current end as the end of the tool block.
    pub(crate) fn mark_tools_end(&mut self) {
        self.tools_end = self.last_boundary();
    }

    /// Marks the current end as the end of the system prompt.
    pub(crate) fn mark_system_end(&mut self) {
        self.system_end = self.last_boundary();
    }

    /// Index of the last boundary, if any.
    pub(crate) fn last_boundary(&self) -> Option<usize> {
        self.cum_tokens.len().checked_sub(1)
    }

    /// Total tokens.
    pub(crate) fn tokens(&self) -> u64 {
        self.cum_tokens.last().copied().unwrap_or(0)
    }
}
