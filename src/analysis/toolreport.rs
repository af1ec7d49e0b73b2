//! What a tool list costs per call on each model, what each tool contributes, what trimming would save,
//! and how the cost grows with the number of tools (the data behind `pcsim tools` and `pcsim sweep`).
//!
//! Everything here returns plain serialisable structs so that tables, JSON, CSV and charts are all
//! drawn from the same figures.

use serde::Serialize;

use crate::base::text::closest;
use crate::error::{Error, Result};
use crate::input::trim::Trim;
use crate::model::catalog::ModelSpec;
use crate::model::render::TemplateKind;
use crate::model::tokens::ToolRendering;
use crate::model::tools::{synthetic_tools, Tool};

/// Calls in the "episode" the tools report prices (a short agent task).
pub(crate) const EPISODE_CALLS: u64 = 10;

/// One tool's tokens on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ToolCost {
    /// Tool name.
    pub name: String,
    /// Tokens of this tool (without the preamble).
    pub tokens: u64,
    /// Fraction of the whole tool block (0..1); the rest of the block is the preamble and other tools.
    pub share: f64,
}

/// What one trim would save on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TrimSaving {
    /// Trim name (`first-sentence`, `no-param-descriptions`, `required-only`, `all`).
    pub trim: &'static str,
    /// Tokens of the trimmed tool block.
    pub tool_block_tokens: u64,
    /// Tokens saved per call.
    pub saved_tokens: i64,
    /// Saving as a percentage of the untrimmed block.
    pub saved_percent: f64,
    /// Dollars saved per call at the base input price.
    pub saved_usd_per_call: f64,
}

/// The tool block on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ModelToolCost {
    /// Model id.
    pub model: String,
    /// Model name.
    pub model_name: String,
    /// Rendering family.
    pub family: String,
    /// Base input price used, USD per million tokens.
    pub input_usd_per_mtok: f64,
    /// Tokens of the whole tool block, billed on every call.
    pub tool_block_tokens: u64,
    /// The preamble part of the block (present when any tool is).
    pub preamble_tokens: u64,
    /// Dollars per call for the tool block at the base input price (no caching).
    pub usd_per_call: f64,
    /// Dollars for the tool block over a [`EPISODE_CALLS`]-call episode (no caching).
    pub usd_per_10_calls: f64,
    /// Every tool, largest first (ties by name).
    pub tools: Vec<ToolCost>,
    /// What each trim would save.
    pub trims: Vec<TrimSaving>,
}

/// The `tools` report: one entry per model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub(crate) struct ToolReport {
    /// Number of tools priced.
    pub tool_count: usize,
    /// Per model.
    pub models: Vec<ModelToolCost>,
    /// Warnings from loading (inputs that clients accept but that are probably unintended).
    pub warnings: Vec<String>,
}

/// Tokens of `tools` on `model` (preamble included), each tool's tokens in input order.
///
/// Each text is rendered and counted once (`block_and_tool_tokens`): a list at the tool limit is
/// tokenized twice per model and trim, not three times. The total is the preamble plus the tools,
/// as [`ToolRendering::preamble_for`] defines the preamble.
fn block(model: &ModelSpec, tools: &[Tool]) -> (u64, Vec<u64>) {
    let r = model.rendering();
    if r.template == TemplateKind::Linear {
        let per: Vec<u64> = tools.iter().map(|t| r.tool_tokens(t)).collect();
        let sum: u64 = per.iter().sum();
        return (r.preamble_for(tools, sum) + sum, per);
    }
    let (block, per) = r.block_and_tool_tokens(tools);
    let sum: u64 = per.iter().sum();
    // preamble_for is block - sum, never below 0; block_and_tool_tokens keeps block >= sum.
    (block.max(sum), per)
}

/// One rendering's counts of a tool list: its block, each tool, and the block of each trim.
struct Counted {
    total: u64,
    per: Vec<u64>,
    trims: Vec<u64>,
}

