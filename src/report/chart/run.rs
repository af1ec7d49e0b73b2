//! The charts of a `run` report: cumulative cost by call and by time, and a per-call breakdown for
//! every (model, strategy).

use super::hbar::{grouped_bar_chart, Bar};
use super::style::group;
use super::{
    line_chart_with, stacked_bar_chart, Axis, ChartOptions, ColourKey, LineExtras, LineSeries, Unit,
};
use crate::analysis::compare::CompareReport;
use crate::error::{Error, Result};
use crate::report::usd;
use crate::sim::billing::CallBill;
use crate::sim::simulate::{RunReport, SimResult};

/// A rendered chart and the file name it should be written under.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFile {
    /// File name (no folder), e.g. `cumulative-by-call.png`.
    pub name: String,
    /// PNG bytes or SVG text.
    pub bytes: Vec<u8>,
}

/// A file-name-safe form of `text`: ASCII letters, digits, `.` and `_` are kept, anything else becomes
/// `-` (runs collapsed), so `explicit:tools@1h+system` becomes `explicit-tools-1h-system`.
pub(crate) fn sanitize_file_stem(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches(['-', '.']).to_string();
    if out.is_empty() {
        "chart".to_string()
    } else {
        // File systems limit a name to 255 bytes: a long id (5,000 characters) is cut and ended
        // with a hash of the whole stem, so names stay valid, stable and distinct.
        crate::base::files::shorten_name(&out, 120)
    }
}

/// Renders the charts of `report` in the format of `opts`:
/// `cumulative-by-call`, `cumulative-by-time` (one line per (model, strategy)) and
/// `per-call-<model>-<strategy>` (stacked dollars per call) for every result, split into parts at the
/// prices each result was billed at.
///
/// Errors with [`Error::Unsupported`] when a result has no calls (nothing to draw).
pub fn run_charts(report: &RunReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let ext = opts.extension();
    let runs: Vec<Run> = report
        .results
        .iter()
        .map(|r| Run {
            model: &r.model,
            strategy: &r.strategy_requested,
            calls: &r.calls,
            curve: r.montecarlo.as_ref().map(|m| (m.runs, m.curve.as_slice())),
        })
        .collect();
    let extras = LineExtras {
        colours: ColourKey::new(runs.iter().map(|r| r.model)),
        log_y: opts.log_scale,
        ..LineExtras::default()
    };
    let mut files = cumulative_charts(
        &report.scenario,
        &report.description,
        "",
        &runs,
        &extras,
        opts,
    )?;
    let call_axis = call_axis(&runs);
    let mut used: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
    for r in &report.results {
        let stem = sanitize_file_stem(&format!("per-call-{}-{}", r.model, r.strategy_requested));
        let mut name = format!("{stem}.{ext}");
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{stem}-{k}.{ext}");
            k += 1;
        }
        used.push(name.clone());
        files.push(ChartFile {
            name,
            bytes: per_call_chart(report, r, call_axis, opts)?,
        });
    }
    Ok(files)
}

/// One simulated (model, strategy) as the cumulative charts need it.
struct Run<'a> {
    model: &'a str,
    strategy: &'a str,
    calls: &'a [CallBill],
    /// Monte Carlo runs and percentile curve, when several runs were simulated.
    curve: Option<(u64, &'a [crate::sim::montecarlo::CurvePoint])>,
}

fn call_axis(runs: &[Run]) -> &'static str {
    let sessions = runs
        .iter()
        .flat_map(|r| r.calls.iter().map(|c| c.session))
        .max()
        .unwrap_or(0);
    if sessions > 1 {
        "call number (all sessions, in time order)"
    } else {
        "call number"
    }
}

