//! Calibration of a family's tool tokens: fitting `factor` and `preamble_tokens` to measured input
//! tokens (the user's own, `pcsim calibrate`), and the fit of the built-in catalog to the measured
//! facts and on the real MCP captures (`pcsim calibrate --facts`, the tables of docs/tools.md).

use std::fmt::Write as _;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::pricing::{Pricing, STUDY_PRICE_SHEET};
use crate::model::tokens::ToolRendering;
use crate::model::tools::{parse_tool_list, synthetic_tools, Tool};

/// One measurement: a tool list and the input tokens it was billed.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// Where the tools came from (a file name), for the report.
    pub label: String,
    /// The tools.
    pub tools: Vec<Tool>,
    /// Measured tokens of the tool block (the request's input tokens minus those without tools).
    pub measured: f64,
}

/// One sample's row of a fit.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FitRow {
    /// Sample label.
    pub label: String,
    /// Tools in it.
    pub tools: usize,
    /// Tokenizer count of the family's rendering.
    pub counted: u64,
    /// Measured tool-block tokens.
    pub measured: f64,
    /// Tokens with the fitted factor and preamble.
    pub modelled: u64,
    /// `modelled / measured - 1`, in percent.
    pub error_percent: f64,
}

/// A fitted calibration.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fit {
    /// Family fitted.
    pub family: String,
    /// Billed tokens per counted token.
    pub factor: f64,
    /// Fixed tokens once per list.
    pub preamble_tokens: f64,
    /// Root mean square of the rows' errors, in percent.
    pub rms_error_percent: f64,
    /// Per sample.
    pub rows: Vec<FitRow>,
}

/// Fits `measured = factor * counted + preamble` by least squares over the samples. With one sample
/// (or samples of one size) the preamble is kept as the family has it and only the factor is fitted;
/// a negative fitted preamble is set to zero and the factor refitted through it.
pub(crate) fn fit(family: &str, rendering: &ToolRendering, samples: &[Sample]) -> Result<Fit> {
    if samples.is_empty() {
        return Err(Error::invalid(
            "command line",
            "SAMPLE",
            "give at least one FILE=TOKENS pair",
        ));
    }
    let counted: Vec<f64> = samples
        .iter()
        .map(|s| rendering.count_rendered(&rendering.render(&s.tools)) as f64)
        .collect();
    if counted.contains(&0.0) {
        return Err(Error::invalid(
            "command line",
            "SAMPLE",
            "a tool file renders to no text (no tools, or a linear family): nothing to fit",
        ));
    }
    let n = samples.len() as f64;
    let mx = counted.iter().sum::<f64>() / n;
    let my = samples.iter().map(|s| s.measured).sum::<f64>() / n;
    let sxx: f64 = counted.iter().map(|x| (x - mx).powi(2)).sum();
    let through = |p: f64| {
        let num: f64 = counted
            .iter()
            .zip(samples)
            .map(|(x, s)| x * (s.measured - p))
            .sum();
        num / counted.iter().map(|x| x * x).sum::<f64>()
    };
    let (mut factor, mut preamble) = if samples.len() < 2 || sxx < 1e-9 {
        let p = rendering.preamble_tokens.value;
        (through(p), p)
    } else {
        let sxy: f64 = counted
            .iter()
            .zip(samples)
            .map(|(x, s)| (x - mx) * (s.measured - my))
            .sum();
        let f = sxy / sxx;
        (f, my - f * mx)
    };
    if preamble < 0.0 {
        preamble = 0.0;
        factor = through(0.0);
    }
    if !(factor.is_finite() && factor > 0.0) {
        return Err(Error::invalid(
            "command line",
            "SAMPLE",
            format!("the measurements give no positive factor (fitted {factor:.4}); check the token counts"),
        ));
    }
    let rows: Vec<FitRow> = samples
        .iter()
        .zip(&counted)
        .map(|(s, &c)| {
            let modelled = (factor * c + preamble).round().max(0.0) as u64;
            FitRow {
                label: s.label.clone(),
                tools: s.tools.len(),
                counted: c as u64,
                measured: s.measured,
                modelled,
                error_percent: pct(modelled as f64, s.measured),
            }
        })
        .collect();
    let rms = (rows.iter().map(|r| r.error_percent.powi(2)).sum::<f64>() / n).sqrt();
    Ok(Fit {
        family: family.to_string(),
        factor,
        preamble_tokens: preamble.round(),
        rms_error_percent: rms,
        rows,
    })
}

fn pct(modelled: f64, measured: f64) -> f64 {
    if measured == 0.0 {
        0.0
    } else {
        100.0 * (modelled / measured - 1.0)
    }
}