/// Prices a tool list on each model, with per-tool shares and the trimming what-ifs.
pub(crate) fn tool_report(
    models: &[&ModelSpec],
    tools: &[Tool],
    warnings: Vec<String>,
) -> ToolReport {
    let trimmed: Vec<(Trim, Vec<Tool>)> = Trim::ALL.iter().map(|t| (*t, t.apply(tools))).collect();
    // Models that render tools alike (most of a family) get the same counts: each list is counted
    // once per distinct rendering, not once per model (10,000 tools on every model of the
    // catalog: 5.75 s before).
    let mut counted: Vec<(&ToolRendering, Counted)> = Vec::new();
    let models = models
        .iter()
        .map(|m| {
            let r = m.rendering();
            let i = match counted.iter().position(|(c, _)| *c == r) {
                Some(i) => i,
                None => {
                    let (total, per) = block(m, tools);
                    let trims = trimmed.iter().map(|(_, ts)| block(m, ts).0).collect();
                    counted.push((r, Counted { total, per, trims }));
                    counted.len() - 1
                }
            };
            let Counted {
                total,
                per,
                trims: trim_totals,
            } = &counted[i].1;
            let (total, per) = (*total, per.clone());
            let share = |x: u64| {
                if total == 0 {
                    0.0
                } else {
                    x as f64 / total as f64
                }
            };
            let mut costs: Vec<ToolCost> = tools
                .iter()
                .zip(&per)
                .map(|(t, &tokens)| ToolCost {
                    name: t.name.clone(),
                    tokens,
                    share: share(tokens),
                })
                .collect();
            costs.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
            let trims = trimmed
                .iter()
                .zip(trim_totals)
                .map(|((trim, _), &after)| {
                    let saved = total as i64 - after as i64;
                    TrimSaving {
                        trim: trim.as_str(),
                        tool_block_tokens: after,
                        saved_tokens: saved,
                        saved_percent: if total == 0 {
                            0.0
                        } else {
                            100.0 * saved as f64 / total as f64
                        },
                        saved_usd_per_call: m.input_usd(saved as f64),
                    }
                })
                .collect();
            let usd_per_call = m.input_usd(total as f64);
            ModelToolCost {
                model: m.id.clone(),
                model_name: m.name.clone(),
                family: m.family.clone(),
                input_usd_per_mtok: m.input_usd_per_mtok.value,
                tool_block_tokens: total,
                preamble_tokens: total - per.iter().sum::<u64>(),
                usd_per_call,
                usd_per_10_calls: usd_per_call * EPISODE_CALLS as f64,
                tools: costs,
                trims,
            }
        })
        .collect();
    ToolReport {
        tool_count: tools.len(),
        models,
        warnings,
    }
}

/// Applies `--keep` (only these, in the list's order) and `--drop` (all but these). Every name must
/// exist, so a typo cannot silently price the wrong set.
pub(crate) fn filter_tools(
    tools: Vec<Tool>,
    keep: &[String],
    drop: &[String],
) -> Result<Vec<Tool>> {
    for (flag, names) in [("--keep", keep), ("--drop", drop)] {
        for n in names {
            if !tools.iter().any(|t| &t.name == n) {
                let hint = closest(n, tools.iter().map(|t| t.name.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(
                    flag,
                    n.as_str(),
                    format!("no tool of that name in the given files{hint}"),
                ));
            }
        }
    }
    Ok(tools
        .into_iter()
        .filter(|t| keep.is_empty() || keep.contains(&t.name))
        .filter(|t| !drop.contains(&t.name))
        .collect())
}

/// One point of a sweep: `tools` synthetic tools on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SweepPoint {
    /// Model id.
    pub model: String,
    /// Number of tools.
    pub tools: usize,
    /// Tokens of the tool block.
    pub tool_block_tokens: u64,
    /// Dollars per call for it at the base input price.
    pub usd_per_call: f64,
}

/// The straight line a sweep traces on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SweepSlope {
    /// Model id.
    pub model: String,
    /// Tokens added by each further tool (the slope the facts quote: 173 Claude, 64 GPT-5.6).
    pub tokens_per_tool: f64,
    /// Tokens of the preamble (the jump from 0 to 1 tool minus one tool).
    pub preamble_tokens: u64,
    /// Dollars added per call by each further tool.
    pub usd_per_tool_per_call: f64,
}

