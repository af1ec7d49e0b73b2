//! What a replay takes and gives: its options, and logged against predicted buckets per call and in
//! total.

use std::collections::BTreeMap;

use serde::Serialize;

/// Token buckets and dollars of one call (or of a total).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Buckets {
    /// Tokens at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Dollars of the call, output included.
    pub cost_usd: f64,
}

impl Buckets {
    /// Adds another call's (or total's) buckets.
    pub(crate) fn add(&mut self, o: &Buckets) {
        // Saturating: the loader's per-field limit keeps real sums far below; this is the backstop.
        self.uncached_tokens = self.uncached_tokens.saturating_add(o.uncached_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(o.cache_write_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(o.cache_read_tokens);
        self.cost_usd += o.cost_usd;
    }
}

/// One call, logged against predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallComparison {
    /// Call number, 1-based, in log order.
    pub call: usize,
    /// Conversation number, 1-based (session, agent, time gap).
    pub conversation: usize,
    /// Seconds since the first call.
    pub time_s: f64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The log's buckets at this model's prices.
    pub logged: Buckets,
    /// pcsim's buckets and dollars for the same prompt.
    pub predicted: Buckets,
}

/// A replay on one (model, strategy).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ReplayResult {
    /// Model id.
    pub model: String,
    /// Strategy name (resolved).
    pub strategy: String,
    /// Conversations the log was split into.
    pub conversations: usize,
    /// Logged buckets at this model's prices, summed.
    pub logged: Buckets,
    /// Predicted buckets and dollars, summed.
    pub predicted: Buckets,
    /// Predicted cache writes per TTL tier (`5m`, `1h`, ...).
    pub predicted_write_tokens_by_tier: BTreeMap<String, u64>,
    /// Per call.
    pub calls: Vec<CallComparison>,
}

/// How the session is rebuilt.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Seconds between calls where the log has no timestamps.
    pub gap_seconds: f64,
    /// Tokens at the start of every prompt that never change (tools + system prompt); 0 = unknown.
    pub prefix_tokens: u64,
    /// Seconds until a response starts (writes become readable then).
    pub first_token_seconds: f64,
    /// A pause longer than this between two calls of a session starts a new conversation; 0 = never.
    pub session_gap_seconds: f64,
    /// Seed of the best-effort hit draws (`--seed`); `None`: derived from the logged calls, so the
    /// same log gives the same prediction whatever its file is called.
    pub seed: Option<u64>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            gap_seconds: 30.0,
            prefix_tokens: 0,
            first_token_seconds: 1.0,
            session_gap_seconds: 0.0,
            seed: None,
        }
    }
}
