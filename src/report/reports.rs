//! The report documents of the simulating commands (`--report FILE.html | FILE.md` of run,
//! compare, whatif, advise and diff): the command's tables, its charts, the text it printed, the
//! assumptions, the scenario as simulated, the source of every price used and the provenance, built
//! from the same report structs the command prints. Public through [`crate::report`] (the
//! functions) and [`crate::report::document`] (the document and its options).
//!
//! One concept: the report document of each simulating command, built from the report it printed.

use crate::analysis::uncertainty::Interval;
use crate::base::text::{calls_word, saving_percent};
use crate::error::Result;
use crate::input::scenario::{Scenario, DEFAULT_SCENARIO};
use crate::model::catalog::Catalog;
use crate::report::chart::{ChartFile, ChartOptions};
use crate::report::document::{
    charts, models_of, price_sources, Block, Document, DocumentOptions, Provenance, Section, Table,
};
use crate::report::{share_text, usd};
use crate::sim::simulate::ContextWarning;

/// Provenance of a report: version, catalog, pricing, scenario, seed and runs, and the command line
/// (or call) that made it.
pub(crate) fn provenance(
    catalog: &Catalog,
    scenario: Option<&Scenario>,
    command_line: &str,
) -> Provenance {
    Provenance {
        version: env!("CARGO_PKG_VERSION").to_string(),
        catalog: catalog.describe(),
        pricing: pricing_of(catalog),
        scenario: scenario.map(|s| s.origin.clone()),
        seed: scenario.map(|s| s.seed),
        runs: scenario.map(|s| s.runs as u64),
        command_line: command_line.to_string(),
    }
}

/// The pricing day (or sheet, tier) of a priced catalog, once: the models' `priced` without the
/// per-model price change in force (the price sources list that per model).
fn pricing_of(catalog: &Catalog) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for m in &catalog.models {
        if let Some(p) = &m.priced {
            let common = match p.split_once(" (price change of ") {
                Some((day, rest)) => {
                    format!("{day}{}", rest.split_once(')').map_or("", |(_, r)| r))
                }
                None => p.clone(),
            };
            if !seen.contains(&common) {
                seen.push(common);
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// The scenario text as simulated: the file, or the built-in default. Read as inputs are (a
/// regular file only, never waited on, at most the TOML size limit): a FIFO swapped in for the
/// scenario hung the report, and `/dev/zero` read 2 GB (issue 29).
fn scenario_text(scenario: &Scenario) -> Option<String> {
    if scenario.origin == "built-in default scenario" {
        return Some(DEFAULT_SCENARIO.to_string());
    }
    crate::base::files::read_toml_text(std::path::Path::new(&scenario.origin)).ok()
}

/// What every simulated report assumes, from the scenario.
fn assumptions(scenario: &Scenario, extra: &[String]) -> Vec<String> {
    let mut a = vec![
        format!(
            "{} session(s) of {} calls each{}; {} tools in the list at the start; system prompt {} tokens.",
            scenario.sessions,
            scenario.calls,
            if scenario.sessions > 1 {
                if scenario.shared_cache
                    && scenario.prompt_cache_key
                        == crate::input::scenario::PromptCacheKey::PerSession
                {
                    ", sharing one account's cache, each with its own prompt_cache_key (a cache of its own where the model routes by key)"
                } else if scenario.shared_cache {
                    ", sharing one account's cache"
                } else {
                    ", each with its own cache"
                }
            } else {
                ""
            },
            scenario.tools.len(),
            scenario.system_tokens
        ),
        format!(
            "Random draws (gaps, message sizes, arrivals, implicit cache hits) come from seed {}; {} run(s) simulated.",
            scenario.seed, scenario.runs
        ),
        "Tool definitions are rendered into tokens per model family as the catalog describes; caching follows each model's catalog rules (minimum size, block granularity, TTL, write and read multipliers, tool-change rule).".into(),
        "Prices are the catalog's list prices per million tokens (see the sources below); no discounts, batch prices or taxes.".into(),
    ];
    if !scenario.events.is_empty() {
        a.push(format!(
            "The scenario changes its tool list {} time(s) during a session.",
            scenario.events.len()
        ));
    }
    a.extend(extra.iter().cloned());
    a
}

/// Renders a command's charts in both formats for a report (SVG inline in HTML, PNG beside
/// Markdown), at the size and scale of `png` (its `svg` flag is ignored: both are drawn).
pub(crate) fn report_charts(
    png: &ChartOptions,
    caption: impl Fn(&str) -> String,
    make: impl Fn(&ChartOptions) -> Result<Vec<ChartFile>>,
) -> Result<Vec<Block>> {
    let png = ChartOptions { svg: false, ..*png };
    let p = make(&png)?;
    let s = make(&ChartOptions { svg: true, ..png })?;
    Ok(charts(&s, &p, caption)
        .into_iter()
        .map(Block::Chart)
        .collect())
}

/// A table section built from rows of (cell, right-aligned) pairs.
pub(crate) fn table(header: &[&str], numeric: &[bool], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
        numeric: numeric.to_vec(),
    })
}

/// A simulating command's own part of its report; [`assemble`] adds what every such report has.
struct Parts<'a> {
    title: String,
    summary: String,
    /// The command's sections (the change, the results).
    sections: Vec<Section>,
    /// The charts, drawn as a section of their own after `sections`.
    charts: Vec<Block>,
    /// The models whose prices the report lists (repeats are listed once).
    model_ids: Vec<&'a str>,
    extra_assumptions: Vec<String>,
}