/// A sweep over synthetic tool sets of identical shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub(crate) struct SweepReport {
    /// Parameters per synthetic tool.
    pub params: usize,
    /// Largest tool count.
    pub max_tools: usize,
    /// Points, model by model, 0..=max_tools tools each.
    pub points: Vec<SweepPoint>,
    /// Per model, the slope of its line.
    pub slopes: Vec<SweepSlope>,
}

/// Tool blocks of 0..=`max_tools` synthetic tools with `params` parameters each, on each model.
///
/// Each tool is rendered and counted a bounded number of times ([`prefix_blocks`]), so the work is
/// linear in `max_tools` (counting every prefix's whole list would be quadratic).
pub(crate) fn sweep(models: &[&ModelSpec], max_tools: usize, params: usize) -> SweepReport {
    let all = synthetic_tools(1, max_tools, params);
    let mut points = Vec::with_capacity(models.len() * (max_tools + 1));
    let mut slopes = Vec::with_capacity(models.len());
    for m in models {
        let r = m.rendering();
        let PrefixBlocks { blocks, per, .. } = prefix_blocks(r, &all);
        for (n, &tokens) in blocks.iter().enumerate() {
            points.push(SweepPoint {
                model: m.id.clone(),
                tools: n,
                tool_block_tokens: tokens,
                usd_per_call: m.input_usd(tokens as f64),
            });
        }
        let slope = if per.is_empty() {
            0.0
        } else {
            per.iter().sum::<u64>() as f64 / per.len() as f64
        };
        slopes.push(SweepSlope {
            model: m.id.clone(),
            tokens_per_tool: slope,
            preamble_tokens: blocks
                .get(1)
                .map_or(0, |b| b.saturating_sub(per.first().copied().unwrap_or(0))),
            usd_per_tool_per_call: m.input_usd(slope),
        });
    }
    SweepReport {
        params,
        max_tools,
        points,
        slopes,
    }
}

/// `block_tokens(&tools[..n])` for every n in 0..=len, and `tool_tokens` of each tool, in time linear
/// in the list.
///
/// The block of a template kind is `max(round(factor x corrected(n)) + preamble, parts(n))`, where
/// `corrected(n)` is the depth-corrected count of the rendered prefix (`corrected_count`) and
/// `parts(n)` the sum of the first n tool counts. `corrected(n)` is found from `corrected(n - 1)`
/// by the change that adding tool n makes to a list of the one tool before it: the tokenizer
/// splits text into pieces that do not cross a tool's start, so the count of the earlier tools
/// and of the list's header does not change, and only the end of the list (the last tool, the
/// joint, the footer) is counted again. That locality is a property of the templates and the
/// tokenizer, so it is checked: the incremental count of the whole list must equal the count
/// of the whole list, and otherwise every prefix is counted whole (exact, quadratic).
pub(crate) fn prefix_blocks(r: &ToolRendering, tools: &[Tool]) -> PrefixBlocks {
    let per: Vec<u64> = tools.iter().map(|t| r.tool_tokens(t)).collect();
    let mut blocks = Vec::with_capacity(tools.len() + 1);
    blocks.push(0);
    if tools.is_empty() {
        return PrefixBlocks {
            blocks,
            per,
            incremental: true,
        };
    }
    if r.template == TemplateKind::Linear {
        // The linear kind has no rendering: the preamble is fixed.
        let preamble = r.preamble_for(&tools[..1], per[0]);
        let mut sum = 0u64;
        for p in &per {
            sum += p;
            blocks.push(sum + preamble);
        }
        return PrefixBlocks {
            blocks,
            per,
            incremental: true,
        };
    }
    // The change tool n makes: the two-tool list (n - 1, n) less the one-tool list (n - 1), each
    // counted whole, plus tool n's own depth correction (as `corrected_count` applies it). The
    // changes are independent, so they are counted in parallel.
    use rayon::prelude::*;
    let count = |list: &[Tool]| r.count_rendered(&r.render(list)) as f64;
    let depth = |t: &Tool| -> f64 {
        if r.depth_slope() == 0.0 {
            0.0
        } else {
            r.raw_tool_count(t) as f64 * (r.depth_weight(t) - 1.0)
        }
    };
    let changes: Vec<f64> = (2..=tools.len())
        .into_par_iter()
        .map(|n| count(&tools[n - 2..n]) - count(&tools[n - 2..n - 1]) + depth(&tools[n - 1]))
        .collect();
    let mut corrected = Vec::with_capacity(tools.len() + 1);
    corrected.push(0.0);
    corrected.push(count(&tools[..1]) + depth(&tools[0]));
    for c in changes {
        let last = corrected[corrected.len() - 1];
        corrected.push(last + c);
    }
    let whole = r.corrected_count(tools);
    let exact = (corrected[tools.len()] - whole).abs() < 1e-6 * whole.abs().max(1.0);
    let mut parts = 0u64;
    for n in 1..=tools.len() {
        parts += per[n - 1];
        blocks.push(if exact {
            // The combination `ToolRendering::block_and_tool_tokens` makes of the whole count
            // and the parts (factor, per-tool residual, preamble by list size).
            r.block_of(corrected[n], parts, n)
        } else {
            r.block_tokens(&tools[..n])
        });
    }
    PrefixBlocks {
        blocks,
        per,
        incremental: exact,
    }
}

