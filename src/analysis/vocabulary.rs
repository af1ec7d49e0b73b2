//! An independent check of the stand-in tokenizer: pcsim counts every family's rendering with o200k,
//! and for the families whose own vocabulary is public (Qwen, DeepSeek; Gemma 3 for Gemini) the same
//! rendered text was counted with that vocabulary (scripts/tool_tokens_vocabularies.py, counts checked
//! in as a fixture). Per capture, the relative difference of the two counts must show no trend with
//! the schemas' nesting depth: a trend would mean the o200k stand-in, and every factor fitted on it,
//! is biased by the shape of a tool list rather than by a constant a factor can absorb.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::analysis::calibrate::{correlation, schema_depth};
use crate::error::{Error, Result};
use crate::model::catalog::Catalog;
use crate::model::tools::Tool;

/// One reference count: pcsim's rendering of a capture for `model`, counted with `tokenizer`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceCount {
    /// Capture file stem (`server-github`).
    pub capture: String,
    /// Name of the public vocabulary (`qwen`, `deepseek`, `gemma3`, ...).
    pub tokenizer: String,
    /// The pcsim model whose family's rendering was counted.
    pub model: String,
    /// Tokens of the text in that vocabulary (special tokens one each).
    pub tokens: u64,
    /// Bytes of the text counted.
    pub text_bytes: u64,
    /// FNV-1a 64 of the text counted, in hex.
    pub text_fnv1a64: String,
}

/// One capture checked against one reference vocabulary.
#[derive(Debug, Clone, Serialize)]
pub struct VocabularyRow {
    /// Capture file stem.
    pub capture: String,
    /// Reference vocabulary.
    pub tokenizer: String,
    /// The model (and so the family rendering) counted.
    pub model: String,
    /// Its family.
    pub family: String,
    /// Mean schema nesting depth over the tools.
    pub depth: f64,
    /// Pretty-printed over compact JSON bytes.
    pub pretty_over_compact: f64,
    /// pcsim's count of the rendering (o200k stand-in, with the family's depth correction if any),
    /// before the factor.
    pub counted: f64,
    /// The reference vocabulary's count of the same text.
    pub reference: u64,
    /// `counted / reference - 1`, in percent.
    pub error_percent: f64,
}

/// The rows of one reference vocabulary, summarised.
#[derive(Debug, Clone, Serialize)]
pub struct VocabularySummary {
    /// Reference vocabulary.
    pub tokenizer: String,
    /// Family whose rendering was counted.
    pub family: String,
    /// Captures.
    pub captures: usize,
    /// Mean error, percent (a constant offset a family factor absorbs).
    pub mean_error_percent: f64,
    /// Smallest and largest error, percent.
    pub min_error_percent: f64,
    /// Largest error, percent.
    pub max_error_percent: f64,
    /// Pearson correlation of the error with the mean nesting depth.
    pub correlation_with_depth: f64,
    /// Pearson correlation of the error with the pretty/compact byte ratio.
    pub correlation_with_pretty_ratio: f64,
    /// Least-squares slope of the error against depth, percentage points per level.
    pub slope_per_depth_level: f64,
}

/// Compares pcsim's counts with the reference counts. Fails (naming the capture) when pcsim no longer
/// renders the text that was counted, or when a reference names a capture or model it does not know:
/// the references must then be regenerated, not silently skipped.
pub fn vocabulary_rows(
    catalog: &Catalog,
    captures: &[(String, Vec<Tool>)],
    references: &[ReferenceCount],
) -> Result<Vec<VocabularyRow>> {
    let origin = "vocabulary reference counts";
    let mut rows = Vec::new();
    for r in references {
        let field = format!("{} / {}", r.tokenizer, r.capture);
        let (_, tools) = captures
            .iter()
            .find(|(n, _)| *n == r.capture)
            .ok_or_else(|| Error::invalid(origin, &field, "no such capture"))?;
        let model = catalog.model(&r.model)?;
        let rendering = model.rendering();
        let rendered = rendering.render(tools);
        let text = rendered.text();
        let hash = format!("{:016x}", crate::base::hash::fnv1a(text.as_bytes()));
        if text.len() as u64 != r.text_bytes || hash != r.text_fnv1a64 {
            return Err(Error::invalid(
                origin,
                &field,
                format!(
                    "pcsim's rendering for {} is no longer the text that was counted ({} bytes, \
                     {hash}; counted {} bytes, {}): regenerate with scripts/tool_tokens_vocabularies.py",
                    r.model,
                    text.len(),
                    r.text_bytes,
                    r.text_fnv1a64
                ),
            ));
        }
        if r.tokens == 0 {
            return Err(Error::invalid(origin, &field, "a reference count of 0"));
        }
        let counted = rendering.corrected_count(tools);
        let compact: usize = tools.iter().map(|t| t.api_json().to_string().len()).sum();
        let pretty: u64 = tools.iter().map(|t| t.metrics().bytes).sum();
        let depth = tools
            .iter()
            .map(|t| schema_depth(&t.input_schema) as f64)
            .sum::<f64>()
            / tools.len().max(1) as f64;
        rows.push(VocabularyRow {
            capture: r.capture.clone(),
            tokenizer: r.tokenizer.clone(),
            model: r.model.clone(),
            family: model.family.clone(),
            depth,
            pretty_over_compact: pretty as f64 / compact.max(1) as f64,
            counted,
            reference: r.tokens,
            error_percent: 100.0 * (counted / r.tokens as f64 - 1.0),
        });
    }
    Ok(rows)
}

