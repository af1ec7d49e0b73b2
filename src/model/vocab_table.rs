//! The layout of a BPE vocabulary compiled into pcsim, shared by `build.rs` (which writes it, included
//! there with `#[path]`) and the tokenizer (which reads it in place): nothing here may name the crate.
//!
//! Three little-endian byte arrays, each `include_bytes!`'d:
//! - `bytes`: every token's bytes, one after the other in rank order;
//! - `offsets`: `tokens + 1` `u32`s, token `r` being `bytes[offsets[r]..offsets[r + 1]]`;
//! - `slots`: an open-addressing hash table of `1 << slot_bits` `u32`s (linear probing from
//!   [`slot_of`]); a slot holds a rank in its low [`RANK_BITS`] bits and a tag of the token's hash in
//!   the others ([`tag_of`]), so that a probe compares bytes only when the tags agree; [`EMPTY`] ends
//!   a probe.
//!
//! The table is searched where the binary maps it: a process reads only the pages its look-ups touch,
//! and builds nothing.

/// Bits of a slot that hold the rank (o200k_base has 199,998 tokens, below `1 << 18`).
pub(crate) const RANK_BITS: u32 = 18;

/// A slot no token occupies.
pub(crate) const EMPTY: u32 = u32::MAX;

/// The hash of a token's bytes: 64-bit words multiplied in, then murmur3's finaliser, so that both the
/// slot (low bits) and the tag (high bits) depend on every byte. Fixed here, not `std`'s randomised
/// hasher: the table is built by one process and read by another.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = K ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The first slot probed for a hash, in a table of `1 << slot_bits` slots.
pub(crate) fn slot_of(hash: u64, slot_bits: u32) -> usize {
    (hash & ((1u64 << slot_bits) - 1)) as usize
}

/// A hash's tag, already shifted to where a slot keeps it (the bits above the rank).
pub(crate) fn tag_of(hash: u64) -> u32 {
    ((hash >> (64 - (32 - RANK_BITS))) as u32) << RANK_BITS
}
