//! JSON with comments and trailing commas (JSONC, as VS Code and Zed write it) made plain JSON.

/// Removes `//` and `/* */` comments and trailing commas outside strings (JSONC), keeping line
/// breaks so error positions still point at the right line.
pub(crate) fn strip_jsonc(text: &str) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
        } else if c == b'"' {
            in_str = true;
            out.push(c);
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push(b'\n');
                }
                i += 1;
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Trailing commas: a comma followed only by whitespace before `}` or `]`.
    let mut res: Vec<u8> = Vec::with_capacity(out.len());
    let mut in_str = false;
    let mut k = 0;
    while k < out.len() {
        let c = out[k];
        if in_str {
            res.push(c);
            if c == b'\\' && k + 1 < out.len() {
                res.push(out[k + 1]);
                k += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
            res.push(c);
        } else if c == b',' {
            let next = out[k + 1..]
                .iter()
                .find(|x| !x.is_ascii_whitespace())
                .copied();
            if !matches!(next, Some(b'}') | Some(b']')) {
                res.push(c);
            }
        } else {
            res.push(c);
        }
        k += 1;
    }
    String::from_utf8(res).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