/// The `depth_slope` that makes pcsim's corrected count track `tokenizer`'s reference counts most
/// closely up to a constant: per capture the error is `(raw + s x A) / reference - 1` with
/// `A = sum over tools of raw_tool x (depth - 1)`, and `s` minimises the errors' variance (least
/// squares around their mean, which the family's factor absorbs). `None` without such rows.
pub fn fitted_depth_slope(
    catalog: &Catalog,
    captures: &[(String, Vec<Tool>)],
    references: &[ReferenceCount],
    tokenizer: &str,
) -> Result<Option<f64>> {
    let mut e0 = Vec::new();
    let mut a = Vec::new();
    for r in references.iter().filter(|r| r.tokenizer == tokenizer) {
        let (_, tools) = captures
            .iter()
            .find(|(n, _)| *n == r.capture)
            .ok_or_else(|| {
                Error::invalid("vocabulary reference counts", &r.capture, "no such capture")
            })?;
        let rendering = catalog.model(&r.model)?.rendering();
        let raw = rendering.count_rendered(&rendering.render(tools)) as f64;
        let lever: f64 = tools
            .iter()
            .map(|t| {
                rendering.raw_tool_count(t) as f64 * (schema_depth(&t.input_schema) as f64 - 1.0)
            })
            .sum();
        e0.push(raw / r.tokens as f64 - 1.0);
        a.push(lever / r.tokens as f64);
    }
    if e0.len() < 2 {
        return Ok(None);
    }
    let n = e0.len() as f64;
    let (me, ma) = (e0.iter().sum::<f64>() / n, a.iter().sum::<f64>() / n);
    let cov: f64 = e0.iter().zip(&a).map(|(e, x)| (e - me) * (x - ma)).sum();
    let var: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    Ok((var > 1e-12).then(|| -cov / var))
}

/// One summary per reference vocabulary, in the order they first appear.
pub fn summaries(rows: &[VocabularyRow]) -> Vec<VocabularySummary> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.tokenizer.as_str()) {
            names.push(&r.tokenizer);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&VocabularyRow> = rows.iter().filter(|r| r.tokenizer == name).collect();
            let err: Vec<f64> = mine.iter().map(|r| r.error_percent).collect();
            let depth: Vec<f64> = mine.iter().map(|r| r.depth).collect();
            let ratio: Vec<f64> = mine.iter().map(|r| r.pretty_over_compact).collect();
            let n = err.len() as f64;
            let (md, me) = (depth.iter().sum::<f64>() / n, err.iter().sum::<f64>() / n);
            let sxx: f64 = depth.iter().map(|d| (d - md).powi(2)).sum();
            let sxy: f64 = depth
                .iter()
                .zip(&err)
                .map(|(d, e)| (d - md) * (e - me))
                .sum();
            VocabularySummary {
                tokenizer: name.to_string(),
                family: mine[0].family.clone(),
                captures: mine.len(),
                mean_error_percent: me,
                min_error_percent: err.iter().copied().fold(f64::INFINITY, f64::min),
                max_error_percent: err.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                correlation_with_depth: correlation(&depth, &err),
                correlation_with_pretty_ratio: correlation(&ratio, &err),
                slope_per_depth_level: if sxx > 1e-12 { sxy / sxx } else { 0.0 },
            }
        })
        .collect()
}

