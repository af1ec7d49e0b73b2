//! The entries of a HAR archive cut out of its text without parsing the archive: a scanner reads it
//! in the chunks of a buffered reader, tracks JSON strings (and their escapes) and bracket depth,
//! follows the keys of the two outer objects to `log.entries`, and hands on each element of that
//! array as its own text, at most a limit of bytes (a longer entry is passed over and its length
//! counted, never held). Everything else (`log.pages`, `log.creator`, other keys) is passed over
//! the same way, without being kept. Memory is one entry and the reader's buffer, whatever the
//! archive's size; each entry is then parsed on its own (`har.rs`), so a bad one costs only itself.
//!
//! The outer structure (the two objects and the array, their keys, colons and commas) is checked as
//! it is read; a value passed over, and an entry, are only cut by their brackets (the entry's parse
//! checks its text).

use std::io::BufRead;

/// What the scanner found next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Scan {
    /// An entry, whole: its text is [`EntryScanner::entry`], its number [`EntryScanner::index`].
    Entry,
    /// An entry of `len` bytes, more than the limit: passed over, not held.
    TooLong {
        /// The entry's length in bytes.
        len: u64,
    },
    /// The archive ended inside entry [`EntryScanner::index`], `len` bytes after its start.
    EndsInsideEntry {
        /// Bytes of the entry read before the end.
        len: u64,
    },
    /// The archive ended outside an entry, before its closing brackets.
    EndsEarly,
    /// The archive's outer structure is not JSON of a HAR's shape here (the reason); nothing more
    /// is read.
    Bad(String),
    /// The archive's closing brace: nothing after it is read.
    End,
}

/// An open container of the outer structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// The archive's object.
    Top,
    /// The `log` object.
    Log,
    /// The `log.entries` array.
    Entries,
}

/// The outer token expected next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The archive's opening brace.
    Root,
    /// A key or `}` (after `{`).
    KeyOrClose,
    /// A key (after `,` in an object).
    Key,
    /// `:` after a key.
    Colon,
    /// A value (after `:`, or `,` in the entries).
    Value,
    /// A value or `]` (after `[`).
    ValueOrClose,
    /// `,` or the container's closing bracket (after a value).
    CommaOrClose,
}

/// What the bytes being read are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The outer structure: one token at a time.
    Outer,
    /// A key of an outer object.
    Key,
    /// A value passed over.
    Skip,
    /// An entry, kept.
    Entry,
}

/// The key just read, as far as the outer structure cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyIs {
    /// `log` in the archive's object.
    Log,
    /// `entries` in the `log` object.
    Entries,
    /// Any other.
    Other,
}

/// Longest key compared (longer keys are none of those the scanner follows).
const KEY_BYTES: usize = 64;

/// Where one JSON value ends: its string and bracket state across chunks.
#[derive(Debug, Clone, Copy, Default)]
struct ValueEnd {
    started: bool,
    depth: u64,
    in_string: bool,
    escaped: bool,
    scalar: bool,
}

impl ValueEnd {
    /// Reads `chunk` up to the end of the value; returns the bytes that belong to it and whether
    /// it ended there. A number or literal ends before the byte that ends it (not consumed).
    fn scan(&mut self, chunk: &[u8]) -> (usize, bool) {
        let mut i = 0;
        if !self.started {
            let Some(&first) = chunk.first() else {
                return (0, false);
            };
            self.started = true;
            match first {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth = 1,
                _ => self.scalar = true,
            }
            i = 1;
        }
        while i < chunk.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // The next quote or backslash: the rest of a string is passed in one step.
                match chunk[i..].iter().position(|&b| b == b'"' || b == b'\\') {
                    None => return (chunk.len(), false),
                    Some(k) => {
                        i += k;
                        if chunk[i] == b'\\' {
                            self.escaped = true;
                        } else {
                            self.in_string = false;
                            if self.depth == 0 {
                                return (i + 1, true);
                            }
                        }
                        i += 1;
                    }
                }
                continue;
            }
            let b = chunk[i];
            if self.scalar {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    return (i, true);
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return (i + 1, true);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        (chunk.len(), false)
    }
}

