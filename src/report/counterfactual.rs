//! A replay's reconciliation with an invoice (`replay --invoice-usd`) as text, and the tool-list
//! change of its counterfactual (`--remove-tools`, `--add-tools`, ...) in one line.

use crate::analysis::counterfactual::*;

impl ToolListChange {
    /// One line, e.g. `remove 2 tools (a, b)`.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.remove.is_empty() {
            parts.push(format!(
                "remove {} tool{} ({})",
                self.remove.len(),
                if self.remove.len() == 1 { "" } else { "s" },
                self.remove.join(", ")
            ));
        }
        if let Some(k) = &self.keep {
            parts.push(format!("keep only {} ({})", k.len(), k.join(", ")));
        }
        if !self.add.is_empty() {
            let names: Vec<&str> = self.add.iter().map(|t| t.name.as_str()).collect();
            parts.push(format!(
                "add {} tool{} ({})",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ));
        }
        if let Some(d) = self.tokens_delta {
            parts.push(format!("{d:+} tool-block tokens per call"));
        }
        parts.join(", ")
    }
}

impl Reconciliation {
    /// The reconciliation as text.
    pub(crate) fn text(&self) -> String {
        use crate::base::text::usd;
        let signed = |x: f64| {
            if x < 0.0 {
                format!("-{}", usd(-x))
            } else {
                format!("+{}", usd(x))
            }
        };
        let mut s = format!(
            "\nInvoice reconciliation: invoice {}, logged {} ({} calls, each at its own model's prices): difference {} ({:+.1}% of the invoice)\n",
            usd(self.invoice_usd),
            usd(self.logged_usd),
            self.calls,
            signed(self.difference_usd),
            self.difference_percent_of_invoice
        );
        if self.difference_usd > 0.0 {
            s.push_str(&format!(
                "  calls missing from the logs: the difference is {:.1} calls at the logs' mean cost\n",
                self.difference_in_mean_calls
            ));
        } else if self.difference_usd < 0.0 {
            s.push_str("  the logs show more than was billed: calls of another account or period, or a discount not in the catalog\n");
        }
        for e in &self.explanations {
            s.push_str(&format!(
                "  {}: {} (leaves {})\n",
                e.cause,
                usd(e.total_usd),
                signed(e.remaining_usd)
            ));
        }
        s.push_str("  also possible: a price change between the calls and the invoice (--on DATE), taxes or credits, calls made outside these logs\n");
        s
    }
}
