//! The simulator's seedable random stream: xoshiro256++ (Blackman and Vigna, 2019), seeded through
//! SplitMix64.
//!
//! Every session of every run draws three or four amounts per call from its own stream, so the
//! generator sits on the engine's hot path. xoshiro256++ gives statistically excellent 64-bit output
//! (it passes BigCrush and PractRand) in a few instructions from 32 bytes of state, where ChaCha8 (a
//! cryptographic generator) keeps ~300 bytes per session and refills them in blocks. Simulation
//! needs reproducible, well-distributed streams, not unpredictability, so nothing is lost.
//!
//! Implemented here (30 lines, checked against the reference implementation's output below) rather
//! than taken from a crate, so the raw 64-bit stream of a seed cannot change with a dependency
//! update. The amounts drawn from it can: floats, ranges and distributions are made from the bits by
//! `rand`'s samplers (`random::<f64>()`, `random_range`, `rand::distr`), whose algorithms `rand` may
//! change in a new version. Cargo.lock pins that version, and the snapshot tests of every command's
//! output would show a change when it is updated; nothing stronger is promised.

use std::convert::Infallible;

use rand::{SeedableRng, TryRng};

/// xoshiro256++ with [`SeedableRng::seed_from_u64`] expanding the seed by SplitMix64 (the seeding its
/// authors recommend). A seed's stream of bits is fixed by this file; what is drawn from it also
/// depends on `rand`'s samplers (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimRng {
    s: [u64; 4],
}

/// One step of SplitMix64: advances `state` and returns the next output.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SimRng {
    /// The next 64 random bits (one xoshiro256++ step).
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// The next 32 random bits: the high half of [`SimRng::next_u64`].
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        // The high bits are the better ones of any xoshiro variant.
        (self.next_u64() >> 32) as u32
    }
}

/// rand 0.10's generator trait; [`rand::Rng`] (and so every sampler) follows from it, since
/// drawing from this generator cannot fail.
impl TryRng for SimRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next_u32())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

impl SeedableRng for SimRng {
    type Seed = [u8; 32];

    /// The state is the seed (little-endian words); the all-zero state, from which xoshiro would
    /// only ever return zeros, is replaced by the stream of seed 0.
    fn from_seed(seed: [u8; 32]) -> Self {
        let mut s = [0u64; 4];
        for (w, chunk) in s.iter_mut().zip(seed.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *w = u64::from_le_bytes(b);
        }
        if s == [0; 4] {
            return Self::seed_from_u64(0);
        }
        SimRng { s }
    }

    /// The four state words are four successive SplitMix64 outputs from `seed` (never all zero:
    /// SplitMix64 is a bijection of its counter, so four successive outputs cannot all be 0).
    #[inline]
    fn seed_from_u64(seed: u64) -> Self {
        let mut x = seed;
        SimRng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// Output of the reference C implementation (xoshiro256plusplus.c) from the state {1, 2, 3, 4}
    /// (also rand_xoshiro's test vector).
    #[test]
    fn matches_the_reference_implementation() {
        let mut seed = [0u8; 32];
        for (i, w) in [1u64, 2, 3, 4].iter().enumerate() {
            seed[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        let mut r = SimRng::from_seed(seed);
        let expected: [u64; 10] = [
            41_943_041,
            58_720_359,
            3_588_806_011_781_223,
            3_591_011_842_654_386,
            9_228_616_714_210_784_205,
            9_973_669_472_204_895_162,
            14_011_001_112_246_962_877,
            12_406_186_145_184_390_807,
            15_849_039_046_786_891_736,
            10_450_023_813_501_588_000,
        ];
        for e in expected {
            assert_eq!(r.next_u64(), e);
        }
    }

    /// SplitMix64's published first outputs from seed 0 (Vigna's splitmix64.c).
    #[test]
    fn splitmix_matches_the_reference() {
        let mut x = 0u64;
        assert_eq!(splitmix64(&mut x), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut x), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix64(&mut x), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn zero_seed_is_not_stuck() {
        let mut r = SimRng::from_seed([0; 32]);
        assert_ne!(r.next_u64() | r.next_u64(), 0);
    }

    /// Uniform draws (what the engine draws through `rand`): mean 1/2, variance 1/12, every eighth of [0, 1) about equally often, and
    /// bits of neighbouring seeds uncorrelated (streams of consecutive sessions are independent).
    #[test]
    fn uniform_draws_are_uniform() {
        let n = 200_000;
        let mut r = SimRng::seed_from_u64(42);
        let mut bins = [0u32; 8];
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            let u = r.random::<f64>();
            assert!((0.0..1.0).contains(&u));
            sum += u;
            sq += u * u;
            bins[(u * 8.0) as usize] += 1;
        }
        let mean = sum / f64::from(n);
        let var = sq / f64::from(n) - mean * mean;
        assert!((mean - 0.5).abs() < 0.003, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 0.001, "variance {var}");
        // Chi-square with 7 degrees of freedom: 24.3 is its 99.9th percentile.
        let expect = f64::from(n) / 8.0;
        let chi2: f64 = bins
            .iter()
            .map(|&b| (f64::from(b) - expect).powi(2) / expect)
            .sum();
        assert!(chi2 < 24.3, "chi-square {chi2}, bins {bins:?}");

        // First draws of seeds 0..n: the correlation of neighbours is near 0.
        let firsts: Vec<f64> = (0..20_000u64)
            .map(|s| SimRng::seed_from_u64(s).random::<f64>() - 0.5)
            .collect();
        let cov: f64 = firsts.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / 19_999.0;
        assert!(
            (cov * 12.0).abs() < 0.03,
            "neighbour correlation {}",
            cov * 12.0
        );
    }
}