impl Fit {
    /// A catalog overlay (`--catalog FILE` with only `[[family]]`): the family's rendering with the
    /// fitted factor and preamble, each with its source.
    pub(crate) fn overlay(&self, rendering: &ToolRendering, today: &str) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let labels: Vec<String> = self
            .rows
            .iter()
            .map(|r| format!("{} = {}", r.label, r.measured))
            .collect();
        let mut s = format!(
            "# pcsim catalog overlay written by `pcsim calibrate` ({today}): use with --catalog FILE.\n\
             # The built-in catalog with this family's tool rendering replaced.\n\
             [[family]]\nid = {}\n[family.tool_rendering]\n",
            q(&self.family)
        );
        for line in rendering.overlay_lines() {
            if !line.starts_with("factor =") {
                let _ = writeln!(s, "{line}");
            }
        }
        let src = format!(
            "measured: fitted by pcsim calibrate on {} ({}); rms error {:.1}%",
            labels.join(", "),
            today,
            self.rms_error_percent
        );
        let _ = writeln!(
            s,
            "factor = {{ value = {:.6}, source = {} }}",
            self.factor,
            q(&src)
        );
        let _ = writeln!(
            s,
            "preamble_tokens = {{ value = {:.1}, source = {} }}",
            self.preamble_tokens,
            q(&src)
        );
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements from usage logs (`pcsim replay --log-tools LOG=TOOLS`).

/// The tool-block measurement a usage log carries, for [`fit`]: the smallest prompt (uncached +
/// written + read input tokens, as billed) of a main-agent call that starts a conversation. That
/// prompt is the tool block plus what precedes the first answer (system prompt, first message); over
/// logs of the same agent run with different tool lists, the fit puts the factor on the tools and
/// the common rest in the preamble. `baseline`, the input tokens of the same request without tools
/// when known, is subtracted so the preamble is the tool block's own.
pub(crate) fn log_sample(
    label: &str,
    tools: Vec<Tool>,
    calls: &[crate::analysis::replay::LoggedCall],
    opts: &crate::analysis::replay::ReplayOptions,
    baseline: f64,
) -> Result<Sample> {
    let (conv, _) = crate::analysis::replay::conversations(calls, opts);
    let mut seen = std::collections::HashSet::new();
    let first = calls
        .iter()
        .zip(&conv)
        .filter(|(c, k)| seen.insert(**k) && !c.sidechain && c.prompt_tokens > 0)
        .map(|(c, _)| c.prompt_tokens)
        .min()
        .ok_or_else(|| {
            Error::invalid(
                label,
                "usage",
                "no call with billed input tokens starts a conversation: nothing to calibrate from",
            )
        })?;
    Ok(Sample {
        label: label.to_string(),
        tools,
        measured: first as f64 - baseline,
    })
}

// ---------------------------------------------------------------------------------------------
// The built-in catalog against the measured facts and on the real captures.

const GET_WEATHER: &str = include_str!("../../examples/tools/get_weather.json");

/// One measured fact reproduced by the catalog.
#[derive(Debug, Clone, Serialize)]
pub struct FactRow {
    /// Model the fact is about.
    pub model: String,
    /// The fact, as measured-facts.md states it.
    pub fact: String,
    /// The measured figure.
    pub measured: f64,
    /// pcsim's figure.
    pub modelled: f64,
    /// `modelled / measured - 1` in percent.
    pub error_percent: f64,
}

/// The measured facts about tool tokens, with pcsim's figures. `github` is the GitHub server's
/// capture, when available (the Gemini and GLM facts need it).
pub fn fact_rows(catalog: &Catalog, github: Option<&[Tool]>) -> Result<Vec<FactRow>> {
    let gw = parse_tool_list(GET_WEATHER, "examples/tools/get_weather.json")?;
    let block = |m: &ModelSpec, t: &[Tool]| m.rendering().block_tokens(t) as f64;
    let per_tool = |m: &ModelSpec| {
        (block(m, &synthetic_tools(1, 40, 3)) - block(m, &synthetic_tools(1, 10, 3))) / 30.0
    };
    let quarter = synthetic_tools(1, 1, 3)[0].metrics().bytes as f64 / 4.0;
    let opus = catalog.model("claude-opus-4.8")?;
    let opus5 = catalog.model("claude-opus-5")?;
    let gpt = catalog.model("gpt-5.6")?;
    let gemini = catalog.model("gemini-3.6-flash")?;
    let mut rows = Vec::new();
    let mut add = |model: &str, fact: &str, measured: f64, modelled: f64| {
        rows.push(FactRow {
            model: model.into(),
            fact: fact.into(),
            measured,
            modelled,
            error_percent: pct(modelled, measured),
        })
    };
    add(
        &opus.id,
        "get_weather adds 401 tokens",
        401.0,
        block(opus, &gw),
    );
    add(
        &opus.id,
        "20 synthetic tools: 3,682-token block",
        3682.0,
        block(opus, &synthetic_tools(1, 20, 3)),
    );
    add(
        &opus.id,
        "a 2-tool block of about 655 tokens",
        655.0,
        block(opus, &synthetic_tools(1, 2, 3)),
    );
    add(
        &opus.id,
        "about 173 tokens per synthetic tool",
        173.0,
        per_tool(opus),
    );
    add(
        &gpt.id,
        "about 64 tokens per synthetic tool",
        64.0,
        per_tool(gpt),
    );
    add(
        "claude / gpt",
        "per synthetic tool 2.7x apart",
        2.7,
        per_tool(opus) / per_tool(gpt),
    );
    add(
        &opus.id,
        "about 1.36x bytes/4 (synthetic, pretty JSON)",
        1.36,
        per_tool(opus) / quarter,
    );
    add(
        &gpt.id,
        "about 0.5x bytes/4 (synthetic, pretty JSON)",
        0.5,
        per_tool(gpt) / quarter,
    );
    add(
        &gemini.id,
        "about 0.5x bytes/4 (synthetic, pretty JSON)",
        0.5,
        per_tool(gemini) / quarter,
    );
    add(
        &opus5.id,
        "21 synthetic tools: 4,082-token block",
        4082.0,
        block(opus5, &synthetic_tools(1, 21, 3)),
    );
    if let Some(gh) = github {
        // The dollar facts were billed by the study's gateway at its own rates: price them on the
        // catalog's study sheet when it has one (a user catalog without it prices as it stands).
        let study = catalog.priced(&Pricing::sheet(STUDY_PRICE_SHEET)).ok();
        let study = study.as_ref().unwrap_or(catalog);
        let gemini = study.model("gemini-3.6-flash")?;
        let glm = study.model("glm-5.2")?;
        add(
            &gemini.id,
            "GitHub server: $0.0029 per call",
            0.0029,
            gemini.input_usd(block(gemini, gh)),
        );
        add(
            &glm.id,
            "GitHub server: more than 2x Gemini's tokens",
            2.0,
            block(glm, gh) / block(gemini, gh),
        );
        add(
            &glm.id,
            "GitHub server: cheaper than Gemini (USD ratio < 1)",
            1.0,
            glm.input_usd(block(glm, gh)) / gemini.input_usd(block(gemini, gh)),
        );
    }
    Ok(rows)
}

pub(crate) use crate::model::tools::schema_depth;

/// One capture on one family.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureRow {
    /// Capture file stem.
    pub capture: String,
    /// Family.
    pub family: String,
    /// Tools.
    pub tools: usize,
    /// Mean schema nesting depth over the tools.
    pub depth: f64,
    /// Pretty-printed over compact JSON bytes.
    pub pretty_over_compact: f64,
    /// Tokenizer count of the family's rendering.
    pub counted: u64,
    /// pcsim's block tokens.
    pub tokens: u64,
    /// pcsim against the best available count (`factor * counted`), in percent: what the
    /// preamble and whole-token rounding add.
    pub error_percent: f64,
    /// pcsim's tokens over bytes/4 of the compact JSON sent.
    pub over_compact_quarter: f64,
}

