//! A small, stable content hash (FNV-1a, 64 bit). Stable across Rust versions and platforms, so
//! prompt identities, and therefore results, never change with the toolchain.

/// FNV-1a computed as bytes are written ([`fnv1a`] of everything written), so that a serializer can
/// hash what it would have written to a string without the string.
pub(crate) struct Fnv1aWriter(pub(crate) u64);

impl Default for Fnv1aWriter {
    fn default() -> Self {
        Fnv1aWriter(fnv1a(b""))
    }
}

impl std::io::Write for Fnv1aWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for b in buf {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// FNV-1a over bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A content fingerprint of bytes, eight at a step (FNV-1a takes one): for large texts such as
/// the messages of a trace, hashed on every call that re-sends them. Stable across Rust versions
/// and platforms like [`fnv1a`], but a different function: never compare the two.
pub(crate) fn fingerprint(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(31);
    }
    let rest = chunks.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    chain(h, bytes.len() as u64)
}

/// Combines a running prefix hash with the next segment's identity.
#[inline]
pub(crate) fn chain(prefix: u64, next: u64) -> u64 {
    let mut h = prefix ^ 0x9e37_79b9_7f4a_7c15;
    h = h.wrapping_mul(0x0000_0100_0000_01b3) ^ next;
    // splitmix64 finaliser: good avalanche for cheap.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A `HashMap` with rustc's fast `FxHasher` (rustc-hash), for in-memory maps keyed by short
/// strings and numbers (a log's session ids, response ids, conversation numbers). Not for anything
/// an adversary chooses to collide, nor for results: a map using it is only looked up, or its
/// entries sorted before use, so no output depends on its order.
pub(crate) type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A `HashSet` with the same hasher as [`FastMap`].
pub(crate) type FastSet<K> = rustc_hash::FxHashSet<K>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Fingerprints tell apart texts that differ in one byte anywhere, or only in length.
    #[test]
    fn fingerprints_differ_on_any_byte() {
        let base: Vec<u8> = (0..100u8).collect();
        let f = fingerprint(&base);
        for i in 0..base.len() {
            let mut b = base.clone();
            b[i] ^= 1;
            assert_ne!(fingerprint(&b), f, "byte {i}");
        }
        assert_ne!(fingerprint(&base[..99]), f);
        assert_ne!(fingerprint(b"a\0"), fingerprint(b"a"));
        assert_eq!(fingerprint(&base), f);
    }

    /// The fast map finds what was put in it, keys of every length up to past two words apart.
    #[test]
    fn fast_map_finds_every_key() {
        let keys: Vec<String> = (0..40).map(|n| "k".repeat(n)).collect();
        let mut m: FastMap<&str, usize> = FastMap::default();
        for (i, k) in keys.iter().enumerate() {
            assert!(
                m.insert(k.as_str(), i).is_none(),
                "key {k:?} collided with another"
            );
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(k.as_str()), Some(&i));
        }
        assert_eq!(m.get("absent"), None);
    }
}