/// The report of a simulating command: its sections, then its charts and the text it printed,
/// the assumptions, the scenario as simulated, the sources of every price used and the provenance.
fn assemble(
    catalog: &Catalog,
    scenario: &Scenario,
    printed: &str,
    command_line: &str,
    parts: Parts,
) -> Document {
    let mut sections = parts.sections;
    sections.push(Section {
        heading: "Charts".into(),
        blocks: parts.charts,
    });
    sections.push(Section {
        heading: "As printed by pcsim".into(),
        blocks: vec![Block::Pre(printed.to_string())],
    });
    let mut ids: Vec<&str> = Vec::new();
    for id in parts.model_ids {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Document {
        title: parts.title,
        summary: parts.summary,
        sections,
        assumptions: assumptions(scenario, &parts.extra_assumptions),
        scenario_text: scenario_text(scenario),
        prices: price_sources(&models_of(catalog, &ids)),
        provenance: provenance(catalog, Some(scenario), command_line),
    }
}

/// A results section: its blocks, then the context-window warnings (the lines of standard error).
fn results(heading: &str, blocks: Vec<Block>, warnings: &[ContextWarning]) -> Section {
    Section {
        heading: heading.into(),
        blocks: blocks
            .into_iter()
            .chain(warning_blocks(warnings.iter().map(|w| w.message())))
            .collect(),
    }
}

/// The context-window warnings as report paragraphs (the same lines as on standard error).
fn warning_blocks(lines: impl IntoIterator<Item = String>) -> Vec<Block> {
    lines
        .into_iter()
        .map(|w| Block::Text(format!("Warning: {w}.")))
        .collect()
}

/// `mean [p5, p95]` in dollars.
fn usd_range(i: &Interval) -> String {
    i.show(usd)
}

/// The blocks of a Monte Carlo report (`--runs N`, N > 1) before the first run's table: what the
/// figures over the runs are (`first` says what the first run's figures are), their table, and
/// the label of the first run's table that follows.
fn over_runs(
    runs_seed: (u64, u64),
    first: &str,
    header: &[&str],
    numeric: &[bool],
    rows: Vec<Vec<String>>,
) -> Vec<Block> {
    let (runs, seed) = runs_seed;
    vec![
        Block::Text(format!(
            "Over {runs} runs from seed {seed}, every candidate simulated on the same timeline in each run: the mean, [p5, p95] the range of 90% of runs, and the share of runs in which the verdict holds. {first}"
        )),
        table(header, numeric, rows),
        Block::Text(format!("The first run alone (seed {seed}):")),
    ]
}

/// Caption of a chart from its file stem.
fn caption(stem: &str) -> String {
    match stem {
        "cumulative-by-call" => "Cumulative cost by call, one line per (model, strategy).".into(),
        "cumulative-by-time" => "Cumulative cost over time since the start.".into(),
        "compare-totals" => "Total cost of each strategy, with its saving against no caching.".into(),
        "whatif-cumulative" => "Cumulative cost as it is and with the tool-list change; the dotted line marks the change.".into(),
        "whatif-difference" => "What the change has saved so far (as it is minus changed); above zero the change has paid for itself.".into(),
        "advise-totals" => "Total cost of the cheapest placements simulated on each model, against no caching, with the recommendation marked.".into(),
        s if s.starts_with("per-call-") => format!("Cost of each call by part: {}.", &s["per-call-".len()..]),
        s => s.to_string(),
    }
}

/// The `run` report (`pcsim run --report`): what the command printed (`printed`, its text
/// table) with its charts, at the options' chart size and scale. `scenario` is the request's
/// (runs and seed as simulated); a scenario read from a file is shown as that file reads now.
pub fn run_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::sim::simulate::RunReport,
    opts: &DocumentOptions,
    printed: &str,
) -> Result<Document> {
    let mut rows = Vec::new();
    for r in &rep.results {
        let none = rep
            .results
            .iter()
            .find(|o| o.model == r.model && o.strategy == "none")
            .map(|o| o.total_usd);
        rows.push(vec![
            r.model.clone(),
            r.strategy_requested.clone(),
            r.strategy.clone(),
            r.totals.prompt_tokens.to_string(),
            r.totals.cache_write_tokens.to_string(),
            r.totals.cache_read_tokens.to_string(),
            format!("{:.1}%", r.totals.cache_hit_ratio * 100.0),
            usd(r.total_usd),
            match none {
                Some(n) if r.strategy != "none" && n > 0.0 => {
                    format!("{}%", saving_percent((n - r.total_usd) / n * 100.0))
                }
                _ => String::new(),
            },
        ]);
    }
    let mut blocks = vec![table(
        &[
            "model",
            "strategy",
            "resolved as",
            "prompt tokens",
            "cache write",
            "cache read",
            "hit",
            "total USD",
            "saving vs none",
        ],
        &[false, false, false, true, true, true, true, true, true],
        rows,
    )];
    let mc: Vec<Vec<String>> = rep
        .results
        .iter()
        .filter_map(|r| {
            let m = r.montecarlo.as_ref()?;
            Some(vec![
                r.model.clone(),
                r.strategy_requested.clone(),
                m.runs.to_string(),
                usd(m.mean_usd),
                match (m.ci95_low_usd, m.ci95_high_usd) {
                    (Some(a), Some(b)) => format!("{} .. {}", usd(a), usd(b)),
                    _ => "-".into(),
                },
                usd(m.p5_usd),
                usd(m.median_usd),
                usd(m.p95_usd),
            ])
        })
        .collect();
    if !mc.is_empty() {
        blocks.push(Block::Text(
            "Monte Carlo: the total over all runs (the table above and the per-call charts are run 0).".into(),
        ));
        blocks.push(table(
            &[
                "model",
                "strategy",
                "runs",
                "mean",
                "95% interval of the mean",
                "p5",
                "median",
                "p95",
            ],
            &[false, false, true, true, true, true, true, true],
            mc,
        ));
    }
    let mut section = results("Results", blocks, &rep.context_warnings);
    for s in &rep.skipped {
        section.blocks.push(Block::Text(format!(
            "Not simulated: {} / {}: {}",
            s.model, s.strategy, s.reason
        )));
    }
    Ok(assemble(
        catalog,
        scenario,
        printed,
        &opts.command_line,
        Parts {
            title: format!("pcsim run: {}", rep.scenario),
            summary: format!(
                "What the session costs on each model and strategy. {}",
                rep.description
            ),
            sections: vec![section],
            charts: report_charts(&opts.charts, caption, |o| {
                crate::report::chart::run_charts(rep, o)
            })?,
            model_ids: rep.results.iter().map(|r| r.model.as_str()).collect(),
            extra_assumptions: Vec::new(),
        },
    ))
}

