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