/// Cuts `log.entries[i]` out of a HAR archive, one at a time ([`EntryScanner::next`]).
#[derive(Debug)]
pub(super) struct EntryScanner {
    /// Longest entry kept, in bytes.
    limit: usize,
    /// Entries begun so far: the current entry's number (from 1).
    index: usize,
    /// Bytes consumed from the input.
    offset: u64,
    /// `offset` when the last entry ended.
    entry_done_at: u64,
    /// Bytes from the end of the entry before the last one to the end of the last one.
    share: u64,
    /// Where the current entry starts in the input.
    entry_start: u64,
    /// The current entry's text (emptied once it is over the limit).
    entry: Vec<u8>,
    /// The current entry's length so far.
    entry_len: u64,
    /// Whether the current entry is over the limit.
    over: bool,
    frames: Vec<Frame>,
    expect: Expect,
    mode: Mode,
    key: Vec<u8>,
    key_escaped: bool,
    key_is: KeyIs,
    value: ValueEnd,
    /// Whether a final [`Scan`] was given (end, truncation, bad structure).
    done: bool,
}

/// What an outer byte did.
enum Outer {
    /// It was a token of the outer structure: consumed.
    Token,
    /// It starts a value (passed over or an entry): left for the value's scan.
    Value,
    /// The scan ends here (after this byte).
    Stop(Scan),
}

impl EntryScanner {
    /// A scanner that keeps entries of at most `limit` bytes.
    pub(super) fn new(limit: usize) -> EntryScanner {
        EntryScanner {
            limit,
            index: 0,
            offset: 0,
            entry_done_at: 0,
            share: 0,
            entry_start: 0,
            entry: Vec::new(),
            entry_len: 0,
            over: false,
            frames: Vec::new(),
            expect: Expect::Root,
            mode: Mode::Outer,
            key: Vec::new(),
            key_escaped: false,
            key_is: KeyIs::Other,
            value: ValueEnd::default(),
            done: false,
        }
    }

    /// The text of the entry [`Scan::Entry`] announced.
    pub(super) fn entry(&self) -> &[u8] {
        &self.entry
    }

    /// The number (from 1) of the entry last begun.
    pub(super) fn index(&self) -> usize {
        self.index
    }

    /// Bytes read from the input so far.
    pub(super) fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the entry last begun starts in the input (bytes from its start).
    pub(super) fn entry_start(&self) -> u64 {
        self.entry_start
    }

    /// The last entry's share of the input: from the end of the entry before it (or the start) to
    /// its own end.
    pub(super) fn entry_bytes(&self) -> u64 {
        self.share
    }

    /// Reads `input` to the next entry or the end. After a final scan ([`Scan::End`],
    /// [`Scan::Bad`], a truncation), [`Scan::End`] again, with nothing read.
    pub(super) fn next(&mut self, input: &mut dyn BufRead) -> std::io::Result<Scan> {
        if self.done {
            return Ok(Scan::End);
        }
        loop {
            let chunk = input.fill_buf()?;
            if chunk.is_empty() {
                self.done = true;
                return Ok(match self.mode {
                    Mode::Entry => Scan::EndsInsideEntry {
                        len: self.entry_len,
                    },
                    _ => Scan::EndsEarly,
                });
            }
            let (used, found) = self.step(chunk);
            input.consume(used);
            self.offset += used as u64;
            if let Some(scan) = found {
                if matches!(scan, Scan::Entry | Scan::TooLong { .. }) {
                    self.share = self.offset - self.entry_done_at;
                    self.entry_done_at = self.offset;
                } else {
                    self.done = true;
                }
                return Ok(scan);
            }
        }
    }