/// The critical |r| of a Pearson correlation at the two-sided 5% level for `n` pairs
/// (`t / sqrt(n - 2 + t^2)` with t the 97.5% quantile of Student's t at n - 2 degrees of freedom):
/// a smaller |r| is no trend detectable on that many captures.
pub fn critical_correlation(n: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if n < 3 {
        return 1.0;
    }
    let df = (n - 2) as f64;
    let t = StudentsT::new(0.0, 1.0, df)
        .map(|d| d.inverse_cdf(0.975))
        .unwrap_or(f64::INFINITY);
    t / (df + t * t).sqrt()
}

/// The per-capture table per vocabulary and the summaries, as Markdown (docs/tools.md).
pub fn vocabulary_report(rows: &[VocabularyRow]) -> String {
    let mut s = String::new();
    let sums = summaries(rows);
    let _ = writeln!(
        s,
        "| reference vocabulary | family rendered | captures | mean | min | max | r with depth | r with pretty/compact | slope per depth level |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for x in &sums {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:+.1}% | {:+.1}% | {:+.1}% | {:+.2} | {:+.2} | {:+.2} pt |",
            x.tokenizer,
            x.family,
            x.captures,
            x.mean_error_percent,
            x.min_error_percent,
            x.max_error_percent,
            x.correlation_with_depth,
            x.correlation_with_pretty_ratio,
            x.slope_per_depth_level
        );
    }
    if let Some(n) = sums.first().map(|x| x.captures) {
        let _ = writeln!(
            s,
            "\nCritical |r| for {n} captures at the two-sided 5% level: {:.3}.",
            critical_correlation(n)
        );
    }
    let _ = writeln!(
        s,
        "\n| capture | depth | pretty/compact | {} |",
        sums.iter()
            .map(|x| format!("{} (o200k vs ref)", x.tokenizer))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|---|---:|---:|{}", "---:|".repeat(sums.len()));
    let mut captures: Vec<&VocabularyRow> = Vec::new();
    for r in rows {
        if !captures.iter().any(|c| c.capture == r.capture) {
            captures.push(r);
        }
    }
    for c in captures {
        let cells: Vec<String> = sums
            .iter()
            .map(|x| {
                rows.iter()
                    .find(|r| r.capture == c.capture && r.tokenizer == x.tokenizer)
                    .map_or("".into(), |r| {
                        format!(
                            "{:.0} vs {} ({:+.1}%)",
                            r.counted, r.reference, r.error_percent
                        )
                    })
            })
            .collect();
        let _ = writeln!(
            s,
            "| {} | {:.2} | {:.2} | {} |",
            c.capture,
            c.depth,
            c.pretty_over_compact,
            cells.join(" | ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_correlation_matches_the_tables() {
        // Published critical values of r (two-sided, 5%): n = 10 -> 0.632, n = 15 -> 0.514.
        assert!((critical_correlation(10) - 0.632).abs() < 0.001);
        assert!((critical_correlation(15) - 0.514).abs() < 0.001);
        assert_eq!(critical_correlation(2), 1.0);
    }

    #[test]
    fn a_changed_rendering_is_refused_not_compared() {
        let c = Catalog::embedded().unwrap();
        let tools = crate::model::tools::synthetic_tools(1, 3, 3);
        let r = ReferenceCount {
            capture: "s".into(),
            tokenizer: "qwen".into(),
            model: "deepseek-v4-flash".into(),
            tokens: 100,
            text_bytes: 1,
            text_fnv1a64: "0".into(),
        };
        let e = vocabulary_rows(&c, &[("s".into(), tools.clone())], std::slice::from_ref(&r))
            .unwrap_err()
            .to_string();
        assert!(e.contains("regenerate"), "{e}");
        // With the text's true length and hash it compares: o200k counts of the Qwen template.
        let text = c
            .model("deepseek-v4-flash")
            .unwrap()
            .rendering()
            .render(&tools)
            .text();
        let ok = ReferenceCount {
            text_bytes: text.len() as u64,
            text_fnv1a64: format!("{:016x}", crate::base::hash::fnv1a(text.as_bytes())),
            ..r
        };
        let rows = vocabulary_rows(&c, &[("s".into(), tools)], &[ok]).unwrap();
        assert_eq!(rows[0].family, "generic");
        let want = 100.0 * (rows[0].counted / 100.0 - 1.0);
        assert!((rows[0].error_percent - want).abs() < 1e-12);
    }
}
