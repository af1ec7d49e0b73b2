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