/// Every family (by its first model in the catalog) on every capture.
pub(crate) fn capture_rows(catalog: &Catalog, captures: &[(String, Vec<Tool>)]) -> Vec<CaptureRow> {
    let mut rows = Vec::new();
    for fam in &catalog.families {
        let r = &fam.tool_rendering;
        for (name, tools) in captures {
            let compact: usize = tools.iter().map(|t| t.api_json().to_string().len()).sum();
            let pretty: u64 = tools.iter().map(|t| t.metrics().bytes).sum();
            let depth = tools
                .iter()
                .map(|t| schema_depth(&t.input_schema) as f64)
                .sum::<f64>()
                / tools.len().max(1) as f64;
            let counted = r.count_rendered(&r.render(tools));
            let tokens = r.block_tokens(tools);
            rows.push(CaptureRow {
                capture: name.clone(),
                family: fam.id.clone(),
                tools: tools.len(),
                depth,
                pretty_over_compact: pretty as f64 / compact.max(1) as f64,
                counted,
                tokens,
                error_percent: pct(tokens as f64, r.factor() * counted as f64),
                over_compact_quarter: tokens as f64 / (compact as f64 / 4.0),
            });
        }
    }
    rows
}

/// Pearson correlation of two series (0 when either is constant).
pub(crate) fn correlation(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len().min(y.len()) as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    if sxx < 1e-12 || syy < 1e-12 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// The facts table, the per-family per-capture tables and the correlations, as Markdown.
pub fn facts_report(catalog: &Catalog, captures: &[(String, Vec<Tool>)]) -> Result<String> {
    let github = captures
        .iter()
        .find(|(n, _)| n == "server-github")
        .map(|(_, t)| t.as_slice());
    let mut s = String::new();
    let _ = writeln!(s, "| model | measured fact | measured | pcsim | error |");
    let _ = writeln!(s, "|---|---|---:|---:|---:|");
    for r in fact_rows(catalog, github)? {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:+.1}% |",
            r.model,
            r.fact,
            fmt(r.measured),
            fmt(r.modelled),
            r.error_percent
        );
    }
    let rows = capture_rows(catalog, captures);
    for fam in &catalog.families {
        let r = &fam.tool_rendering;
        let mine: Vec<&CaptureRow> = rows.iter().filter(|x| x.family == fam.id).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\nFamily `{}`: {}.\n", fam.id, r.describe());
        let _ = writeln!(
            s,
            "| capture | tools | depth | pretty/compact | counted | pcsim | vs factor x count | vs compact bytes/4 |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for x in &mine {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {:.2} | {} | {} | {:+.1}% | {:.2}x |",
                x.capture,
                x.tools,
                x.depth,
                x.pretty_over_compact,
                x.counted,
                x.tokens,
                x.error_percent,
                x.over_compact_quarter
            );
        }
        let depth: Vec<f64> = mine.iter().map(|x| x.depth).collect();
        let ratio: Vec<f64> = mine.iter().map(|x| x.pretty_over_compact).collect();
        let err: Vec<f64> = mine.iter().map(|x| x.error_percent).collect();
        let quarter: Vec<f64> = mine.iter().map(|x| x.over_compact_quarter).collect();
        let mean = err.iter().sum::<f64>() / err.len() as f64;
        let _ = writeln!(
            s,
            "\nError against factor x count: mean {mean:+.1}%, correlation with depth {:+.2}, with pretty/compact {:+.2}. \
             Tokens per compact bytes/4: correlation with depth {:+.2}.",
            correlation(&depth, &err),
            correlation(&ratio, &err),
            correlation(&depth, &quarter)
        );
    }
    Ok(s)
}

