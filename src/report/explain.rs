//! `pcsim explain` as text, CSV, JSON and a report (HTML or Markdown with a per-call chart), and
//! `pcsim run --trace-out` as JSON Lines. The cause names are a contract (see
//! [`crate::analysis::explain::CAUSES`]).

use std::fmt::Write as _;

use serde_json::json;

use crate::analysis::explain::{Explanation, TraceLine};
use crate::base::terminal::escape_inline;
use crate::base::text::calls_word;
use crate::base::text::field;
use crate::error::Result;
use crate::report::chart::{stacked_bar_chart, Axis, ChartFile, ChartOptions, Unit};
use crate::report::document::{Block, Document, Provenance, Section, Table};
use crate::report::table::TextTable;
use crate::report::usagelog::rfc3339_ms;
use crate::report::usd;

/// A written trace: one JSON Lines record `{time, session, url, request, response}` per call.
pub(crate) fn trace_jsonl(lines: &[TraceLine]) -> String {
    let mut out = String::new();
    for l in lines {
        let v = json!({
            "time": rfc3339_ms(l.time),
            "session": l.session,
            "url": l.url,
            "request": l.request,
            "response": l.response,
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// The explanation as JSON (stable keys).
pub(crate) fn explain_json(e: &Explanation) -> Result<String> {
    crate::report::to_json(e)
}

fn causes_cell(c: &crate::analysis::explain::CallExplanation) -> String {
    c.causes
        .iter()
        .map(|k| format!("{}={}", k.cause, k.tokens))
        .collect::<Vec<_>>()
        .join(";")
}

/// One CSV row per call.
pub(crate) fn explain_csv(e: &Explanation) -> String {
    let mut out = String::from(
        "call,conversation,time_s,model,api,prompt_tokens,billed_uncached,billed_write,billed_read,predicted_uncached,predicted_write,predicted_read,agrees,cost_usd,lost_usd,causes,details\n",
    );
    for c in &e.calls {
        let lost: f64 = c.causes.iter().map(|k| k.usd).sum();
        let details: Vec<String> = c
            .causes
            .iter()
            .map(|k| format!("{}: {}", k.cause, k.detail))
            .collect();
        let _ = writeln!(
            out,
            "{},{},{:.3},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{}",
            c.call,
            c.conversation,
            c.time_s,
            field(&c.model),
            c.api,
            c.prompt_tokens,
            c.billed.uncached_tokens,
            c.billed.cache_write_tokens,
            c.billed.cache_read_tokens,
            c.predicted.uncached_tokens,
            c.predicted.cache_write_tokens,
            c.predicted.cache_read_tokens,
            c.agrees,
            c.billed.cost_usd,
            lost,
            field(&causes_cell(c)),
            field(&details.join(" | ")),
        );
    }
    out
}

/// The summary tables: causes ranked, fixes, skipped records.
pub(crate) fn explain_summary(e: &Explanation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} calls in {} from {} file(s), {} bytes; {} records skipped",
        e.calls.len(),
        if e.conversations == 1 {
            "1 conversation".to_string()
        } else {
            format!("{} conversations", e.conversations)
        },
        e.files.len(),
        e.bytes,
        e.skipped_count
    );
    let _ = writeln!(
        out,
        "billed {} (at pcsim's prices), predicted {}; {} calls where prediction and bill disagree, {} unexplained",
        usd(e.billed_usd),
        usd(e.predicted_usd),
        e.disagreeing_calls,
        e.unexplained_calls
    );
    let _ = writeln!(out, "summary: {}", escape_inline(&e.summary));
    if !e.causes.is_empty() {
        out.push('\n');
        let mut t = TextTable::new(
            &["cause", "calls", "tokens", "lost USD", "most often"],
            &[false, true, true, true, false],
        );
        for c in &e.causes {
            t.row(vec![
                c.cause.to_string(),
                c.calls.to_string(),
                c.tokens.to_string(),
                usd(c.usd),
                escape_inline(&format!(
                    "{} ({})",
                    c.top_detail,
                    calls_word(c.top_detail_calls as u64)
                ))
                .into_owned(),
            ]);
        }
        out.push_str(&t.render());
    }
    out.push('\n');
    let mut t = TextTable::new(
        &["fix", "saving USD", "input USD with it", "what it changes"],
        &[false, true, true, false],
    );
    for f in &e.fixes {
        t.row(vec![
            f.fix.to_string(),
            if f.simulated {
                usd(f.saving_usd)
            } else {
                "-".into()
            },
            if f.simulated {
                usd(f.predicted_usd)
            } else {
                "-".into()
            },
            if f.note.is_empty() {
                f.description.to_string()
            } else {
                format!("{} ({})", f.description, f.note)
            },
        ]);
    }
    out.push_str(&t.render());
    if !e.skipped.is_empty() {
        out.push_str("\nskipped records:\n");
        for (reason, n) in &e.skipped_by_reason {
            let _ = writeln!(out, "  {n} x {}", escape_inline(reason));
        }
        for s in &e.skipped {
            let _ = writeln!(
                out,
                "  {}: {}",
                escape_inline(&s.at),
                escape_inline(&s.reason)
            );
        }
    }
    out
}

/// The per-call table.
pub(crate) fn explain_calls(e: &Explanation) -> String {
    let mut t = TextTable::new(
        &[
            "call",
            "conv",
            "time s",
            "model",
            "prompt",
            "read",
            "write",
            "uncached",
            "pred read",
            "agrees",
            "lost USD",
            "causes",
        ],
        &[
            true, true, true, false, true, true, true, true, true, false, true, false,
        ],
    );
    for c in &e.calls {
        let lost: f64 = c.causes.iter().map(|k| k.usd).sum();
        t.row(vec![
            c.call.to_string(),
            c.conversation.to_string(),
            format!("{:.1}", c.time_s),
            escape_inline(&c.model).into_owned(),
            c.prompt_tokens.to_string(),
            c.billed.cache_read_tokens.to_string(),
            c.billed.cache_write_tokens.to_string(),
            c.billed.uncached_tokens.to_string(),
            c.predicted.cache_read_tokens.to_string(),
            if c.agrees { "yes".into() } else { "NO".into() },
            usd(lost),
            causes_cell(c),
        ]);
    }
    t.render()
}

/// Bars per call: the tokens read, those not read by cause, and the new ones (written or uncached
/// for the first time), in tokens.
pub(crate) fn explain_chart(e: &Explanation, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let categories: Vec<String> = e.calls.iter().map(|c| c.call.to_string()).collect();
    let mut stacks: Vec<(String, Vec<f64>)> = vec![(
        "cache reads".into(),
        e.calls
            .iter()
            .map(|c| c.billed.cache_read_tokens as f64)
            .collect(),
    )];
    for cause in crate::analysis::explain::CAUSES {
        if !e
            .calls
            .iter()
            .any(|c| c.causes.iter().any(|k| k.cause == cause))
        {
            continue;
        }
        stacks.push((
            cause.to_string(),
            e.calls
                .iter()
                .map(|c| {
                    c.causes
                        .iter()
                        .filter(|k| k.cause == cause && cause != "unexplained")
                        .map(|k| k.tokens as f64)
                        .sum()
                })
                .collect(),
        ));
    }
    stacks.push((
        "new tokens (no cause)".into(),
        e.calls
            .iter()
            .map(|c| {
                let lost: u64 = c
                    .causes
                    .iter()
                    .filter(|k| k.cause != "unexplained")
                    .map(|k| k.tokens)
                    .sum();
                c.prompt_tokens
                    .saturating_sub(c.billed.cache_read_tokens)
                    .saturating_sub(lost) as f64
            })
            .collect(),
    ));
    stacks.retain(|(_, v)| v.iter().any(|x| *x > 0.0));
    let bytes = stacked_bar_chart(
        "Tokens of each call: read, not read by cause, new",
        "call",
        &Axis::new("prompt tokens", Unit::Tokens),
        &categories,
        &stacks,
        opts,
    )?;
    let ext = if opts.svg { "svg" } else { "png" };
    Ok(vec![ChartFile {
        name: format!("explain-per-call.{ext}"),
        bytes,
    }])
}

/// Text of a detail for a report: at most 300 characters.
fn truncated(s: &str) -> String {
    let mut out: String = s.chars().take(300).collect();
    if s.chars().count() > 300 {
        out.push_str("...");
    }
    out
}

/// A report table.
fn table(header: &[&str], numeric: &[bool], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
        numeric: numeric.to_vec(),
    })
}

