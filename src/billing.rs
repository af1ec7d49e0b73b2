//! Dollars: the one place that multiplies tokens by prices.

use serde::Serialize;

use crate::catalog::ModelSpec;
use crate::engine::cache::Split;

/// Prices that apply to one (model, strategy) pair, per token.
#[derive(Debug, Clone, Copy)]
pub struct PriceSheet {
    /// USD per base-rate input token.
    pub input: f64,
    /// USD per output token.
    pub output: f64,
    /// Read multiplier.
    pub read_multiplier: f64,
    /// Write multiplier per write slot.
    pub write_multipliers: [f64; 3],
    /// USD per written token for its storage over its TTL (zero where storage is not billed).
    pub storage_per_written_token: [f64; 3],
}

impl PriceSheet {
    /// Prices of a model with no caching.
    pub fn uncached(model: &ModelSpec) -> Self {
        PriceSheet {
            input: model.input_usd_per_mtok.value / 1e6,
            output: model.output_usd_per_mtok.value / 1e6,
            read_multiplier: 1.0,
            write_multipliers: [1.0; 3],
            storage_per_written_token: [0.0; 3],
        }
    }

    /// Input-side dollars of a split (no output).
    pub fn input_usd(&self, s: &Split) -> f64 {
        let mut weighted = s.uncached as f64 + s.read as f64 * self.read_multiplier;
        let mut storage = 0.0;
        for i in 0..3 {
            weighted += s.written[i] as f64 * self.write_multipliers[i];
            storage += s.written[i] as f64 * self.storage_per_written_token[i];
        }
        weighted * self.input + storage
    }

    /// Dollars of storage alone.
    pub fn storage_usd(&self, s: &Split) -> f64 {
        (0..3)
            .map(|i| s.written[i] as f64 * self.storage_per_written_token[i])
            .sum()
    }

    /// Total dollars of a call.
    pub fn call_usd(&self, s: &Split, output_tokens: u64) -> f64 {
        self.input_usd(s) + output_tokens as f64 * self.output
    }

    /// Dollars of a billed call split into its parts (for per-call charts); the parts add up to
    /// `bill.cost_usd` when `bill` was priced with this sheet.
    pub fn parts_usd(&self, bill: &CallBill) -> CostParts {
        let mut write = 0.0;
        for i in 0..3 {
            let w = bill.written_by_slot[i] as f64;
            write +=
                w * self.write_multipliers[i] * self.input + w * self.storage_per_written_token[i];
        }
        CostParts {
            uncached_usd: bill.uncached_tokens as f64 * self.input,
            cache_write_usd: write,
            cache_read_usd: bill.cache_read_tokens as f64 * self.read_multiplier * self.input,
            output_usd: bill.output_tokens as f64 * self.output,
        }
    }
}

/// Dollars of one call by part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostParts {
    /// Input tokens at the base rate.
    pub uncached_usd: f64,
    /// Cache writes at their tier's multiplier, plus storage where it is billed.
    pub cache_write_usd: f64,
    /// Cache reads at the read multiplier.
    pub cache_read_usd: f64,
    /// Output tokens.
    pub output_usd: f64,
}

impl CostParts {
    /// Sum of the parts.
    pub fn total(&self) -> f64 {
        self.uncached_usd + self.cache_write_usd + self.cache_read_usd + self.output_usd
    }
}

/// One billed call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CallBill {
    /// Session number, 1-based.
    pub session: u32,
    /// Call number within the session, 1-based.
    pub call: u32,
    /// Start time of the call, seconds from the start of the simulation.
    pub time_s: f64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Tokens at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache (all tiers).
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens of the tool block in this prompt.
    pub tool_block_tokens: u64,
    /// Dollars of this call (input, writes, reads, storage, output).
    pub cost_usd: f64,
    /// Dollars of storage included in `cost_usd`.
    pub storage_usd: f64,
    /// Running total over the calls so far, in time order.
    pub cumulative_usd: f64,
    /// Written tokens per tier slot (names in the result's `tiers`).
    #[serde(skip)]
    pub written_by_slot: [u64; 3],
}
