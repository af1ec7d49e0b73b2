//! `advise`'s report as a terminal table: the cheapest configuration per model, the TTL and tool
//! advice, and the candidates (one run, or the means of `--runs N`).

use crate::analysis::advise::*;
use crate::analysis::breakeven::BreakEven;
use crate::analysis::percent;
use crate::base::text::usd;
use crate::report::share_text;
use crate::report::skip_lines;
use std::fmt::Write as _;

impl AdviceReport {
    /// The terminal report: one block per model.
    pub fn table(&self) -> String {
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls); every saving below is from a simulation of it{}\n",
            crate::base::terminal::escape_inline(&self.scenario),
            self.sessions,
            self.calls_per_session,
            if self.runs > 1 {
                format!(
                    " ({} runs from seed {}: every figure is a mean over the runs, [p5, p95] the range of 90% of runs; candidates ranked by their mean)",
                    self.runs, self.seed
                )
            } else {
                String::new()
            }
        );
        for a in &self.advice {
            let p = &a.breakpoints;
            // With `--runs` the figures below are means over the runs (the JSON's point figures
            // are the first run's, its `runs` objects the figures over all runs).
            let by_name = |name: &str| p.candidates.iter().find(|c| c.strategy == name);
            let none_usd = by_name("none").map_or(a.none_usd, rank);
            let _ = writeln!(
                out,
                "\n{} ({}): no caching {}{}",
                a.model,
                a.model_name,
                if self.runs > 1 { "mean " } else { "" },
                usd(none_usd)
            );
            recommended_lines(&mut out, a);
            let (placed, placed_saving, placed_percent) =
                match by_name(&p.recommended).and_then(|c| c.runs.as_ref()) {
                    Some(x) => (
                        format!("mean {}", usd(x.total_usd.mean)),
                        x.saving_usd.mean,
                        percent(x.saving_usd.mean, none_usd),
                    ),
                    None => (usd(p.total_usd), p.saving_usd, p.saving_percent),
                };
            let _ = writeln!(
                out,
                "  breakpoints  {}: {}, saves {} ({:.1}%) vs none, {} vs the default {}",
                p.recommended,
                placed,
                usd(placed_saving),
                placed_percent,
                usd(p.saving_vs_default_usd),
                p.default_strategy
            );
            if let Some(t) = &a.ttl {
                ttl_line(&mut out, t);
            }
            if let Some(b) = &a.break_even {
                break_even_line(&mut out, b);
            }
            for d in &a.drop_tools {
                drop_tool_line(&mut out, d);
            }
            for n in &a.notes {
                let _ = writeln!(out, "  note         {n}");
            }
            for line in skip_lines(&a.skipped) {
                let _ = writeln!(out, "  {line}");
            }
        }
        out
    }
}

/// The recommendation of one model, and with `--runs` the placements that cost the same and the
/// runner-up, so a reader sees the margin.
fn recommended_lines(out: &mut String, a: &ModelAdvice) {
    let r = &a.recommended;
    let p = &a.breakpoints;
    match &r.runs {
        None => {
            let _ = writeln!(
                out,
                "  recommended  {}: {}, saves {} ({:.1}%) vs none",
                r.strategy,
                usd(r.total_usd),
                usd(r.saving_usd),
                r.saving_percent
            );
        }
        Some(x) => {
            let _ = writeln!(
                out,
                "  recommended  {}: mean {}, saves {} [{}, {} in 90% of runs] vs none; the cheapest candidate in {} of runs",
                r.strategy,
                usd(x.total_usd.mean),
                usd(x.saving_usd.mean),
                usd(x.saving_usd.p5),
                usd(x.saving_usd.p95),
                share_text(x.share_cheapest)
            );
            // Placements that cost the same, and the runner-up, so a reader sees the margin.
            let mean = |c: &Candidate| c.runs.as_ref().map_or(c.total_usd, |y| y.total_usd.mean);
            let same = |c: &Candidate| {
                (mean(c) - x.total_usd.mean).abs() <= 1e-9 * x.total_usd.mean.abs().max(1e-9)
            };
            let ties: Vec<&str> = p
                .candidates
                .iter()
                .filter(|c| c.strategy != r.strategy && same(c))
                .map(|c| c.strategy.as_str())
                .collect();
            if !ties.is_empty() {
                let _ = writeln!(out, "  same cost    {}", ties.join(", "));
            }
            if let Some(second) = p
                .candidates
                .iter()
                .find(|c| c.strategy != r.strategy && !same(c))
            {
                if let Some(y) = &second.runs {
                    let _ = writeln!(
                        out,
                        "  runner-up    {}: mean {} ({} more), the cheapest in {} of runs",
                        second.strategy,
                        usd(y.total_usd.mean),
                        usd(y.total_usd.mean - x.total_usd.mean),
                        share_text(y.share_cheapest)
                    );
                }
            }
        }
    }
}

