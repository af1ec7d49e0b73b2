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

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders with two spaces between columns and a rule under the header.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut w = vec![0; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, r: &[String]| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .take(n)
                .map(|(i, c)| {
                    if self.right.get(i).copied().unwrap_or(false) {
                        format!("{c:>width$}", width = w[i])
                    } else {
                        format!("{c:<width$}", width = w[i])
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
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
