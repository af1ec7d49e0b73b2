//! JSON text re-indented without parsing it into a map, so a captured tool keeps the server's own
//! key order and number and string spelling.

/// Re-indents valid JSON text the way `serde_json::to_string_pretty` does (two spaces, `": "`,
/// `[]` and `{}` for empty containers) without parsing it into a map, so keys keep their order and
/// strings and numbers their spelling.
pub(crate) fn pretty_json_text(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len() * 2);
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.push_str(&raw[start..i]);
                continue;
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&close) {
                    out.push(c as char);
                    out.push(close as char);
                    i = j + 1;
                    continue;
                }
                out.push(c as char);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            _ => {
                let start = i;
                while i < b.len() && !b"{}[],:\" \t\r\n".contains(&b[i]) {
                    i += 1;
                }
                out.push_str(&raw[start..i]);
                continue;
            }
        }
        i += 1;
    }
    out
}