/// Every call with its buckets, causes and details.
fn calls_table(e: &Explanation) -> Block {
    table(
        &[
            "call",
            "model",
            "prompt",
            "read",
            "write",
            "uncached",
            "agrees",
            "causes and details",
        ],
        &[true, false, true, true, true, true, false, false],
        e.calls
            .iter()
            .map(|c| {
                vec![
                    c.call.to_string(),
                    c.model.clone(),
                    c.prompt_tokens.to_string(),
                    c.billed.cache_read_tokens.to_string(),
                    c.billed.cache_write_tokens.to_string(),
                    c.billed.uncached_tokens.to_string(),
                    if c.agrees { "yes".into() } else { "no".into() },
                    c.causes
                        .iter()
                        .map(|k| {
                            format!(
                                "{} {} tokens, {}: {}",
                                k.cause,
                                k.tokens,
                                usd(k.usd),
                                truncated(&k.detail)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                ]
            })
            .collect(),
    )
}

/// The report document (HTML or Markdown): summary, causes, fixes, the chart, the calls with
/// their details (escaped by the document's renderer and truncated), skipped records.
pub(crate) fn explain_document(
    e: &Explanation,
    charts: Vec<Block>,
    printed: &str,
    prices: Vec<crate::report::document::PriceSource>,
    provenance: Provenance,
) -> Document {
    let causes = table(
        &["cause", "calls", "tokens", "lost USD", "most often"],
        &[false, true, true, true, false],
        e.causes
            .iter()
            .map(|c| {
                vec![
                    c.cause.to_string(),
                    c.calls.to_string(),
                    c.tokens.to_string(),
                    usd(c.usd),
                    format!(
                        "{} ({})",
                        truncated(&c.top_detail),
                        calls_word(c.top_detail_calls as u64)
                    ),
                ]
            })
            .collect(),
    );
    let fixes = table(
        &["fix", "saving USD", "what it changes"],
        &[false, true, false],
        e.fixes
            .iter()
            .map(|f| {
                vec![
                    f.fix.to_string(),
                    if f.simulated {
                        usd(f.saving_usd)
                    } else {
                        "not simulated".into()
                    },
                    if f.note.is_empty() {
                        f.description.to_string()
                    } else {
                        format!("{} ({})", f.description, f.note)
                    },
                ]
            })
            .collect(),
    );
    let calls = calls_table(e);
    let mut sections = vec![
        Section {
            heading: "Why calls missed the cache".into(),
            blocks: vec![Block::Text(e.summary.clone()), causes],
        },
        Section {
            heading: "Fixes, simulated on the same trace".into(),
            blocks: vec![fixes],
        },
        Section {
            heading: "Charts".into(),
            blocks: charts,
        },
        Section {
            heading: "Calls".into(),
            blocks: vec![calls],
        },
    ];
    if !e.skipped.is_empty() {
        sections.push(Section {
            heading: "Skipped records".into(),
            blocks: vec![Block::List(
                e.skipped
                    .iter()
                    .map(|s| format!("{}: {}", s.at, truncated(&s.reason)))
                    .collect(),
            )],
        });
    }
    sections.push(Section {
        heading: "As printed by pcsim".into(),
        blocks: vec![Block::Pre(printed.to_string())],
    });
    Document {
        title: "pcsim explain".into(),
        summary: format!(
            "Why each of {} calls missed the cache, what it cost, and what fixes it.",
            e.calls.len()
        ),
        sections,
        assumptions: vec![
            "Region sizes are pcsim's token counts (tools by the model's rendering, text by its tokenizer), scaled so that each call's regions add up to its billed prompt.".into(),
            "A token not read costs what the call paid for its unread tokens, per token, less a cache read, at the call's model prices.".into(),
            "Fixes are billed by the same rules on the same trace with the fix applied; their savings are in input dollars.".into(),
        ],
        scenario_text: None,
        prices,
        provenance,
    }
}