/// `cumulative-by-call` and `cumulative-by-time`: one line per run (colour = model, dash = strategy).
fn cumulative_charts(
    scenario: &str,
    description: &str,
    what_prefix: &str,
    runs: &[Run],
    extras: &LineExtras,
    opts: &ChartOptions,
) -> Result<Vec<ChartFile>> {
    let ext = opts.extension();
    let first = runs
        .first()
        .ok_or_else(|| super::nothing_to_draw(scenario, "no simulated results"))?;
    let calls = first.calls.len();
    let sessions = first.calls.iter().map(|c| c.session).max().unwrap_or(0);
    let mut what = format!("{what_prefix}{} calls", group(calls as f64, 0));
    if sessions > 1 {
        what.push_str(&format!(" in {} sessions", group(sessions as f64, 0)));
    }
    let subtitle = if description.is_empty() {
        format!("scenario {scenario}: {what}")
    } else {
        format!("{description} ({what})")
    };
    let lines = |point: &dyn Fn(usize, &CallBill) -> (f64, f64)| -> Vec<LineSeries> {
        runs.iter()
            .map(|r| LineSeries {
                group: r.model.to_string(),
                style: r.strategy.to_string(),
                points: r
                    .calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| point(i, c))
                    .collect(),
                band: None,
            })
            .collect()
    };
    // With several Monte Carlo runs the by-call chart shows each median with its 5th-95th
    // percentile band; call times differ between runs, so the by-time chart shows the first run.
    let mc_runs = runs.iter().filter_map(|r| r.curve.map(|c| c.0)).max();
    let by_call: Vec<LineSeries> = match mc_runs {
        Some(_) => runs
            .iter()
            .map(|r| match r.curve {
                Some((_, curve)) => LineSeries {
                    group: r.model.to_string(),
                    style: r.strategy.to_string(),
                    points: curve.iter().map(|p| (p.call as f64, p.median)).collect(),
                    band: Some(curve.iter().map(|p| (p.call as f64, p.p5, p.p95)).collect()),
                },
                None => LineSeries {
                    group: r.model.to_string(),
                    style: r.strategy.to_string(),
                    points: r
                        .calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (i as f64 + 1.0, c.cumulative_usd))
                        .collect(),
                    band: None,
                },
            })
            .collect(),
        None => lines(&|i, c| (i as f64 + 1.0, c.cumulative_usd)),
    };
    let (call_note, time_note) = match mc_runs {
        Some(n) => (
            format!(
                "; median of {} runs, band 5th-95th percentile",
                group(n as f64, 0)
            ),
            format!("; first of {} runs", group(n as f64, 0)),
        ),
        None => (String::new(), String::new()),
    };
    let y = Axis::new(
        if extras.log_y {
            "cumulative cost (USD, log scale)"
        } else {
            "cumulative cost (USD)"
        },
        Unit::Usd,
    );
    Ok(vec![
        ChartFile {
            name: format!("cumulative-by-call.{ext}"),
            bytes: line_chart_with(
                &format!("Cumulative cost by call: {scenario}\n{subtitle}{call_note}"),
                &Axis::new(call_axis(runs), Unit::Count),
                &y,
                &by_call,
                extras,
                opts,
            )?,
        },
        ChartFile {
            name: format!("cumulative-by-time.{ext}"),
            bytes: line_chart_with(
                &format!("Cumulative cost over time: {scenario}\n{subtitle}{time_note}"),
                &Axis::new("time since the start (seconds)", Unit::Seconds),
                &y,
                &lines(&|_, c| (c.time_s, c.cumulative_usd)),
                extras,
                opts,
            )?,
        },
    ])
}

/// Renders the charts of a `compare` report: `cumulative-by-call` and `cumulative-by-time`, one
/// line per (model, strategy) that was simulated (`none` solid, every other strategy in its own
/// dash pattern), and `compare-totals`, the total of every (model, strategy) as a bar with its
/// saving against `none`, grouped by model. A model has the same colour in all three.
///
/// Errors with [`Error::Unsupported`] when nothing was simulated.
pub fn compare_charts(report: &CompareReport, opts: &ChartOptions) -> Result<Vec<ChartFile>> {
    let runs: Vec<Run> = report
        .comparisons
        .iter()
        .flat_map(|m| {
            m.strategies.iter().map(|o| Run {
                model: &m.model,
                strategy: &o.strategy_requested,
                calls: &o.calls,
                curve: None,
            })
        })
        .collect();
    let mut strategies: Vec<&str> = runs.iter().map(|r| r.strategy).collect();
    strategies.sort_unstable();
    strategies.dedup();
    let extras = LineExtras {
        colours: ColourKey::new(runs.iter().map(|r| r.model)),
        log_y: opts.log_scale,
        ..LineExtras::default()
    };
    let mut files = cumulative_charts(
        &report.scenario,
        &report.description,
        &format!("{} strategies compared, ", strategies.len()),
        &runs,
        &extras,
        opts,
    )?;
    files.push(ChartFile {
        name: format!("compare-totals.{}", opts.extension()),
        bytes: compare_totals_chart(report, &extras.colours, opts)?,
    });
    Ok(files)
}

