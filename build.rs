//! Compiles o200k_base into tables the tokenizer searches in place (feature `tokenizers`).
//!
//! tiktoken-rs (a build-dependency, MIT) embeds OpenAI's o200k_base vocabulary; reading it into hash
//! maps took every pcsim process a third of a second of CPU and 48 MB. Here it is read once, at build
//! time, and written to OUT_DIR in the layout of `src/model/vocab_table.rs` (token bytes, offsets
//! and a hash table of ranks), which `src/model/tokenizer.rs` `include_bytes!`s, together with the
//! vocabulary's pre-tokenizer pattern.

#[cfg(feature = "tokenizers")]
#[path = "src/model/vocab_table.rs"]
#[allow(dead_code)]
mod vocab_table;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/model/vocab_table.rs");
    #[cfg(feature = "tokenizers")]
    o200k::write();
}

#[cfg(feature = "tokenizers")]
mod o200k {
    use std::path::PathBuf;

    use super::vocab_table::{hash, slot_of, tag_of, EMPTY, RANK_BITS};

    /// o200k_base's ordinary tokens in rank order (ranks are 0..n; the special tokens, which
    /// tiktoken-rs decodes too, sit above them and are left out).
    fn tokens() -> Vec<Vec<u8>> {
        let core = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base loads");
        let specials = core.special_tokens();
        let mut tokens = Vec::new();
        while let Ok(bytes) = core.decode_bytes(&[tokens.len() as u32]) {
            if specials.contains(String::from_utf8_lossy(&bytes).as_ref()) {
                break;
            }
            tokens.push(bytes);
        }
        // Every rank above the last ordinary token is a special token or absent.
        for rank in tokens.len() as u32..1 << RANK_BITS {
            if let Ok(bytes) = core.decode_bytes(&[rank]) {
                assert!(
                    specials.contains(String::from_utf8_lossy(&bytes).as_ref()),
                    "o200k_base: ordinary rank {rank} after a gap"
                );
            }
        }
        tokens
    }

    pub(super) fn write() {
        let tokens = tokens();
        let n = tokens.len();
        assert!(n > 0 && n < (1 << RANK_BITS) - 1, "o200k_base: {n} tokens");
        let mut bytes = Vec::new();
        let mut offsets = Vec::with_capacity(4 * (n + 1));
        for t in &tokens {
            offsets.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            bytes.extend_from_slice(t);
        }
        offsets.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        // At least a fifth of the slots empty (o200k: 24%, 1 MiB of slots): a probe for a piece
        // that is no token (most of a merge's look-ups) then runs ~9 slots on average, one or two
        // cache lines, and compares bytes only on a matching tag.
        let slot_bits = (n * 5 / 4).next_power_of_two().trailing_zeros();
        let mut slots = vec![EMPTY; 1 << slot_bits];
        for (rank, t) in tokens.iter().enumerate() {
            let h = hash(t);
            let mut at = slot_of(h, slot_bits);
            while slots[at] != EMPTY {
                at = (at + 1) & (slots.len() - 1);
            }
            slots[at] = rank as u32 | tag_of(h);
        }
        let slots: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let write = |name: &str, data: &[u8]| {
            std::fs::write(out.join(name), data)
                .unwrap_or_else(|e| panic!("writing {name} to OUT_DIR: {e}"))
        };
        write("o200k.bytes", &bytes);
        write("o200k.offsets", &offsets);
        write("o200k.slots", &slots);
        write(
            "o200k.rs",
            format!(
                "/// Ordinary tokens of o200k_base.\n\
                 const O200K_TOKENS: usize = {n};\n\
                 /// Bits of a slot index of o200k_base's hash table.\n\
                 const O200K_SLOT_BITS: u32 = {slot_bits};\n\
                 /// o200k_base's pre-tokenizer, as tiktoken-rs gives it.\n\
                 const O200K_PATTERN: &str = {:?};\n",
                tiktoken_rs::O200K_BASE_PAT_STR
            )
            .as_bytes(),
        );
    }
}
