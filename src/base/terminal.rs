//! Text from untrusted inputs (tool names and descriptions, model ids, scenario names, a server's
//! stderr) made safe for a terminal: control characters, escape sequences and bidirectional
//! overrides are shown as `\u{..}` instead of being obeyed by the terminal.

use std::borrow::Cow;

/// True for a character a terminal would act on rather than show: C0 controls (but newline and tab),
/// DEL, C1 controls (U+0080 to U+009F, some terminals read U+009B as CSI), and the bidirectional
/// embedding, override and isolate characters that reorder what is shown.
fn is_unsafe(c: char, keep_layout: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_layout,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' => true,
        _ => false,
    }
}

fn escape_with(text: &str, keep_layout: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c, keep_layout)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c, keep_layout) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every character a terminal would obey (see above) written as `\u{1b}` and the like;
/// newlines and tabs are kept (the layout of a report).
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, true)
}

/// Like [`escape`], also writing newlines and tabs as `\u{a}` and `\u{9}`: for one cell or one name,
/// which must stay on its line.
pub(crate) fn escape_inline(text: &str) -> Cow<'_, str> {
    escape_with(text, false)
}

/// A writer that escapes ([`escape`]) everything written through it, for a terminal. Bytes of a
/// character split between two writes are held until the rest arrives; bytes that are not UTF-8 are
/// shown as `\x..`.
pub(crate) struct EscapingWriter<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> EscapingWriter<W> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: W) -> Self {
        EscapingWriter {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for EscapingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(&escape(s));
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // Valid by construction.
                    out.push_str(&escape(std::str::from_utf8(good).unwrap_or_default()));
                    match e.error_len() {
                        Some(n) => {
                            for b in &bad[..n] {
                                out.push_str(&format!("\\x{b:02x}"));
                            }
                            rest = &bad[n..];
                        }
                        // An incomplete character at the end: wait for the next write.
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        let keep = rest.to_vec();
        self.pending = keep;
        self.inner.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        assert_eq!(escape("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\n");
        assert_eq!(escape_inline("x\ny\u{202e}"), "x\\u{a}y\\u{202e}");
        assert!(matches!(escape("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_writer_escapes_across_split_characters() {
        let mut w = EscapingWriter::new(Vec::new());
        let text = "é\u{1b}]0;title\u{7}".as_bytes();
        w.write_all(&text[..1]).unwrap();
        w.write_all(&text[1..]).unwrap();
        w.write_all(b"\xff").unwrap();
        assert_eq!(
            String::from_utf8(w.inner).unwrap(),
            "é\\u{1b}]0;title\\u{7}\\xff"
        );
    }
}
