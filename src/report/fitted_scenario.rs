//! The scenario file `pcsim fit` writes (`--out FILE`): the fitted values as TOML, each followed
//! by its interval in a comment, with the history it came from in the header. The fit computes; this
//! file only writes its figures down.

use std::fmt::Write as _;

use crate::analysis::fit::{HistoryFit, PrefixSource};
use crate::analysis::fitdist::ParamEstimate;
use crate::base::quantity::Quantity;

/// The fitted scenario as TOML; `tool_files` are written as given (relative to the scenario's
/// folder, or absolute), `name` is the scenario's name.
pub(crate) fn scenario_toml(fit: &HistoryFit, name: &str, tool_files: &[String]) -> String {
    let pct = fit.confidence * 100.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Fitted by `pcsim fit` to {}.\n# Each fitted value is followed by its {pct}% interval; `pcsim fit` prints the goodness of fit.",
        comment_toml(&fit.origin)
    );
    let _ = writeln!(s, "name = {}", string_toml(name));
    let _ = writeln!(
        s,
        "description = {}",
        string_toml(&format!(
            "fitted to {} calls in {} sessions on {}",
            fit.calls_logged - fit.sidechain_calls_left_out,
            fit.calls.sessions,
            fit.sessions_on()
        ))
    );
    let _ = writeln!(s, "models = [{}]", string_toml(&fit.model));
    if fit.session_models.len() > 1 {
        let _ = writeln!(
            s,
            "# The history's sessions ran on {} models (each session's most frequent model):",
            fit.session_models.len()
        );
        for m in &fit.session_models {
            let _ = writeln!(
                s,
                "#   {}: {} session{}, {} call{}",
                m.model.replace(['\n', '\r'], " "),
                m.sessions,
                if m.sessions == 1 { "" } else { "s" },
                m.calls,
                if m.calls == 1 { "" } else { "s" }
            );
        }
        if fit.one_model {
            let _ = writeln!(
                s,
                "# --model {}: every session was fitted and checked on it, against the logged calls each\n# at its own model's prices.",
                fit.model
            );
        } else {
            let _ = writeln!(
                s,
                "# A scenario has one model per run: `run` simulates every session on {}. The check of\n# `pcsim fit` simulated the mix ({}), with these distributions,\n# summed run by run, against the logged calls each at its own model's prices.",
                fit.model,
                fit.check_models
                    .iter()
                    .map(|(m, k)| format!("{k} on {m}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let _ = writeln!(s, "strategies = [\"none\", \"cached\"]");
    let _ = writeln!(s, "seed = 1\n");
    tools_and_session(fit, tool_files, &mut s);
    if fit.calls.sessions > 1 {
        sessions_table(fit, &mut s);
    }
    s
}

/// `[tools]` (the files as given) and `[session]`: each fitted value with its interval.
fn tools_and_session(fit: &HistoryFit, tool_files: &[String], s: &mut String) {
    let _ = writeln!(s, "[tools]");
    if !tool_files.is_empty() {
        let files: Vec<String> = tool_files.iter().map(|f| string_toml(f)).collect();
        let _ = writeln!(
            s,
            "files = [{}]   # {} tokens on {}",
            files.join(", "),
            fit.tool_block_tokens,
            fit.model
        );
    }
    let _ = writeln!(s, "\n[session]");
    match &fit.calls.lengths {
        Some(values) => {
            let list: Vec<String> = values.iter().map(usize::to_string).collect();
            let _ = writeln!(
                s,
                "calls = {{ dist = \"empirical\", values = [{}] }}   # {} sessions of {} to {} calls; mean {}",
                list.join(", "),
                values.len(),
                fit.calls.min,
                fit.calls.max,
                interval_text(&fit.calls.mean)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "calls = {}   # {}",
                fit.calls.calls,
                interval_text(&fit.calls.mean)
            );
        }
    }
    let _ = writeln!(
        s,
        "system_tokens = {}   # stable prefix {} tokens ({}) minus the tool block",
        fit.system_tokens,
        fit.prefix_tokens,
        match fit.prefix_source {
            PrefixSource::Given => "given",
            PrefixSource::InferredFromCacheReads => "inferred from cache reads",
            PrefixSource::Unknown => "unknown: taken as the tool block",
        }
    );
    for f in &fit.fields {
        let key = f.field.trim_start_matches("session.");
        match &f.fit {
            Some(q) => {
                let params: Vec<String> = q.params.iter().map(interval_text).collect();
                let _ = writeln!(
                    s,
                    "{key} = {}   # n = {}; {}",
                    quantity_toml(&q.quantity),
                    q.n,
                    params.join("; ")
                );
            }
            None => {
                let _ = writeln!(s, "# {key}: no value in the logs (the default is used)");
            }
        }
    }
    let _ = writeln!(s, "user_tokens = 0   # a log cannot tell user turns from tool results: both are in tool_result_tokens");
}

/// `[sessions]`: the count, the fitted arrival and whether the sessions share a cache.
fn sessions_table(fit: &HistoryFit, s: &mut String) {
    let _ = writeln!(s, "\n[sessions]");
    let _ = writeln!(s, "count = {}", fit.calls.sessions);
    match (&fit.arrivals.per_hour, fit.arrivals.every_seconds) {
        (Some(p), _) => {
            let _ = writeln!(
                s,
                "poisson_per_hour = {}   # {}",
                toml_num(p.estimate),
                interval_text(p)
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(s, "every_seconds = {}", toml_num(e));
        }
        (None, None) => {}
    }
    let _ = writeln!(s, "shared_cache = {}", fit.shared_cache);
}

/// A number for TOML: a float with a decimal point (6 decimals at most), so it parses as written.
fn toml_num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    if s.ends_with('.') {
        format!("{s}0")
    } else {
        s.to_string()
    }
}

/// A quantity as a TOML value.
fn quantity_toml(q: &Quantity) -> String {
    match *q {
        Quantity::Fixed { value } if value.fract() == 0.0 => format!("{}", value as u64),
        Quantity::Fixed { value } => toml_num(value),
        Quantity::Exponential { mean } => {
            format!("{{ dist = \"exponential\", mean = {} }}", toml_num(mean))
        }
        Quantity::LogNormal { mu, sigma } => format!(
            "{{ dist = \"log_normal\", mu = {}, sigma = {} }}",
            toml_num(mu),
            toml_num(sigma)
        ),
        Quantity::Uniform { min, max } => format!(
            "{{ dist = \"uniform\", min = {}, max = {} }}",
            toml_num(min),
            toml_num(max)
        ),
        Quantity::Gamma { shape, scale } => format!(
            "{{ dist = \"gamma\", shape = {}, scale = {} }}",
            toml_num(shape),
            toml_num(scale)
        ),
    }
}

fn interval_text(p: &ParamEstimate) -> String {
    let f = |x: f64| {
        if x.abs() >= 100.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.4}")
        }
    };
    format!(
        "{} = {} [{}, {}]",
        p.name,
        f(p.estimate),
        f(p.low),
        f(p.high)
    )
}

/// `s` as a TOML basic string: quotes, backslashes and every control character (TOML allows none
/// but tab, and DEL neither) escaped.
fn string_toml(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` for a TOML comment: control characters (which TOML refuses there, but for tab) shown as
/// `\u{..}` escapes, so a file name cannot break the scenario.
fn comment_toml(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fit::*;
    use crate::error::Error;
    use crate::input::scenario::Scenario;
    use crate::input::usagelog::LoggedCall;
    use crate::input::usagelog::UsageLog;
    use crate::model::catalog::Catalog;
    use proptest::prelude::*;

    /// One logged call: `time` seconds since 2026-01-01 (none: no timestamp).
    fn call(session: &str, time: Option<f64>, prompt: u64, read: u64, output: u64) -> LoggedCall {
        LoggedCall {
            at: String::new(),
            format: "test",
            model: Some("claude-opus-4.8".into()),
            unix_time: time.map(|t| 1_767_225_600.0 + t),
            session: Some(session.into()),
            agent: None,
            sidechain: false,
            project: None,
            prompt_tokens: prompt,
            uncached_tokens: prompt - read,
            cache_write_5m_tokens: 0,
            cache_write_1h_tokens: 0,
            cache_read_tokens: read,
            output_tokens: output,
            stated_usd: None,
            response_id: None,
        }
    }

    /// Fits `calls` and loads the scenario it writes under `name`: `Ok(None)` when the history was
    /// refused as beyond a limit (an invalid-input error), `Err` for anything else that fails.
    fn fit_and_load(
        calls: Vec<LoggedCall>,
        name: &str,
        opts: &FitOptions,
    ) -> std::result::Result<Option<Scenario>, String> {
        let catalog = Catalog::embedded().map_err(|e| e.to_string())?;
        let model = catalog
            .model("claude-opus-4.8")
            .map_err(|e| e.to_string())?;
        let log = UsageLog {
            origin: "history.jsonl".into(),
            calls,
            ..Default::default()
        };
        let mut r = HistoryReader::new(opts).map_err(|e| e.to_string())?;
        r.add_log(&log);
        let fit = match r.fit(&catalog, model, &[], opts) {
            Ok(f) => f,
            Err(e @ Error::Invalid { .. }) => {
                let text = e.to_string();
                return if text.contains("limit") {
                    Ok(None)
                } else {
                    Err(format!("refused without a limit: {text}"))
                };
            }
            Err(e) => return Err(format!("fit failed: {e}")),
        };
        let toml = scenario_toml(&fit, name, &[]);
        Scenario::from_toml_str(&toml, "fitted.toml", Path::new("."))
            .map(Some)
            .map_err(|e| format!("the fitted scenario does not load: {e}\n{toml}"))
    }

    use std::path::Path;

    /// The legal inputs on which `fit` ended in "internal error" (issue 29), each now fitted.
    #[test]
    fn gaps_over_30_days_1_ms_gaps_and_control_characters_fit() {
        let opts = FitOptions::default();
        let day = 86_400.0;
        // Sessions 31 days apart (every_seconds past 30 days).
        let apart = vec![
            call("a", Some(0.0), 1000, 0, 100),
            call("a", Some(5.0), 1200, 0, 100),
            call("b", Some(31.0 * day), 1000, 0, 100),
            call("b", Some(31.0 * day + 5.0), 1200, 0, 100),
        ];
        assert!(fit_and_load(apart, "apart", &opts).unwrap().is_some());
        // A gap of a year inside a session, varied arrivals years apart (Poisson rate < 0.001/h).
        let mut slow = Vec::new();
        for (k, start) in [0.0, 400.0, 900.0, 2000.0, 2100.0, 3000.0]
            .iter()
            .enumerate()
        {
            let s = format!("s{k}");
            for i in 0..6u64 {
                let t = start * day + (i as f64).powi(3) * 365.0 * day / 125.0;
                slow.push(call(&s, Some(t), 1000 + 300 * i, 0, 100));
            }
        }
        assert!(fit_and_load(slow, "slow", &opts).unwrap().is_some());
        // 1 ms between every call: one fixed gap, not a uniform of zero width.
        let fast: Vec<LoggedCall> = (0..50u64)
            .map(|i| call("a", Some(i as f64 / 1000.0), 1000 + 150 * i, 0, 100))
            .collect();
        let s = fit_and_load(fast, "fast", &opts).unwrap().unwrap();
        assert_eq!(s.gap_seconds, Quantity::Fixed { value: 0.001 });
        // A name with DEL, other control characters, quotes and a backslash is kept as given.
        let name = "a\u{7f}b\u{1}c\"d\\e\u{9b}f\r";
        let named: Vec<LoggedCall> = (0..5u64)
            .map(|i| call("a", Some(i as f64), 1000 + 150 * i, 0, 100))
            .collect();
        let s = fit_and_load(named, name, &opts).unwrap().unwrap();
        assert_eq!(s.name, name);
    }

    /// A conversation longer than a scenario session is refused with the limit named (it was an
    /// internal error at 150,000 calls); so is a million calls in one session.
    #[test]
    fn conversations_beyond_the_session_limit_are_refused_naming_it() {
        for n in [150_000u64, 1_000_000] {
            let calls: Vec<LoggedCall> = (0..n)
                .map(|i| call("a", Some(i as f64), 1000 + i, 0, 1))
                .collect();
            let catalog = Catalog::embedded().unwrap();
            let model = catalog.model("claude-opus-4.8").unwrap();
            let opts = FitOptions::default();
            let mut r = HistoryReader::new(&opts).unwrap();
            r.add_log(&UsageLog {
                origin: "h.jsonl".into(),
                calls,
                ..Default::default()
            });
            let e = r.fit(&catalog, model, &[], &opts).unwrap_err();
            assert!(matches!(e, Error::Invalid { .. }), "{e}");
            assert!(
                e.to_string().contains(&format!(
                    "{n} calls is more than a scenario session's limit of 100000"
                )),
                "{e}"
            );
        }
    }

    fn history() -> impl Strategy<Value = (Vec<LoggedCall>, String, bool, bool)> {
        // Gaps from 1 ms to a year (log-uniform), a few sessions of up to 30 calls, prompts that
        // grow, shrink (compactions) or stall, some without timestamps, and unicode names.
        let conv = (
            prop::collection::vec((-3.0f64..7.5, 0u64..5_000, 0u64..3, 1u64..4_000), 1..30),
            -3.0f64..7.5,
            any::<bool>(),
            0u64..3_000,
        );
        (
            prop::collection::vec(conv, 1..6),
            "\\PC{0,12}[\u{0}-\u{1f}\u{7f}\u{80}-\u{9f}]{0,3}",
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(convs, name, mean, keep)| {
                let mut calls = Vec::new();
                let mut start = 0.0;
                for (k, (steps, after, stamped, first)) in convs.into_iter().enumerate() {
                    start += 10f64.powf(after);
                    let (mut t, mut prompt) = (start, 2_000 + first);
                    let s = format!("s{k}");
                    for (gap, growth, shape, output) in steps {
                        let read = if prompt > 2_000 { 2_000 } else { 0 };
                        calls.push(call(&s, stamped.then_some(t), prompt, read, output));
                        t += 10f64.powf(gap);
                        prompt = match shape {
                            0 => 2_000 + growth,
                            _ => prompt + output + growth,
                        };
                    }
                }
                (calls, name, mean, keep)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// `fit` on arbitrary legal histories writes a scenario that loads, or refuses the history
        /// naming a limit; never an internal error.
        #[test]
        fn fit_writes_a_loadable_scenario_for_any_legal_history(
            (calls, name, mean, keep) in history()
        ) {
            let opts = FitOptions {
                lengths: if mean { SessionLengths::Mean } else { SessionLengths::Empirical },
                split_compactions: !keep,
                ..FitOptions::default()
            };
            let loaded = fit_and_load(calls, &name, &opts);
            prop_assert!(loaded.is_ok(), "{}", loaded.unwrap_err());
            if let Ok(Some(s)) = loaded {
                prop_assert_eq!(s.name, name);
            }
        }
    }
}