/// The bar chart of a `compare` report's totals: per model, `none` first, then each strategy with
/// its saving against `none` (positive: cheaper); the cheapest of each model is starred.
pub fn compare_totals_chart(
    report: &CompareReport,
    colours: &ColourKey,
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    let mut bars = Vec::new();
    for m in &report.comparisons {
        for o in &m.strategies {
            let star = if o.strategy == m.cheapest { " *" } else { "" };
            bars.push(Bar {
                label: format!("{} {}", m.model, o.strategy_requested),
                value: o.total_usd,
                group: m.model.clone(),
                note: if o.strategy == "none" {
                    "baseline".to_string()
                } else {
                    format!("saves {:.1}%{star}", o.saving_percent)
                },
            });
        }
    }
    let sessions = if report.sessions > 1 {
        format!(" x {} sessions", group(report.sessions as f64, 0))
    } else {
        String::new()
    };
    grouped_bar_chart(
        &format!(
            "Total cost per strategy: {}\n{} calls{sessions}, seed {}; saving against no caching on the same model, * = cheapest",
            report.scenario,
            group(report.calls_per_session as f64, 0),
            report.seed
        ),
        &Axis::new("total cost of the scenario (USD)", Unit::Usd),
        &bars,
        colours,
        opts,
    )
}

/// The dollar parts of every call of `r`, in stacking order: uncached input; tokens stored in the
/// cache, at the base input rate; the write surcharge above that rate (where the tier's multiplier
/// exceeds 1); storage fees; cache reads; output. Storing at the base rate is drawn apart from the
/// surcharge, so a provider that stores for free (Gemini's implicit cache) is not shown paying for
/// "cache writes". Parts that are zero on every call are left out (uncached input and output are
/// always shown). The parts of a call add up to its bill.
pub(crate) fn parts(r: &SimResult) -> Vec<(String, Vec<f64>)> {
    let prices = r.prices;
    let n = r.calls.len();
    let (mut base, mut surcharge, mut storage) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut uncached, mut reads, mut output) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for (i, c) in r.calls.iter().enumerate() {
        let p = prices.parts_usd(c);
        for slot in 0..3 {
            let w = c.written_by_slot[slot] as f64;
            let m = prices.write_multipliers[slot];
            base[i] += w * m.min(1.0) * prices.input;
            surcharge[i] += w * (m - 1.0).max(0.0) * prices.input;
            storage[i] += w * prices.storage_per_written_token[slot];
        }
        uncached[i] = p.uncached_usd;
        reads[i] = p.cache_read_usd;
        output[i] = p.output_usd;
    }
    let all = vec![
        ("uncached input".to_string(), uncached),
        ("stored in cache (base input rate)".to_string(), base),
        ("cache-write surcharge".to_string(), surcharge),
        ("cache storage fee".to_string(), storage),
        ("cache reads".to_string(), reads),
        ("output".to_string(), output),
    ];
    all.into_iter()
        .filter(|(name, v)| {
            name == "uncached input" || name == "output" || v.iter().any(|x| *x != 0.0)
        })
        .collect()
}

/// Most bars of a per-call chart: above, each bar is the mean of a bin of consecutive calls.
pub(crate) const MAX_PER_CALL_BARS: usize = 2_000;

