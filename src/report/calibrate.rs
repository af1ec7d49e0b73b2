//! `calibrate`'s fit as a terminal table.

use crate::analysis::calibrate::*;
use std::fmt::Write as _;

impl Fit {
    /// A text table of the rows and the fitted values.
    pub(crate) fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<40} {:>5} {:>8} {:>9} {:>9} {:>7}",
            "sample", "tools", "counted", "measured", "modelled", "error"
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{:<40} {:>5} {:>8} {:>9} {:>9} {:>+6.1}%",
                r.label, r.tools, r.counted, r.measured, r.modelled, r.error_percent
            );
        }
        let _ = writeln!(
            s,
            "family {}: factor {:.4}, preamble {} tokens; rms error {:.1}%",
            self.family, self.factor, self.preamble_tokens, self.rms_error_percent
        );
        s
    }
}
