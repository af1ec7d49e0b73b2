//! Dollars: the one place that multiplies tokens by prices.

use serde::Serialize;

use crate::model::catalog::ModelSpec;

/// Token buckets of one request's prompt: `uncached + written + read == prompt`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// Prompt tokens.
    pub prompt: u64,
    /// Tokens read from cache.
    pub read: u64,
    /// Tokens written, per write slot (the strategy's tiers, in prompt order).
    pub written: [u64; 3],
    /// Tokens billed at the base rate.
    pub uncached: u64,
}

impl Split {
    /// All tokens written.
    pub(crate) fn written_total(&self) -> u64 {
        self.written.iter().sum()
    }

    /// Everything at the base rate (no caching).
    pub(crate) fn uncached_only(prompt: u64) -> Self {
        Split {
            prompt,
            uncached: prompt,
            ..Default::default()
        }
    }
}

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
    /// Prompts of more than this many tokens are billed at the long-context rates below
    /// (`u64::MAX`: the model has no long-context tier).
    pub long_above: u64,
    /// USD per base-rate input token above the threshold.
    pub long_input: f64,
    /// USD per output token above the threshold.
    pub long_output: f64,
    /// Read multiplier above the threshold.
    pub long_read_multiplier: f64,
}

/// `x as f64`, faster: token counts fit in an `i64`, and a signed conversion is one instruction on
/// x86-64 where an unsigned one takes several (this runs several times per simulated call). Exactly
/// `x as f64` for every `x` (both round to nearest; the rare huge value takes the unsigned path).
#[inline(always)]
fn tok(x: u64) -> f64 {
    if x <= i64::MAX as u64 {
        x as i64 as f64
    } else {
        x as f64
    }
}

impl PriceSheet {
    /// Prices of a model with no caching (its long-context tier included).
    pub(crate) fn uncached(model: &ModelSpec) -> Self {
        let input = model.input_usd_per_mtok.value / 1e6;
        let output = model.output_usd_per_mtok.value / 1e6;
        let (long_above, long_input, long_output) = match &model.long_context {
            Some(lc) => (
                lc.above_tokens.value,
                lc.input_usd_per_mtok.value / 1e6,
                lc.output_usd_per_mtok.value / 1e6,
            ),
            None => (u64::MAX, input, output),
        };
        PriceSheet {
            input,
            output,
            read_multiplier: 1.0,
            write_multipliers: [1.0; 3],
            storage_per_written_token: [0.0; 3],
            long_above,
            long_input,
            long_output,
            long_read_multiplier: 1.0,
        }
    }

    /// The (input, output, read multiplier) that apply to a prompt of `prompt` tokens.
    #[inline(always)]
    fn rates(&self, prompt: u64) -> (f64, f64, f64) {
        if prompt > self.long_above {
            (self.long_input, self.long_output, self.long_read_multiplier)
        } else {
            (self.input, self.output, self.read_multiplier)
        }
    }

    /// Input-side dollars of a split (no output).
    #[inline]
    pub(crate) fn input_usd(&self, s: &Split) -> f64 {
        let (input, _, read_multiplier) = self.rates(s.prompt);
        let mut weighted = tok(s.uncached) + tok(s.read) * read_multiplier;
        let mut storage = 0.0;
        for i in 0..3 {
            weighted += tok(s.written[i]) * self.write_multipliers[i];
            storage += tok(s.written[i]) * self.storage_per_written_token[i];
        }
        weighted * input + storage
    }

    /// Dollars of storage alone.
    #[inline]
    #[cfg(test)]
    pub(crate) fn storage_usd(&self, s: &Split) -> f64 {
        (0..3)
            .map(|i| tok(s.written[i]) * self.storage_per_written_token[i])
            .sum()
    }

    /// [`PriceSheet::call_usd`] and [`PriceSheet::storage_usd`] of one call at once (the engine's
    /// per-call step; the same arithmetic in the same order, so the same figures to the bit).
    #[inline]
    pub(crate) fn call_and_storage_usd(&self, s: &Split, output_tokens: u64) -> (f64, f64) {
        let (input, output, read_multiplier) = self.rates(s.prompt);
        let mut weighted = tok(s.uncached) + tok(s.read) * read_multiplier;
        let mut storage = 0.0;
        for i in 0..3 {
            // A slot with nothing written adds exactly +0.0 to both sums (prices are finite and
            // the sums non-negative), so skipping it leaves every bit as `input_usd` computes.
            if s.written[i] != 0 {
                weighted += tok(s.written[i]) * self.write_multipliers[i];
                storage += tok(s.written[i]) * self.storage_per_written_token[i];
            }
        }
        (
            (weighted * input + storage) + tok(output_tokens) * output,
            storage,
        )
    }

    /// Total dollars of a call.
    #[inline]
    pub(crate) fn call_usd(&self, s: &Split, output_tokens: u64) -> f64 {
        self.input_usd(s) + tok(output_tokens) * self.rates(s.prompt).1
    }

    /// Dollars of a billed call split into its parts (for per-call charts); the parts add up to
    /// `bill.cost_usd` when `bill` was priced with this sheet.
    pub fn parts_usd(&self, bill: &CallBill) -> CostParts {
        let (input, output, read_multiplier) = self.rates(bill.prompt_tokens);
        let mut write = 0.0;
        for i in 0..3 {
            let w = bill.written_by_slot[i] as f64;
            write += w * self.write_multipliers[i] * input + w * self.storage_per_written_token[i];
        }
        CostParts {
            uncached_usd: bill.uncached_tokens as f64 * input,
            cache_write_usd: write,
            cache_read_usd: bill.cache_read_tokens as f64 * read_multiplier * input,
            output_usd: bill.output_tokens as f64 * output,
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

#[cfg(test)]
mod tests {
    /// The fast conversion is `as f64` everywhere, including around 2^53 and 2^63.
    #[test]
    fn tok_is_as_f64() {
        let mut xs: Vec<u64> = (0..64)
            .flat_map(|b| {
                let p = 1u64 << b;
                [p - 1, p, p + 1, p.wrapping_mul(3) / 2]
            })
            .collect();
        xs.extend([
            u64::MAX,
            u64::MAX - 1,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            0,
        ]);
        xs.extend((0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        for x in xs {
            assert_eq!(super::tok(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
    }

    /// The engine's combined pricing gives exactly the separate figures.
    #[test]
    fn combined_pricing_is_the_separate_pricing() {
        use super::Split;
        let sheet = super::PriceSheet {
            input: 3e-6,
            output: 15e-6,
            read_multiplier: 0.1,
            write_multipliers: [2.0, 1.25, 1.0],
            storage_per_written_token: [1e-9, 3e-10, 0.0],
            long_above: 150_000,
            long_input: 6e-6,
            long_output: 22.5e-6,
            long_read_multiplier: 0.1,
        };
        let mut x = 12_345u64;
        for _ in 0..10_000 {
            let mut next = || {
                x = crate::base::hash::chain(x, 1);
                x % 200_000
            };
            // Empty slots now and then: the combined pricing skips them.
            let mut slot = || if next() % 3 == 0 { 0 } else { next() };
            let written = [slot(), slot(), slot()];
            let split = Split {
                prompt: next() * 2,
                read: next(),
                written,
                uncached: next(),
            };
            let out = next();
            let (cost, storage) = sheet.call_and_storage_usd(&split, out);
            assert_eq!(cost.to_bits(), sheet.call_usd(&split, out).to_bits());
            assert_eq!(storage, sheet.storage_usd(&split));
        }
    }
}
