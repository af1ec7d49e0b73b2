//! `tools` and `sweep` as text: a tool list's token table, and the sweep's CSV and table.

use crate::analysis::toolreport::*;
use crate::base::text::{usd, TextTable};
use crate::input::trim::Trim;
use std::fmt::Write as _;

impl ToolReport {
    /// The report as aligned text: a summary per model, the trims, then each model's tools.
    pub(crate) fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Tool block per call ({} tools, no caching; billed on every call, used or not)\n",
            self.tool_count
        );
        let mut t = TextTable::new(
            &[
                "model",
                "family",
                "tokens",
                "preamble",
                "$/call",
                "$/10 calls",
            ],
            &[false, false, true, true, true, true],
        );
        for m in &self.models {
            t.row(vec![
                m.model.clone(),
                m.family.clone(),
                m.tool_block_tokens.to_string(),
                m.preamble_tokens.to_string(),
                usd(m.usd_per_call),
                usd(m.usd_per_10_calls),
            ]);
        }
        out.push_str(&t.render());
        let _ = writeln!(out, "\nTrimming what-ifs (saving per call)");
        for trim in Trim::ALL {
            let _ = writeln!(out, "  {:<22} {}", trim.as_str(), trim.explain());
        }
        out.push('\n');
        let mut t = TextTable::new(
            &[
                "model",
                "trim",
                "tokens",
                "saved",
                "saved %",
                "saved $/call",
            ],
            &[false, false, true, true, true, true],
        );
        for m in &self.models {
            for s in &m.trims {
                t.row(vec![
                    m.model.clone(),
                    s.trim.to_string(),
                    s.tool_block_tokens.to_string(),
                    s.saved_tokens.to_string(),
                    format!("{:.1}%", s.saved_percent),
                    usd(s.saved_usd_per_call),
                ]);
            }
        }
        out.push_str(&t.render());
        for m in &self.models {
            let _ = writeln!(
                out,
                "\n{} ({}): {} tokens per call, largest first",
                m.model, m.model_name, m.tool_block_tokens
            );
            let mut t = TextTable::new(
                &["#", "tool", "tokens", "share"],
                &[true, false, true, true],
            );
            for (i, c) in m.tools.iter().enumerate() {
                t.row(vec![
                    (i + 1).to_string(),
                    c.name.clone(),
                    c.tokens.to_string(),
                    format!("{:.1}%", 100.0 * c.share),
                ]);
            }
            if m.preamble_tokens > 0 {
                t.row(vec![
                    String::new(),
                    "(preamble)".into(),
                    m.preamble_tokens.to_string(),
                    format!(
                        "{:.1}%",
                        100.0 * m.preamble_tokens as f64 / m.tool_block_tokens as f64
                    ),
                ]);
            }
            out.push_str(&t.render());
        }
        out
    }
}

impl SweepReport {
    /// CSV with columns `model,tools,tool_block_tokens,usd_per_call`.
    pub(crate) fn csv(&self) -> String {
        let mut out = String::from("model,tools,tool_block_tokens,usd_per_call\n");
        for p in &self.points {
            let _ = writeln!(
                out,
                "{},{},{},{}",
                crate::base::text::field(&p.model),
                p.tools,
                p.tool_block_tokens,
                crate::base::text::usd_number(p.usd_per_call)
            );
        }
        out
    }

    /// Aligned text: the slope per model, then tokens by tool count with one column per model.
    pub(crate) fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Synthetic tools with {} parameters and one-line descriptions, 0..{} tools\n",
            self.params, self.max_tools
        );
        let mut t = TextTable::new(
            &["model", "tokens/tool", "preamble", "$/tool/call"],
            &[false, true, true, true],
        );
        for s in &self.slopes {
            t.row(vec![
                s.model.clone(),
                format!("{:.1}", s.tokens_per_tool),
                s.preamble_tokens.to_string(),
                usd(s.usd_per_tool_per_call),
            ]);
        }
        out.push_str(&t.render());
        out.push('\n');
        let models: Vec<&str> = self.slopes.iter().map(|s| s.model.as_str()).collect();
        let mut header = vec!["tools"];
        header.extend(models.iter().copied());
        let mut t = TextTable::new(&header, &vec![true; header.len()]);
        for n in 0..=self.max_tools {
            let mut row = vec![n.to_string()];
            for m in &models {
                let p = self
                    .points
                    .iter()
                    .find(|p| p.model == *m && p.tools == n)
                    .map_or(0, |p| p.tool_block_tokens);
                row.push(p.to_string());
            }
            t.row(row);
        }
        out.push_str(&t.render());
        out.push_str("(tokens per call)\n");
        out
    }
}