fn fmt(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fit_recovers_a_known_factor_and_preamble() {
        let c = Catalog::embedded().unwrap();
        let r = c.model("gpt-5.6").unwrap().rendering();
        let samples: Vec<Sample> = [5usize, 20, 40]
            .iter()
            .map(|&n| {
                let tools = synthetic_tools(1, n, 3);
                let counted = r.count_rendered(&r.render(&tools)) as f64;
                Sample {
                    label: format!("{n} tools"),
                    tools,
                    measured: 1.25 * counted + 30.0,
                }
            })
            .collect();
        let f = fit("openai-o200k", r, &samples).unwrap();
        assert!((f.factor - 1.25).abs() < 1e-9, "{}", f.factor);
        assert_eq!(f.preamble_tokens, 30.0);
        assert!(f.rms_error_percent < 0.1);
        let overlay = f.overlay(r, "2026-12-03");
        assert!(overlay.contains("template = \"harmony\""), "{overlay}");
        // The overlay loads as a catalog and carries the fit.
        let cat = Catalog::from_toml_str(&overlay, "overlay.toml").unwrap();
        let m = cat.model("gpt-5.6").unwrap();
        assert!((m.rendering().factor() - 1.25).abs() < 1e-6);
        assert_eq!(cat.models.len(), c.models.len());
        // One sample: only the factor moves.
        let one = fit("openai-o200k", r, &samples[..1]).unwrap();
        assert_eq!(one.preamble_tokens, r.preamble_tokens.value);
        assert!(fit("x", r, &[]).is_err());
    }

    #[test]
    fn depth_counts_nested_levels() {
        assert_eq!(schema_depth(&serde_json::json!({"type":"object"})), 0);
        assert_eq!(
            schema_depth(&serde_json::json!({"properties":{"a":{"type":"string"}}})),
            1
        );
        assert_eq!(
            schema_depth(
                &serde_json::json!({"properties":{"a":{"type":"array","items":{"properties":{"b":{}}}}}})
            ),
            3
        );
        assert!((correlation(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert_eq!(correlation(&[1.0, 2.0], &[5.0, 5.0]), 0.0);
    }
}