/// What [`prefix_blocks`] finds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrefixBlocks {
    /// `block_tokens` of the first n tools, n = 0..=len.
    pub blocks: Vec<u64>,
    /// `tool_tokens` of each tool.
    pub per: Vec<u64>,
    /// Whether the blocks were found incrementally (false: the check failed and every prefix
    /// was counted whole).
    pub incremental: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog::Catalog;

    fn catalog() -> Catalog {
        Catalog::embedded().unwrap()
    }

    #[test]
    fn prefix_blocks_equal_the_block_of_every_prefix() {
        // Every family of the catalog, synthetic tools of several shapes and real-looking ones
        // with long descriptions and nesting: the incremental count is the whole count.
        let c = catalog();
        let mut lists = vec![
            synthetic_tools(1, 15, 0),
            synthetic_tools(1, 15, 1),
            synthetic_tools(1, 15, 3),
            synthetic_tools(7, 10, 20),
        ];
        let mut mixed = synthetic_tools(1, 6, 2);
        mixed.insert(2, synthetic_tool_with_long_description());
        mixed.push(synthetic_tool_with_long_description());
        lists.push(mixed);
        for m in &c.models {
            let r = m.rendering();
            for tools in &lists {
                let PrefixBlocks {
                    blocks,
                    per,
                    incremental,
                } = prefix_blocks(r, tools);
                // Not by the whole-prefix fallback: the incremental count itself is exact.
                assert!(incremental, "{}", m.id);
                assert_eq!(blocks.len(), tools.len() + 1);
                for n in 0..=tools.len() {
                    assert_eq!(blocks[n], r.block_tokens(&tools[..n]), "{} n={n}", m.id);
                }
                for (t, p) in tools.iter().zip(&per) {
                    assert_eq!(*p, r.tool_tokens(t));
                }
            }
        }
    }

    #[test]
    fn report_shares_sum_with_preamble_to_one_and_sort_largest_first() {
        let c = catalog();
        let models = c.select(&[]).unwrap();
        let mut tools = synthetic_tools(1, 3, 2);
        tools.push(synthetic_tool_with_long_description());
        let r = tool_report(&models, &tools, vec![]);
        assert_eq!(r.models.len(), models.len());
        for m in &r.models {
            let (total, _) = block(c.model(&m.model).unwrap(), &tools);
            assert_eq!(m.tool_block_tokens, total);
            let sum: u64 = m.tools.iter().map(|t| t.tokens).sum();
            assert_eq!(sum + m.preamble_tokens, m.tool_block_tokens);
            let shares: f64 = m.tools.iter().map(|t| t.share).sum::<f64>()
                + m.preamble_tokens as f64 / m.tool_block_tokens as f64;
            assert!((shares - 1.0).abs() < 1e-9, "{shares}");
            assert_eq!(m.tools[0].name, "long");
            assert!(m.tools.windows(2).all(|w| w[0].tokens >= w[1].tokens));
            let spec = c.model(&m.model).unwrap();
            assert!((m.usd_per_call - spec.input_usd(total as f64)).abs() < 1e-15);
            assert!((m.usd_per_10_calls - 10.0 * m.usd_per_call).abs() < 1e-12);
            // Each trim saves something on this input, and all together save the most.
            let all = m.trims.iter().find(|t| t.trim == "all").unwrap();
            for t in &m.trims {
                assert!(t.saved_tokens > 0, "{} {}", m.model, t.trim);
                assert_eq!(t.tool_block_tokens as i64 + t.saved_tokens, total as i64);
                assert!(t.saved_tokens <= all.saved_tokens);
            }
        }
    }

    fn synthetic_tool_with_long_description() -> Tool {
        Tool {
            name: "long".into(),
            description: "Does one thing. ".repeat(100),
            input_schema: serde_json::json!({"type":"object","properties":{
                "q":{"type":"string","description":"The query."},
                "limit":{"type":"integer","description":"Most results."}},"required":["q"]}),
        }
    }

    #[test]
    fn empty_tool_list_costs_nothing() {
        let c = catalog();
        let r = tool_report(&c.select(&[]).unwrap(), &[], vec![]);
        for m in &r.models {
            assert_eq!((m.tool_block_tokens, m.usd_per_call), (0, 0.0));
            assert!(m.trims.iter().all(|t| t.saved_tokens == 0));
        }
    }

    #[test]
    fn filter_keeps_in_order_drops_and_rejects_unknown_names() {
        let tools = synthetic_tools(1, 4, 1);
        let names = |ts: &[Tool]| ts.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let kept = filter_tools(
            tools.clone(),
            &["synthetic_tool_03".into(), "synthetic_tool_01".into()],
            &[],
        )
        .unwrap();
        assert_eq!(names(&kept), ["synthetic_tool_01", "synthetic_tool_03"]);
        let dropped = filter_tools(tools.clone(), &[], &["synthetic_tool_02".into()]).unwrap();
        assert_eq!(dropped.len(), 3);
        let e = filter_tools(tools, &["synthetic_tool_9".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--keep") && e.contains("synthetic_tool_9") && e.contains("did you mean"),
            "{e}"
        );
    }

    #[test]
    fn sweep_is_linear_from_the_preamble_and_matches_the_report() {
        let c = catalog();
        let models = c.select(&[]).unwrap();
        let s = sweep(&models, 5, 3);
        assert_eq!(s.points.len(), models.len() * 6);
        for m in &models {
            let pts: Vec<&SweepPoint> = s.points.iter().filter(|p| p.model == m.id).collect();
            assert_eq!(pts[0].tool_block_tokens, 0);
            // Every point equals the block of that many synthetic tools, as `tools` prices it.
            for p in &pts {
                let (want, _) = block(m, &synthetic_tools(1, p.tools, 3));
                assert_eq!(p.tool_block_tokens, want);
            }
            let slope = s.slopes.iter().find(|x| x.model == m.id).unwrap();
            let rise = (pts[5].tool_block_tokens - pts[1].tool_block_tokens) as f64 / 4.0;
            // Linear but for a fitted intercept taken in proportion on short lists (Gemini's,
            // `preamble_full_from_tools`): its growth from 1 to 5 tools is part of the rise.
            let r = m.rendering();
            let intercept = (r.preamble(5) as f64 - r.preamble(1) as f64) / 4.0;
            assert!(
                (rise - slope.tokens_per_tool - intercept).abs() <= 1.0,
                "{rise} {slope:?}"
            );
        }
        let csv = s.csv();
        assert_eq!(csv.lines().count(), 1 + s.points.len());
        assert!(csv.starts_with("model,tools,tool_block_tokens,usd_per_call\n"));
    }
}