fn per_call_chart(
    report: &RunReport,
    r: &SimResult,
    call_axis: &str,
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    let strategy = if r.strategy_requested == r.strategy {
        format!("strategy {}", r.strategy)
    } else {
        format!("strategy {} = {}", r.strategy_requested, r.strategy)
    };
    let title = format!(
        "Cost of each call: {}, {}\n{strategy} · {}: {} calls, total {}, {:.0}% of prompt tokens read from cache",
        r.model_name,
        r.strategy_requested,
        report.scenario,
        group(r.calls.len() as f64, 0),
        usd(r.total_usd),
        r.totals.cache_hit_ratio * 100.0
    );
    if r.calls.is_empty() {
        return Err(super::nothing_to_draw(&title, "zero calls"));
    }
    let n = r.calls.len();
    let (categories, stacks, title): (Vec<String>, _, _) = if n <= MAX_PER_CALL_BARS {
        ((1..=n).map(|i| i.to_string()).collect(), parts(r), title)
    } else {
        // One bar per bin of `k` consecutive calls, its height the bin's mean cost per call: the
        // chart stays a chart (2,000,000 bars made a 695 MB report in 40 s, issue 29).
        let k = n.div_ceil(MAX_PER_CALL_BARS);
        let categories = (0..n)
            .step_by(k)
            .map(|a| format!("{}-{}", a + 1, (a + k).min(n)))
            .collect();
        let stacks = parts(r)
            .into_iter()
            .map(|(name, v)| {
                let means = v
                    .chunks(k)
                    .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                    .collect();
                (name, means)
            })
            .collect();
        let title = format!(
            "{title}; each bar: the mean cost per call of {} consecutive calls (more than {} calls)",
            group(k as f64, 0),
            group(MAX_PER_CALL_BARS as f64, 0)
        );
        (categories, stacks, title)
    };
    stacked_bar_chart(
        &title,
        call_axis,
        &Axis::new("cost of the call (USD)", Unit::Usd),
        &categories,
        &stacks,
        opts,
    )
}

/// The median cumulative cost per call over several runs of one (model, strategy), with the 5th to
/// 95th percentile band, ready for [`super::line_chart`]: `x` is the call number in time order. Percentiles
/// use the nearest rank on the sorted values (index `round((n - 1) * p)`), so every band edge is a
/// cost that some run really had. Runs shorter than the longest simply stop contributing.
///
/// Errors with [`Error::Unsupported`] when there is no run or no call.
#[doc(hidden)]
pub fn percentile_series(
    model: &str,
    strategy: &str,
    runs: &[Vec<CallBill>],
) -> Result<LineSeries> {
    let calls = runs.iter().map(Vec::len).max().unwrap_or(0);
    if calls == 0 {
        return Err(Error::Unsupported(format!(
            "{model} / {strategy}: no calls in {} runs, nothing to summarise",
            runs.len()
        )));
    }
    let rank = |sorted: &[f64], p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    let mut points = Vec::with_capacity(calls);
    let mut band = Vec::with_capacity(calls);
    for i in 0..calls {
        let mut col: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(i).map(|c| c.cumulative_usd))
            .collect();
        col.sort_by(f64::total_cmp);
        let x = i as f64 + 1.0;
        points.push((x, rank(&col, 0.5)));
        band.push((x, rank(&col, 0.05), rank(&col, 0.95)));
    }
    Ok(LineSeries {
        group: model.to_string(),
        style: strategy.to_string(),
        points,
        band: Some(band),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_parts_add_up_to_the_bill_and_name_storage_apart_from_surcharge() {
        let catalog = crate::model::catalog::Catalog::embedded().unwrap();
        let scenario = crate::analysis::testutil::scenario(
            "[tools]\nsynthetic = { count = 12, params = 3 }\n[session]\ncalls = 6\n",
        );
        let rep = crate::sim::simulate::run_scenario(&catalog, &scenario, &[], &[]).unwrap();
        let mut surcharged = 0;
        for r in &rep.results {
            let p = parts(r);
            for (i, c) in r.calls.iter().enumerate() {
                let sum: f64 = p.iter().map(|(_, v)| v[i]).sum();
                assert!(
                    (sum - c.cost_usd).abs() <= 1e-12 + 1e-9 * c.cost_usd,
                    "{} {} call {}: {sum} vs {}",
                    r.model,
                    r.strategy,
                    i + 1,
                    c.cost_usd
                );
            }
            let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
            let wrote = r.totals.cache_write_tokens > 0;
            assert_eq!(
                names.contains(&"stored in cache (base input rate)"),
                wrote,
                "{} {}: {names:?}",
                r.model,
                r.strategy
            );
            if names.contains(&"cache-write surcharge") {
                surcharged += 1;
                assert!(r.prices.write_multipliers.iter().any(|m| *m > 1.0));
            }
        }
        // Claude and GPT-5.6 write at 1.25x; Gemini's implicit and the automatic modes do not.
        assert!(surcharged >= 2, "{surcharged}");
    }

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(
            sanitize_file_stem("per-call-claude-opus-4.8-explicit:tools@1h+system+last"),
            "per-call-claude-opus-4.8-explicit-tools-1h-system-last"
        );
        assert_eq!(sanitize_file_stem("../../etc/passwd"), "etc-passwd");
        assert_eq!(sanitize_file_stem("::"), "chart");
    }
}
