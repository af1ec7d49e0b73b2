//! The random amounts of each call (message sizes, output, gaps), drawn from a session's own stream
//! in a fixed order, and the streams' seeds.

use crate::base::rng::SimRng;
use rand::SeedableRng;

use crate::base::hash::chain;
use crate::base::quantity::{round_u64, Quantity, Sampler};
use crate::input::scenario::{Scenario, MAX_TOKENS_PER_MESSAGE};

pub(super) fn session_rng(seed: u64, run: u64, session: u64) -> SimRng {
    SimRng::seed_from_u64(chain(chain(seed, run.wrapping_add(0x5eed)), session))
}

/// The calls session `session` of run `run` makes: the scenario's `calls`, or one of its
/// `session_calls` drawn from a stream of the session's own that nothing else draws from (so a
/// scenario without them draws exactly what it drew before they existed).
pub(super) fn session_length(scenario: &Scenario, run: u64, session: u64) -> u32 {
    use rand::RngExt;
    let n = match scenario.session_calls.as_slice() {
        [] => scenario.calls,
        [one] => *one,
        values => {
            let mut rng = SimRng::seed_from_u64(chain(
                chain(scenario.seed, run.wrapping_add(0xca11)),
                session,
            ));
            values[rng.random_range(0..values.len())]
        }
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The random amounts of one call of a session, in the order they come from the session's stream.
///
/// They are drawn when the session's previous call ends rather than when the call is simulated:
/// the stream yields the same values in the same order, but the draws (a ziggurat, `exp` and a
/// gamma squeeze, tens of dependent floating-point steps) are then off the call's critical path.
/// The call that uses them comes about one session-count of iterations later, so their latency
/// hides behind other sessions' calls instead of stalling the cache step and the branches that
/// depend on the prompt's size (measured: most of what the draws cost was that wait).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DrawnCall {
    /// Tokens the conversation grows by before the call: the first user message on call 1, the
    /// tool result plus the user message after it.
    pub(super) growth: u64,
    /// Output tokens of the call.
    pub(super) output: u64,
    /// Milliseconds to the next call (0 after the last call, for which none is drawn).
    pub(super) gap_ms: u64,
}

/// How each amount of a call is drawn.
pub(super) struct CallDraws {
    pub(super) first_user: Draw,
    pub(super) tool_result: Draw,
    pub(super) user: Draw,
    pub(super) output: Draw,
    pub(super) gap: GapDraw,
}

/// The gap after a call: fixed milliseconds, or a distribution in seconds.
pub(super) enum GapDraw {
    Fixed(u64),
    Random(Sampler),
}

impl CallDraws {
    pub(super) fn new(scenario: &Scenario) -> Self {
        CallDraws {
            first_user: Draw::new(&scenario.first_user_tokens),
            tool_result: Draw::new(&scenario.tool_result_tokens),
            user: Draw::new(&scenario.user_tokens),
            output: Draw::new(&scenario.output_tokens),
            gap: match scenario.gap_seconds {
                Quantity::Fixed { value } => {
                    GapDraw::Fixed(crate::model::strategy::seconds_to_ms(value))
                }
                ref q => GapDraw::Random(q.sampler()),
            },
        }
    }

    /// Draws call `call`'s amounts (of a session of `calls` calls): growth (the first user message,
    /// or the tool result then the user message), output, then the gap to the next call when there
    /// is one. This order is the stream's order for every session; results depend on it.
    #[inline(always)]
    pub(super) fn for_call(&self, rng: &mut SimRng, call: u32, calls: u32) -> DrawnCall {
        let growth = if call == 1 {
            self.first_user.draw(rng)
        } else {
            self.tool_result.draw(rng) + self.user.draw(rng)
        };
        let output = self.output.draw(rng);
        let gap_ms = if call < calls {
            match &self.gap {
                GapDraw::Fixed(ms) => *ms,
                GapDraw::Random(q) => crate::model::strategy::seconds_to_ms(q.sample(rng)),
            }
        } else {
            0
        };
        DrawnCall {
            growth,
            output,
            gap_ms,
        }
    }
}

/// A per-call amount in whole tokens: fixed amounts are rounded once, distributions built once.
pub(super) enum Draw {
    Fixed(u64),
    Random(Sampler),
}

impl Draw {
    pub(super) fn new(q: &Quantity) -> Self {
        match *q {
            Quantity::Fixed { value } => Draw::Fixed(round_u64(value).min(MAX_TOKENS_PER_MESSAGE)),
            _ => Draw::Random(q.sampler()),
        }
    }

    #[inline]
    pub(super) fn draw(&self, rng: &mut SimRng) -> u64 {
        match self {
            Draw::Fixed(v) => *v,
            // Clamped: heavy-tailed distributions can draw huge values; the clamp keeps every token
            // sum of a run far from overflow.
            Draw::Random(q) => round_token_amount(q.sample(rng)),
        }
    }
}

/// `round_u64(x).min(MAX_TOKENS_PER_MESSAGE)`, cheaper: clamped first, so the conversion is the
/// one-instruction signed one instead of the saturating unsigned one (runs three times per call).
#[inline(always)]
pub(super) fn round_token_amount(x: f64) -> u64 {
    // `max` first: NaN becomes 0, as `round_u64` gives.
    let y = x.max(0.0).min(MAX_TOKENS_PER_MESSAGE as f64);
    let t = y as i64;
    // Exact below 2^52; branch-free (rounding up is a coin flip no predictor learns).
    (t + i64::from(y - t as f64 >= 0.5)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clamped fast rounding is the plain one on every kind of amount.
    #[test]
    fn round_token_amount_is_round_then_clamp() {
        use rand::{RngExt, SeedableRng};
        let mut rng = SimRng::seed_from_u64(3);
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -3.2,
            0.499_999_999_999_999_94,
            9_999_999.5,
            9_999_999.499_999,
            1e7,
            1e7 + 0.5,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        xs.extend((0..100_000).map(|_| rng.random::<f64>() * 10f64.powi(rng.random_range(-3..10))));
        for x in xs {
            assert_eq!(
                round_token_amount(x),
                round_u64(x).min(MAX_TOKENS_PER_MESSAGE),
                "{x}"
            );
        }
    }
}
