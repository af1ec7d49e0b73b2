//! What `pcsim models --check-against` reports, whichever tracker's file it reads: the prices that
//! agree and differ ([`CheckReport`]), and the comparison of one price ([`Checker`]). The readers
//! of each tracker's format are `crate::input::litellm_check` and `crate::input::genai_check`.

use serde::Serialize;

use crate::model::catalog::ModelSpec;

/// One price on which the catalog and the file differ (or that only one of them has).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// Catalog model id.
    pub model: String,
    /// The tracker's key it was compared with (LiteLLM key, or genai-prices `PROVIDER/MODEL`).
    pub litellm_key: String,
    /// What is compared, in catalog terms (e.g. `input_usd_per_mtok`, `cache.explicit.read_multiplier`).
    pub field: String,
    /// The catalog's value (absent: the catalog has no such price).
    pub catalog: Option<f64>,
    /// The file's value, in the catalog's unit (absent: the file has no such price).
    pub litellm: Option<f64>,
}

/// One price on which the catalog and the file agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Catalog model id.
    pub model: String,
    /// What is compared, in catalog terms, as [`Disagreement::field`].
    pub field: String,
}

/// The outcome of a check.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    /// Prices compared and equal.
    pub agreeing: usize,
    /// Which prices agree (as many as `agreeing`).
    pub agreed: Vec<Agreement>,
    /// The kind of file read: `litellm` or `genai-prices`.
    pub tracker: String,
    /// Prices that differ.
    pub disagreements: Vec<Disagreement>,
    /// Catalog models whose LiteLLM key the file does not have.
    pub missing_keys: Vec<(String, String)>,
    /// Catalog models with no LiteLLM key (not compared).
    pub not_compared: Vec<String>,
}

/// Equal within 0.05%: the catalog writes derived multipliers to four significant digits (0.1667
/// for $0.10 / $0.60), which a stricter test would report as a disagreement.
pub(crate) fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 5e-4 * a.abs().max(b.abs()).max(1e-12)
}

pub(crate) struct Checker<'a> {
    pub(crate) report: &'a mut CheckReport,
    pub(crate) model: &'a ModelSpec,
    pub(crate) key: &'a str,
}

impl Checker<'_> {
    /// Compares when the file has the price; a catalog price the file lacks is not a disagreement
    /// unless `both` (prices every entry of the file carries, such as the input price).
    pub(crate) fn cmp(
        &mut self,
        field: &str,
        catalog: Option<f64>,
        litellm: Option<f64>,
        both: bool,
    ) {
        match (catalog, litellm) {
            (Some(c), Some(l)) if same(c, l) => {
                self.report.agreeing += 1;
                self.report.agreed.push(Agreement {
                    model: self.model.id.clone(),
                    field: field.to_string(),
                });
            }
            (None, None) => {}
            (Some(_), None) if !both => {}
            (c, l) => self.report.disagreements.push(Disagreement {
                model: self.model.id.clone(),
                litellm_key: self.key.to_string(),
                field: field.to_string(),
                catalog: c,
                litellm: l,
            }),
        }
    }
}
