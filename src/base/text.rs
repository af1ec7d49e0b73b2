//! Text formatting shared by every report: dollars, CSV fields and aligned tables. Pure functions
//! of their arguments, so both the analyses (which render their own reports) and the report layer
//! use them without depending on each other.

use std::fmt::Write as _;

/// Decimal places of every dollar amount pcsim prints, in text, tables, reports and CSV: a millionth
/// of a dollar, the cost of one token at $1 per million tokens, so that per-call figures of cheap
/// models keep their digits and a column of amounts lines up on the decimal point. (JSON carries
/// full-precision numbers.) The one rule, stated once; [`usd`] and [`usd_number`] apply it.
pub(crate) const USD_DECIMALS: usize = 6;

/// A dollar amount as printed everywhere: `$1.234567`, `-$0.012300` (the sign in front).
/// Differences follow one convention: savings are positive, extra costs negative.
pub fn usd(x: f64) -> String {
    let n = usd_number(x);
    match n.strip_prefix('-') {
        Some(abs) => format!("-${abs}"),
        None => format!("${n}"),
    }
}

/// A dollar amount without the `$`, for CSV fields: the same [`USD_DECIMALS`] as [`usd`]. A value
/// that rounds to zero prints as `0.000000`, never `-0.000000`.
pub(crate) fn usd_number(x: f64) -> String {
    let s = format!("{x:.prec$}", prec = USD_DECIMALS);
    match s.strip_prefix('-') {
        Some(abs) if abs.bytes().all(|b| b == b'0' || b == b'.') => abs.to_string(),
        _ => s,
    }
}

/// A saving as a percentage of a reference (`12.3`, `-4.0` for an extra cost): one decimal, the
/// same sign convention as the dollar savings.
pub(crate) fn saving_percent(x: f64) -> String {
    let s = format!("{x:.1}");
    match s.strip_prefix('-') {
        Some("0.0") => "0.0".into(),
        _ => s,
    }
}