    /// Reads `chunk` until an entry ends, the scan stops, or the chunk is used up; returns the
    /// bytes used and what was found.
    fn step(&mut self, chunk: &[u8]) -> (usize, Option<Scan>) {
        let mut i = 0;
        while i < chunk.len() {
            match self.mode {
                Mode::Skip | Mode::Entry => {
                    let (n, ended) = self.value.scan(&chunk[i..]);
                    if self.mode == Mode::Entry {
                        self.keep(&chunk[i..i + n]);
                    }
                    i += n;
                    if ended {
                        let was = self.mode;
                        self.mode = Mode::Outer;
                        self.expect = Expect::CommaOrClose;
                        if was == Mode::Entry {
                            let scan = if self.over {
                                Scan::TooLong {
                                    len: self.entry_len,
                                }
                            } else {
                                Scan::Entry
                            };
                            return (i, Some(scan));
                        }
                    }
                }
                Mode::Key => {
                    let rest = &chunk[i..];
                    let mut end = None;
                    for (k, &b) in rest.iter().enumerate() {
                        if self.key_escaped {
                            self.key_escaped = false;
                        } else if b == b'\\' {
                            self.key_escaped = true;
                        } else if b == b'"' {
                            end = Some(k);
                            break;
                        }
                    }
                    let taken = end.unwrap_or(rest.len());
                    let room = KEY_BYTES.saturating_sub(self.key.len());
                    self.key.extend_from_slice(&rest[..taken.min(room + 1)]);
                    match end {
                        Some(k) => {
                            i += k + 1;
                            self.key_is = self.key_is();
                            self.mode = Mode::Outer;
                            self.expect = Expect::Colon;
                        }
                        None => i = chunk.len(),
                    }
                }
                Mode::Outer => {
                    let b = chunk[i];
                    if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                        i += 1;
                        continue;
                    }
                    match self.outer(b, self.offset + i as u64) {
                        Outer::Token => i += 1,
                        Outer::Value => {}
                        Outer::Stop(scan) => return (i + 1, Some(scan)),
                    }
                }
            }
        }
        (chunk.len(), None)
    }

    /// Adds `bytes` to the current entry, or only counts them once it is over the limit.
    fn keep(&mut self, bytes: &[u8]) {
        self.entry_len += bytes.len() as u64;
        if self.over {
            return;
        }
        if self.entry.len() + bytes.len() > self.limit {
            self.over = true;
            self.entry.clear();
            return;
        }
        self.entry.extend_from_slice(bytes);
    }

    /// Which key was just read (in the object it was read in).
    fn key_is(&self) -> KeyIs {
        let wanted: &[u8] = match self.frames.last() {
            Some(Frame::Top) => b"log",
            Some(Frame::Log) => b"entries",
            _ => return KeyIs::Other,
        };
        let same = if self.key.contains(&b'\\') && self.key.len() <= KEY_BYTES {
            // An escaped key (`"\u006cog"`) is compared decoded.
            let mut quoted = Vec::with_capacity(self.key.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(&self.key);
            quoted.push(b'"');
            serde_json::from_slice::<String>(&quoted).is_ok_and(|k| k.as_bytes() == wanted)
        } else {
            self.key == wanted
        };
        match (same, self.frames.last()) {
            (true, Some(Frame::Top)) => KeyIs::Log,
            (true, _) => KeyIs::Entries,
            (false, _) => KeyIs::Other,
        }
    }

    /// One byte of the outer structure (not whitespace), at `at` in the input.
    fn outer(&mut self, b: u8, at: u64) -> Outer {
        let frame = self.frames.last().copied();
        let in_object = matches!(frame, Some(Frame::Top | Frame::Log));
        let starts_value = matches!(
            b,
            b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        );
        match (self.expect, b) {
            (Expect::Root, b'{') => {
                self.frames.push(Frame::Top);
                self.expect = Expect::KeyOrClose;
                Outer::Token
            }
            (Expect::KeyOrClose | Expect::Key, b'"') if in_object => {
                self.key.clear();
                self.key_escaped = false;
                self.mode = Mode::Key;
                Outer::Token
            }
            (Expect::Colon, b':') => {
                self.expect = Expect::Value;
                Outer::Token
            }
            (Expect::CommaOrClose, b',') => {
                self.expect = if in_object {
                    Expect::Key
                } else {
                    Expect::Value
                };
                Outer::Token
            }
            (Expect::KeyOrClose | Expect::CommaOrClose, b'}') if in_object => self.close(),
            (Expect::ValueOrClose | Expect::CommaOrClose, b']') if !in_object => self.close(),
            (Expect::Value | Expect::ValueOrClose, _) if starts_value => self.value_starts(b, at),
            (expect, _) => {
                let wanted = match expect {
                    Expect::Root => "the archive's `{`",
                    Expect::KeyOrClose => "a key or `}`",
                    Expect::Key => "a key",
                    Expect::Colon => "`:`",
                    Expect::Value => "a value",
                    Expect::ValueOrClose => "an entry or `]`",
                    Expect::CommaOrClose if in_object => "`,` or `}`",
                    Expect::CommaOrClose => "`,` or `]`",
                };
                Outer::Stop(Scan::Bad(format!(
                    "expected {wanted}, found `{}` at byte {at}",
                    char::from(b).escape_default()
                )))
            }
        }
    }

    /// A value starts with `b` (at `at`): `log`'s object and its `entries` array are entered, an
    /// entry is kept, anything else passed over.
    fn value_starts(&mut self, b: u8, at: u64) -> Outer {
        if self.frames.last() == Some(&Frame::Entries) {
            self.index += 1;
            self.entry_start = at;
            self.entry.clear();
            self.entry_len = 0;
            self.over = false;
            self.value = ValueEnd::default();
            self.mode = Mode::Entry;
            return Outer::Value;
        }
        match (self.key_is, b) {
            (KeyIs::Log, b'{') => {
                self.frames.push(Frame::Log);
                self.expect = Expect::KeyOrClose;
                Outer::Token
            }
            (KeyIs::Entries, b'[') => {
                self.frames.push(Frame::Entries);
                self.expect = Expect::ValueOrClose;
                Outer::Token
            }
            (KeyIs::Log, _) => {
                Outer::Stop(Scan::Bad(format!("`log` is not an object (at byte {at})")))
            }
            (KeyIs::Entries, _) => Outer::Stop(Scan::Bad(format!(
                "`log.entries` is not an array (at byte {at})"
            ))),
            (KeyIs::Other, _) => {
                self.value = ValueEnd::default();
                self.mode = Mode::Skip;
                Outer::Value
            }
        }
    }

    /// The open container closes: the archive ends when it is the archive's object.
    fn close(&mut self) -> Outer {
        self.frames.pop();
        self.key_is = KeyIs::Other;
        self.expect = Expect::CommaOrClose;
        if self.frames.is_empty() {
            Outer::Stop(Scan::End)
        } else {
            Outer::Token
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// A reader that hands its text on in pieces of pseudo-random sizes 1..=`max` (a seeded
    /// linear congruential generator), so that chunk borders fall everywhere.
    struct Pieces<'a> {
        text: &'a [u8],
        at: usize,
        piece: usize,
        max: usize,
        state: u64,
    }

    impl<'a> Pieces<'a> {
        fn new(text: &'a [u8], max: usize, seed: u64) -> Pieces<'a> {
            let mut p = Pieces {
                text,
                at: 0,
                piece: 0,
                max,
                state: seed.wrapping_mul(6_364_136_223_846_793_005) | 1,
            };
            p.next_piece();
            p
        }
        fn next_piece(&mut self) {
            self.state = self
                .state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.piece = 1 + (self.state >> 33) as usize % self.max;
        }
    }

    impl std::io::Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let chunk = std::io::BufRead::fill_buf(self)?;
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            std::io::BufRead::consume(self, n);
            Ok(n)
        }
    }

    impl BufRead for Pieces<'_> {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            let end = (self.at + self.piece).min(self.text.len());
            Ok(&self.text[self.at..end])
        }
        fn consume(&mut self, n: usize) {
            self.at += n;
            self.piece -= n;
            if self.piece == 0 {
                self.next_piece();
            }
        }
    }

    /// Every scan of `input` up to the first final one, with each entry's text.
    fn scan_all(input: &mut dyn BufRead, limit: usize) -> (Vec<(Scan, Vec<u8>)>, u64) {
        let mut s = EntryScanner::new(limit);
        let mut out = Vec::new();
        loop {
            let scan = s.next(input).unwrap();
            let text = if scan == Scan::Entry {
                s.entry().to_vec()
            } else {
                Vec::new()
            };
            let last = !matches!(scan, Scan::Entry | Scan::TooLong { .. });
            out.push((scan, text));
            if last {
                return (out, s.offset());
            }
        }
    }

    /// Strings that end a naive scanner early or late: brackets, escaped quotes and backslashes
    /// (a backslash before a quote, an escaped backslash before the closing quote), unicode.
    const NASTY: [&str; 8] = [
        r#"{\"a\": [1, {\"b\": \"}]\"}]}"#,
        r#"ends in a backslash \\"#,
        r#"\\\"quoted\\\" and \\\\"#,
        r#"]]]}}}[[[{{{"#,
        r#"\u005d\u007d \ud83d\ude00 caf\u00e9"#,
        r#"data: {\"type\":\"message_start\"}\r\n\r\n"#,
        "",
        r#"\"\"\"\\"#,
    ];

    /// A HAR with the nasty strings everywhere: bodies, header values, keys, a `pages` array of
    /// nested values and keys before and after `log` and `entries` (one of them escaped).
    fn archive() -> String {
        let mut entries = Vec::new();
        for (i, s) in NASTY.iter().enumerate() {
            entries.push(format!(
                r#"{{"startedDateTime": "2026-01-01T00:00:{i:02}Z", "request": {{"method": "POST", "url": "https://api.anthropic.com/v1/messages", "headers": [{{"name": "x-{i}", "value": "{s}"}}], "postData": {{"text": "{s}"}}}}, "response": {{"status": 200, "content": {{"text": "{s}", "size": -1.5e3}}}}, "cache": {{}}, "{s}": ["{s}", [], {{}}, null, true, false, 0]}}"#
            ));
        }
        entries.push("7".into());
        entries.push(format!(r#""{}""#, NASTY[1]));
        entries.push("[]".into());
        format!(
            "{{\n \"log\" : {{\"version\":\"1.2\",\"creator\":{{\"name\":\"{}\",\"n\":[1,[2,{{\"x\":\"]\"}}]]}},\r\n\t\"pages\":[{{\"title\":\"{}\"}}],\"\\u0065ntries\":[\n{}\n] ,\"comment\":\"{}\"}},\"extra\":[\"{}\"] }}\n",
            NASTY[0],
            NASTY[3],
            entries.join(" ,\n  "),
            NASTY[2],
            NASTY[7]
        )
    }

    /// The entries serde_json finds in the archive.
    fn expected(text: &str) -> Vec<Value> {
        let v: Value = serde_json::from_str(text).unwrap();
        v["log"]["entries"].as_array().unwrap().clone()
    }

    fn check(got: &[(Scan, Vec<u8>)], text: &str, want: &[Value], how: &str) {
        assert_eq!(got.len(), want.len() + 1, "{how}: {got:?}");
        for ((scan, entry), w) in got.iter().zip(want) {
            assert_eq!(*scan, Scan::Entry, "{how}");
            let entry = std::str::from_utf8(entry).unwrap();
            assert!(text.contains(entry), "{how}: {entry}");
            let parsed: Value = serde_json::from_str(entry).unwrap();
            assert_eq!(&parsed, w, "{how}");
        }
        assert_eq!(got.last().unwrap().0, Scan::End, "{how}");
    }

    #[test]
    fn entries_are_the_same_whatever_the_chunk_borders() {
        let text = archive();
        let want = expected(&text);
        assert_eq!(want.len(), NASTY.len() + 3);
        // The closing brace ends the scan: the newline after it is not read.
        let closing = text.trim_end().len() as u64;
        for size in 1..=64 {
            let mut r = std::io::BufReader::with_capacity(size, text.as_bytes());
            let (got, read) = scan_all(&mut r, 1 << 20);
            check(&got, &text, &want, &format!("chunks of {size}"));
            assert_eq!(read, closing, "chunks of {size}");
        }
        for seed in 0..300 {
            let mut r = Pieces::new(text.as_bytes(), 1 + seed as usize % 64, seed);
            let (got, read) = scan_all(&mut r, 1 << 20);
            check(&got, &text, &want, &format!("random pieces, seed {seed}"));
            assert_eq!(read, closing, "seed {seed}");
        }
    }

    #[test]
    fn an_archive_cut_anywhere_gives_the_entries_before_the_cut_then_says_where() {
        let text = archive();
        let want = expected(&text);
        let closing = text.trim_end().len();
        for cut in 1..closing {
            let part = &text.as_bytes()[..cut];
            let mut r = Pieces::new(part, 1 + cut % 17, cut as u64);
            let (got, _) = scan_all(&mut r, 1 << 20);
            let (last, entries) = got.split_last().unwrap();
            for ((scan, entry), w) in entries.iter().zip(&want) {
                assert_eq!(*scan, Scan::Entry, "cut at {cut}");
                assert_eq!(&serde_json::from_slice::<Value>(entry).unwrap(), w);
            }
            assert!(entries.len() <= want.len(), "cut at {cut}");
            assert!(
                matches!(last.0, Scan::EndsInsideEntry { .. } | Scan::EndsEarly),
                "cut at {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn an_entry_over_the_limit_is_passed_over_and_the_next_one_read() {
        let long = format!(
            r#"{{"request": {{"postData": {{"text": "{}"}}}}}}"#,
            "x]\\\"".repeat(100)
        );
        let short = r#"{"request": {"method": "GET"}}"#;
        let text = format!(r#"{{"log": {{"entries": [{short}, {long}, {short}]}}}}"#);
        for size in [1, 7, 64, 4096] {
            let mut r = std::io::BufReader::with_capacity(size, text.as_bytes());
            let (got, _) = scan_all(&mut r, 100);
            let scans: Vec<&Scan> = got.iter().map(|(s, _)| s).collect();
            assert_eq!(
                scans,
                [
                    &Scan::Entry,
                    &Scan::TooLong {
                        len: long.len() as u64
                    },
                    &Scan::Entry,
                    &Scan::End
                ],
                "chunks of {size}"
            );
            assert_eq!(got[2].1, short.as_bytes());
        }
    }

    #[test]
    fn a_broken_outer_structure_stops_with_the_place() {
        let cases = [
            (
                r#"{"log": {"entries": [{"a": 1} {"b": 2}]}}"#,
                "expected `,` or `]`, found `{` at byte 30",
            ),
            (
                r#"{"log": {"entries": [{"a": 1}}}"#,
                "expected `,` or `]`, found `}` at byte 29",
            ),
            (
                r#"{"log": {"entries": {"a": 1}}}"#,
                "`log.entries` is not an array (at byte 20)",
            ),
            (r#"{"log": [1]}"#, "`log` is not an object (at byte 8)"),
            (
                r#"{"log" {"entries": []}}"#,
                "expected `:`, found `{` at byte 7",
            ),
            (
                r#"{"log": {"entries": [1,]}}"#,
                "expected a value, found `]` at byte 23",
            ),
        ];
        for (text, why) in cases {
            let mut r = std::io::BufReader::with_capacity(3, text.as_bytes());
            let (got, _) = scan_all(&mut r, 1 << 20);
            assert_eq!(got.last().unwrap().0, Scan::Bad(why.into()), "{text}");
        }
    }
}