/// The TTL advice of one model: every tier with its figures, the one recommended and its saving.
fn ttl_line(out: &mut String, t: &TtlAdvice) {
    let tiers: Vec<String> = t
        .tiers
        .iter()
        .map(|x| {
            format!(
                "{} {} (next call within TTL {:.1}%, {})",
                x.tier,
                match &x.runs {
                    Some(r) => format!(
                        "mean {}{}",
                        r.total_usd.show(usd),
                        if t.tiers.len() > 1 {
                            format!(
                                ", the cheapest tier in {} of runs",
                                share_text(r.share_cheapest)
                            )
                        } else {
                            String::new()
                        }
                    ),
                    None => usd(x.total_usd),
                },
                x.p_next_call_within_ttl * 100.0,
                x.reads_to_break_even
                    .map_or("never pays".to_string(), |n| format!(
                        "pays from {n} read(s)"
                    ))
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "  TTL          {} [{}]: {}; saves {}{}",
        t.recommended_tier,
        t.mode,
        tiers.join("; "),
        match &t.runs {
            Some(r) if t.tiers.len() > 1 =>
                format!("mean {} against the dearest tier", r.saving_usd.show(usd)),
            Some(r) => usd(r.saving_usd.mean),
            None => usd(t.saving_usd),
        },
        if t.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", t.note)
        }
    );
}

/// The break-even of one model's tools + system prefix: the reads a write needs to pay.
fn break_even_line(out: &mut String, b: &BreakEven) {
    let _ = writeln!(
        out,
        "  break-even   tools + system prefix {} tokens (minimum {}): {}",
        b.prefix_tokens,
        b.min_tokens,
        match b.reads_needed {
            Some(n) => format!(
                "a write pays from {n} read(s) (w {}, r {}), saving {} per write",
                b.write_multiplier,
                b.read_multiplier,
                usd(b.saving_usd_at_reads_needed)
            ),
            None if !b.cacheable => "too short to be cached".into(),
            None => "reads cost as much as base input: caching never pays".into(),
        }
    );
}

/// What dropping one tool saves (or costs) under the recommended strategy.
fn drop_tool_line(out: &mut String, d: &DropTool) {
    let Some(x) = &d.runs else {
        let _ = writeln!(
            out,
            "  drop tool    {} ({} tokens): {} ({:.1}%) under {}",
            d.name,
            d.tokens,
            if d.saving_usd >= 0.0 {
                format!("saves {}", usd(d.saving_usd))
            } else {
                format!("costs {} more, keep it", usd(-d.saving_usd))
            },
            d.saving_percent.abs(),
            d.strategy
        );
        return;
    };
    let kept = x.total_usd.mean + x.saving_usd.mean;
    let mean = x.saving_usd.mean;
    let _ = writeln!(
        out,
        "  drop tool    {} ({} tokens): {} ({:.1}%) under {}; saves in {} of runs",
        d.name,
        d.tokens,
        if mean >= 0.0 {
            format!("saves mean {}", x.saving_usd.show(usd))
        } else {
            format!("costs mean {} more, keep it", usd(-mean))
        },
        percent(mean, kept).abs(),
        d.strategy,
        share_text(x.share_saving)
    );
}