/// Quotes a CSV field when it needs it. Control characters from inputs (an ESC in a catalog id, a
/// C1 CSI in a tool name) are written as `\u{1b}` and the like, so a CSV file shown with `cat` or
/// opened in a spreadsheet cannot drive the terminal; newlines stay (quoted).
pub(crate) fn field(s: &str) -> String {
    let s = crate::base::terminal::escape(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A simple left/right aligned text table.
#[derive(Debug, Default)]
pub(crate) struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl TextTable {
    /// A table with these column headers; `right[i]` right-aligns column i.
    pub(crate) fn new(header: &[&str], right: &[bool]) -> Self {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
        }
    }

    /// Adds a row. Cells are escaped for the terminal ([`crate::base::terminal::escape_inline`]):
    /// a name from an input cannot send escape sequences or break the table's lines.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| match crate::base::terminal::escape_inline(&c) {
                    std::borrow::Cow::Borrowed(_) => c,
                    std::borrow::Cow::Owned(e) => e,
                })
                .collect(),
        );
    }

    /// Renders with two spaces between columns and a rule under the header. Padding is added by
    /// hand: `format!`'s width is limited to 65,535 and a longer name must not panic.
    pub(crate) fn render(&self) -> String {
        let n = self.header.len();
        let mut w = vec![0usize; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, r: &[String]| {
            let mut text = String::new();
            for (i, c) in r.iter().enumerate().take(n) {
                if i > 0 {
                    text.push_str("  ");
                }
                let pad = w[i].saturating_sub(c.chars().count());
                if self.right.get(i).copied().unwrap_or(false) {
                    text.extend(std::iter::repeat_n(' ', pad));
                    text.push_str(c);
                } else {
                    text.push_str(c);
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&mut out, &self.header);
        let _ = writeln!(
            out,
            "{}",
            w.iter()
                .map(|x| "-".repeat(*x))
                .collect::<Vec<_>>()
                .join("  ")
        );
        for r in &self.rows {
            line(&mut out, r);
        }
        out
    }
}

/// The closest candidate to `wanted`, for "did you mean" hints: one whose leading part, up to a
/// separator, `wanted` is (the shortest; `explicit` -> `explicit:tools+system+last`, `gemini` -> a
/// Gemini id, never `implicit` or `o4-mini`, which are merely a few edits away), else the nearest by
/// edit distance within about half the name's length.
pub(crate) fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let lower = wanted.to_lowercase();
    if lower.chars().count() >= 3 {
        let extends = candidates
            .iter()
            .copied()
            .filter(|c| {
                // `wanted` is a whole leading part of the name, ended by a separator (`:`, `-`,
                // `.`, `@`): `explicit` of `explicit:tools`, not `tool_1` of `tool_10`.
                let c_lower = c.to_lowercase();
                c_lower.starts_with(&lower)
                    && c_lower[lower.len()..]
                        .chars()
                        .next()
                        .is_some_and(|n| !n.is_alphanumeric() && n != '_')
            })
            .min_by_key(|c| c.len());
        if extends.is_some() {
            return extends;
        }
    }
    let limit = |c: &str| (c.len().max(wanted.len()) / 2).max(2);
    candidates
        .into_iter()
        // The length difference bounds the distance from below: skipping hopeless candidates first
        // keeps a megabyte-long unknown name from costing seconds.
        .filter(|c| c.len().abs_diff(wanted.len()) <= limit(c))
        .map(|c| (edit_distance(wanted, c), c))
        .filter(|(d, c)| *d <= limit(c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A number as a user would write it: plain for ordinary magnitudes, `1e300` (not three hundred
/// digits) for huge or tiny ones.
pub(crate) fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `1 call`, `2 calls`: in report text and in the verdicts the analyses write (`whatif`'s
/// `verdict`, a JSON field).
pub(crate) fn calls_word(n: u64) -> String {
    if n == 1 {
        "1 call".into()
    } else {
        format!("{n} calls")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_amount_has_the_same_decimals_and_the_sign_in_front() {
        for (x, want) in [
            (1234.5, "$1234.500000"),
            (3.91124, "$3.911240"),
            (0.000018, "$0.000018"),
            (-0.1195814, "-$0.119581"),
            (-0.0000001, "$0.000000"),
            (0.0, "$0.000000"),
        ] {
            assert_eq!(usd(x), want, "{x}");
        }
        assert_eq!(usd_number(-0.25), "-0.250000");
        assert_eq!(saving_percent(-0.04), "0.0");
        assert_eq!(saving_percent(47.06), "47.1");
    }

    /// Hints suggest a name of the same kind: a leading part before a separator (the flag value
    /// `explicit`, a model family) before a few edits (`explicit` is two edits from `implicit`).
    #[test]
    fn closest_prefers_the_name_a_word_begins_over_a_few_edits() {
        let strategies = [
            "none",
            "cached",
            "automatic",
            "implicit",
            "explicit:tools+system+last",
        ];
        assert_eq!(
            closest("explicit", strategies),
            Some("explicit:tools+system+last")
        );
        assert_eq!(closest("implicitt", strategies), Some("implicit"));
        let models = ["o4-mini", "gemini-3.6-flash", "gemini-3.6-pro-long"];
        assert_eq!(closest("gemini", models), Some("gemini-3.6-flash"));
        // A name continued by a letter or digit is not a leading part (and five edits is too far).
        assert_eq!(closest("auto", ["automatic"]), None);
        assert_eq!(closest("zzzzzz", models), None);
    }

    #[test]
    fn closest_suggests_near_miss() {
        let ids = ["claude-opus-4.8", "gpt-5.6", "kimi-k3"];
        assert_eq!(closest("claude-opus-48", ids), Some("claude-opus-4.8"));
        assert_eq!(closest("gpt5.6", ids), Some("gpt-5.6"));
        assert_eq!(closest("totally-different-thing", ids), None);
    }
}