/// The `compare` report (`pcsim compare --report`): what the command printed (`printed`, its text
/// table) with its charts, at the options' chart size and scale.
pub fn compare_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::compare::CompareReport,
    opts: &DocumentOptions,
    printed: &str,
) -> Result<Document> {
    let outcomes = || {
        rep.comparisons
            .iter()
            .flat_map(|m| m.strategies.iter().map(move |o| (m, o)))
    };
    let mut blocks = Vec::new();
    if rep.runs > 1 {
        blocks.extend(over_runs(
            (rep.runs, rep.seed),
            "The charts draw the first run.",
            &[
                "model",
                "strategy",
                "total USD (mean [p5, p95])",
                "saving USD (mean [p5, p95])",
                "saves in",
                "cheapest in",
            ],
            &[false, false, true, true, true, true],
            outcomes()
                .filter_map(|(m, o)| {
                    let r = o.runs.as_ref()?;
                    Some(vec![
                        m.model.clone(),
                        o.strategy_requested.clone(),
                        usd_range(&r.total_usd),
                        usd_range(&r.saving_usd),
                        share_text(r.share_saving),
                        share_text(r.share_cheapest),
                    ])
                })
                .collect(),
        ));
    }
    blocks.push(table(
        &[
            "model",
            "strategy",
            "total USD",
            "saving USD",
            "saving",
            "cache write",
            "cache read",
            "",
        ],
        &[false, false, true, true, true, true, true, false],
        outcomes()
            .map(|(m, o)| {
                vec![
                    m.model.clone(),
                    o.strategy_requested.clone(),
                    usd(o.total_usd),
                    usd(o.saving_usd),
                    format!("{}%", saving_percent(o.saving_percent)),
                    o.cache_write_tokens.to_string(),
                    o.cache_read_tokens.to_string(),
                    if o.strategy == m.cheapest {
                        "cheapest".into()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect(),
    ));
    Ok(assemble(
        catalog,
        scenario,
        printed,
        &opts.command_line,
        Parts {
            title: format!("pcsim compare: {}", rep.scenario),
            summary: format!(
                "Caching strategies side by side on the same session; savings are against no caching on the same model (positive: cheaper). {}",
                rep.description
            ),
            sections: vec![results("Totals", blocks, &rep.context_warnings)],
            charts: report_charts(&opts.charts, caption, |o| {
                crate::report::chart::compare_charts(rep, o)
            })?,
            model_ids: rep.comparisons.iter().map(|m| m.model.as_str()).collect(),
            extra_assumptions: Vec::new(),
        },
    ))
}

/// The `whatif` report (`pcsim whatif --report`): what the command printed (`printed`, its text
/// table) with its charts, at the options' chart size and scale.
pub fn whatif_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::whatif::WhatifReport,
    opts: &DocumentOptions,
    printed: &str,
) -> Result<Document> {
    let mut blocks = Vec::new();
    if rep.runs > 1 {
        blocks.extend(whatif_over_runs(rep));
    }
    blocks.push(whatif_table(rep));
    blocks.push(Block::Text("Saving USD is as it is minus changed over the whole session (negative: the change costs more); pays back counts calls from K (call K is the first).".into()));
    blocks.push(Block::List(
        rep.outcomes
            .iter()
            .map(|o| format!("{} / {}: {}", o.model, o.strategy, o.verdict))
            .collect(),
    ));
    let change = whatif_change(rep);
    Ok(assemble(
        catalog,
        scenario,
        printed,
        &opts.command_line,
        Parts {
            title: format!("pcsim whatif: {}", rep.scenario),
            summary: format!(
                "What a tool-list change before call {} costs, and when it pays for itself.",
                rep.at_call
            ),
            sections: vec![
                Section {
                    heading: "The change".into(),
                    blocks: vec![Block::List(change)],
                },
                results("Results", blocks, &rep.context_warnings),
            ],
            charts: report_charts(&opts.charts, caption, |o| {
                crate::report::chart::whatif_charts(rep, o)
            })?,
            model_ids: rep.outcomes.iter().map(|o| o.model.as_str()).collect(),
            extra_assumptions: vec![format!(
                "The change applies before call {} of every session; the rest of the session is the same in both simulations.",
                rep.at_call
            )],
        },
    ))
}

/// The `whatif` figures over the Monte Carlo runs (`--runs N`): the saving, how often it saves
/// and pays back, and after how many calls.
fn whatif_over_runs(rep: &crate::analysis::whatif::WhatifReport) -> Vec<Block> {
    over_runs(
        (rep.runs, rep.seed),
        "The verdicts under the next table and the charts are of the first run.",
        &[
            "model",
            "strategy",
            "saving USD (mean [p5, p95])",
            "saves in",
            "pays back in (in the session)",
            "pays back after (median [p5, p95])",
        ],
        &[false, false, true, true, true, true],
        rep.outcomes
            .iter()
            .filter_map(|o| {
                let r = o.runs.as_ref()?;
                Some(vec![
                    o.model.clone(),
                    o.strategy.clone(),
                    usd_range(&r.saving_usd),
                    share_text(r.share_saving),
                    format!(
                        "{} ({})",
                        share_text(r.share_pays_back_extrapolated),
                        share_text(r.share_pays_back)
                    ),
                    match &r.breakeven_calls_extrapolated {
                        Some(i) => format!(
                            "{} [{:.0}, {:.0}]",
                            calls_word(i.median.round() as u64),
                            i.p5,
                            i.p95
                        ),
                        None => "never".into(),
                    },
                ])
            })
            .collect(),
    )
}

/// The `whatif` table of the first run: one row per model and strategy.
fn whatif_table(rep: &crate::analysis::whatif::WhatifReport) -> Block {
    table(
        &[
            "model",
            "strategy",
            "tool-change rule",
            "as it is USD",
            "with the change USD",
            "saving USD",
            "written at K",
            "pays back",
        ],
        &[false, false, false, true, true, true, true, true],
        rep.outcomes
            .iter()
            .map(|o| {
                vec![
                    o.model.clone(),
                    o.strategy.clone(),
                    o.tool_change_rule.clone(),
                    usd(o.baseline_usd),
                    usd(o.changed_usd),
                    usd(o.saving_usd),
                    o.write_at_change_tokens.to_string(),
                    match (o.breakeven_calls, o.breakeven_calls_extrapolated) {
                        (Some(n), _) => calls_word(n),
                        (None, Some(n)) => format!("~{} (beyond the session)", calls_word(n)),
                        (None, None) => "never".into(),
                    },
                ]
            })
            .collect(),
    )
}

/// The tool-list change of a `whatif` as list items: the call, the counts, the names removed and
/// added.
fn whatif_change(rep: &crate::analysis::whatif::WhatifReport) -> Vec<String> {
    let c = &rep.change;
    let mut change = vec![format!(
        "Before call {}: {} tools before, {} after.",
        rep.at_call, c.tools_before, c.tools_after
    )];
    if !c.removed.is_empty() {
        change.push(format!(
            "Removed ({}): {}.",
            c.removed.len(),
            c.removed.join(", ")
        ));
    }
    if !c.added.is_empty() {
        change.push(format!(
            "Added or changed ({}): {}.",
            c.added.len(),
            c.added.join(", ")
        ));
    }
    change
}

/// The `advise` report (`pcsim advise --report`): what the command printed (`printed`, its text
/// table) with its charts, at the options' chart size and scale.
pub fn advise_document(
    catalog: &Catalog,
    scenario: &Scenario,
    rep: &crate::analysis::advise::AdviceReport,
    opts: &DocumentOptions,
    printed: &str,
) -> Result<Document> {
    let mut blocks = Vec::new();
    if rep.runs > 1 {
        blocks.extend(over_runs(
            (rep.runs, rep.seed),
            "Candidates are ranked by their mean.",
            &[
                "model",
                "recommended",
                "total USD (mean [p5, p95])",
                "saving USD (mean [p5, p95])",
                "cheapest in",
            ],
            &[false, false, true, true, true],
            rep.advice
                .iter()
                .filter_map(|a| {
                    let r = a.recommended.runs.as_ref()?;
                    Some(vec![
                        a.model.clone(),
                        a.recommended.strategy.clone(),
                        usd_range(&r.total_usd),
                        usd_range(&r.saving_usd),
                        share_text(r.share_cheapest),
                    ])
                })
                .collect(),
        ));
    }
    blocks.push(table(
        &[
            "model",
            "no caching USD",
            "recommended",
            "total USD",
            "saving USD",
            "saving",
        ],
        &[false, true, false, true, true, true],
        rep.advice
            .iter()
            .map(|a| {
                vec![
                    a.model.clone(),
                    usd(a.none_usd),
                    a.recommended.strategy.clone(),
                    usd(a.recommended.total_usd),
                    usd(a.recommended.saving_usd),
                    format!("{}%", saving_percent(a.recommended.saving_percent)),
                ]
            })
            .collect(),
    ));
    Ok(assemble(
        catalog,
        scenario,
        printed,
        &opts.command_line,
        Parts {
            title: format!("pcsim advise: {}", rep.scenario),
            summary: "Per model: where to put breakpoints, which TTL tier and which tools to drop, each backed by a simulation of the scenario.".into(),
            sections: vec![
                results("Recommendations", blocks, &rep.context_warnings),
                ttl_and_drop_tools(rep),
            ],
            charts: report_charts(&opts.charts, caption, |o| {
                crate::report::chart::advise_charts(rep, o)
            })?,
            model_ids: rep.advice.iter().map(|a| a.model.as_str()).collect(),
            extra_assumptions: Vec::new(),
        },
    ))
}

/// The TTL tier and the tools to drop of an `advise` report: over the runs with `--runs N` (mean
/// [p5, p95], share of runs the verdict holds), else the one run's figures.
fn ttl_and_drop_tools(rep: &crate::analysis::advise::AdviceReport) -> Section {
    let many = rep.runs > 1;
    let (saving, share) = if many {
        ("saving USD (mean [p5, p95])", "holds in")
    } else {
        ("saving USD", "saving")
    };
    let ttl_rows = rep
        .advice
        .iter()
        .filter_map(|a| {
            let t = a.ttl.as_ref()?;
            let (v, h) = match &t.runs {
                Some(r) => (usd_range(&r.saving_usd), share_text(r.share_cheapest)),
                None => (usd(t.saving_usd), String::new()),
            };
            Some(vec![
                a.model.clone(),
                t.mode.clone(),
                t.recommended_tier.clone(),
                v,
                h,
                t.note.clone(),
            ])
        })
        .collect::<Vec<_>>();
    let drop_rows = rep
        .advice
        .iter()
        .flat_map(|a| a.drop_tools.iter().map(move |d| (a, d)))
        .map(|(a, d)| {
            let (v, h) = match &d.runs {
                Some(r) => (usd_range(&r.saving_usd), share_text(r.share_saving)),
                None => (
                    usd(d.saving_usd),
                    format!("{}%", saving_percent(d.saving_percent)),
                ),
            };
            vec![
                a.model.clone(),
                d.name.clone(),
                d.tokens.to_string(),
                d.strategy.clone(),
                v,
                h,
            ]
        })
        .collect::<Vec<_>>();
    let mut blocks = Vec::new();
    if !ttl_rows.is_empty() {
        blocks.push(Block::Text(format!(
            "TTL tier: the cheaper tier by simulation, and what it saves against the dearest tier{}.",
            if many { "; holds in: the share of runs in which it is the cheapest tier" } else { "" }
        )));
        blocks.push(table(
            &[
                "model",
                "mode",
                "TTL tier",
                saving,
                if many { "holds in" } else { "" },
                "note",
            ],
            &[false, false, false, true, true, false],
            ttl_rows,
        ));
    }
    if !drop_rows.is_empty() {
        blocks.push(Block::Text(format!(
            "Tools to drop: the largest tools, and what dropping each saves under the recommended strategy{}.",
            if many { "; holds in: the share of runs in which dropping it saves" } else { "" }
        )));
        blocks.push(table(
            &["model", "tool", "tokens", "strategy", saving, share],
            &[false, false, true, false, true, true],
            drop_rows,
        ));
    }
    Section {
        heading: "TTL tier and tools to drop".into(),
        blocks,
    }
}

/// The `diff` report: the rows side by side, what differs between the tool lists, the prices
/// used and (for two scenarios) A's scenario file as simulated.
#[cfg(feature = "cli")]
// Over 120 lines: the diff document's blocks in the order they appear; each block is a few lines, a
// list of blocks rather than logic.
pub(crate) fn diff_document(
    catalog: &Catalog,
    scenario_a: Option<&Scenario>,
    rep: &crate::analysis::diff::DiffReport,
    printed: &str,
    command_line: &str,
) -> Document {
    use crate::analysis::diff::DiffReport;
    let (a, b, tools, ids, table_block, note) = match rep {
        DiffReport::Tools {
            a,
            b,
            tools,
            models,
            ..
        } => (
            a,
            b,
            tools,
            models.iter().map(|m| m.model.as_str()).collect::<Vec<_>>(),
            table(
                &[
                    "model",
                    "tokens A",
                    "tokens B",
                    "USD/call A",
                    "USD/call B",
                    "saving USD/call",
                    "saving %",
                ],
                &[false, true, true, true, true, true, true],
                models
                    .iter()
                    .map(|m| {
                        vec![
                            m.model.clone(),
                            m.tokens_a.to_string(),
                            m.tokens_b.to_string(),
                            usd(m.usd_per_call_a),
                            usd(m.usd_per_call_b),
                            usd(m.saving_usd_per_call),
                            format!("{}%", saving_percent(m.saving_percent)),
                        ]
                    })
                    .collect(),
            ),
            "Saving: what B saves per call against A at the base input rate (negative: B costs more).",
        ),
        DiffReport::Scenarios {
            a, b, tools, rows, ..
        } => (
            a,
            b,
            tools,
            rows.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
            table(
                &["model", "strategy", "total USD A", "total USD B", "saving USD", "saving %"],
                &[false, false, true, true, true, true],
                rows.iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.strategy.clone(),
                            usd(r.total_usd_a),
                            usd(r.total_usd_b),
                            usd(r.saving_usd),
                            format!("{}%", saving_percent(r.saving_percent)),
                        ]
                    })
                    .collect(),
            ),
            "Saving: what B saves against A over the session (negative: B costs more).",
        ),
    };
    let mut unique: Vec<&str> = Vec::new();
    for id in ids {
        if !unique.contains(&id) {
            unique.push(id);
        }
    }
    let ids = unique;
    let mut change = vec![format!(
        "Tool lists: {} tools in A, {} in B.",
        tools.tools_a, tools.tools_b
    )];
    for (what, v) in [
        ("Added in B", &tools.added),
        ("Removed in B", &tools.removed),
        ("Changed", &tools.changed),
    ] {
        if !v.is_empty() {
            change.push(format!("{what}: {}.", v.join(", ")));
        }
    }
    Document {
        title: format!("pcsim diff: {a} against {b}"),
        summary: format!("What B ({b}) saves against A ({a}), per model."),
        sections: vec![
            Section {
                heading: "What differs".into(),
                blocks: vec![Block::List(change)],
            },
            Section {
                heading: "Results".into(),
                blocks: [table_block, Block::Text(note.into())]
                    .into_iter()
                    .chain(warning_blocks(rep.warnings()))
                    .collect(),
            },
            Section {
                heading: "As printed by pcsim".into(),
                blocks: vec![Block::Pre(printed.to_string())],
            },
        ],
        assumptions: match scenario_a {
            Some(s) => assumptions(
                s,
                &["The figures above are of scenario A; B is simulated with the same models, strategies, runs and seed.".into()],
            ),
            None => vec!["Tool lists are priced per call at each model's base input rate (no caching): the cost of sending the tool block once.".into()],
        },
        scenario_text: scenario_a.and_then(scenario_text),
        prices: price_sources(&models_of(catalog, &ids)),
        provenance: provenance(catalog, scenario_a, command_line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario path that has become a FIFO or a device since it was loaded is not read.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_scenario_text_of_a_report_is_never_read_from_a_fifo_or_device() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("s.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for origin in [fifo.to_str().unwrap(), "/dev/zero"] {
            let s = Scenario::from_toml_str(DEFAULT_SCENARIO, origin, std::path::Path::new("."))
                .unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(scenario_text(&s).map(|t| t.len()));
            });
            // A read that waits on the FIFO never answers (the thread is left blocked).
            let text = rx.recv_timeout(std::time::Duration::from_secs(20));
            assert_eq!(text, Ok(None), "{origin}");
        }
    }
}
