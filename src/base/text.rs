//! Text formatting shared by every report: dollars, CSV fields and aligned tables. Pure functions
//! of their arguments, so both the analyses (which render their own reports) and the report layer
//! use them without depending on each other.

use std::fmt::Write as _;

/// Formats dollars with enough digits for sub-cent per-call figures.
pub fn usd(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("${x:.2}")
    } else if x.abs() >= 1.0 {
        format!("${x:.4}")
    } else {
        format!("${x:.6}")
    }
}

/// Quotes a CSV field when it needs it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A simple left/right aligned text table.
#[derive(Debug, Default)]
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl TextTable {
    /// A table with these column headers; `right[i]` right-aligns column i.
    pub fn new(header: &[&str], right: &[bool]) -> Self {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
        }
    }

    /// Adds a row. Cells are escaped for the terminal ([`crate::base::terminal::escape_inline`]):
    /// a name from an input cannot send escape sequences or break the table's lines.
    pub fn row(&mut self, cells: Vec<String>) {
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
    pub fn render(&self) -> String {
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
